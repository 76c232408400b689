// Write throughput of the SQLite MetaStore, with and without fsync, at 1, 16 and 64 writers. Disabled:
// it measures the machine as much as the code. Run it with
//   meta_test --gtest_also_run_disabled_tests --gtest_filter='*PutThroughput*'
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/sqlite_meta_store.h"
#include "meta/sqlite/sqlite_meta_store_internal.h"

namespace serac::meta {
namespace {

using testing::MakeObject;
using testing::TempDir;

double PutsPerSecond(MetaStore& store, int threads, int puts_per_thread) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < puts_per_thread; ++i) {
        std::string key =
            "bench/" + std::to_string(threads) + "/" + std::to_string(t) + "/" + std::to_string(i);
        ObjectRecord object = MakeObject("bucket", key, "d41d8cd98f00b204e9800998ecf8427e");
        object.inline_data = std::string(100, 'x');
        object.size = object.inline_data.size();
        EXPECT_TRUE(store.PutObject(object, {}).ok());
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return threads * puts_per_thread / elapsed.count();
}

TEST(SqliteMetaStoreBenchmark, DISABLED_PutThroughput) {
  for (bool fsync : {true, false}) {
    TempDir dir;
    auto opened = OpenSqliteMetaStore(SqliteOptions{(dir.path() / "meta.db").string(), fsync});
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    MetaStore& store = **opened;
    ASSERT_TRUE(store.CreateBucket({"bucket", 1}).ok());
    for (int threads : {1, 16, 64}) {
      auto before = SqliteGroupCommitStats(store).value_or(sqlite::GroupCommitStats{});
      double rate = PutsPerSecond(store, threads, threads == 1 ? 500 : 4000 / threads);
      auto after = SqliteGroupCommitStats(store).value_or(sqlite::GroupCommitStats{});
      double mean_batch =
          static_cast<double>(after.writes - before.writes) /
          static_cast<double>(std::max<uint64_t>(1, after.transactions - before.transactions));
      std::printf("fsync=%s threads=%2d  %8.0f puts/s  mean batch %.1f\n", fsync ? "on " : "off", threads,
                  rate, mean_batch);
    }
  }
}

}  // namespace
}  // namespace serac::meta
