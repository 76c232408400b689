// One contract for every MetaStore back end: each test runs on SQLite and on SQLite behind the
// fault-injecting wrapper (with no fault armed it must be indistinguishable, and "reopen" there
// is a simulated crash).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/hash.h"
#include "meta/contract_test_backends_internal.h"
#include "meta/fault_injection_meta_store.h"
#include "meta/meta_store.h"
#include "meta/meta_store_test_util.h"
#include "meta/sqlite/sqlite_meta_store.h"
#include "meta/sqlite/sqlite_meta_store_internal.h"

namespace serac::meta {
namespace {

using testing::KeysOf;
using testing::MakeObject;

class MetaStoreContractTest : public testing::ContractTestBase {
 protected:
  void SetUp() override {
    Open();
    SERAC_ASSERT_OK(store_->CreateBucket({"bucket", 1000}));
  }

  std::optional<sqlite::GroupCommitStats> CommitStats() {
    MetaStore* store = store_.get();
    if (auto* faulty = dynamic_cast<FaultInjectionMetaStore*>(store)) store = faulty->wrapped();
    return SqliteGroupCommitStats(*store);
  }

  std::vector<std::string> Garbage() {
    auto garbage = store_->PeekGarbage(10000);
    EXPECT_TRUE(garbage.ok()) << garbage.status().ToString();
    return garbage.ok() ? *garbage : std::vector<std::string>{};
  }

  std::vector<std::string> ListKeys(const std::string& prefix, const std::string& start_after, uint32_t limit,
                                    const std::string& bucket = "bucket") {
    auto listed = store_->ListObjects({bucket, prefix, start_after, limit, true});
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    return listed.ok() ? KeysOf(*listed) : std::vector<std::string>{};
  }

  ErrorCode GetCode(const std::string& key) { return store_->GetObject("bucket", key).status().code(); }

  Status Put(const std::string& key, const std::string& etag, std::vector<Segment> segments = {},
             WriteCondition condition = {}) {
    return store_->PutObject(MakeObject("bucket", key, etag, std::move(segments)), condition);
  }

  // Puts every key from several threads so that group commit shares the fsyncs.
  void PutAll(const std::vector<std::string>& keys) {
    constexpr size_t kThreads = 8;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = t; i < keys.size(); i += kThreads) {
          if (!Put(keys[i], "e").ok()) ++failures;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
  }
};

bool Contains(const std::vector<std::string>& haystack, const std::string& needle) {
  return std::find(haystack.begin(), haystack.end(), needle) != haystack.end();
}

// ---- Buckets ----

TEST_P(MetaStoreContractTest, BucketLifecycle) {
  EXPECT_EQ(store_->CreateBucket({"bucket", 5}).code(), ErrorCode::kAlreadyExists);
  SERAC_EXPECT_OK(store_->CreateBucket({"another", 2000}));
  auto got = store_->GetBucket("bucket");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->created_ms, 1000);  // the failed duplicate changed nothing
  EXPECT_EQ(store_->GetBucket("missing").status().code(), ErrorCode::kNotFound);

  auto listed = store_->ListBuckets();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].name, "another");
  EXPECT_EQ((*listed)[1].name, "bucket");

  EXPECT_EQ(store_->DeleteBucket("missing").code(), ErrorCode::kNotFound);
  SERAC_EXPECT_OK(store_->DeleteBucket("another"));
  EXPECT_EQ(store_->GetBucket("another").status().code(), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, DeleteBucketRefusedWhileObjectsOrUploadsRemain) {
  SERAC_ASSERT_OK(Put("k", "e1"));
  EXPECT_EQ(store_->DeleteBucket("bucket").code(), ErrorCode::kNotEmpty);
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "k", {}));
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "k", 1, {}, "", ""}));
  EXPECT_EQ(store_->DeleteBucket("bucket").code(), ErrorCode::kNotEmpty);
  SERAC_ASSERT_OK(store_->AbortUpload("bucket", "k", "u1"));
  SERAC_EXPECT_OK(store_->DeleteBucket("bucket"));
}

TEST_P(MetaStoreContractTest, BucketUsageCountsObjectsAndBytesAndFollowsWrites) {
  EXPECT_EQ(store_->GetBucketUsage("missing").status().code(), ErrorCode::kNotFound);
  auto empty = store_->GetBucketUsage("bucket");
  SERAC_ASSERT_OK(empty.status());
  EXPECT_EQ(empty->objects, 0u);
  EXPECT_EQ(empty->bytes, 0u);
  SERAC_ASSERT_OK(Put("a", "e", {{"b1", 10}, {"b2", 5}}));
  SERAC_ASSERT_OK(Put("b", "e", {{"b3", 7}}));
  SERAC_ASSERT_OK(Put("c", "e"));                                               // empty
  SERAC_ASSERT_OK(Put("a", "e2", {{"b4", 1}}));                                 // replaces a's 15 bytes
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "d", 1, {}, "", ""}));  // not counted
  SERAC_ASSERT_OK(store_->CreateBucket({"other", 1}));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject("other", "x", "e", {{"b5", 100}}), {}));
  auto usage = store_->GetBucketUsage("bucket");
  SERAC_ASSERT_OK(usage.status());
  EXPECT_EQ(usage->objects, 3u);
  EXPECT_EQ(usage->bytes, 8u);
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "b", {}));
  usage = store_->GetBucketUsage("bucket");
  SERAC_ASSERT_OK(usage.status());
  EXPECT_EQ(usage->objects, 2u);
  EXPECT_EQ(usage->bytes, 1u);
}

// ---- Objects ----

