#include "catalog/job_lease_owner.h"

#include <chrono>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "common/log.h"

namespace serac::catalog {
namespace {

std::chrono::milliseconds LeaseTtl() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(limits::kBackgroundLeaseTtl);
}

}  // namespace

std::string TableJobLeaseName(const std::string& warehouse, const std::string& table_uuid) {
  return "maintenance/" + warehouse + "/" + table_uuid;
}

LeaseJobOwner::LeaseJobOwner(meta::MetaStore& store, std::string holder)
    : store_(store), holder_(std::move(holder)), renewer_([this] { RenewUntilStopped(); }) {}

LeaseJobOwner::~LeaseJobOwner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  renewer_.join();
  // Whatever is still held goes back at once: another server need not wait for it to run out.
  for (const std::string& name : held_) (void)store_.ReleaseLease(name, holder_);
}

bool LeaseJobOwner::Claim(const JobTarget& target) {
  const std::string name = TableJobLeaseName(target.warehouse, target.table_uuid);
  Result<bool> taken = store_.AcquireLease(name, holder_, LeaseTtl());
  if (!taken.ok()) {
    log::Warn("maintenance: cannot take the lease of " + target.table.DisplayName() + ": " +
              taken.status().ToString());
    return false;
  }
  if (!*taken) return false;
  std::lock_guard lock(mutex_);
  held_.insert(name);
  return true;
}

void LeaseJobOwner::Release(const JobTarget& target) {
  const std::string name = TableJobLeaseName(target.warehouse, target.table_uuid);
  {
    std::lock_guard lock(mutex_);
    held_.erase(name);
  }
  if (Status released = store_.ReleaseLease(name, holder_); !released.ok()) {
    // It runs out by itself within limits::kBackgroundLeaseTtl.
    log::Warn("maintenance: cannot release the lease of " + target.table.DisplayName() + ": " +
              released.ToString());
  }
}

std::string LeaseJobOwner::RenderMetrics() {
  std::lock_guard lock(mutex_);
  return "# HELP serac_maintenance_leases_held Tables whose maintenance lease this server holds.\n"
         "# TYPE serac_maintenance_leases_held gauge\nserac_maintenance_leases_held " +
         std::to_string(held_.size()) +
         "\n# HELP serac_maintenance_lease_renewals_lost_total Renewals of a held table lease that failed.\n"
         "# TYPE serac_maintenance_lease_renewals_lost_total "
         "counter\nserac_maintenance_lease_renewals_lost_total " +
         std::to_string(renewals_lost_) + "\n";
}

void LeaseJobOwner::RenewUntilStopped() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, limits::kBackgroundLeaseTtl / 3, [&] { return stopping_; });
    if (stopping_) return;
    std::vector<std::string> names(held_.begin(), held_.end());
    lock.unlock();
    for (const std::string& name : names) {
      Result<bool> renewed = store_.AcquireLease(name, holder_, LeaseTtl());
      if (!renewed.ok() || !*renewed) {
        {
          std::lock_guard relock(mutex_);
          ++renewals_lost_;
        }
        // The job goes on: its commit is a compare-and-swap, so a second runner costs work, not data.
        log::Warn("maintenance: lost the lease " + name +
                  (renewed.ok() ? std::string(" to another server") : ": " + renewed.status().ToString()));
      }
    }
    lock.lock();
  }
}

}  // namespace serac::catalog
