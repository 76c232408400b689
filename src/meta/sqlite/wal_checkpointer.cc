#include <utility>

#include "common/log.h"
#include "meta/sqlite/wal_checkpointer_internal.h"

namespace serac::meta::sqlite {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::Start(const ConnectionOptions& options,
                                                                Connection& writer) {
  ConnectionOptions own_options = options;
  own_options.writer = true;  // a checkpoint writes the database file
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<Connection> own, Connection::Open(own_options));
  std::unique_ptr<WalCheckpointer> checkpointer(new WalCheckpointer(std::move(own)));
  WalCheckpointer* self = checkpointer.get();
  writer.SetWalCommitHook([self](Connection& db, int wal_pages) { self->OnCommit(db, wal_pages); });
  return checkpointer;
}

WalCheckpointer::WalCheckpointer(std::unique_ptr<Connection> own)
    : own_(std::move(own)), thread_([this] { Loop(); }) {}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void WalCheckpointer::OnCommit(Connection& writer, int wal_pages) {
  if (wal_pages >= kWalPagesWriterCheckpoint) {
    Status done = writer.CheckpointPassive();
    if (!done.ok()) log::Warn("metadata store: checkpoint on the writer failed: " + done.ToString());
    writer_checkpoints_.fetch_add(1);
    return;
  }
  if (wal_pages < kWalPagesCheckpointThreshold) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (wanted_) return;
    wanted_ = true;
  }
  wake_.notify_one();
}

void WalCheckpointer::Loop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || wanted_; });
      if (stopping_) return;
      wanted_ = false;
    }
    Status done = own_->CheckpointPassive();
    if (!done.ok()) log::Warn("metadata store: background checkpoint failed: " + done.ToString());
    checkpoints_.fetch_add(1);
  }
}

}  // namespace serac::meta::sqlite
