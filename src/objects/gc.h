// Blob garbage collection. The MetaStore queues a blob id in the same transaction that makes the
// blob unreferenced; this module removes queued blobs from the BlobStore and then forgets them, so
// a crash between the two only repeats an idempotent Remove. The start-up sweep also removes
// orphans: blobs committed by a writer that crashed before its index transaction.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "blob/blob_store.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/status.h"
#include "meta/meta_store.h"

namespace serac::objects {

struct SweepReport {
  uint64_t orphan_blobs_removed = 0;   // committed but referenced by nothing in the MetaStore
  uint64_t orphan_blobs_spared = 0;    // unreferenced but younger than SweepOptions::orphan_age_min
  uint64_t garbage_blobs_removed = 0;  // drained from the GC queue
};

struct SweepOptions {
  // True when this process alone writes to the stores (the embedded back ends under the data
  // directory's lock): then a blob no index row names is an orphan at once, and every temporary
  // file is a dead writer's. False for stores several servers share: a blob another server is
  // about to reference would look the same, so only blobs older than orphan_age_min count as
  // orphans, and temporary files are left to their writers.
  bool exclusive = true;
  std::chrono::seconds orphan_age_min = limits::kSharedStoreOrphanAgeMin;
  WallTime now = Now();
};

// One GC round: removes up to `batch_max` queued blobs and forgets those that were removed.
// Returns how many were removed; blobs whose removal failed stay queued for a later round.
Result<uint64_t> CollectGarbageOnce(meta::MetaStore& meta, blob::BlobStore& blobs, uint32_t batch_max);

// Runs CollectGarbageOnce until the queue is empty or a round makes no progress.
Result<uint64_t> DrainGarbage(meta::MetaStore& meta, blob::BlobStore& blobs);

// Start-up sweep, before any request is served: temporary files, then orphans, then the GC queue,
// under the rules of `options` (one process, or several sharing the stores).
Result<SweepReport> SweepAtStartup(meta::MetaStore& meta, blob::BlobStore& blobs,
                                   const SweepOptions& options = {});

// A background thread that runs a GC round every limits::kGarbageCollectionInterval, or sooner
// when woken. With stores several servers share, `lease_holder` names this server: a round runs
// only while it holds the "gc" lease (limits::kBackgroundLeaseTtl), so one server collects at a
// time and another takes over when it dies. Thread-safe; Stop() is idempotent and also run by the
// destructor.
class GarbageCollector {
 public:
  GarbageCollector(meta::MetaStore* meta, blob::BlobStore* blobs, std::string lease_holder = {});
  ~GarbageCollector();
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  void Start();
  void Wake();
  void Stop();
  uint64_t blobs_removed() const;
  // Prometheus text: blobs removed, and (with a lease holder) whether this server collects now.
  std::string RenderMetrics() const;

 private:
  void Run();

  meta::MetaStore* meta_;
  blob::BlobStore* blobs_;
  const std::string lease_holder_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;       // guarded by mutex_
  bool wake_pending_ = false;   // guarded by mutex_
  uint64_t blobs_removed_ = 0;  // guarded by mutex_
  bool lease_held_ = false;     // guarded by mutex_
  bool lease_failing_ = false;  // the collector's thread only
  std::thread thread_;
};

}  // namespace serac::objects
