// Checkpoints run on the checkpointer's thread, not inside the writer's commits, and the log
// stays bounded while every committed row stays readable.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/wal_checkpointer_internal.h"

namespace serac::meta::sqlite {
namespace {

constexpr size_t kRowBytes = 64 * 1024;
constexpr int kRows = 600;  // ~37.5 MiB of log: more than twice the writer's own threshold

TEST(WalCheckpointerTest, CheckpointsOffTheWriterAndKeepsTheLogBounded) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "wal.db").string();
  const ConnectionOptions options{path, true};
  auto writer = Connection::Open(options);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  SERAC_ASSERT_OK((*writer)->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB);"));
  auto checkpointer = WalCheckpointer::Start(options, **writer);
  ASSERT_TRUE(checkpointer.ok()) << checkpointer.status().ToString();

  const std::string body(kRowBytes, 'x');
  for (int id = 0; id < kRows; ++id) {
    auto insert = (*writer)->Prepare("INSERT INTO t(id, body) VALUES (?1, ?2);");
    ASSERT_TRUE(insert.ok());
    SERAC_ASSERT_OK((*insert)->BindInt(1, id).BindBlob(2, body).Run());
  }
  // The thread runs behind the writer: give it a moment to catch up.
  for (int wait = 0; wait < 200 && (*checkpointer)->checkpoints() == 0; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT((*checkpointer)->checkpoints(), 0u);
  // Without checkpoints the log would hold every row: it restarted instead of growing.
  const auto wal_bytes = std::filesystem::file_size(path + "-wal");
  constexpr uintmax_t kPageBytes = 4096;
  EXPECT_LT(wal_bytes, 2 * kWalPagesWriterCheckpoint * kPageBytes);

  {
    auto count = (*writer)->Prepare("SELECT count(*), sum(length(body)) FROM t;");
    ASSERT_TRUE(count.ok());
    auto row = (*count)->Step();
    ASSERT_TRUE(row.ok() && *row);
    EXPECT_EQ((*count)->Int(0), kRows);
    EXPECT_EQ((*count)->Int(1), static_cast<int64_t>(kRows) * static_cast<int64_t>(kRowBytes));
  }
  writer->reset();  // the writer closes before the checkpointer, as the store does it
}

}  // namespace
}  // namespace serac::meta::sqlite
