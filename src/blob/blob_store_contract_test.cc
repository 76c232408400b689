// The BlobStore contract, run against every back end and against the fault-injecting wrapper with
// nothing armed. Fault-specific behaviour is tested at the end of this file.
#include "blob/blob_store_contract.h"

#include <gtest/gtest.h>
#include <stdlib.h>

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
#include "blob/fault_injection_blob_store.h"
#include "blob/local/local_blob_store.h"
#include "blob/open_blob_store.h"

namespace serac::blob {
namespace {

// Every back end is opened through OpenBlobStore, as the server opens it.
std::unique_ptr<BlobStore> OpenLocal(const std::string& root) {
  Result<std::unique_ptr<BlobStore>> store = OpenBlobStore("file:" + root, {.fsync = true});
  return store.ok() ? std::move(store).value() : nullptr;
}

std::unique_ptr<BlobStore> OpenLocalWithoutFsync(const std::string& root) {
  Result<std::unique_ptr<BlobStore>> store = OpenBlobStore("file:" + root, {.fsync = false});
  return store.ok() ? std::move(store).value() : nullptr;
}

std::unique_ptr<BlobStore> OpenFaultInjection(const std::string& root) {
  std::unique_ptr<BlobStore> inner = OpenLocal(root);
  if (inner == nullptr) return nullptr;
  return std::make_unique<FaultInjectionBlobStore>(std::move(inner));
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BlobStoreContractTest,
                         ::testing::Values(Backend{"Local", OpenLocal},
                                           Backend{"LocalWithoutFsync", OpenLocalWithoutFsync},
                                           Backend{"FaultInjection", OpenFaultInjection}),
                         [](const ::testing::TestParamInfo<Backend>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Local back end specifics.

TEST(LocalBlobStoreTest, UsesTheDocumentedLayout) {
  TemporaryDirectory directory;
  std::string root = directory.path() + "/nested/root";
  std::unique_ptr<BlobStore> store = OpenLocal(root);
  ASSERT_NE(store, nullptr);
  Result<BlobId> id = WriteBlob(*store, "layout");
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(fs::is_regular_file(root + "/blobs/" + id->substr(0, 2) + "/" + id->substr(2, 2) + "/" + *id));
  // A stray file in the tree is ignored, not reported as a blob or an error.
  std::error_code ignored;
  fs::create_directories(root + "/blobs/zz", ignored);
  {
    FILE* stray = fopen((root + "/blobs/stray").c_str(), "w");
    if (stray) fclose(stray);
  }
  EXPECT_EQ(ListBlobs(*store), std::set<BlobId>{*id});
}

TEST(LocalBlobStoreTest, RejectsEmptyRoot) {
  EXPECT_EQ(OpenLocalBlobStore({.root = ""}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(OpenBlobStoreTest, UrlsNameTheBackEnd) {
  TemporaryDirectory dir;
  ASSERT_FALSE(dir.path().empty());
  // file:///abs/dir is the same directory as file:/abs/dir.
  auto store = OpenBlobStore("file://" + dir.path() + "/blobs");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto writer = (*store)->Create();
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("abc", 3).ok());
  ASSERT_TRUE((*writer)->Commit().ok());
  const BlobId id = (*writer)->id();
  auto reopened = OpenBlobStore("file:" + dir.path() + "/blobs");
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->Open(id).ok());
  EXPECT_EQ(DefaultBlobStoreUrl("/var/lib/serac"), "file:/var/lib/serac/blobs");

  for (const char* url : {"", "file:", "s3://bucket/prefix", "/tmp/blobs", "FILE:/tmp"}) {
    auto refused = OpenBlobStore(url);
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << url;
    EXPECT_NE(refused.status().message().find(std::string("\"") + url + "\""), std::string::npos)
        << refused.status().message();
  }
}

// ---------------------------------------------------------------------------------------------
// Fault injection.

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(directory_.path().empty());
    root_ = directory_.path() + "/store";
    std::unique_ptr<BlobStore> inner = OpenLocal(root_);
    ASSERT_NE(inner, nullptr);
    store_ = std::make_unique<FaultInjectionBlobStore>(std::move(inner));
  }
  size_t TemporaryFileCount() const { return CountEntries(root_ + "/tmp"); }

  TemporaryDirectory directory_;
  std::string root_;
  std::unique_ptr<FaultInjectionBlobStore> store_;
};

TEST_F(FaultInjectionTest, FailedAppendLeavesNoBlob) {
  store_->FailNthAppend(3);
  Result<std::unique_ptr<BlobWriter>> writer = store_->Create();
  ASSERT_TRUE(writer.ok());
  EXPECT_TRUE((*writer)->Append("a", 1).ok());
  EXPECT_TRUE((*writer)->Append("b", 1).ok());
  EXPECT_EQ((*writer)->Append("c", 1).code(), ErrorCode::kIoError);
  EXPECT_FALSE((*writer)->Commit().ok());
  EXPECT_EQ(store_->Open((*writer)->id()).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(ListBlobs(*store_).empty());
  EXPECT_EQ(TemporaryFileCount(), 0u);
  // The fault fired once; the next writer is unaffected.
  Result<BlobId> next = WriteBlob(*store_, "fine");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(ListBlobs(*store_), std::set<BlobId>{*next});
}

TEST_F(FaultInjectionTest, FailedCommitLeavesNoBlob) {
  store_->FailNextCommit();
  Result<std::unique_ptr<BlobWriter>> writer = store_->Create();
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append("data", 4).ok());
  EXPECT_EQ((*writer)->Commit().code(), ErrorCode::kIoError);
  EXPECT_EQ(store_->Open((*writer)->id()).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(ListBlobs(*store_).empty());
  EXPECT_EQ(TemporaryFileCount(), 0u);

  Result<BlobId> source = WriteBlob(*store_, "source");
  ASSERT_TRUE(source.ok());
  store_->FailNextCommit();
  EXPECT_EQ(store_->CreateFromRange(*source, 0, 3).status().code(), ErrorCode::kIoError);
  EXPECT_EQ(ListBlobs(*store_), std::set<BlobId>{*source});
}

TEST_F(FaultInjectionTest, TornWriteNeverBecomesVisibleAndIsSwept) {
  store_->TearNextWriter(5);
  Result<std::unique_ptr<BlobWriter>> writer = store_->Create();
  ASSERT_TRUE(writer.ok());
  std::string data(100000, 't');
  ASSERT_TRUE((*writer)->Append(data.data(), data.size()).ok());
  EXPECT_EQ((*writer)->Commit().code(), ErrorCode::kIoError);
  BlobId torn_id = (*writer)->id();
  writer->reset();
  EXPECT_EQ(store_->Open(torn_id).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(ListBlobs(*store_).empty());
  EXPECT_EQ(TemporaryFileCount(), 1u) << "a crash leaves its temp file behind";
  ASSERT_TRUE(store_->SweepTemporaryFiles().ok());
  EXPECT_EQ(TemporaryFileCount(), 0u);
}

TEST_F(FaultInjectionTest, CrashDropsEveryUncommittedWriter) {
  Result<BlobId> before = WriteBlob(*store_, "committed before the crash");
  ASSERT_TRUE(before.ok());
  std::vector<std::unique_ptr<BlobWriter>> in_flight;
  for (int i = 0; i < 3; ++i) {
    Result<std::unique_ptr<BlobWriter>> writer = store_->Create();
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append("partial", 7).ok());
    in_flight.push_back(std::move(writer).value());
  }
  store_->Crash();
  EXPECT_EQ(in_flight[0]->Append("more", 4).code(), ErrorCode::kUnavailable);
  EXPECT_EQ(in_flight[1]->Commit().code(), ErrorCode::kUnavailable);
  in_flight[2]->Abort();  // a crashed process cleans nothing up
  std::vector<BlobId> lost;
  for (auto& writer : in_flight) lost.push_back(writer->id());
  in_flight.clear();

  EXPECT_EQ(ListBlobs(*store_), std::set<BlobId>{*before});
  for (const BlobId& id : lost) EXPECT_EQ(store_->Open(id).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(TemporaryFileCount(), 3u);
  ASSERT_TRUE(store_->SweepTemporaryFiles().ok());
  EXPECT_EQ(TemporaryFileCount(), 0u);
  // Writers created after the crash work normally.
  Result<BlobId> after = WriteBlob(*store_, "after");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(ListBlobs(*store_), (std::set<BlobId>{*before, *after}));
}

}  // namespace
}  // namespace serac::blob
