#include <exception>
#include <string>
#include <utility>

#include "meta/sqlite/group_commit_internal.h"

namespace serac::meta::sqlite {

GroupCommitter::GroupCommitter(std::unique_ptr<Connection> writer, size_t batch_max)
    : writer_(std::move(writer)), batch_max_(batch_max == 0 ? 1 : batch_max), thread_([this] { Loop(); }) {}

GroupCommitter::~GroupCommitter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_queued_.notify_all();
  thread_.join();
}

Status GroupCommitter::Run(const Write& write) {
  Pending pending{&write, Status::Ok(), false};
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) return Error(ErrorCode::kUnavailable, "metadata store is closing");
  queue_.push_back(&pending);
  work_queued_.notify_one();
  batch_finished_.wait(lock, [&] { return pending.done; });
  return std::move(pending.result);
}

GroupCommitStats GroupCommitter::stats() const {
  return GroupCommitStats{transactions_.load(), writes_.load(), largest_batch_.load()};
}

void GroupCommitter::Loop() {
  std::vector<Pending*> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to do
      while (!queue_.empty() && batch.size() < batch_max_) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    CommitBatch(batch);
    FinishBatch(batch);
    batch.clear();
  }
}

void GroupCommitter::CommitBatch(std::vector<Pending*>& batch) {
  transactions_.fetch_add(1);
  writes_.fetch_add(batch.size());
  if (batch.size() > largest_batch_.load()) largest_batch_.store(batch.size());

  Status begun = writer_->ExecCached("BEGIN IMMEDIATE;");
  if (!begun.ok()) return FailBatch(batch, begun);
  for (Pending* pending : batch) {
    pending->result = RunInSavepoint(*pending);
    // Some SQLite errors (disk full, I/O) roll back the whole transaction, taking every earlier
    // write of the batch with it.
    if (!writer_->InTransaction()) {
      return FailBatch(batch,
                       Error(ErrorCode::kIoError, "transaction rolled back: " + pending->result.message()));
    }
  }
  Status committed = writer_->ExecCached("COMMIT;");
  if (!committed.ok()) FailBatch(batch, committed);
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

void GroupCommitter::FailBatch(std::vector<Pending*>& batch, const Status& cause) {
  if (writer_->InTransaction()) (void)writer_->ExecCached("ROLLBACK;");
  for (Pending* pending : batch) {
    pending->result = Error(ErrorCode::kIoError, "metadata commit failed: " + cause.message());
  }
}

void GroupCommitter::FinishBatch(std::vector<Pending*>& batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Pending* pending : batch) pending->done = true;
  }
  batch_finished_.notify_all();
}

}  // namespace serac::meta::sqlite
