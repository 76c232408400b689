#include "s3/s3_multipart_checksum.h"

#include <gtest/gtest.h>

#include "common/encoding.h"
#include "common/hash.h"

namespace serac::s3 {
namespace {

std::string Crc32Raw(std::string_view data) {
  uint32_t crc = Crc32Update(0, data.data(), data.size());
  std::string raw(4, '\0');
  for (int i = 0; i < 4; ++i) raw[i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xFF);
  return raw;
}

std::vector<meta::PartRecord> TwoParts(const std::string& a, const std::string& b) {
  meta::PartRecord first;
  first.part_number = 1;
  first.size = a.size();
  first.checksum_value = Base64Encode(Crc32Raw(a));
  meta::PartRecord second;
  second.part_number = 2;
  second.size = b.size();
  second.checksum_value = Base64Encode(Crc32Raw(b));
  return {first, second};
}

TEST(MultipartChecksum, FullObjectCrcEqualsCrcOfWhole) {
  auto checksum = MultipartChecksum("CRC32", "FULL_OBJECT", TwoParts("hello ", "world"));
  ASSERT_TRUE(checksum);
  EXPECT_EQ(checksum->type, "FULL_OBJECT");
  EXPECT_EQ(checksum->value, Base64Encode(Crc32Raw("hello world")));
}

TEST(MultipartChecksum, CompositeHashesPartDigests) {
  auto checksum = MultipartChecksum("CRC32", "COMPOSITE", TwoParts("hello ", "world"));
  ASSERT_TRUE(checksum);
  EXPECT_EQ(checksum->algorithm, "CRC32");
  EXPECT_EQ(checksum->value, Base64Encode(Crc32Raw(Crc32Raw("hello ") + Crc32Raw("world"))) + "-2");
}

TEST(MultipartChecksum, AbsentWhenAPartHasNone) {
  auto parts = TwoParts("a", "b");
  parts[1].checksum_value.clear();
  EXPECT_FALSE(MultipartChecksum("CRC32", "COMPOSITE", parts));
  EXPECT_FALSE(MultipartChecksum("", "", TwoParts("a", "b")));
}

}  // namespace
}  // namespace serac::s3
