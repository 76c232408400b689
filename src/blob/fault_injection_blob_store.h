// A BlobStore decorator that injects failures, for tests of the store contract and of callers that
// must survive disk errors and crashes (in the spirit of LevelDB's fault-injection Env).
//
// Faults are armed on the store and hit the writers it hands out:
//   FailNthAppend(n)      the n-th Append from now returns kIoError; that writer can no longer commit.
//   FailNextCommit()      the next Commit (or CreateFromRange) fails as if fsync or rename failed;
//                         the partial blob is discarded.
//   TearNextWriter(bytes) the next writer created keeps only its first `bytes` bytes and its Commit
//                         "crashes": it returns kIoError and leaves the temp file behind, as a
//                         process killed mid-write would. SweepTemporaryFiles clears it.
//   Crash()               every writer created so far is dropped as by a crash: later calls on it
//                         fail with kUnavailable and its temp file is left behind.
// With nothing armed it forwards every call unchanged. Thread-safe like any BlobStore.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "blob/blob_store.h"

namespace serac::blob {

class FaultInjectionBlobStore : public BlobStore {
 public:
  explicit FaultInjectionBlobStore(std::unique_ptr<BlobStore> inner);
  ~FaultInjectionBlobStore() override;

  void FailNthAppend(uint64_t n);
  void FailNextCommit();
  void TearNextWriter(uint64_t prefix_bytes);
  void Crash();

  Result<std::unique_ptr<BlobWriter>> Create() override;
  Result<std::unique_ptr<BlobWriter>> CreateWithId(const BlobId& id) override;
  Result<BlobId> CreateFromRange(const BlobId& source, uint64_t offset, uint64_t length) override;
  Result<std::unique_ptr<BlobReader>> Open(const BlobId& id) override;
  Status Remove(const BlobId& id) override;
  Status ForEachBlob(const std::function<Status(const BlobId&)>& visit) override;
  Result<WallTime> CommittedAt(const BlobId& id) override;
  Status SweepTemporaryFiles() override;

 private:
  class Writer;
  // Wraps a writer of the store below in one that tears and crashes as armed.
  Result<std::unique_ptr<BlobWriter>> Wrap(std::unique_ptr<BlobWriter> inner);
  friend class Writer;

  // Called by writers; each consumes an armed fault if there is one.
  bool TakeAppendFault();
  bool TakeCommitFault();
  uint64_t crash_epoch() const;
  // Keeps a crashed writer's inner writer alive so its temp file survives, as after a real crash.
  void KeepCrashedWriter(std::unique_ptr<BlobWriter> inner);

  std::unique_ptr<BlobStore> inner_;
  mutable std::mutex mutex_;
  uint64_t appends_until_failure_ = 0;                        // guarded by mutex_; 0 = not armed
  bool fail_next_commit_ = false;                             // guarded by mutex_
  bool tear_next_writer_ = false;                             // guarded by mutex_
  uint64_t tear_prefix_bytes_ = 0;                            // guarded by mutex_
  uint64_t crash_epoch_ = 0;                                  // guarded by mutex_
  std::vector<std::unique_ptr<BlobWriter>> crashed_writers_;  // guarded by mutex_
};

}  // namespace serac::blob
