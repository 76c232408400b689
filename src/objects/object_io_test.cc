// The object path over the real embedded stores in a temporary directory.
#include "objects/object_io.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

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
  record.size = 10;
  EXPECT_EQ(ReadObjectBytes(*blobs_, record).status().code(), ErrorCode::kIoError);
  record.segments[0].size = 4;  // the segments agree with their blobs, the object's size does not
  EXPECT_EQ(ReadObjectBytes(*blobs_, record).status().code(), ErrorCode::kIoError);
  DiscardBlobs(*blobs_, record.segments);
  EXPECT_TRUE(Blobs().empty());
  DiscardBlobs(*blobs_, record.segments);  // already gone: nothing to report
}

// Records what a reader of a range received, and how.
class RecordingSink final : public ObjectByteSink {
 public:
  Status Begin(uint64_t length) override {
    calls.push_back("begin " + std::to_string(length));
    return Status::Ok();
  }
  Status Write(std::string_view bytes) override {
    received.append(bytes);
    return Status::Ok();
  }
  Status BeginWithBytes(std::string_view bytes) override {
    calls.push_back("whole " + std::to_string(bytes.size()));
    received.append(bytes);
    return Status::Ok();
  }

  std::vector<std::string> calls;
  std::string received;
};

TEST_F(ObjectIoTest, ARangeIsReadAcrossSegmentsOrFromTheIndexRow) {
  meta::ObjectRecord segmented = Record("parts");
  for (std::string_view part : {"abcd", "efgh", "ij"}) {
    ObjectBodyWriter writer(*blobs_, 0);
    ASSERT_TRUE(writer.Append(part).ok());
    meta::ObjectRecord one;
    ASSERT_TRUE(writer.Finish(one).ok());
    segmented.segments.push_back(one.segments.front());
    segmented.size += part.size();
  }
  RecordingSink middle;
  ASSERT_TRUE(ReadObjectRange(*blobs_, segmented, 2, 7, middle).ok());
  EXPECT_EQ(middle.received, "cdefghi");  // the end of the first, all of the second, the third's start
  EXPECT_EQ(middle.calls, std::vector<std::string>{"begin 7"});
  RecordingSink nothing;
  ASSERT_TRUE(ReadObjectRange(*blobs_, segmented, 4, 0, nothing).ok());
  EXPECT_EQ(nothing.calls, std::vector<std::string>{"begin 0"});
  EXPECT_EQ(*ReadObjectBytes(*blobs_, segmented), "abcdefghij");

  meta::ObjectRecord inline_object = Record("inline");
  inline_object.inline_data = "0123456789";
  inline_object.size = 10;
  RecordingSink inline_range;
  ASSERT_TRUE(ReadObjectRange(*blobs_, inline_object, 3, 4, inline_range).ok());
  EXPECT_EQ(inline_range.received, "3456");
  EXPECT_EQ(inline_range.calls, std::vector<std::string>{"whole 4"});  // head and body at once
}

TEST_F(ObjectIoTest, AMissingBlobIsReportedBeforeTheSinkIsPromisedAnything) {
  meta::ObjectRecord record = Record("gone");
  record.segments.push_back({"0000000000000000000000000000dead", 5});
  record.size = 5;
  RecordingSink sink;
  EXPECT_FALSE(ReadObjectRange(*blobs_, record, 0, 5, sink).ok());
  EXPECT_TRUE(sink.calls.empty());
}

TEST_F(ObjectIoTest, ACopyOwnsItsBlobsAndTheSourceCanGo) {
  ObjectBodyWriter writer(*blobs_, 0);
  ASSERT_TRUE(writer.Append("copied bytes").ok());
  meta::ObjectRecord source = Record("source");
  ASSERT_TRUE(writer.Finish(source).ok());
  meta::ObjectRecord target = Record("target");
  ASSERT_TRUE(CopyObjectBytes(*blobs_, source, target).ok());
  ASSERT_EQ(target.segments.size(), 1u);
  EXPECT_NE(target.segments[0].blob_id, source.segments[0].blob_id);
  DiscardBlobs(*blobs_, source.segments);
  target.size = source.size;
  EXPECT_EQ(*ReadObjectBytes(*blobs_, target), "copied bytes");

  meta::ObjectRecord broken = Record("broken");
  broken.segments = {target.segments[0], {"0000000000000000000000000000dead", 3}};
  meta::ObjectRecord failed = Record("failed");
  EXPECT_FALSE(CopyObjectBytes(*blobs_, broken, failed).ok());
  EXPECT_TRUE(failed.segments.empty());
  EXPECT_EQ(Blobs(), std::set<blob::BlobId>{target.segments[0].blob_id});  // the half-made copy is gone
}

TEST_F(ObjectIoTest, APartTheIndexRefusesLeavesNoBlob) {
  ASSERT_TRUE(meta_->CreateUpload({"upload-1", "bkt", "k", 1, {}, "", ""}).ok());
  ObjectBodyWriter writer(*blobs_, 0);
  ASSERT_TRUE(writer.StartBlob().ok());
  ASSERT_TRUE(writer.Append("part").ok());
  meta::ObjectRecord written;
  ASSERT_TRUE(writer.Finish(written).ok());
  meta::PartRecord part{1, 4, "etag", 1, written.segments[0].blob_id, ""};
  ASSERT_TRUE(CommitPart(*meta_, *blobs_, "upload-1", part).ok());
  EXPECT_EQ(Blobs().size(), 1u);

  ObjectBodyWriter orphan(*blobs_, 0);
  ASSERT_TRUE(orphan.StartBlob().ok());
  meta::ObjectRecord orphan_written;
  ASSERT_TRUE(orphan.Finish(orphan_written).ok());
  part.blob_id = orphan_written.segments[0].blob_id;
  EXPECT_EQ(CommitPart(*meta_, *blobs_, "no-such-upload", part).code(), ErrorCode::kNotFound);
  EXPECT_EQ(Blobs(), std::set<blob::BlobId>{written.segments[0].blob_id});
}

}  // namespace
}  // namespace serac::objects
