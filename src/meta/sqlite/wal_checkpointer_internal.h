// Checkpoints the write-ahead log on a thread and a connection of its own.
//
// SQLite's automatic checkpoint runs inside the COMMIT that pushes the log past its threshold, so
// that commit — and with group commit every write batched with it — waits while the log is copied
// into the database file and the file is fsynced. Catalog commits write metadata rows of tens or
// hundreds of KiB, which made that every few dozen commits: the whole commit p99. Here the writer
// only reports how long the log is; this thread runs PASSIVE checkpoints, which never block the
// writer or the readers. If it falls far behind, the writer checkpoints itself
// (kWalPagesWriterCheckpoint) so that the log stays bounded.
//
// Thread-safety: the wal hook runs on the writer's thread; everything else is internal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "common/status.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

// Log length (in database pages, 4 KiB each; 16 MiB) at which the checkpoint thread is woken: four
// times SQLite's default. Catalog commits rewrite the same pages again and again (a table's row,
// use counts, the index's inner pages), which a checkpoint then copies once for many commits, and
// the checkpoint's own fsync of the database file, which makes the commits' fsyncs of the log wait,
// comes a quarter as often (the commit p99 with one client halved).
inline constexpr int kWalPagesCheckpointThreshold = 4000;
// Log length (pages; 64 MiB) at which the writer checkpoints itself. Under a steady stream of
// commits the thread's checkpoints rarely catch up with the very last frame, and SQLite restarts
// the log from its beginning only after one that did; the writer's own checkpoint is then cheap,
// since it starts where the thread's left off.
inline constexpr int kWalPagesWriterCheckpoint = 4 * kWalPagesCheckpointThreshold;

class WalCheckpointer {
 public:
  // Opens its own connection with `options` and takes over checkpointing from `writer`, whose
  // automatic checkpoints stop. Call it before `writer` is handed to its thread, and destroy the
  // checkpointer only after the writer is closed (its hook calls into the checkpointer).
  static Result<std::unique_ptr<WalCheckpointer>> Start(const ConnectionOptions& options, Connection& writer);
  ~WalCheckpointer();  // stops the thread; closing the last connection checkpoints what is left
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  uint64_t checkpoints() const { return checkpoints_.load(); }                // run by the thread
  uint64_t writer_checkpoints() const { return writer_checkpoints_.load(); }  // run by the writer

 private:
  explicit WalCheckpointer(std::unique_ptr<Connection> own);
  void OnCommit(Connection& writer, int wal_pages);  // on the writer's thread, after each commit
  void Loop();

  std::unique_ptr<Connection> own_;  // used only by thread_

  std::mutex mutex_;
  std::condition_variable wake_;  // guarded by mutex_
  bool wanted_ = false;           // guarded by mutex_
  bool stopping_ = false;         // guarded by mutex_

  std::atomic<uint64_t> checkpoints_{0};
  std::atomic<uint64_t> writer_checkpoints_{0};
  std::thread thread_;  // last: starts after every member above is ready
};

}  // namespace serac::meta::sqlite
