// The object path over the real embedded stores in a temporary directory.
#include "objects/object_io.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "blob/open_blob_store.h"
#include "meta/meta_store_test_util.h"
#include "meta/open_meta_store.h"

namespace serac::objects {
namespace {

class ObjectIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto meta = meta::OpenMetaStore("sqlite:" + (dir_.path() / "meta.db").string(), {.fsync = false});
    ASSERT_TRUE(meta.ok()) << meta.status().ToString();
    meta_ = std::move(meta).value();
    auto blobs = blob::OpenBlobStore("file:" + (dir_.path() / "blobs").string(), {.fsync = false});
    ASSERT_TRUE(blobs.ok()) << blobs.status().ToString();
    blobs_ = std::move(blobs).value();
    ASSERT_TRUE(meta_->CreateBucket({"bkt", 1}).ok());
  }

  std::set<blob::BlobId> Blobs() {
    std::set<blob::BlobId> ids;
    EXPECT_TRUE(blobs_
                    ->ForEachBlob([&](const blob::BlobId& id) {
                      ids.insert(id);
                      return Status::Ok();
                    })
                    .ok());
    return ids;
  }

  meta::ObjectRecord Record(const std::string& key) {
    meta::ObjectRecord record;
    record.bucket = "bkt";
    record.key = key;
    record.etag = "e";
    return record;
  }

  meta::testing::TempDir dir_;
  std::unique_ptr<meta::MetaStore> meta_;
  std::unique_ptr<blob::BlobStore> blobs_;
};

TEST_F(ObjectIoTest, SmallBodiesStayInlineLargeOnesGoToOneBlob) {
  ObjectBodyWriter small(*blobs_, 8);
  ASSERT_TRUE(small.Append("abc").ok());
  ASSERT_TRUE(small.Append("defgh").ok());
  meta::ObjectRecord inline_record = Record("small");
  ASSERT_TRUE(small.Finish(inline_record).ok());
  EXPECT_EQ(inline_record.inline_data, "abcdefgh");
  EXPECT_TRUE(inline_record.segments.empty());
  EXPECT_EQ(inline_record.size, 8u);
  EXPECT_TRUE(Blobs().empty());

  ObjectBodyWriter large(*blobs_, 8);
  ASSERT_TRUE(large.Append("abcdef").ok());
  ASSERT_TRUE(large.Append("ghijkl").ok());  // crosses the line: what was kept moves to the blob
  ASSERT_TRUE(large.Append("mn").ok());
  meta::ObjectRecord blob_record = Record("large");
  ASSERT_TRUE(large.Finish(blob_record).ok());
  EXPECT_TRUE(blob_record.inline_data.empty());
  ASSERT_EQ(blob_record.segments.size(), 1u);
  EXPECT_EQ(blob_record.segments[0].size, 14u);
  EXPECT_EQ(*ReadObjectBytes(*blobs_, blob_record), "abcdefghijklmn");

  // Told up front that the body is large (or that it must be a blob, as a multipart part must),
  // even an empty body becomes a blob.
  ObjectBodyWriter forced(*blobs_, 1024);
  ASSERT_TRUE(forced.StartBlob().ok());
  meta::ObjectRecord empty = Record("empty");
  ASSERT_TRUE(forced.Finish(empty).ok());
  ASSERT_EQ(empty.segments.size(), 1u);
  EXPECT_EQ(empty.segments[0].size, 0u);
}

TEST_F(ObjectIoTest, ACommitTheIndexRefusesLeavesNoBlob) {
  ObjectBodyWriter first(*blobs_, 4);
  ASSERT_TRUE(first.Append("first version").ok());
  meta::ObjectRecord record = Record("k");
  ASSERT_TRUE(first.Finish(record).ok());
  ASSERT_TRUE(CommitObject(*meta_, *blobs_, record, {}).ok());
  const std::set<blob::BlobId> after_first = Blobs();
  ASSERT_EQ(after_first.size(), 1u);

  ObjectBodyWriter second(*blobs_, 4);
  ASSERT_TRUE(second.Append("second version").ok());
  meta::ObjectRecord refused = Record("k");
  ASSERT_TRUE(second.Finish(refused).ok());
  meta::WriteCondition create_only;
  create_only.if_none_match_any = true;
  EXPECT_EQ(CommitObject(*meta_, *blobs_, refused, create_only).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(Blobs(), after_first);  // the refused write's blob is gone again

  refused.bucket = "no-such-bucket";
  ObjectBodyWriter third(*blobs_, 4);
  ASSERT_TRUE(third.Append("third version").ok());
  ASSERT_TRUE(third.Finish(refused).ok());
  EXPECT_EQ(CommitObject(*meta_, *blobs_, refused, {}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(Blobs(), after_first);

  auto stored = meta_->GetObject("bkt", "k");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*ReadObjectBytes(*blobs_, *stored), "first version");
}

TEST_F(ObjectIoTest, ABlobShorterThanItsIndexEntryIsAnIoError) {
  ObjectBodyWriter writer(*blobs_, 0);
  ASSERT_TRUE(writer.Append("four").ok());
  meta::ObjectRecord record = Record("short");
  ASSERT_TRUE(writer.Finish(record).ok());
  record.segments[0].size = 10;
  std::string out;
  EXPECT_EQ(AppendSegment(*blobs_, record.segments[0], out).code(), ErrorCode::kIoError);
  DiscardBlobs(*blobs_, record.segments);
  EXPECT_TRUE(Blobs().empty());
  DiscardBlobs(*blobs_, record.segments);  // already gone: nothing to report
}

}  // namespace
}  // namespace serac::objects
