// Group commit semantics on a bare connection: writes queued together share one transaction, a
// failing write rolls back alone, and a failing COMMIT fails every write of the batch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/group_commit_internal.h"
#include "meta/sqlite/wal_file_internal.h"

namespace serac::meta::sqlite {
namespace {

// Polls `condition` for up to five seconds.
bool Eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 500; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class GatedSync;

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (dir_.path() / "test.db").string();
    auto db = Connection::Open({path_, true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    SERAC_ASSERT_OK(
        (*db)->Exec("CREATE TABLE parent(id INTEGER PRIMARY KEY);"
                    "CREATE TABLE t(x INTEGER PRIMARY KEY,"
                    "  parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);"
                    "INSERT INTO parent(id) VALUES (1);"));
    log_ = std::make_shared<WalFile>(path_);
    Start([log = log_] { return log->Sync(); });
  }

  // Replaces the committer by one on a fresh writer that syncs the log with `sync_log`.
  void Start(GroupCommitter::LogSync sync_log) {
    committer_.reset();
    auto db = Connection::Open({path_, true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    committer_ = std::make_unique<GroupCommitter>(std::move(db).value(), 256, std::move(sync_log));
  }

  // Whether row x is visible to a reader: committed, durable or not.
  bool Visible(int x) {
    auto db = Connection::Open({path_, false});
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT 1 FROM t WHERE x = ?1;");
    EXPECT_TRUE(stmt.ok());
    (*stmt)->BindInt(1, x);
    auto row = (*stmt)->Step();
    return row.ok() && *row;
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
    auto db = Connection::Open({path_, false});
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

  // Runs `blocker` first (alone, on its caller's thread) and, while it holds the writer
  // connection, queues `writes` from their own threads so that the writer thread takes them as
  // one batch. Returns each write's Status.
  std::vector<Status> RunAsOneBatch(const std::vector<GroupCommitter::Write>& writes) {
    std::latch writer_busy(1);
    GroupCommitter::Write blocker = [&](Connection&) {
      writer_busy.count_down();
      EXPECT_TRUE(Eventually([&] { return committer_->stats().waiting == writes.size(); }));
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

  // Commits row 1 alone on its caller's thread while row 2 queues behind it; the writer thread
  // takes row 2 and commits it only once row 1's fsync (which `gate` holds) has begun. Returns
  // once row 2 is visible, the first fsync still held.
  void CommitTwoHandingOverTheFirst(GatedSync& gate, std::vector<std::thread>& writers);

  testing::TempDir dir_;
  std::string path_;
  std::shared_ptr<WalFile> log_;
  std::unique_ptr<GroupCommitter> committer_;
};

// A log sync that waits until the test opens it, counting its calls.
class GatedSync {
 public:
  Status operator()() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++calls_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
    return result_;
  }
  void Open(Status result = Status::Ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    result_ = std::move(result);
    changed_.notify_all();
  }
  void WaitForCalls(int calls) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return calls_ >= calls; });
  }
  int calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int calls_ = 0;
  Status result_;
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

TEST_F(GroupCommitTest, AWriteReturnsOnlyOnceTheLogIsSynced) {
  GatedSync gate;
  Start(std::ref(gate));
  std::atomic<bool> returned{false};
  Status result;
  std::thread writer([&] {
    result = committer_->Run(Insert(1));
    returned = true;
  });
  gate.WaitForCalls(1);
  EXPECT_TRUE(Visible(1));  // committed: readers see it ...
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load());  // ... but it is not acknowledged before the fsync
  gate.Open();
  writer.join();
  SERAC_EXPECT_OK(result);
}

TEST_F(GroupCommitTest, ALoneWriteIsCommittedAndSyncedOnItsCallersThread) {
  std::thread::id synced_on;
  std::thread::id written_on;
  std::thread::id visible_on;
  Start([&] {
    synced_on = std::this_thread::get_id();
    return Status::Ok();
  });
  SERAC_EXPECT_OK(committer_->Run(
      [&](Connection& db) {
        written_on = std::this_thread::get_id();
        return Insert(1)(db);
      },
      [&] { visible_on = std::this_thread::get_id(); }));
  // No hand-over for a write with nothing to share its transaction or its fsync with.
  EXPECT_EQ(written_on, std::this_thread::get_id());
  EXPECT_EQ(visible_on, std::this_thread::get_id());
  EXPECT_EQ(synced_on, std::this_thread::get_id());
  EXPECT_EQ(committer_->stats().log_syncs, 1u);
  EXPECT_TRUE(Visible(1));
}

TEST_F(GroupCommitTest, WritesQueuedBehindALoneWriteGoToTheWriterThread) {
  std::latch first_running(1);
  std::thread first([&] {
    SERAC_EXPECT_OK(committer_->Run([&](Connection& db) {
      first_running.count_down();
      EXPECT_TRUE(Eventually([&] { return committer_->stats().waiting == 1; }));
      return Insert(1)(db);
    }));
  });
  first_running.wait();
  std::thread::id written_on;
  SERAC_EXPECT_OK(committer_->Run([&](Connection& db) {
    written_on = std::this_thread::get_id();
    return Insert(2)(db);
  }));
  const std::thread::id first_id = first.get_id();
  first.join();
  EXPECT_NE(written_on, std::this_thread::get_id());
  EXPECT_NE(written_on, first_id);
  EXPECT_EQ(Rows(), (std::vector<int64_t>{1, 2}));
}

TEST_F(GroupCommitTest, AfterABatchWithCompanyTheNextWriteGoesToTheWriterThreadOnce) {
  auto thread_of = [&](int x) {
    std::thread::id written_on;
    EXPECT_TRUE(committer_
                    ->Run([&, x](Connection& db) {
                      written_on = std::this_thread::get_id();
                      return Insert(x)(db);
                    })
                    .ok());
    return written_on;
  };
  for (const Status& status : RunAsOneBatch({Insert(1), Insert(2)})) SERAC_EXPECT_OK(status);
  // Under load the next write is likely to have company too: it queues for the writer thread.
  EXPECT_NE(thread_of(3), std::this_thread::get_id());
  // That one found nothing queued with it or behind it: the next runs on its caller's thread.
  EXPECT_EQ(thread_of(4), std::this_thread::get_id());
  EXPECT_EQ(Rows(), (std::vector<int64_t>{1, 2, 3, 4}));
}

void GroupCommitTest::CommitTwoHandingOverTheFirst(GatedSync& gate, std::vector<std::thread>& writers) {
  std::latch writer_busy(1);
  writers.emplace_back([this, &writer_busy] {
    SERAC_EXPECT_OK(committer_->Run([&](Connection& db) {
      writer_busy.count_down();
      // Holds the writer until the second write is queued behind this one.
      EXPECT_TRUE(Eventually([&] { return committer_->stats().waiting == 1; }));
      return Insert(1)(db);
    }));
  });
  writer_busy.wait();
  writers.emplace_back([this, &gate] {
    SERAC_EXPECT_OK(committer_->Run([&](Connection& db) {
      // Not before the first fsync began, which so covers the first batch alone.
      gate.WaitForCalls(1);
      return Insert(2)(db);
    }));
  });
  gate.WaitForCalls(1);
  // The writer is not held up by the fsync in flight.
  EXPECT_TRUE(Eventually([&] { return Visible(2); }));
}

TEST_F(GroupCommitTest, TheNextBatchCommitsWhileTheLogIsBeingSynced) {
  GatedSync gate;
  Start(std::ref(gate));
  std::vector<std::thread> writers;
  CommitTwoHandingOverTheFirst(gate, writers);
  gate.Open();
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(gate.calls(), 2);  // the second batch was committed after the first fsync began
  EXPECT_EQ(committer_->stats().log_syncs, 2u);
}

TEST_F(GroupCommitTest, OneSyncCoversEveryBatchCommittedBeforeIt) {
  GatedSync gate;
  Start(std::ref(gate));
  std::vector<std::thread> writers;
  CommitTwoHandingOverTheFirst(gate, writers);
  // Two more batches commit, one after another, while the first fsync is held.
  for (int x = 3; x <= 4; ++x) {
    writers.emplace_back([&, x] { SERAC_EXPECT_OK(committer_->Run(Insert(x))); });
    EXPECT_TRUE(Eventually([&] { return Visible(x); }));
  }
  gate.Open();
  for (auto& writer : writers) writer.join();
  EXPECT_EQ(committer_->stats().transactions, 4u);
  EXPECT_EQ(gate.calls(), 2);
}

TEST_F(GroupCommitTest, OnVisibleRunsOnTheCallerBeforeTheSyncEnds) {
  GatedSync gate;
  Start(std::ref(gate));
  std::atomic<bool> called{false};
  std::atomic<bool> returned{false};
  Status result;
  std::thread writer([&] {
    result = committer_->Run(Insert(1), [&] {
      EXPECT_TRUE(Visible(1));
      called = true;
    });
    returned = true;
  });
  EXPECT_TRUE(Eventually([&] { return called.load(); }));  // while the fsync is still held
  EXPECT_EQ(gate.calls(), 1);
  EXPECT_FALSE(returned.load());
  gate.Open();
  writer.join();
  SERAC_EXPECT_OK(result);
}

TEST_F(GroupCommitTest, OnVisibleRunsOnlyForAWriteThatCommitted) {
  bool called = false;
  GroupCommitter::Write refuses = [](Connection&) -> Status { return Error(ErrorCode::kConflict, "lost"); };
  EXPECT_EQ(committer_->Run(refuses, [&] { called = true; }).code(), ErrorCode::kConflict);
  EXPECT_FALSE(called);
  // Without a log sync too.
  Start(nullptr);
  SERAC_EXPECT_OK(committer_->Run(Insert(1), [&] { called = true; }));
  EXPECT_TRUE(called);
}

TEST_F(GroupCommitTest, AFailedSyncAfterOnVisibleStillFailsTheWrite) {
  Start([] { return Error(ErrorCode::kIoError, "disk gone"); });
  bool called = false;
  EXPECT_EQ(committer_->Run(Insert(1), [&] { called = true; }).code(), ErrorCode::kIoError);
  EXPECT_TRUE(called);  // it was visible: the caller must answer "state unknown"
}

TEST_F(GroupCommitTest, AFailedSyncFailsItsWritesAndEveryLaterOne) {
  Start([] { return Error(ErrorCode::kIoError, "disk gone"); });
  Status first = committer_->Run(Insert(1));
  EXPECT_EQ(first.code(), ErrorCode::kIoError);
  EXPECT_NE(first.message().find("disk gone"), std::string::npos) << first.message();
  // The kernel may report the next fsync as good after dropping the pages the failed one held.
  Status later = committer_->Run(Insert(2));
  EXPECT_EQ(later.code(), ErrorCode::kIoError);
  EXPECT_NE(later.message().find("could not be made durable"), std::string::npos) << later.message();
  EXPECT_FALSE(Visible(2));  // refused without being run
}

TEST_F(GroupCommitTest, ABatchThatChangesNothingNeedsNoSync) {
  GroupCommitter::Write refuses = [](Connection&) -> Status {
    return Error(ErrorCode::kPreconditionFailed, "refused");
  };
  EXPECT_EQ(committer_->Run(refuses).code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(committer_->stats().log_syncs, 0u);
  SERAC_EXPECT_OK(committer_->Run(Insert(1)));
  EXPECT_EQ(committer_->stats().log_syncs, 1u);
}

TEST_F(GroupCommitTest, WithoutALogSyncWritesReturnAtTheirCommit) {
  Start(nullptr);
  SERAC_EXPECT_OK(committer_->Run(Insert(1)));
  EXPECT_EQ(committer_->stats().log_syncs, 0u);
  EXPECT_EQ(Rows(), std::vector<int64_t>{1});
}

TEST(WalFileTest, SyncsTheLogOfAnOpenDatabaseAndFollowsItWhenReplaced) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "test.db").string();
  WalFile log(path);
  EXPECT_EQ(log.Sync().code(), ErrorCode::kIoError);  // no log yet: nothing can be made durable
  {
    auto db = Connection::Open({path, true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    SERAC_ASSERT_OK((*db)->Exec("CREATE TABLE t(x INTEGER);"));
    SERAC_EXPECT_OK(log.Sync());
  }
  // Closing the last connection deleted the log; the next one is a new file.
  auto db = Connection::Open({path, true});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SERAC_ASSERT_OK((*db)->Exec("INSERT INTO t VALUES (1);"));
  SERAC_EXPECT_OK(log.Sync());
}

}  // namespace
}  // namespace serac::meta::sqlite