TEST_P(MetaStoreContractTest, PutAndGetRoundTripEveryField) {
  ObjectRecord object = MakeObject("bucket", "dir/file.txt", "abc-2", {{"b1", 10}, {"b2", 5}});
  object.part_count = 2;
  object.headers.content_type = "text/plain";
  object.headers.content_encoding = "gzip";
  object.headers.content_language = "en";
  object.headers.content_disposition = "attachment";
  object.headers.cache_control = "no-cache";
  object.headers.expires = "Thu, 01 Dec 1994 16:00:00 GMT";
  object.headers.user_metadata = {{"zeta", "1"}, {"alpha", "two words"}};
  object.headers.tags = {{"b", "x"}, {"a", ""}};
  object.checksum = ChecksumRecord{"CRC32C", "AAAAAA==-2", "COMPOSITE"};
  SERAC_ASSERT_OK(store_->PutObject(object, {}));

  auto got = store_->GetObject("bucket", "dir/file.txt");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bucket, "bucket");
  EXPECT_EQ(got->size, 15u);
  EXPECT_EQ(got->etag, "abc-2");
  EXPECT_EQ(got->mtime_ms, object.mtime_ms);
  EXPECT_EQ(got->part_count, 2u);
  EXPECT_EQ(got->headers.content_type, "text/plain");
  EXPECT_EQ(got->headers.content_encoding, "gzip");
  EXPECT_EQ(got->headers.content_language, "en");
  EXPECT_EQ(got->headers.content_disposition, "attachment");
  EXPECT_EQ(got->headers.cache_control, "no-cache");
  EXPECT_EQ(got->headers.expires, object.headers.expires);
  EXPECT_EQ(got->headers.user_metadata, object.headers.user_metadata);
  EXPECT_EQ(got->headers.tags, object.headers.tags);
  ASSERT_TRUE(got->checksum.has_value());
  EXPECT_EQ(got->checksum->algorithm, "CRC32C");
  EXPECT_EQ(got->checksum->value, "AAAAAA==-2");
  EXPECT_EQ(got->checksum->type, "COMPOSITE");
  ASSERT_EQ(got->segments.size(), 2u);
  EXPECT_EQ(got->segments[0].blob_id, "b1");
  EXPECT_EQ(got->segments[0].size, 10u);
  EXPECT_EQ(got->segments[1].blob_id, "b2");
  EXPECT_TRUE(got->inline_data.empty());
}

TEST_P(MetaStoreContractTest, InlineAndEmptyObjects) {
  ObjectRecord small = MakeObject("bucket", "small", "e1");
  small.inline_data = std::string("bytes\0with\xFFnul", 14);
  small.size = small.inline_data.size();
  SERAC_ASSERT_OK(store_->PutObject(small, {}));
  SERAC_ASSERT_OK(Put("empty", "d41d8cd98f00b204e9800998ecf8427e"));

  auto got = store_->GetObject("bucket", "small");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->inline_data, small.inline_data);
  EXPECT_FALSE(got->checksum.has_value());
  auto empty = store_->GetObject("bucket", "empty");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size, 0u);
  EXPECT_TRUE(empty->inline_data.empty());
  EXPECT_TRUE(empty->segments.empty());

  // Replacing inline bytes with other inline bytes leaves no trace of the old ones.
  small.inline_data = "new";
  SERAC_ASSERT_OK(store_->PutObject(small, {}));
  EXPECT_EQ(store_->GetObject("bucket", "small")->inline_data, "new");
  EXPECT_TRUE(Garbage().empty());
}

// An object in pieces: inline stretches and shared texts, named by digest.
struct PieceSpec {
  std::string text;
  bool shared = false;
  bool with_bytes = true;  // a shared piece may leave its bytes out when the store already has them
};

ObjectRecord PiecesObject(const std::string& bucket, const std::string& key,
                          const std::vector<PieceSpec>& specs) {
  ObjectRecord object = MakeObject(bucket, key, "pieces-etag");
  for (const PieceSpec& spec : specs) {
    Piece piece;
    piece.size = spec.text.size();
    object.size += spec.text.size();
    if (spec.shared) {
      const Sha256Digest digest = Sha256(spec.text);
      piece.sha256.assign(reinterpret_cast<const char*>(digest.data()), digest.size());
      if (spec.with_bytes) piece.shared = std::make_shared<const std::string>(spec.text);
    } else {
      object.inline_data += spec.text;
    }
    object.pieces.push_back(std::move(piece));
  }
  return object;
}

TEST_P(MetaStoreContractTest, ObjectsInPiecesStoreSharedTextsOnceAndReadWhole) {
  SERAC_ASSERT_OK(store_->PutObject(
      PiecesObject("bucket", "a", {{"{"}, {"hello", true}, {","}, {"world", true}, {"}"}}), {}));
  // "hello" is stored already: the second object names it by digest alone.
  SERAC_ASSERT_OK(store_->PutObject(PiecesObject("bucket", "b", {{"["}, {"hello", true, false}, {"]"}}), {}));
  auto a = store_->GetObject("bucket", "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->inline_data, "{hello,world}");
  EXPECT_EQ(a->size, 13u);
  EXPECT_TRUE(a->pieces.empty());
  EXPECT_TRUE(a->segments.empty());
  EXPECT_EQ(store_->GetObject("bucket", "b")->inline_data, "[hello]");

  // A digest the store does not hold, without its bytes, is refused and stores nothing.
  EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "c", {{"unknown", true, false}}), {}).code(),
            ErrorCode::kInternal);
  EXPECT_EQ(GetCode("c"), ErrorCode::kNotFound);
  // Pieces that do not add up to the object's size are refused.
  ObjectRecord short_object = PiecesObject("bucket", "c", {{"x"}, {"hello", true, false}});
  short_object.size += 1;
  EXPECT_EQ(store_->PutObject(short_object, {}).code(), ErrorCode::kInternal);

  // Deleting "a" drops "world" (no other user) but keeps "hello" for "b".
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "a", {}));
  EXPECT_EQ(store_->GetObject("bucket", "b")->inline_data, "[hello]");
  EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "c", {{"world", true, false}}), {}).code(),
            ErrorCode::kInternal);
  SERAC_ASSERT_OK(store_->PutObject(PiecesObject("bucket", "c", {{"<"}, {"hello", true, false}, {">"}}), {}));

  // Overwriting "b" with plain bytes releases its use; "c" still holds "hello".
  ObjectRecord plain = MakeObject("bucket", "b", "e");
  plain.inline_data = "plain";
  plain.size = 5;
  SERAC_ASSERT_OK(store_->PutObject(plain, {}));
  EXPECT_EQ(store_->GetObject("bucket", "c")->inline_data, "<hello>");
  EXPECT_TRUE(Garbage().empty());

  Reopen();
  EXPECT_EQ(store_->GetObject("bucket", "c")->inline_data, "<hello>");
  EXPECT_EQ(store_->GetObject("bucket", "b")->inline_data, "plain");
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "c", {}));
  EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "d", {{"hello", true, false}}), {}).code(),
            ErrorCode::kInternal);
}

