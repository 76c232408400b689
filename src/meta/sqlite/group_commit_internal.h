// Group commit: the one thread that owns the SQLite writer connection. Callers hand it a write
// (a function run against the writer inside a transaction) and block until it is durable. The
// thread runs every write queued meanwhile inside ONE transaction, each write under its own
// SAVEPOINT so that a write that fails (say, a failed precondition) is rolled back alone, then
// commits once — one fsync for the whole batch. That is what makes many small concurrent writes
// cheap when every commit must reach stable storage.
//
// Thread-safety: Run() may be called from any number of threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

struct GroupCommitStats {
  uint64_t transactions = 0;   // commits attempted
  uint64_t writes = 0;         // writes run
  uint64_t largest_batch = 0;  // most writes ever sharing one transaction
};

class GroupCommitter {
 public:
  using Write = std::function<Status(Connection& writer)>;

  GroupCommitter(std::unique_ptr<Connection> writer, size_t batch_max);
  ~GroupCommitter();  // finishes every queued write, then stops the thread
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Runs `write` in the next transaction and returns its Status once that transaction is
  // committed (or kIoError when the commit failed and nothing of it persisted).
  Status Run(const Write& write);

  GroupCommitStats stats() const;

 private:
  struct Pending {
    const Write* write;
    Status result;
    bool done = false;
  };

  void Loop();
  void CommitBatch(std::vector<Pending*>& batch);
  Status RunInSavepoint(Pending& pending);
  void FailBatch(std::vector<Pending*>& batch, const Status& cause);
  void FinishBatch(std::vector<Pending*>& batch);

  std::unique_ptr<Connection> writer_;  // used only by thread_
  const size_t batch_max_;

  std::mutex mutex_;
  std::condition_variable work_queued_;     // guarded by mutex_
  std::condition_variable batch_finished_;  // guarded by mutex_
  std::deque<Pending*> queue_;              // guarded by mutex_
  bool stopping_ = false;                   // guarded by mutex_

  std::atomic<uint64_t> transactions_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> largest_batch_{0};

  std::thread thread_;  // last: starts after every member above is ready
};

}  // namespace serac::meta::sqlite
