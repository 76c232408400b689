// JobOwner over the metadata store's leases, for servers that share one catalog: a table's jobs
// run on the server holding the lease "maintenance/<warehouse>/<table uuid>". A claim takes the
// lease; a thread of the owner renews every held lease each third of limits::kBackgroundLeaseTtl
// (a compaction may run for minutes); a release gives it up at once. A server that dies holds its
// leases no longer than limits::kBackgroundLeaseTtl, after which another server's scheduler claims
// the tables. Correctness never rests on the lease (every job's commit is a compare-and-swap); the
// lease keeps servers from doing one table's work twice, and tells a server that a job recorded as
// running is running elsewhere.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "catalog/job_runner.h"
#include "meta/meta_store.h"

namespace serac::catalog {

std::string TableJobLeaseName(const std::string& warehouse, const std::string& table_uuid);

class LeaseJobOwner final : public JobOwner {
 public:
  // `holder`: this server, unique among the servers sharing `store`.
  LeaseJobOwner(meta::MetaStore& store, std::string holder);
  ~LeaseJobOwner() override;
  LeaseJobOwner(const LeaseJobOwner&) = delete;
  LeaseJobOwner& operator=(const LeaseJobOwner&) = delete;

  bool Claim(const JobTarget& target) override;
  void Release(const JobTarget& target) override;

  const std::string& holder() const { return holder_; }
  // Prometheus text: the table leases held now, and renewals that failed.
  std::string RenderMetrics();

 private:
  void RenewUntilStopped();

  meta::MetaStore& store_;
  const std::string holder_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<std::string> held_;  // guarded by mutex_: lease names
  bool stopping_ = false;       // guarded by mutex_
  uint64_t renewals_lost_ = 0;  // guarded by mutex_
  std::thread renewer_;
};

}  // namespace serac::catalog
