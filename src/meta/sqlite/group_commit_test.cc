// Group commit semantics on a bare connection: writes queued together share one transaction, a
// failing write rolls back alone, and a failing COMMIT fails every write of the batch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/group_commit_internal.h"

namespace serac::meta::sqlite {
namespace {

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (dir_.path() / "test.db").string();
    auto db = Connection::Open({path_, true, true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    SERAC_ASSERT_OK(
        (*db)->Exec("CREATE TABLE parent(id INTEGER PRIMARY KEY);"
                    "CREATE TABLE t(x INTEGER PRIMARY KEY,"
                    "  parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);"
                    "INSERT INTO parent(id) VALUES (1);"));
    committer_ = std::make_unique<GroupCommitter>(std::move(db).value(), 256);
  }

  static GroupCommitter::Write Insert(int x, int parent = 1) {
    return [x, parent](Connection& db) -> Status {
      auto stmt = db.Prepare("INSERT INTO t(x, parent) VALUES (?1, ?2);");
      if (!stmt.ok()) return stmt.status();
      return (*stmt)->BindInt(1, x).BindInt(2, parent).Run();
    };
  }

  std::vector<int64_t> Rows() {
    committer_.reset();  // closes the writer so a fresh connection sees everything
    auto db = Connection::Open({path_, false, true});
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT x FROM t ORDER BY x;");
    std::vector<int64_t> rows;
    while (stmt.ok()) {
      auto row = (*stmt)->Step();
      if (!row.ok() || !*row) break;
      rows.push_back((*stmt)->Int(0));
    }
    return rows;
  }

  // Runs `blocker` first and, while it holds the writer, queues `writes` from their own threads
  // so they land in one batch. Returns each write's Status.
  std::vector<Status> RunAsOneBatch(const std::vector<GroupCommitter::Write>& writes) {
    std::latch writer_busy(1);
    GroupCommitter::Write blocker = [&](Connection&) {
      writer_busy.count_down();
      // Long enough for every thread below to enqueue.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return Status::Ok();
    };
    std::thread first([&] { EXPECT_TRUE(committer_->Run(blocker).ok()); });
    writer_busy.wait();
    std::vector<Status> results(writes.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < writes.size(); ++i) {
      threads.emplace_back([&, i] { results[i] = committer_->Run(writes[i]); });
    }
    for (auto& thread : threads) thread.join();
    first.join();
    EXPECT_GE(committer_->stats().largest_batch, writes.size());
    return results;
  }

  testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<GroupCommitter> committer_;
};

TEST_F(GroupCommitTest, AFailingWriteRollsBackAloneWithinItsBatch) {
  GroupCommitter::Write fails_after_writing = [](Connection& db) -> Status {
    Status inserted = Insert(100)(db);
    if (!inserted.ok()) return inserted;
    return Error(ErrorCode::kPreconditionFailed, "refused after writing");
  };
  std::vector<Status> results = RunAsOneBatch({Insert(1), fails_after_writing, Insert(2)});
  EXPECT_TRUE(results[0].ok()) << results[0].ToString();
  EXPECT_EQ(results[1].code(), ErrorCode::kPreconditionFailed);
  EXPECT_TRUE(results[2].ok()) << results[2].ToString();
  EXPECT_EQ(Rows(), (std::vector<int64_t>{1, 2}));
}

TEST_F(GroupCommitTest, AFailingCommitFailsTheWholeBatch) {
  // Parent 99 does not exist; the deferred foreign key fails only at COMMIT.
  std::vector<Status> results = RunAsOneBatch({Insert(1), Insert(2, 99), Insert(3)});
  for (const Status& status : results) EXPECT_EQ(status.code(), ErrorCode::kIoError);
  SERAC_EXPECT_OK(committer_->Run(Insert(4)));  // the writer recovers for the next batch
  EXPECT_EQ(Rows(), std::vector<int64_t>{4});
}

TEST_F(GroupCommitTest, ThrowingWriteBecomesAnInternalError) {
  GroupCommitter::Write throws = [](Connection&) -> Status { throw std::runtime_error("boom"); };
  EXPECT_EQ(committer_->Run(throws).code(), ErrorCode::kInternal);
  SERAC_EXPECT_OK(committer_->Run(Insert(7)));
  EXPECT_EQ(Rows(), std::vector<int64_t>{7});
}

}  // namespace
}  // namespace serac::meta::sqlite
