// The BlobStore contract as parameterised tests: every back end's test binary includes this file
// once (in one .cc) and instantiates BlobStoreContractTest with its Backend values, so the same
// cases run on the directory store (blob_store_contract_test.cc) and on back ends that live above
// blob/ in the module order (client/s3_blob_store_test.cc). A Backend opens a store at a root it is
// given (a fresh temporary directory per test; back ends that are not directories use its name).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "blob/blob_store.h"

namespace serac::blob {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMiB = 1024 * 1024;

// A fresh directory under the system temp dir, removed with everything in it at the end.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "serac-blob-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Backend {
  std::string name;
  std::function<std::unique_ptr<BlobStore>(const std::string& root)> open;
  // Writers keep temporaries in <root>/tmp, which SweepTemporaryFiles removes (a directory store);
  // false where an uncommitted writer leaves nothing to sweep (an upstream S3 service).
  bool local_temporaries = true;
};

std::string RandomBytes(std::mt19937_64& rng, size_t size) {
  std::string data(size, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  return data;
}

// Writes `data` in random-sized chunks (some tiny, some larger than the writer's buffer).
Result<BlobId> WriteBlob(BlobStore& store, std::string_view data, std::mt19937_64& rng) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> writer, store.Create());
  size_t position = 0;
  while (position < data.size()) {
    size_t chunk = (rng() % 4 == 0) ? rng() % (3 * kMiB) : rng() % 5000;
    chunk = std::min(chunk, data.size() - position);
    SERAC_RETURN_IF_ERROR(writer->Append(data.data() + position, chunk));
    position += chunk;
  }
  if (writer->size() != data.size()) return Error(ErrorCode::kInternal, "writer size mismatch");
  SERAC_RETURN_IF_ERROR(writer->Commit());
  return writer->id();
}

Result<BlobId> WriteBlob(BlobStore& store, std::string_view data) {
  std::mt19937_64 rng(data.size());
  return WriteBlob(store, data, rng);
}

// Reads the whole blob back with random-sized ReadAt calls.
Result<std::string> ReadBlob(BlobStore& store, const BlobId& id) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<BlobReader> reader, store.Open(id));
  std::string out(reader->size(), '\0');
  std::mt19937_64 rng(reader->size() + 1);
  uint64_t offset = 0;
  while (offset < out.size()) {
    size_t want = std::min<size_t>(1 + rng() % (2 * kMiB), out.size() - offset);
    SERAC_ASSIGN_OR_RETURN(size_t got, reader->ReadAt(offset, out.data() + offset, want));
    if (got == 0) return Error(ErrorCode::kInternal, "unexpected end of blob");
    offset += got;
  }
  char extra = 0;
  SERAC_ASSIGN_OR_RETURN(size_t past_end, reader->ReadAt(out.size(), &extra, 1));
  if (past_end != 0) return Error(ErrorCode::kInternal, "read past the end returned data");
  return out;
}

std::set<BlobId> ListBlobs(BlobStore& store) {
  std::set<BlobId> ids;
  Status status = store.ForEachBlob([&](const BlobId& id) {
    ids.insert(id);
    return Status::Ok();
  });
  EXPECT_TRUE(status.ok()) << status.ToString();
  return ids;
}

size_t CountEntries(const std::string& dir) {
  std::error_code error;
  auto it = fs::directory_iterator(dir, error);
  if (error) return 0;
  return static_cast<size_t>(std::distance(it, fs::directory_iterator()));
}

class BlobStoreContractTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(directory_.path().empty()) << "mkdtemp failed";
    root_ = directory_.path() + "/store";
    store_ = GetParam().open(root_);
    ASSERT_NE(store_, nullptr);
  }
  // Both back ends keep local temporaries in <root>/tmp.
  size_t TemporaryFileCount() const { return CountEntries(root_ + "/tmp"); }

  TemporaryDirectory directory_;
  std::string root_;
  std::unique_ptr<BlobStore> store_;
};

