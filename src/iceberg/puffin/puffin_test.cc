#include "iceberg/puffin/puffin.h"

#include <gtest/gtest.h>

#include <string>

#include "common/hash.h"

namespace serac::iceberg {
namespace {

TEST(DeletionVector, PositionsRoundTripAcrossTheirHighBits) {
  DeletionVector dv;
  const std::vector<int64_t> positions = {
      0, 1, 2, 3, 70000, (int64_t{1} << 32) + 5, (int64_t{3} << 32), (int64_t{1} << 62)};
  for (int64_t position : positions) ASSERT_TRUE(dv.Add(position).ok());
  for (int64_t i = 100; i < 5000; ++i) ASSERT_TRUE(dv.Add(i).ok());  // a run
  EXPECT_EQ(dv.Add(-1).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(dv.cardinality(), positions.size() + 4900);
  EXPECT_TRUE(dv.Contains((int64_t{1} << 32) + 5));
  EXPECT_FALSE(dv.Contains(5));

  const std::string blob = dv.Serialize();
  // Big-endian length of magic and vector, then the magic.
  const uint32_t length = (static_cast<uint8_t>(blob[0]) << 24) | (static_cast<uint8_t>(blob[1]) << 16) |
                          (static_cast<uint8_t>(blob[2]) << 8) | static_cast<uint8_t>(blob[3]);
  EXPECT_EQ(length + 8, blob.size());
  EXPECT_EQ(blob.substr(4, 4), std::string("\xD1\xD3\x39\x64", 4));
  EXPECT_EQ(blob[8], '\x04');  // four 32-bit bitmaps: keys 0, 1, 3 and 2^30
  auto back = DeletionVector::Deserialize(blob);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->Positions(), dv.Positions());
  EXPECT_EQ(back->Serialize(), blob);
}

// Built by hand from the spec (not by CRoaring): position 3 as one array container.
TEST(DeletionVector, ReadsThePortableFormatAsTheSpecDescribesIt) {
  const std::string vector = std::string("\xD1\xD3\x39\x64", 4) +        // magic
                             std::string("\x01\0\0\0\0\0\0\0", 8) +      // one 32-bit bitmap
                             std::string("\0\0\0\0", 4) +                // its key
                             std::string("\x3A\x30\0\0\x01\0\0\0", 8) +  // cookie 12346, one container
                             std::string("\0\0\0\0", 4) +                // high 0, cardinality 1
                             std::string("\x10\0\0\0", 4) + std::string("\x03\0", 2);  // offset 16, value 3
  const uint32_t crc = Crc32Update(0, vector.data(), vector.size());
  std::string blob = std::string("\0\0\0", 3) + static_cast<char>(vector.size()) + vector;
  for (int shift = 24; shift >= 0; shift -= 8) blob.push_back(static_cast<char>((crc >> shift) & 0xFF));
  auto dv = DeletionVector::Deserialize(blob);
  ASSERT_TRUE(dv.ok()) << dv.status().message();
  EXPECT_EQ(dv->Positions(), std::vector<int64_t>{3});
}

TEST(DeletionVector, MergeKeepsTheRowsOfBoth) {
  DeletionVector a, b;
  ASSERT_TRUE(a.Add(1).ok());
  ASSERT_TRUE(a.Add(5).ok());
  ASSERT_TRUE(b.Add(5).ok());
  ASSERT_TRUE(b.Add((int64_t{2} << 32) + 1).ok());
  a.Merge(b);
  EXPECT_EQ(a.Positions(), (std::vector<int64_t>{1, 5, (int64_t{2} << 32) + 1}));
}

TEST(DeletionVector, DamageIsFoundAndNamed) {
  DeletionVector dv;
  ASSERT_TRUE(dv.Add(7).ok());
  const std::string blob = dv.Serialize();
  std::string flipped = blob;
  flipped[12] ^= 0x01;
  EXPECT_NE(DeletionVector::Deserialize(flipped).status().message().find("CRC-32"), std::string::npos);
  EXPECT_NE(DeletionVector::Deserialize(blob.substr(0, blob.size() - 1)).status().message().find("length"),
            std::string::npos);
  EXPECT_FALSE(DeletionVector::Deserialize("").ok());
  // A bitmap count far beyond the bytes is refused before anything is allocated.
  std::string lying = blob;
  lying[8] = '\x7F';
  EXPECT_FALSE(DeletionVector::Deserialize(lying).ok());
}

TEST(Puffin, BlobsAndFooterRoundTrip) {
  PuffinWriter writer;
  DeletionVector first, second;
  ASSERT_TRUE(first.Add(3).ok());
  ASSERT_TRUE(second.Add(4).ok());
  ASSERT_TRUE(second.Add(9).ok());
  for (auto [dv, file] :
       {std::pair{&first, "s3://wh/t/data/a.parquet"}, std::pair{&second, "s3://wh/t/data/b.parquet"}}) {
    PuffinBlob blob;
    blob.type = kDeletionVectorBlobType;
    blob.fields = {kRowPositionFieldId};
    blob.properties = {{"referenced-data-file", file}, {"cardinality", std::to_string(dv->cardinality())}};
    writer.Add(std::move(blob), dv->Serialize());
  }
  const std::string file = writer.Finish();
  EXPECT_TRUE(file.starts_with("PFA1"));
  EXPECT_TRUE(file.ends_with("PFA1"));
  auto blobs = ReadPuffinFooter(file);
  ASSERT_TRUE(blobs.ok()) << blobs.status().message();
  ASSERT_EQ(blobs->size(), 2u);
  EXPECT_EQ((*blobs)[0].offset, 4);
  EXPECT_EQ((*blobs)[1].properties.at("referenced-data-file"), "s3://wh/t/data/b.parquet");
  EXPECT_EQ((*blobs)[1].fields, std::vector<int32_t>{kRowPositionFieldId});
  EXPECT_EQ((*blobs)[1].snapshot_id, -1);
  auto dv = DeletionVector::Deserialize(std::string_view(file).substr(
      static_cast<size_t>((*blobs)[1].offset), static_cast<size_t>((*blobs)[1].length)));
  ASSERT_TRUE(dv.ok());
  EXPECT_EQ(dv->Positions(), (std::vector<int64_t>{4, 9}));

  EXPECT_FALSE(ReadPuffinFooter("PFA1").ok());
  std::string broken = file;
  broken[broken.size() - 12] = '\x7F';  // the footer's length
  EXPECT_FALSE(ReadPuffinFooter(broken).ok());
}

}  // namespace
}  // namespace serac::iceberg
