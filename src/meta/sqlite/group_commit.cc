#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "common/blocking.h"
#include "common/log.h"
#include "meta/sqlite/group_commit_internal.h"

namespace serac::meta::sqlite {

GroupCommitter::GroupCommitter(std::unique_ptr<Connection> writer, size_t batch_max, LogSync sync_log)
    : writer_(std::move(writer)), batch_max_(batch_max == 0 ? 1 : batch_max), sync_log_(std::move(sync_log)) {
  if (sync_log_) sync_thread_ = std::thread([this] { SyncLoop(); });
  write_thread_ = std::thread([this] { WriteLoop(); });
}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_queued_.notify_all();
  write_thread_.join();  // commits everything queued
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writer_stopped_ = true;
  }
  batch_committed_.notify_all();
  if (sync_thread_.joinable()) sync_thread_.join();  // makes it durable
}

Status GroupCommitter::Run(const Write& write) { return Run(write, nullptr); }

Status GroupCommitter::Run(const Write& write, const std::function<void()>& on_visible) {
  const blocking::Region may_wait_for_a_flush;  // this write, or the batch it joins, ends in an fsync
  Pending pending{&write, on_visible ? &on_visible : nullptr, Status::Ok()};
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return Error(ErrorCode::kUnavailable, "metadata store is closing");
  if (last_write_alone_ && !writing_ && !syncing_ && queue_.empty() && unsynced_.empty() &&
      log_failure_.ok()) {
    // Nothing to share a transaction or an fsync with: handing the write to the writer thread and
    // back would add two thread wake-ups and overlap nothing.
    writing_ = true;
    if (sync_log_) syncing_ = true;
    lock.unlock();
    return RunAlone(pending);
  }
  queue_.push_back(&pending);
  waiting_.store(queue_.size());
  // Notified unlocked: a writer woken while this thread still holds the lock would only go back
  // to sleep on it and need a second wake-up, as costly as the first.
  lock.unlock();
  work_queued_.notify_one();
  lock.lock();
  pending.woken.wait(lock, [&] { return pending.done || pending.visible; });
  if (pending.visible) {
    lock.unlock();
    on_visible();
    lock.lock();
    pending.woken.wait(lock, [&] { return pending.done; });
  }
  return std::move(pending.result);
}

Status GroupCommitter::RunAlone(Pending& pending) {
  Batch batch{&pending};
  const bool committed = CommitBatch(batch);
  const bool changed = committed && pending.result.ok();
  bool wake_writer = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writing_ = false;
    wake_writer = !queue_.empty();
    last_write_alone_ = !wake_writer;
  }
  // Writes queued meanwhile go on while this one waits for its fsync.
  if (wake_writer) work_queued_.notify_one();
  if (changed && pending.on_visible != nullptr) (*pending.on_visible)();
  if (!sync_log_) return std::move(pending.result);
  Status synced = changed ? SyncLog() : Status::Ok();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    syncing_ = false;
  }
  batch_committed_.notify_one();  // batches the writer committed meanwhile wait for this fsync to end
  if (!synced.ok()) return synced;
  return std::move(pending.result);
}

Status GroupCommitter::SyncLog() {
  Status synced = sync_log_();
  log_syncs_.fetch_add(1);
  if (synced.ok()) return synced;
  Status failure = Error(ErrorCode::kIoError,
                         "metadata log could not be made durable (restart the server): " + synced.message());
  log::Error("metadata store: " + failure.message());
  std::lock_guard<std::mutex> lock(mutex_);
  log_failure_ = failure;
  return failure;
}

GroupCommitStats GroupCommitter::stats() const {
  return GroupCommitStats{transactions_.load(), writes_.load(), largest_batch_.load(), log_syncs_.load(),
                          waiting_.load()};
}

void GroupCommitter::WriteLoop() {
  for (;;) {
    std::vector<CommittedBatch> committed(1);
    Batch& batch = committed[0].writes;
    Status log_failure;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Not while a caller commits its lone write on the writer connection itself (RunAlone).
      work_queued_.wait(lock, [&] { return (stopping_ || !queue_.empty()) && !writing_; });
      if (queue_.empty()) return;  // stopping, and nothing left to do
      while (!queue_.empty() && batch.size() < batch_max_) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
      last_write_alone_ = batch.size() == 1 && queue_.empty();
      waiting_.store(queue_.size());
      log_failure = log_failure_;
      writing_ = true;  // until the COMMIT is done; the fsync needs no connection
    }
    if (!log_failure.ok()) {
      // Written after a failed fsync, it could never be acknowledged as durable.
      FailBatch(batch, log_failure);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        writing_ = false;
      }
      FinishBatches(committed);
      continue;
    }
    const bool batch_committed = CommitBatch(batch);
    committed[0].changed =
        batch_committed && std::any_of(batch.begin(), batch.end(), [](Pending* p) { return p->result.ok(); });
    if (!sync_log_) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        writing_ = false;
        if (batch_committed) MarkVisible(batch);  // woken by FinishBatches, which they find done too
      }
      FinishBatches(committed);
      continue;
    }
    // One critical section between the COMMIT and the fsync: a caller woken to run its on_visible
    // then finds the lock free, instead of sleeping on it while this thread takes it again.
    bool sync_here = false;
    Status failure;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
      // A lone batch (nothing queued behind it, no fsync in flight) is synced right here: the
      // hand-over to the sync thread would cost its callers a thread switch and overlap nothing.
      sync_here = queue_.empty() && unsynced_.empty() && !syncing_;
      if (batch_committed) MarkVisible(batch);
      if (sync_here) {
        syncing_ = true;
        failure = log_failure_;
      } else {
        // Handed over, the batch may be returned by the sync thread as soon as the lock is let go:
        // its callers are woken before that. A batch synced here is returned by this thread only.
        WakeVisible(batch);
        unsynced_.push_back(std::move(committed[0]));
      }
    }
    if (!sync_here) {
      batch_committed_.notify_one();
      continue;
    }
    WakeVisible(batch);
    SyncAndFinish(committed, failure);
  }
}