TEST_P(BlobStoreContractTest, SmallAndEmptyBlobsReadBack) {
  for (std::string data : {std::string(), std::string("x"), std::string("hello, blob\0world", 17)}) {
    Result<BlobId> id = WriteBlob(*store_, data);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(id->size(), 32u);
    EXPECT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos);
    Result<std::string> read = ReadBlob(*store_, *id);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(*read, data);
  }
  EXPECT_EQ(ListBlobs(*store_).size(), 3u);
  EXPECT_EQ(TemporaryFileCount(), 0u);
}

TEST_P(BlobStoreContractTest, MultiMebibyteBlobWithRandomChunkingReadsBack) {
  std::mt19937_64 rng(1234);
  std::string data = RandomBytes(rng, 7 * kMiB + 123);
  Result<BlobId> id = WriteBlob(*store_, data, rng);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Result<std::string> read = ReadBlob(*store_, *id);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(*read == data);

  Result<std::unique_ptr<BlobReader>> reader = store_->Open(*id);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), data.size());
  char middle[100];
  Result<size_t> got = (*reader)->ReadAt(5 * kMiB, middle, sizeof(middle));
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(*got, sizeof(middle));
  EXPECT_EQ(std::string_view(middle, sizeof(middle)),
            std::string_view(data).substr(5 * kMiB, sizeof(middle)));
  // A short read at the end returns only what is there.
  Result<size_t> tail = (*reader)->ReadAt(data.size() - 10, middle, sizeof(middle));
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, 10u);
}

TEST_P(BlobStoreContractTest, NativeFdReadsTheSameBytes) {
  Result<BlobId> id = WriteBlob(*store_, "zero-copy bytes");
  ASSERT_TRUE(id.ok());
  Result<std::unique_ptr<BlobReader>> reader = store_->Open(*id);
  ASSERT_TRUE(reader.ok());
  int fd = (*reader)->native_fd();
  if (fd < 0) GTEST_SKIP() << "back end has no file descriptors";
  char buffer[64];
  ssize_t got = pread(fd, buffer, sizeof(buffer), 5);
  ASSERT_EQ(got, 10);
  EXPECT_EQ(std::string_view(buffer, 10), "copy bytes");
}

TEST_P(BlobStoreContractTest, UncommittedAndAbortedBlobsNeverAppear) {
  Result<BlobId> committed = WriteBlob(*store_, "kept");
  ASSERT_TRUE(committed.ok());
  BlobId aborted_id;
  {
    Result<std::unique_ptr<BlobWriter>> aborted = store_->Create();
    ASSERT_TRUE(aborted.ok());
    ASSERT_TRUE((*aborted)->Append("abc", 3).ok());
    aborted_id = (*aborted)->id();
    (*aborted)->Abort();
    EXPECT_FALSE((*aborted)->Commit().ok()) << "commit after abort must fail";
  }
  BlobId dropped_id;
  {
    Result<std::unique_ptr<BlobWriter>> dropped = store_->Create();
    ASSERT_TRUE(dropped.ok());
    ASSERT_TRUE((*dropped)->Append("abc", 3).ok());
    dropped_id = (*dropped)->id();
  }  // destroyed without Commit
  Result<std::unique_ptr<BlobWriter>> pending = store_->Create();
  ASSERT_TRUE(pending.ok());
  std::string big(3 * kMiB, 'p');
  ASSERT_TRUE((*pending)->Append(big.data(), big.size()).ok());

  EXPECT_EQ(ListBlobs(*store_), std::set<BlobId>{*committed});
  EXPECT_EQ(store_->Open(aborted_id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->Open(dropped_id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->Open((*pending)->id()).status().code(), ErrorCode::kNotFound);
  if (GetParam().local_temporaries) {
    EXPECT_EQ(TemporaryFileCount(), 1u) << "only the pending writer has a temp file";
    // The start-up sweep (as after a crash that left the pending writer behind) empties tmp/ and a
    // writer whose temp file was swept cannot commit.
    ASSERT_TRUE(store_->SweepTemporaryFiles().ok());
    EXPECT_EQ(TemporaryFileCount(), 0u);
    EXPECT_FALSE((*pending)->Commit().ok());
  } else {
    ASSERT_TRUE(store_->SweepTemporaryFiles().ok());
    (*pending)->Abort();
  }
  EXPECT_EQ(ListBlobs(*store_), std::set<BlobId>{*committed});
  Result<std::string> kept = ReadBlob(*store_, *committed);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, "kept");
}

TEST_P(BlobStoreContractTest, WriterRejectsUseAfterCommit) {
  Result<std::unique_ptr<BlobWriter>> writer = store_->Create();
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("once", 4).ok());
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_FALSE((*writer)->Append("more", 4).ok());
  EXPECT_FALSE((*writer)->Commit().ok());
  (*writer)->Abort();  // must not remove a committed blob
  Result<std::string> read = ReadBlob(*store_, (*writer)->id());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "once");
}

