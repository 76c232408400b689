#include "objects/gc.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "objects/objects_test_fakes.h"

namespace serac::objects {
namespace {

using testing::FakeBlobStore;
using testing::FakeMetaStore;

std::string Id(int n) { return "blob" + std::to_string(n); }

TEST(SweepAtStartupTest, RemovesOrphansTemporariesAndQueuedGarbage) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  blobs.committed = {"live1", "live2", "orphan1", "orphan2", "dead1"};
  blobs.temporary_files = 3;
  meta.referenced = {"live1", "live2"};
  meta.garbage = {"dead1", "already-gone"};

  Result<SweepReport> report = SweepAtStartup(meta, blobs);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(blobs.temporary_files, 0);
  // dead1 is unreferenced, so the orphan pass removes it before the queue is drained.
  EXPECT_EQ(report->orphan_blobs_removed, 3u);
  EXPECT_EQ(report->garbage_blobs_removed, 2u);  // removing a missing blob counts as done
  EXPECT_EQ(blobs.committed, (std::set<std::string>{"live1", "live2"}));
  EXPECT_TRUE(meta.garbage.empty());
}

// With stores other servers write to, a young unreferenced blob may be another server's upload
// between its blob commit and its index commit: only old ones are orphans, and temporary files are
// left to their writers.
TEST(SweepAtStartupTest, SharedStoresSpareYoungOrphansAndTemporaries) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  const WallTime now = Now();
  blobs.committed = {"live", "old-orphan", "young-orphan"};
  blobs.committed_at = {{"old-orphan", now - std::chrono::hours(7)},
                        {"young-orphan", now - std::chrono::minutes(5)}};
  blobs.temporary_files = 2;
  meta.referenced = {"live"};
  SweepOptions options;
  options.exclusive = false;
  options.now = now;
  Result<SweepReport> report = SweepAtStartup(meta, blobs, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->orphan_blobs_removed, 1u);
  EXPECT_EQ(report->orphan_blobs_spared, 1u);
  EXPECT_EQ(blobs.committed, (std::set<std::string>{"live", "young-orphan"}));
  EXPECT_EQ(blobs.temporary_files, 2);
}

TEST(SweepAtStartupTest, KeepsEverythingWhenTheMetaStoreFails) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  blobs.committed = {"a", "b"};
  meta.fail_everything = true;
  Result<SweepReport> report = SweepAtStartup(meta, blobs);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), ErrorCode::kIoError);
  EXPECT_EQ(blobs.committed.size(), 2u);  // never treat "cannot read the index" as "no references"
}

TEST(CollectGarbageOnceTest, RemovesAtMostOneBatchAndForgetsOnlyRemovedBlobs) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  for (int i = 0; i < 5; ++i) {
    blobs.committed.insert(Id(i));
    meta.garbage.push_back(Id(i));
  }
  blobs.undeletable = {Id(1)};

  Result<uint64_t> removed = CollectGarbageOnce(meta, blobs, 3);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 2u);  // blob0, blob2; blob1 failed
  EXPECT_FALSE(blobs.Has(Id(0)));
  EXPECT_TRUE(blobs.Has(Id(1)));
  EXPECT_TRUE(blobs.Has(Id(3)));  // beyond the batch
  EXPECT_EQ(meta.garbage, (std::vector<std::string>{Id(1), Id(3), Id(4)}));
}

TEST(DrainGarbageTest, StopsWhenOnlyFailingBlobsRemain) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  for (int i = 0; i < 600; ++i) meta.garbage.push_back(Id(i));
  blobs.undeletable = {Id(0)};
  Result<uint64_t> removed = DrainGarbage(meta, blobs);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 599u);
  EXPECT_EQ(meta.garbage, std::vector<std::string>{Id(0)});
}

TEST(GarbageCollectorTest, BackgroundThreadRemovesQueuedBlobsWhenWoken) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  blobs.committed = {"x", "y"};
  meta.garbage = {"x", "y"};
  GarbageCollector gc(&meta, &blobs);
  gc.Start();
  gc.Wake();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (meta.garbage_size() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  gc.Stop();
  EXPECT_EQ(meta.garbage_size(), 0u);
  EXPECT_FALSE(blobs.Has("x"));
  EXPECT_FALSE(blobs.Has("y"));
  EXPECT_EQ(gc.blobs_removed(), 2u);
}

TEST(GarbageCollectorTest, StopReturnsPromptlyAndIsIdempotent) {
  FakeMetaStore meta;
  FakeBlobStore blobs;
  GarbageCollector gc(&meta, &blobs);
  gc.Start();
  auto begin = std::chrono::steady_clock::now();
  gc.Stop();
  gc.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(900));
}

}  // namespace
}  // namespace serac::objects