void GroupCommitter::SyncLoop() {
  for (;;) {
    std::vector<CommittedBatch> batches;
    Status failure;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      batch_committed_.wait(lock, [&] { return (writer_stopped_ || !unsynced_.empty()) && !syncing_; });
      if (unsynced_.empty()) return;  // the writer stopped, and everything it committed is durable
      batches.swap(unsynced_);
      syncing_ = true;
      failure = log_failure_;
    }
    SyncAndFinish(batches, failure);
  }
}

void GroupCommitter::SyncAndFinish(std::vector<CommittedBatch>& batches, Status failure) {
  // Batches that changed nothing saw only what earlier, already durable, batches wrote — or what a
  // batch of this round wrote, which this fsync covers.
  bool changed = std::any_of(batches.begin(), batches.end(), [](const auto& b) { return b.changed; });
  if (failure.ok() && changed) failure = SyncLog();
  if (!failure.ok()) {
    for (CommittedBatch& batch : batches) {
      for (Pending* pending : batch.writes) pending->result = failure;
    }
  }
  FinishBatches(batches, true);
}

bool GroupCommitter::CommitBatch(Batch& batch) {
  transactions_.fetch_add(1);
  writes_.fetch_add(batch.size());
  if (batch.size() > largest_batch_.load()) largest_batch_.store(batch.size());

  Status begun = writer_->ExecCached("BEGIN IMMEDIATE;");
  if (!begun.ok()) {
    FailBatch(batch, begun);
    return false;
  }
  for (Pending* pending : batch) {
    pending->result = RunInSavepoint(*pending);
    // Some SQLite errors (disk full, I/O) roll back the whole transaction, taking every earlier
    // write of the batch with it.
    if (!writer_->InTransaction()) {
      FailBatch(batch, Error(ErrorCode::kIoError, "transaction rolled back: " + pending->result.message()));
      return false;
    }
  }
  Status committed = writer_->ExecCached("COMMIT;");
  if (!committed.ok()) {
    FailBatch(batch, committed);
    return false;
  }
  return true;
}

void GroupCommitter::MarkVisible(Batch& batch) {
  for (Pending* pending : batch) {
    if (pending->on_visible != nullptr && pending->result.ok()) pending->visible = true;
  }
}

void GroupCommitter::WakeVisible(Batch& batch) {
  for (Pending* pending : batch) {
    if (pending->visible) pending->woken.notify_one();
  }
}

Status GroupCommitter::RunInSavepoint(Pending& pending) {
  SERAC_RETURN_IF_ERROR(writer_->ExecCached("SAVEPOINT write;"));
  Status status;
  try {
    status = (*pending.write)(*writer_);
  } catch (const std::exception& error) {
    status = Error(ErrorCode::kInternal, std::string("metadata write threw: ") + error.what());
  }
  if (!writer_->InTransaction()) return status;
  if (!status.ok()) (void)writer_->ExecCached("ROLLBACK TO write;");
  Status released = writer_->ExecCached("RELEASE write;");
  return status.ok() ? released : status;
}

void GroupCommitter::FailBatch(Batch& batch, const Status& cause) {
  if (writer_->InTransaction()) (void)writer_->ExecCached("ROLLBACK;");
  for (Pending* pending : batch) {
    pending->result = Error(ErrorCode::kIoError, "metadata commit failed: " + cause.message());
  }
}

void GroupCommitter::FinishBatches(std::vector<CommittedBatch>& batches, bool ends_fsync) {
  // Notified under the lock: once it sees `done`, the caller returns and its Pending is gone.
  std::lock_guard<std::mutex> lock(mutex_);
  if (ends_fsync) syncing_ = false;
  for (CommittedBatch& batch : batches) {
    for (Pending* pending : batch.writes) {
      pending->done = true;
      pending->woken.notify_one();
    }
  }
}

}  // namespace serac::meta::sqlite