TEST_P(BlobStoreContractTest, RemoveIsIdempotent) {
  Result<BlobId> id = WriteBlob(*store_, "doomed");
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(store_->Remove(*id).ok());
  EXPECT_TRUE(store_->Remove(*id).ok());
  EXPECT_TRUE(store_->Remove("0123456789abcdef0123456789abcdef").ok());
  EXPECT_EQ(store_->Open(*id).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(ListBlobs(*store_).empty());
}

TEST_P(BlobStoreContractTest, BadIdsAreRejected) {
  for (const char* bad : {"", "../../../../etc/passwd", "0123456789abcdef0123456789abcde",
                          "0123456789abcdef0123456789abcdef0", "0123456789ABCDEF0123456789ABCDEF",
                          "0123456789abcdef0123456789abcde/", "..23456789abcdef0123456789abcdef",
                          "0123456789abcdef\0"
                          "123456789abcdef"}) {
    BlobId id = bad;
    EXPECT_EQ(store_->Open(id).status().code(), ErrorCode::kInvalidArgument) << id;
    EXPECT_EQ(store_->Remove(id).code(), ErrorCode::kInvalidArgument) << id;
    EXPECT_EQ(store_->CreateFromRange(id, 0, 0).status().code(), ErrorCode::kInvalidArgument) << id;
    EXPECT_EQ(store_->CreateWithId(id).status().code(), ErrorCode::kInvalidArgument) << id;
  }
  BlobId with_nul(
      "0123456789abcdef\0"
      "123456789abcde",
      32);
  EXPECT_EQ(store_->Open(with_nul).status().code(), ErrorCode::kInvalidArgument);
}

TEST_P(BlobStoreContractTest, ABlobGivenItsIdIsWrittenOnceAndNeverReplaced) {
  const BlobId id = "0123456789abcdef0123456789abcdef";
  auto writer = store_->CreateWithId(id);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_EQ((*writer)->id(), id);
  ASSERT_TRUE((*writer)->Append("first", 5).ok());
  // Not there before its commit.
  EXPECT_EQ(store_->Open(id).status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_EQ(*ReadBlob(*store_, id), "first");
  EXPECT_EQ(ListBlobs(*store_), std::set<BlobId>{id});
  // A second writer of that id fails at its commit, and the first blob stays as it was.
  auto again = store_->CreateWithId(id);
  if (again.ok()) {
    ASSERT_TRUE((*again)->Append("second!", 7).ok());
    EXPECT_EQ((*again)->Commit().code(), ErrorCode::kAlreadyExists);
  } else {
    EXPECT_EQ(again.status().code(), ErrorCode::kAlreadyExists);
  }
  EXPECT_EQ(*ReadBlob(*store_, id), "first");
  EXPECT_EQ(TemporaryFileCount(), 0u);
}

TEST_P(BlobStoreContractTest, MissingBlobIsNotFound) {
  const BlobId missing = "ffffffffffffffffffffffffffffffff";
  EXPECT_EQ(store_->Open(missing).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->CreateFromRange(missing, 0, 1).status().code(), ErrorCode::kNotFound);
}

TEST_P(BlobStoreContractTest, CreateFromRangeCopiesExactlyTheRange) {
  std::mt19937_64 rng(99);
  std::string data = RandomBytes(rng, 3 * kMiB + 17);
  Result<BlobId> source = WriteBlob(*store_, data, rng);
  ASSERT_TRUE(source.ok());
  struct Range {
    uint64_t offset, length;
  };
  for (Range range : {Range{0, data.size()}, Range{1, 1}, Range{kMiB - 3, 2 * kMiB + 5},
                      Range{data.size(), 0}, Range{0, 0}, Range{data.size() - 1, 1}}) {
    Result<BlobId> copy = store_->CreateFromRange(*source, range.offset, range.length);
    ASSERT_TRUE(copy.ok()) << copy.status().ToString();
    EXPECT_NE(*copy, *source);
    Result<std::string> read = ReadBlob(*store_, *copy);
    ASSERT_TRUE(read.ok());
    EXPECT_TRUE(*read == data.substr(range.offset, range.length)) << range.offset << "+" << range.length;
  }
  EXPECT_EQ(store_->CreateFromRange(*source, data.size(), 1).status().code(), ErrorCode::kInvalidRange);
  EXPECT_EQ(store_->CreateFromRange(*source, 1, data.size()).status().code(), ErrorCode::kInvalidRange);
  EXPECT_EQ(store_->CreateFromRange(*source, UINT64_MAX, 2).status().code(), ErrorCode::kInvalidRange);
  EXPECT_EQ(ListBlobs(*store_).size(), 7u);
  EXPECT_EQ(TemporaryFileCount(), 0u);
}

TEST_P(BlobStoreContractTest, ForEachBlobVisitsAllAndStopsOnError) {
  std::set<BlobId> written;
  for (int i = 0; i < 20; ++i) {
    Result<BlobId> id = WriteBlob(*store_, "blob " + std::to_string(i));
    ASSERT_TRUE(id.ok());
    written.insert(*id);
  }
  EXPECT_EQ(ListBlobs(*store_), written);
  int visits = 0;
  Status stopped = store_->ForEachBlob([&](const BlobId&) {
    ++visits;
    return Error(ErrorCode::kConflict, "stop here");
  });
  EXPECT_EQ(stopped.code(), ErrorCode::kConflict);
  EXPECT_EQ(visits, 1);
}

TEST_P(BlobStoreContractTest, CommittedAtIsTheCommitTime) {
  const WallTime before = Now() - std::chrono::seconds(1);
  Result<BlobId> id = WriteBlob(*store_, "when");
  ASSERT_TRUE(id.ok());
  const WallTime after = Now() + std::chrono::seconds(1);
  Result<WallTime> committed = store_->CommittedAt(*id);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_GE(*committed, before);
  EXPECT_LE(*committed, after);
  ASSERT_TRUE(store_->Remove(*id).ok());
  EXPECT_EQ(store_->CommittedAt(*id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(store_->CommittedAt("../etc/passwd").status().code(), ErrorCode::kInvalidArgument);
}

TEST_P(BlobStoreContractTest, ReopenedStoreSeesCommittedBlobs) {
  Result<BlobId> id = WriteBlob(*store_, "survives reopen");
  ASSERT_TRUE(id.ok());
  store_.reset();
  store_ = GetParam().open(root_);
  ASSERT_NE(store_, nullptr);
  Result<std::string> read = ReadBlob(*store_, *id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, "survives reopen");
}

TEST_P(BlobStoreContractTest, ConcurrentWritersDoNotInterfere) {
  constexpr int kThreads = 4;
  constexpr int kBlobsPerThread = 15;
  std::vector<std::vector<std::pair<BlobId, std::string>>> results(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      for (int i = 0; i < kBlobsPerThread; ++i) {
        std::string data = RandomBytes(rng, rng() % (i % 5 == 0 ? 2 * kMiB : 20000));
        Result<BlobId> id = WriteBlob(*store_, data, rng);
        if (!id.ok()) {
          ++failures;
          continue;
        }
        results[t].emplace_back(*id, std::move(data));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  std::set<BlobId> expected;
  for (const auto& per_thread : results) {
    for (const auto& [id, data] : per_thread) {
      expected.insert(id);
      Result<std::string> read = ReadBlob(*store_, id);
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      EXPECT_TRUE(*read == data);
    }
  }
  EXPECT_EQ(expected.size(), static_cast<size_t>(kThreads * kBlobsPerThread));
  EXPECT_EQ(ListBlobs(*store_), expected);
  EXPECT_EQ(TemporaryFileCount(), 0u);
}

}  // namespace
}  // namespace serac::blob
