#include "objects/gc.h"

#include <chrono>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/limits.h"
#include "common/log.h"

namespace serac::objects {

// The lease of the server that collects garbage, with stores several servers share.
constexpr const char* kGarbageLease = "gc";

namespace {

Status RemoveOrphans(meta::MetaStore& meta, blob::BlobStore& blobs, const SweepOptions& options,
                     SweepReport& report) {
  std::unordered_set<std::string> referenced;
  SERAC_RETURN_IF_ERROR(meta.ForEachReferencedBlob([&](const std::string& id) {
    referenced.insert(id);
    return Status::Ok();
  }));
  // Collect first, remove afterwards: removing while the store iterates its directories could
  // confuse the iteration.
  std::vector<blob::BlobId> orphans;
  SERAC_RETURN_IF_ERROR(blobs.ForEachBlob([&](const blob::BlobId& id) {
    if (!referenced.contains(id)) orphans.push_back(id);
    return Status::Ok();
  }));
  for (const blob::BlobId& id : orphans) {
    if (!options.exclusive) {
      Result<WallTime> committed = blobs.CommittedAt(id);
      if (!committed.ok() && committed.status().code() == ErrorCode::kNotFound) continue;  // gone already
      SERAC_RETURN_IF_ERROR(committed.status());
      if (options.now - *committed < options.orphan_age_min) {
        ++report.orphan_blobs_spared;
        continue;
      }
    }
    SERAC_RETURN_IF_ERROR(blobs.Remove(id));
    ++report.orphan_blobs_removed;
  }
  return Status::Ok();
}

}  // namespace

Result<uint64_t> CollectGarbageOnce(meta::MetaStore& meta, blob::BlobStore& blobs, uint32_t batch_max) {
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> queued, meta.PeekGarbage(batch_max));
  std::vector<std::string> removed;
  removed.reserve(queued.size());
  for (const std::string& id : queued) {
    Status status = blobs.Remove(id);
    if (status.ok()) {
      removed.push_back(id);
    } else {
      log::Warn("gc: cannot remove blob " + id + ": " + status.ToString());
    }
  }
  if (!removed.empty()) SERAC_RETURN_IF_ERROR(meta.ForgetGarbage(removed));
  return static_cast<uint64_t>(removed.size());
}

Result<uint64_t> DrainGarbage(meta::MetaStore& meta, blob::BlobStore& blobs) {
  uint64_t total = 0;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(uint64_t removed, CollectGarbageOnce(meta, blobs, limits::kGarbageBatchMax));
    total += removed;
    // A round that removed nothing means the queue is empty or every queued blob fails to
    // remove; either way another round now would not help.
    if (removed == 0) return total;
  }
}

Result<SweepReport> SweepAtStartup(meta::MetaStore& meta, blob::BlobStore& blobs,
                                   const SweepOptions& options) {
  SweepReport report;
  if (options.exclusive) SERAC_RETURN_IF_ERROR(blobs.SweepTemporaryFiles());
  SERAC_RETURN_IF_ERROR(RemoveOrphans(meta, blobs, options, report));
  SERAC_ASSIGN_OR_RETURN(report.garbage_blobs_removed, DrainGarbage(meta, blobs));
  return report;
}

GarbageCollector::GarbageCollector(meta::MetaStore* meta, blob::BlobStore* blobs, std::string lease_holder)
    : meta_(meta), blobs_(blobs), lease_holder_(std::move(lease_holder)) {}

GarbageCollector::~GarbageCollector() { Stop(); }

void GarbageCollector::Start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { Run(); });
}

void GarbageCollector::Wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_pending_ = true;
  }
  wake_.notify_one();
}

void GarbageCollector::Stop() {
  std::thread thread;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  wake_.notify_one();
  if (!thread.joinable()) return;
  thread.join();
  // Another server takes the collecting over at once instead of after the lease runs out.
  if (!lease_holder_.empty()) (void)meta_->ReleaseLease(kGarbageLease, lease_holder_);
}

uint64_t GarbageCollector::blobs_removed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blobs_removed_;
}

std::string GarbageCollector::RenderMetrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string text =
      "# HELP serac_gc_blobs_removed_total Blobs no object uses any more, removed by this server.\n"
      "# TYPE serac_gc_blobs_removed_total counter\nserac_gc_blobs_removed_total " +
      std::to_string(blobs_removed_) + "\n";
  if (!lease_holder_.empty()) {
    text +=
        "# HELP serac_gc_lease_held Whether this server holds the lease to collect garbage.\n"
        "# TYPE serac_gc_lease_held gauge\nserac_gc_lease_held " +
        std::string(lease_held_ ? "1" : "0") + "\n";
  }
  return text;
}

void GarbageCollector::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, limits::kGarbageCollectionInterval, [this] { return stopping_ || wake_pending_; });
    if (stopping_) break;
    wake_pending_ = false;
    lock.unlock();
    if (!lease_holder_.empty()) {
      // Renewed every round, far more often than it runs out; another server's lease means that
      // server collects.
      Result<bool> held = meta_->AcquireLease(
          kGarbageLease, lease_holder_,
          std::chrono::duration_cast<std::chrono::milliseconds>(limits::kBackgroundLeaseTtl));
      // Said once per outage, not once a second while the store is away.
      if (!held.ok() && !lease_failing_) log::Warn("gc: cannot take the lease: " + held.status().ToString());
      lease_failing_ = !held.ok();
      lock.lock();
      lease_held_ = held.ok() && *held;
      if (!lease_held_) continue;
      lock.unlock();
    }
    // One batch per round so Stop() never waits for a long queue to drain.
    Result<uint64_t> removed = CollectGarbageOnce(*meta_, *blobs_, limits::kGarbageBatchMax);
    lock.lock();
    if (removed.ok()) {
      blobs_removed_ += *removed;
      if (*removed == limits::kGarbageBatchMax) wake_pending_ = true;  // more is probably queued
    } else {
      log::Warn("gc: round failed: " + removed.status().ToString());
    }
  }
}

}  // namespace serac::objects
