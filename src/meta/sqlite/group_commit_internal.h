// Group commit: one writer connection, used by one thread at a time. Callers hand in a write (a
// function run against the writer inside a transaction) and block until it is durable. The
// writer thread runs every write queued meanwhile inside ONE transaction, each write under its
// own SAVEPOINT so that a write that fails (say, a failed precondition) is rolled back alone,
// then commits once — one fsync for the whole batch. That is what makes many small concurrent
// writes cheap when every commit must reach stable storage.
//
// The fsync is pipelined. The writer runs with synchronous=NORMAL, so its COMMIT only writes the
// batch's frames to the log; the batch then goes to a second thread, which fsyncs the log
// (`sync_log`) and only then returns the batch's writes, while the writer thread already runs the
// next batch. One fsync covers every batch committed before it started.
//
// A write with nothing to share its transaction or its fsync with (nothing queued, nothing being
// written or synced, and the write before it was alone too) is committed and synced on its
// caller's thread: handing it to the writer thread and back would cost two thread wake-ups,
// which can weigh as much as the write itself. Writes that arrive meanwhile queue for the writer
// thread, which takes them once that COMMIT is done. Likewise a lone batch of the writer thread
// (nothing queued behind it, no fsync in flight) is synced by the writer thread itself.
//
// So a write is visible to readers from its COMMIT, a moment before it is durable, but
// acknowledged only once durable; and since the log is one file synced in order, an acknowledged
// write makes every earlier one durable too. After a failed fsync nothing written since the last
// good one can be trusted to reach the disk (the kernel may drop the dirty pages and report
// success the next time), so that batch and every later write fail with kIoError until the store
// is opened again.
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
  uint64_t log_syncs = 0;      // fsyncs of the log (each covers every batch committed before it)
  uint64_t waiting = 0;        // writes queued now, not yet taken into a transaction
};

class GroupCommitter {
 public:
  using Write = std::function<Status(Connection& writer)>;
  // Makes every frame written to the log so far durable (WalFile::Sync).
  using LogSync = std::function<Status()>;

  // `sync_log` empty: writes return right after their COMMIT, durable only as far as the
  // writer's own synchronous setting makes them (benchmarks without durability).
  GroupCommitter(std::unique_ptr<Connection> writer, size_t batch_max, LogSync sync_log);
  ~GroupCommitter();  // finishes every queued write and its fsync, then stops the threads
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Runs `write` in the next transaction and returns its Status once that transaction is
  // committed and durable (kIoError when the commit failed and nothing of it persisted, or when
  // the log could not be made durable, in which case its outcome is unknown).
  Status Run(const Write& write);
  // The same, calling `on_visible` on this thread as soon as the transaction committed with the
  // write in it (readers see it; its fsync may still be running), before waiting for durability.
  // It is called if and only if the write committed; after it, an error means the outcome is
  // unknown.
  Status Run(const Write& write, const std::function<void()>& on_visible);

  GroupCommitStats stats() const;

 private:
  struct Pending {
    const Write* write;
    const std::function<void()>* on_visible;  // may be null
    Status result;
    bool visible = false;  // guarded by mutex_; committed, and on_visible is set
    bool done = false;     // guarded by mutex_
    // Wakes only this caller (with mutex_): one condition for all callers woke every waiting
    // thread for each batch, most of them only to sleep again.
    std::condition_variable woken;
  };

  using Batch = std::vector<Pending*>;
  struct CommittedBatch {
    Batch writes;
    bool changed = false;  // its COMMIT wrote to the log
  };

  // Commits and syncs a write alone on the caller's thread; called with writing_ set, and
  // syncing_ too when there is a log to sync.
  Status RunAlone(Pending& pending);
  // Syncs the log; on failure records log_failure_ and returns it.
  Status SyncLog();
  void WriteLoop();
  void SyncLoop();
  // True when the batch's COMMIT succeeded.
  bool CommitBatch(Batch& batch);
  // Marks the batch's committed writes that have an on_visible as visible (with mutex_ held).
  void MarkVisible(Batch& batch);
  // Wakes the callers MarkVisible marked: with mutex_ held, or from the one thread that will
  // return their writes (until it does, their Pending cannot go away).
  void WakeVisible(Batch& batch);
  Status RunInSavepoint(Pending& pending);
  void FailBatch(Batch& batch, const Status& cause);
  // Makes the batches durable (unless the log already failed: `failure`, read with syncing_ set)
  // and returns their writes.
  void SyncAndFinish(std::vector<CommittedBatch>& batches, Status failure);
  // Returns the batches' writes; `ends_fsync`: called by the fsync's owner as it ends.
  void FinishBatches(std::vector<CommittedBatch>& batches, bool ends_fsync = false);

  std::unique_ptr<Connection> writer_;  // used by the thread that set writing_
  const size_t batch_max_;
  const LogSync sync_log_;  // called by the thread that set syncing_ (either thread, one at a time)

  std::mutex mutex_;
  std::condition_variable work_queued_;      // guarded by mutex_
  std::condition_variable batch_committed_;  // guarded by mutex_; wakes the sync thread
  std::deque<Pending*> queue_;               // guarded by mutex_
  std::vector<CommittedBatch> unsynced_;     // guarded by mutex_; committed, not yet durable
  bool stopping_ = false;                    // guarded by mutex_
  bool writer_stopped_ = false;              // guarded by mutex_
  bool writing_ = false;  // guarded by mutex_; the writer connection is in use (by either thread)
  // Guarded by mutex_: the last write taken found nothing queued with or behind it. Only then does
  // a write run on its caller's thread: under load the next writes come within moments, and
  // one transaction and fsync for all of them costs less than one each.
  bool last_write_alone_ = true;
  bool syncing_ = false;  // guarded by mutex_; an fsync (by either thread) is in flight
  Status log_failure_;    // guarded by mutex_; set once, never cleared

  std::atomic<uint64_t> transactions_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> largest_batch_{0};
  std::atomic<uint64_t> log_syncs_{0};
  std::atomic<uint64_t> waiting_{0};  // queue_.size(), readable without mutex_

  // Last: they start after every member above is ready.
  std::thread sync_thread_;  // only with sync_log_
  std::thread write_thread_;
};

}  // namespace serac::meta::sqlite