TEST_P(MetaStoreContractTest, RemovingAWarehouseReleasesTheSharedTextsOfItsObjects) {
  SERAC_ASSERT_OK(store_->catalog().CreateWarehouse({"wh", 1000}, false));
  SERAC_ASSERT_OK(
      store_->PutObject(PiecesObject("wh", "t/metadata/1.json", {{"shared-history", true}, {"1"}}), {}));
  SERAC_ASSERT_OK(store_->PutObject(
      PiecesObject("wh", "t/metadata/2.json", {{"shared-history", true, false}, {"2"}}), {}));
  SERAC_ASSERT_OK(store_->PutObject(PiecesObject("bucket", "kept", {{"kept-history", true}}), {}));
  SERAC_ASSERT_OK(store_->catalog().DeleteWarehouse("wh", true, false));
  EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "x", {{"shared-history", true, false}}), {}).code(),
            ErrorCode::kInternal);
  EXPECT_EQ(store_->GetObject("bucket", "kept")->inline_data, "kept-history");
}

TEST_P(MetaStoreContractTest, ACommitCountsTheTextsOfItsNewAndTrimmedFilesTogether) {
  SERAC_ASSERT_OK(store_->catalog().CreateWarehouse({"wh", 1000}, false));
  MetadataCommit first;
  first.new_files.push_back(
      PiecesObject("wh", "t/metadata/1.json", {{"old-only", true}, {"common", true}, {"1"}}));
  SERAC_ASSERT_OK(store_->catalog().CommitMetadata(first));
  // The next version shares "common", brings "new-only" and trims the first file away.
  MetadataCommit second;
  second.new_files.push_back(
      PiecesObject("wh", "t/metadata/2.json", {{"common", true, false}, {"new-only", true}, {"2"}}));
  second.removed_files.emplace_back("wh", "t/metadata/1.json");
  SERAC_ASSERT_OK(store_->catalog().CommitMetadata(second));
  EXPECT_EQ(store_->GetObject("wh", "t/metadata/2.json")->inline_data, "commonnew-only2");
  EXPECT_EQ(store_->GetObject("wh", "t/metadata/1.json").status().code(), ErrorCode::kNotFound);
  // "old-only" went with the trimmed file; "common" and "new-only" stay for the second.
  EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "probe", {{"old-only", true, false}}), {}).code(),
            ErrorCode::kInternal);
  SERAC_ASSERT_OK(store_->PutObject(PiecesObject("bucket", "probe", {{"common", true, false}}), {}));
  Reopen();
  // Deleting both users of "common" removes it; "new-only" goes with the second file.
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "probe", {}));
  MetadataCommit third;
  third.removed_files.emplace_back("wh", "t/metadata/2.json");
  SERAC_ASSERT_OK(store_->catalog().CommitMetadata(third));
  for (const char* gone : {"common", "new-only"}) {
    EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "probe", {{gone, true, false}}), {}).code(),
              ErrorCode::kInternal)
        << gone;
  }
}

// Long inline stretches, as a metadata file's head and newest entries are: a store may keep them
// in another form (compressed), but reads give back the very bytes, alone or around shared texts.
TEST_P(MetaStoreContractTest, ASharedTextUsedAndReleasedAtOnceIsNeverLost) {
  // Writers that each keep one object naming a common text, replacing it again and again: its
  // use count goes up and down from many transactions at once, and it must neither vanish while an
  // object names it nor outlive the last one.
  constexpr int kWriters = 6;
  constexpr int kRounds = 15;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < kRounds; ++round) {
        const std::string key = "w" + std::to_string(w) + "/" + std::to_string(round);
        Status put = store_->PutObject(PiecesObject("bucket", key, {{"common-history", true}, {key}}), {});
        Status gone = round == 0
                          ? Status::Ok()
                          : store_->DeleteObject(
                                "bucket", "w" + std::to_string(w) + "/" + std::to_string(round - 1), {});
        if (!put.ok() || !gone.ok()) {
          ++failures;
          ADD_FAILURE() << key << ": " << put.ToString() << " / " << gone.ToString();
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  for (int w = 0; w < kWriters; ++w) {
    const std::string key = "w" + std::to_string(w) + "/" + std::to_string(kRounds - 1);
    auto read = store_->GetObject("bucket", key);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(read->inline_data, "common-history" + key);
    SERAC_ASSERT_OK(store_->DeleteObject("bucket", key, {}));
  }
  // The last user gone, the text is gone too.
  EXPECT_EQ(store_->PutObject(PiecesObject("bucket", "probe", {{"common-history", true, false}}), {}).code(),
            ErrorCode::kInternal);
}

TEST_P(MetaStoreContractTest, LongInlineStretchesOfObjectsInPiecesReadBackExactly) {
  std::string head = R"({"format-version":2,"snapshots":[)";
  for (int i = 0; i < 200; ++i)
    head += R"({"snapshot-id":)" + std::to_string(1000 + i) + R"(,"sequence-number":1},)";
  std::string noise;  // does not compress: kept as it is
  uint32_t state = 7;
  for (int i = 0; i < 4096; ++i) {
    state = state * 1103515245u + 12345u;
    noise.push_back(static_cast<char>(state >> 24));
  }
  SERAC_ASSERT_OK(store_->catalog().CreateWarehouse({"wh", 1000}, false));
  MetadataCommit commit;
  commit.new_files.push_back(
      PiecesObject("wh", "t/metadata/1.json", {{head}, {"shared-history", true}, {"]}"}}));
  commit.new_files.push_back(
      PiecesObject("wh", "t/metadata/noise", {{noise}, {"shared-history", true, false}}));
  SERAC_ASSERT_OK(store_->catalog().CommitMetadata(commit));
  SERAC_ASSERT_OK(store_->PutObject(PiecesObject("bucket", "alone", {{head}}), {}));
  Reopen();
  EXPECT_EQ(store_->GetObject("wh", "t/metadata/1.json")->inline_data, head + "shared-history]}");
  EXPECT_EQ(store_->GetObject("wh", "t/metadata/noise")->inline_data, noise + "shared-history");
  EXPECT_EQ(store_->GetObject("bucket", "alone")->inline_data, head);
  // Replaced and deleted like any other object in pieces.
  SERAC_ASSERT_OK(store_->PutObject(PiecesObject("bucket", "alone", {{noise}}), {}));
  EXPECT_EQ(store_->GetObject("bucket", "alone")->inline_data, noise);
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "alone", {}));
  EXPECT_EQ(GetCode("alone"), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, PutAndGetNeedAnExistingBucketAndKey) {
  EXPECT_EQ(store_->PutObject(MakeObject("missing", "k", "e"), {}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(GetCode("absent"), ErrorCode::kNotFound);
  EXPECT_EQ(store_->GetObject("missing", "k").status().code(), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, OverwriteQueuesTheReplacedSegments) {
  SERAC_ASSERT_OK(Put("k", "e1", {{"old-1", 1}, {"old-2", 1}}));
  SERAC_ASSERT_OK(Put("k", "e2", {{"new-1", 1}}));
  EXPECT_EQ(store_->GetObject("bucket", "k")->etag, "e2");
  std::vector<std::string> garbage = Garbage();
  EXPECT_EQ(garbage.size(), 2u);
  EXPECT_TRUE(Contains(garbage, "old-1"));
  EXPECT_TRUE(Contains(garbage, "old-2"));
  EXPECT_FALSE(Contains(garbage, "new-1"));
}

TEST_P(MetaStoreContractTest, DeleteIsIdempotentAndQueuesSegments) {
  SERAC_ASSERT_OK(Put("k", "e1", {{"blob", 3}}));
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "k", {}));
  EXPECT_EQ(GetCode("k"), ErrorCode::kNotFound);
  EXPECT_EQ(Garbage(), std::vector<std::string>{"blob"});
  SERAC_EXPECT_OK(store_->DeleteObject("bucket", "k", {}));
  SERAC_EXPECT_OK(store_->DeleteObject("bucket", "never-existed", {}));
  EXPECT_EQ(store_->DeleteObject("missing", "k", {}).code(), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, ConditionalPut) {
  WriteCondition create_only{true, std::nullopt};
  SERAC_ASSERT_OK(Put("k", "e1", {{"b1", 1}}, create_only));
  EXPECT_EQ(Put("k", "e2", {{"b2", 1}}, create_only).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(store_->GetObject("bucket", "k")->etag, "e1");
  EXPECT_TRUE(Garbage().empty());  // the refused write queued nothing

  EXPECT_EQ(Put("k", "e2", {}, {false, "wrong"}).code(), ErrorCode::kPreconditionFailed);
  SERAC_EXPECT_OK(Put("k", "e2", {}, {false, "e1"}));
  SERAC_EXPECT_OK(Put("k", "e3", {}, {false, "*"}));
  EXPECT_EQ(store_->GetObject("bucket", "k")->etag, "e3");
  EXPECT_EQ(Put("absent", "e1", {}, {false, "*"}).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(Put("absent", "e1", {}, {false, "e1"}).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(GetCode("absent"), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, SetObjectTagsTouchesOnlyTheTags) {
  ObjectRecord object = MakeObject("bucket", "tagged", "e1", {{"blob-1", 4}});
  object.headers.content_type = "text/plain";
  object.headers.user_metadata = {{"color", "blue"}};
  object.headers.tags = {{"old", "1"}};
  object.checksum = ChecksumRecord{"CRC64NVME", "AAAAAAAAAAA=", "FULL_OBJECT"};
  SERAC_ASSERT_OK(store_->PutObject(object, {}));

  SERAC_ASSERT_OK(store_->SetObjectTags("bucket", "tagged", {{"b", "2"}, {"a", ""}}, {false, "e1"}));
  auto got = store_->GetObject("bucket", "tagged");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->headers.tags, (std::vector<std::pair<std::string, std::string>>{{"b", "2"}, {"a", ""}}));
  EXPECT_EQ(got->headers.content_type, "text/plain");
  EXPECT_EQ(got->headers.user_metadata, object.headers.user_metadata);
  EXPECT_EQ(got->etag, "e1");
  EXPECT_EQ(got->mtime_ms, object.mtime_ms);
  ASSERT_TRUE(got->checksum.has_value());
  EXPECT_EQ(got->checksum->value, "AAAAAAAAAAA=");
  ASSERT_EQ(got->segments.size(), 1u);
  EXPECT_EQ(got->segments[0].blob_id, "blob-1");
  EXPECT_TRUE(Garbage().empty());  // the bytes stay where they were: nothing to collect

  // Refused on a stale ETag (tags unchanged), and for missing objects and buckets.
  EXPECT_EQ(store_->SetObjectTags("bucket", "tagged", {}, {false, "e0"}).code(),
            ErrorCode::kPreconditionFailed);
  EXPECT_EQ(store_->GetObject("bucket", "tagged")->headers.tags.size(), 2u);
  EXPECT_EQ(store_->SetObjectTags("bucket", "absent", {{"k", "v"}}, {}).code(), ErrorCode::kNotFound);
  EXPECT_EQ(GetCode("absent"), ErrorCode::kNotFound);
  EXPECT_EQ(store_->SetObjectTags("missing", "tagged", {}, {}).code(), ErrorCode::kNotFound);

  // Clearing the tags, unconditionally; survives a reopen.
  SERAC_ASSERT_OK(store_->SetObjectTags("bucket", "tagged", {}, {}));
  Reopen();
  got = store_->GetObject("bucket", "tagged");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->headers.tags.empty());
  EXPECT_EQ(got->headers.content_type, "text/plain");
}

TEST_P(MetaStoreContractTest, ConditionalDelete) {
  EXPECT_EQ(store_->DeleteObject("bucket", "absent", {false, "*"}).code(), ErrorCode::kPreconditionFailed);
  SERAC_ASSERT_OK(Put("k", "e1"));
  EXPECT_EQ(store_->DeleteObject("bucket", "k", {false, "other"}).code(), ErrorCode::kPreconditionFailed);
  SERAC_EXPECT_OK(store_->GetObject("bucket", "k").status());
  SERAC_EXPECT_OK(store_->DeleteObject("bucket", "k", {false, "e1"}));
  EXPECT_EQ(GetCode("k"), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, IfNoneMatchRaceHasExactlyOneWinner) {
  constexpr int kThreads = 8;
  std::barrier start(kThreads);
  std::atomic<int> created{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      Status status =
          Put("race", "etag-" + std::to_string(i), {{"blob-" + std::to_string(i), 1}}, {true, std::nullopt});
      if (status.ok()) {
        ++created;
      } else if (status.code() == ErrorCode::kPreconditionFailed) {
        ++refused;
      } else {
        ++other;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(refused.load(), kThreads - 1);
  EXPECT_EQ(other.load(), 0);
  EXPECT_TRUE(Garbage().empty());
}

// ---- Listing ----

TEST_P(MetaStoreContractTest, ListingIsInByteOrder) {
  std::vector<std::string> keys = {
      "a0", "a/b", "a/", "a", "a\x7F", "a\xC3\xA9", "b", "\xFF", "A", "a b", std::string("a\0z", 3)};
  for (const std::string& key : keys) SERAC_ASSERT_OK(Put(key, "e"));
  std::sort(keys.begin(), keys.end());  // std::string compares bytes as unsigned, like memcmp
  EXPECT_EQ(ListKeys("", "", 1000), keys);
  EXPECT_EQ(ListKeys("a/", "", 1000), (std::vector<std::string>{"a/", "a/b"}));
  EXPECT_EQ(ListKeys("a\xC3", "", 1000), std::vector<std::string>{"a\xC3\xA9"});
  EXPECT_EQ(ListKeys("", "a\x7F", 2), (std::vector<std::string>{"a\xC3\xA9", "b"}));

  auto brief = store_->ListObjects({"bucket", "b", "", 10, false});
  ASSERT_TRUE(brief.ok());
  ASSERT_EQ(brief->size(), 1u);
  EXPECT_EQ((*brief)[0].etag, "e");
  EXPECT_EQ((*brief)[0].bucket, "bucket");
}

TEST_P(MetaStoreContractTest, PaginationWithPrefixStartAfterAndLimit) {
  SERAC_ASSERT_OK(store_->CreateBucket({"other", 1}));
  SERAC_ASSERT_OK(store_->PutObject(MakeObject("other", "k/00001", "e"), {}));
  std::vector<std::string> expected;
  for (int i = 0; i < 2500; ++i) {
    char key[32];
    std::snprintf(key, sizeof key, "k/%05d", i);
    expected.push_back(key);
  }
  PutAll(expected);
  SERAC_ASSERT_OK(Put("j", "e"));
  SERAC_ASSERT_OK(Put("k0", "e"));
  SERAC_ASSERT_OK(Put("k/", "e"));

  std::vector<std::string> seen;
  std::string start_after;
  for (int page = 0; page < 10; ++page) {
    std::vector<std::string> keys = ListKeys("k/", start_after, 1000);
    if (keys.empty()) break;
    EXPECT_LE(keys.size(), 1000u);
    seen.insert(seen.end(), keys.begin(), keys.end());
    start_after = keys.back();
  }
  expected.insert(expected.begin(), "k/");
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(ListKeys("k/", "a", 2), (std::vector<std::string>{"k/", "k/00000"}));  // before prefix
  EXPECT_EQ(ListKeys("k/", "k/02499", 5), std::vector<std::string>{});             // after the last
  EXPECT_EQ(ListKeys("k/", "k0", 5), std::vector<std::string>{});                  // past the prefix
  EXPECT_TRUE(ListKeys("", "", 0).empty());
  EXPECT_EQ(ListKeys("", "k/02499", 10), std::vector<std::string>{"k0"});
}

TEST_P(MetaStoreContractTest, PrefixOfFFBytesHasNoUpperBound) {
  const std::string ff2 = "\xFF\xFF";
  std::vector<std::string> keys = {"\xFE",    "\xFF",           ff2,       ff2 + std::string(1, '\0'),
                                   ff2 + "a", ff2 + "\xFF\xFF", "\xFF\xFE"};
  for (const std::string& key : keys) SERAC_ASSERT_OK(Put(key, "e"));
  std::vector<std::string> expected = {ff2, ff2 + std::string(1, '\0'), ff2 + "a", ff2 + "\xFF\xFF"};
  EXPECT_EQ(ListKeys(ff2, "", 100), expected);
  EXPECT_EQ(ListKeys(ff2, ff2 + "a", 100), std::vector<std::string>{ff2 + "\xFF\xFF"});
  EXPECT_EQ(ListKeys("\xFF\xFE", "", 100), std::vector<std::string>{"\xFF\xFE"});
}

TEST_P(MetaStoreContractTest, ListingAMissingBucketFails) {
  EXPECT_EQ(store_->ListObjects({"missing", "", "", 10, true}).status().code(), ErrorCode::kNotFound);
}

// ---- Multipart ----

PartRecord Part(uint32_t number, const std::string& blob_id) {
  return PartRecord{number, 5 * 1024 * 1024, "etag-" + blob_id, 1700000000000 + number, blob_id, ""};
}

TEST_P(MetaStoreContractTest, MultipartCompleteKeepsUsedPartsAndQueuesTheRest) {
  EXPECT_EQ(store_->CreateUpload({"u", "missing", "k", 1, {}, "", ""}).code(), ErrorCode::kNotFound);
  UploadRecord upload{"u1", "bucket", "big", 77, {}, "SHA256", "COMPOSITE"};
  upload.headers.content_type = "video/mp4";
  upload.headers.user_metadata = {{"m", "v"}};
  SERAC_ASSERT_OK(store_->CreateUpload(upload));
  auto got = store_->GetUpload("bucket", "big", "u1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->initiated_ms, 77);
  EXPECT_EQ(got->headers.content_type, "video/mp4");
  EXPECT_EQ(got->headers.user_metadata, upload.headers.user_metadata);
  EXPECT_EQ(got->checksum_algorithm, "SHA256");
  EXPECT_EQ(got->checksum_type, "COMPOSITE");
  EXPECT_EQ(store_->GetUpload("bucket", "other", "u1").status().code(), ErrorCode::kNotFound);

  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1")));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(2, "p2-old")));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(3, "p3")));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(2, "p2")));  // replaces part 2
  EXPECT_EQ(Garbage(), std::vector<std::string>{"p2-old"});
  SERAC_ASSERT_OK(store_->ForgetGarbage({"p2-old"}));

  auto page = store_->ListParts("u1", 0, 2);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].part_number, 1u);
  EXPECT_EQ((*page)[1].blob_id, "p2");
  EXPECT_EQ((*page)[1].etag, "etag-p2");
  EXPECT_EQ((*page)[1].size, 5u * 1024 * 1024);
  page = store_->ListParts("u1", 2, 10);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 1u);
  EXPECT_EQ((*page)[0].part_number, 3u);

  ObjectRecord object = MakeObject("bucket", "big", "md5-2", {{"p1", 5}, {"p2", 5}});
  object.part_count = 2;
  SERAC_ASSERT_OK(store_->CompleteUpload("u1", object, {}));
  auto completed = store_->GetObject("bucket", "big");
  ASSERT_TRUE(completed.ok());
  ASSERT_EQ(completed->segments.size(), 2u);
  EXPECT_EQ(completed->segments[0].blob_id, "p1");
  EXPECT_EQ(completed->segments[1].blob_id, "p2");
  EXPECT_EQ(completed->part_count, 2u);
  EXPECT_EQ(Garbage(), std::vector<std::string>{"p3"});
  EXPECT_EQ(store_->GetUpload("bucket", "big", "u1").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->ListParts("u1", 0, 10).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->PutPart("u1", Part(4, "late")).code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->CompleteUpload("u1", object, {}).code(), ErrorCode::kNotFound);
}

TEST_P(MetaStoreContractTest, CompleteReplacesAnExistingObject) {
  SERAC_ASSERT_OK(Put("k", "single", {{"old", 1}}));
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "k", 1, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1")));
  SERAC_ASSERT_OK(store_->CompleteUpload("u1", MakeObject("bucket", "k", "m-1", {{"p1", 1}}), {}));
  EXPECT_EQ(store_->GetObject("bucket", "k")->etag, "m-1");
  EXPECT_EQ(Garbage(), std::vector<std::string>{"old"});
}

TEST_P(MetaStoreContractTest, CompleteWithFailingConditionLeavesTheUploadIntact) {
  SERAC_ASSERT_OK(Put("k", "existing", {{"old", 1}}));
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "k", 1, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1")));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(2, "p2")));
  ObjectRecord object = MakeObject("bucket", "k", "m-1", {{"p1", 1}});
  EXPECT_EQ(store_->CompleteUpload("u1", object, {true, std::nullopt}).code(),
            ErrorCode::kPreconditionFailed);
  EXPECT_EQ(store_->CompleteUpload("u1", object, {false, "nope"}).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(store_->GetObject("bucket", "k")->etag, "existing");
  SERAC_EXPECT_OK(store_->GetUpload("bucket", "k", "u1").status());
  EXPECT_EQ(store_->ListParts("u1", 0, 10)->size(), 2u);
  EXPECT_TRUE(Garbage().empty());
  // An upload is completed only under its own key.
  EXPECT_EQ(store_->CompleteUpload("u1", MakeObject("bucket", "other", "m-1"), {}).code(),
            ErrorCode::kNotFound);
  SERAC_EXPECT_OK(store_->CompleteUpload("u1", object, {false, "existing"}));
}

// Complete assembles the object from the parts it read before its transaction. A part uploaded
// again in between has a new blob and its old one is queued for collection: the object must not
// be made of the old one (it would read as missing once collected).
TEST_P(MetaStoreContractTest, CompleteRefusesPartsReplacedSinceTheyWereRead) {
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "k", 1, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1-read")));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(2, "p2")));
  ObjectRecord object = MakeObject("bucket", "k", "m-2", {{"p1-read", 1}, {"p2", 1}});
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1-again")));  // while Complete assembled `object`
  EXPECT_EQ(Garbage(), std::vector<std::string>{"p1-read"});
  EXPECT_EQ(store_->CompleteUpload("u1", object, {}).code(), ErrorCode::kConflict);
  EXPECT_EQ(store_->GetObject("bucket", "k").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->ListParts("u1", 0, 10)->size(), 2u);  // the upload is intact: complete it again
  SERAC_EXPECT_OK(
      store_->CompleteUpload("u1", MakeObject("bucket", "k", "m-2", {{"p1-again", 1}, {"p2", 1}}), {}));
  EXPECT_EQ(store_->GetObject("bucket", "k")->segments[0].blob_id, "p1-again");
}

TEST_P(MetaStoreContractTest, AbortQueuesEveryPart) {
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "k", 1, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1")));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(2, "p2")));
  EXPECT_EQ(store_->AbortUpload("bucket", "wrong-key", "u1").code(), ErrorCode::kNotFound);
  SERAC_ASSERT_OK(store_->AbortUpload("bucket", "k", "u1"));
  std::vector<std::string> garbage = Garbage();
  std::sort(garbage.begin(), garbage.end());
  EXPECT_EQ(garbage, (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(store_->GetUpload("bucket", "k", "u1").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->AbortUpload("bucket", "k", "u1").code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->PutPart("u1", Part(3, "p3")).code(), ErrorCode::kNotFound);
}

std::vector<std::string> UploadIds(const Result<std::vector<UploadRecord>>& uploads) {
  std::vector<std::string> ids;
  if (!uploads.ok()) return {"error: " + uploads.status().ToString()};
  for (const UploadRecord& upload : *uploads) ids.push_back(upload.key + "#" + upload.upload_id);
  return ids;
}

TEST_P(MetaStoreContractTest, ListUploadsWithPrefixAndMarkers) {
  for (const auto& [key, id] : std::vector<std::pair<std::string, std::string>>{
           {"a/1", "u2"}, {"a/1", "u1"}, {"a/2", "u3"}, {"b", "u4"}, {"a/1", "u0"}}) {
    SERAC_ASSERT_OK(store_->CreateUpload({id, "bucket", key, 1, {}, "", ""}));
  }
  EXPECT_EQ(store_->CreateUpload({"u1", "bucket", "x", 1, {}, "", ""}).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(UploadIds(store_->ListUploads({"bucket", "", "", "", 1000})),
            (std::vector<std::string>{"a/1#u0", "a/1#u1", "a/1#u2", "a/2#u3", "b#u4"}));
  EXPECT_EQ(UploadIds(store_->ListUploads({"bucket", "a/", "", "", 2})),
            (std::vector<std::string>{"a/1#u0", "a/1#u1"}));
  EXPECT_EQ(UploadIds(store_->ListUploads({"bucket", "a/", "a/1", "u1", 10})),
            (std::vector<std::string>{"a/1#u2", "a/2#u3"}));
  EXPECT_EQ(UploadIds(store_->ListUploads({"bucket", "a/", "a/1", "", 10})),
            (std::vector<std::string>{"a/2#u3"}));
  EXPECT_EQ(store_->ListUploads({"missing", "", "", "", 10}).status().code(), ErrorCode::kNotFound);
}

// ---- Garbage collection ----

TEST_P(MetaStoreContractTest, PeekAndForgetGarbage) {
  for (int i = 0; i < 5; ++i) {
    std::string key = "k" + std::to_string(i);
    SERAC_ASSERT_OK(Put(key, "e", {{"blob-" + std::to_string(i), 1}}));
    SERAC_ASSERT_OK(store_->DeleteObject("bucket", key, {}));
  }
  auto first = store_->PeekGarbage(3);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 3u);
  EXPECT_EQ(Garbage().size(), 5u);  // peeking removes nothing
  SERAC_ASSERT_OK(store_->ForgetGarbage(*first));
  SERAC_ASSERT_OK(store_->ForgetGarbage({"not-queued"}));
  std::vector<std::string> rest = Garbage();
  EXPECT_EQ(rest.size(), 2u);
  for (const std::string& id : *first) EXPECT_FALSE(Contains(rest, id));
}

TEST_P(MetaStoreContractTest, ForEachReferencedBlobSeesObjectsAndParts) {
  SERAC_ASSERT_OK(Put("k1", "e", {{"o1", 1}, {"o2", 1}}));
  ObjectRecord small = MakeObject("bucket", "inline", "e");
  small.inline_data = "xyz";
  SERAC_ASSERT_OK(store_->PutObject(small, {}));
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "k2", 1, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(1, "p1")));
  SERAC_ASSERT_OK(Put("gone", "e", {{"deleted", 1}}));
  SERAC_ASSERT_OK(store_->DeleteObject("bucket", "gone", {}));

  std::set<std::string> seen;
  SERAC_ASSERT_OK(store_->ForEachReferencedBlob([&](const std::string& id) {
    seen.insert(id);
    return Status::Ok();
  }));
  EXPECT_EQ(seen, (std::set<std::string>{"o1", "o2", "p1"}));

  Status stop = store_->ForEachReferencedBlob(
      [](const std::string&) { return Error(ErrorCode::kIoError, "visitor failed"); });
  EXPECT_EQ(stop.code(), ErrorCode::kIoError);
}

// ---- Durability and concurrency ----

TEST_P(MetaStoreContractTest, AcknowledgedStateSurvivesReopen) {
  SERAC_ASSERT_OK(Put("kept", "e1", {{"b1", 1}}));
  SERAC_ASSERT_OK(Put("replaced", "e1", {{"b2", 1}}));
  SERAC_ASSERT_OK(Put("replaced", "e2", {{"b3", 1}}));
  SERAC_ASSERT_OK(store_->CreateUpload({"u1", "bucket", "mp", 5, {}, "", ""}));
  SERAC_ASSERT_OK(store_->PutPart("u1", Part(7, "p7")));
  ASSERT_NO_FATAL_FAILURE(Reopen());

  EXPECT_EQ(store_->GetObject("bucket", "kept")->etag, "e1");
  EXPECT_EQ(store_->GetObject("bucket", "replaced")->etag, "e2");
  EXPECT_EQ(Garbage(), std::vector<std::string>{"b2"});
  SERAC_EXPECT_OK(store_->GetUpload("bucket", "mp", "u1").status());
  auto parts = store_->ListParts("u1", 0, 10);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].blob_id, "p7");
  EXPECT_EQ(store_->CreateBucket({"bucket", 1}).code(), ErrorCode::kAlreadyExists);
}

TEST_P(MetaStoreContractTest, ALeaseHasOneHolderUntilItEndsOrIsReleased) {
  using std::chrono::milliseconds;
  auto taken = store_->AcquireLease("gc", "node-a", milliseconds(60000));
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_TRUE(*taken);
  // Another holder is refused while it runs; its holder renews it.
  EXPECT_FALSE(*store_->AcquireLease("gc", "node-b", milliseconds(60000)));
  EXPECT_TRUE(*store_->AcquireLease("gc", "node-a", milliseconds(60000)));
  auto lease = store_->GetLease("gc");
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_TRUE(lease->has_value());
  EXPECT_EQ((*lease)->holder, "node-a");
  // Leases are independent of each other, and survive a restart.
  EXPECT_TRUE(*store_->AcquireLease("maintenance/wh/t1", "node-b", milliseconds(60000)));
  Reopen();
  EXPECT_FALSE(*store_->AcquireLease("gc", "node-b", milliseconds(60000)));
  EXPECT_EQ((*store_->GetLease("maintenance/wh/t1"))->holder, "node-b");
  // Releasing by another holder changes nothing; by the holder, frees it at once.
  SERAC_ASSERT_OK(store_->ReleaseLease("gc", "node-b"));
  EXPECT_FALSE(*store_->AcquireLease("gc", "node-b", milliseconds(60000)));
  SERAC_ASSERT_OK(store_->ReleaseLease("gc", "node-a"));
  EXPECT_FALSE(store_->GetLease("gc")->has_value());
  EXPECT_TRUE(*store_->AcquireLease("gc", "node-b", milliseconds(60000)));
  SERAC_ASSERT_OK(store_->ReleaseLease("never-taken", "node-a"));
}

TEST_P(MetaStoreContractTest, AnExpiredLeaseIsTakenOver) {
  using std::chrono::milliseconds;
  ASSERT_TRUE(*store_->AcquireLease("gc", "node-a", milliseconds(200)));
  EXPECT_FALSE(*store_->AcquireLease("gc", "node-b", milliseconds(200)));
  std::this_thread::sleep_for(milliseconds(400));
  // The holder died without releasing it: nobody holds it now, and another takes it.
  EXPECT_FALSE(store_->GetLease("gc")->has_value());
  EXPECT_TRUE(*store_->AcquireLease("gc", "node-b", milliseconds(60000)));
  EXPECT_FALSE(*store_->AcquireLease("gc", "node-a", milliseconds(60000)));
}

TEST_P(MetaStoreContractTest, ForgettingExpiredLeasesKeepsEveryLeaseThatRuns) {
  using std::chrono::milliseconds;
  ASSERT_TRUE(*store_->AcquireLease("console/signed-out/old", "signed-out", milliseconds(100)));
  ASSERT_TRUE(*store_->AcquireLease("console/signed-out/new", "signed-out", milliseconds(60000)));
  ASSERT_TRUE(*store_->AcquireLease("console/other", "node-a", milliseconds(100)));
  ASSERT_TRUE(*store_->AcquireLease("gc", "node-a", milliseconds(60000)));
  std::this_thread::sleep_for(milliseconds(300));
  SERAC_ASSERT_OK(store_->ForgetExpiredLeases("console/signed-out/"));
  SERAC_ASSERT_OK(store_->ForgetExpiredLeases("no-such-prefix/"));
  auto kept = store_->GetLease("console/signed-out/new");
  ASSERT_TRUE(kept.ok() && kept->has_value());
  EXPECT_EQ((*kept)->holder, "signed-out");
  EXPECT_TRUE(store_->GetLease("gc")->has_value());
  EXPECT_FALSE(store_->GetLease("console/signed-out/old")->has_value());
  // A forgotten lease is free for anyone, as an expired one is.
  EXPECT_TRUE(*store_->AcquireLease("console/signed-out/old", "node-b", milliseconds(60000)));
  EXPECT_FALSE(*store_->AcquireLease("console/signed-out/new", "node-b", milliseconds(60000)));
}

TEST_P(MetaStoreContractTest, RacingHoldersGetALeaseOnce) {
  constexpr int kHolders = 8;
  std::atomic<int> winners{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kHolders; ++i) {
    threads.emplace_back([&, i] {
      auto taken =
          store_->AcquireLease("race", "node-" + std::to_string(i), std::chrono::milliseconds(60000));
      if (!taken.ok()) {
        ++failures;
      } else if (*taken) {
        ++winners;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(winners.load(), 1);
}

TEST_P(MetaStoreContractTest, GroupCommitUnderConcurrentPuts) {
  constexpr int kThreads = 16;
  constexpr int kPutsPerThread = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPutsPerThread; ++i) {
        std::string key = "t" + std::to_string(t) + "/" + std::to_string(i);
        if (!Put(key, "e", {{key, 1}}).ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto listed = store_->ListObjects({"bucket", "t", "", 10000, false});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), static_cast<size_t>(kThreads * kPutsPerThread));

  // The embedded back end shares transactions among concurrent writers (group commit).
  std::optional<sqlite::GroupCommitStats> stats = CommitStats();
  if (GetParam().name.find("Sqlite") == std::string::npos) return;
  ASSERT_TRUE(stats.has_value());
  EXPECT_GT(stats->largest_batch, 1u);
  EXPECT_LT(stats->transactions, stats->writes);
}

SERAC_INSTANTIATE_CONTRACT_SUITE(MetaStoreContractTest);

}  // namespace
}  // namespace serac::meta
