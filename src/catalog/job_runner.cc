#include "catalog/job_runner.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "common/clock.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/log.h"
#include "maintenance/expire_snapshots.h"
#include "maintenance/rewrite_data_files.h"
#include "maintenance/rewrite_manifests.h"

namespace serac::catalog {

using maintenance::ExpireOptions;
using maintenance::ExpireResult;
using maintenance::ExpireSnapshots;
using maintenance::RemoveUnreferencedFiles;
using maintenance::RewriteDataFiles;
using maintenance::RewriteManifests;
using maintenance::RewriteManifestsResult;
using maintenance::RewriteOptions;
using maintenance::RewriteResult;
using maintenance::UnreferencedOptions;
using maintenance::UnreferencedResult;

namespace {

using Json = nlohmann::json;

struct QueuedJob {
  meta::MaintenanceJobRecord record;
  iceberg::TableRef table;
  MaintenanceType type;
  MaintenanceSettings settings;
  bool automatic = false;  // started by the runner itself
  JobRunner::RunOptions options;
};

// What jobs did, summed over the server's life, for /_serac/metrics.
struct JobCounters {
  std::map<std::pair<std::string, std::string>, uint64_t> jobs;  // (type, result)
  uint64_t files_read = 0;
  uint64_t bytes_read = 0;
  uint64_t files_written = 0;
  uint64_t bytes_written = 0;
  uint64_t snapshots_removed = 0;
  uint64_t files_removed = 0;
  uint64_t bytes_removed = 0;
};

// Foreground requests come first: the thread that runs jobs asks the kernel for less CPU
// (limits::kMaintenanceNice, a CFS weight about a tenth of a request thread's) and for disk time
// only after every best-effort request (the lowest best-effort I/O priority; schedulers that keep
// priorities, such as BFQ, honour it). Threads are scheduled one by one on Linux, so this touches
// no other thread of the server. Not SCHED_IDLE: a job thread that may not run at all while
// requests keep the cores busy holds up whatever waits for its commit (measured: load-table of the
// table being compacted waited 40 ms at p99 under SCHED_IDLE, 5 ms at nice 10).
void LowerThisThreadsPriority() {
  const auto thread_id = static_cast<id_t>(::syscall(SYS_gettid));
  if (::setpriority(PRIO_PROCESS, thread_id, limits::kMaintenanceNice) != 0) {
    log::Warn("maintenance: cannot lower the job thread's CPU priority: " +
              std::string(std::strerror(errno)));
  }
  constexpr int kIoPriorityClassShift = 13;  // IOPRIO_CLASS_SHIFT (linux/ioprio.h)
  constexpr int kIoPriorityBestEffort = 2;   // IOPRIO_CLASS_BE
  constexpr int kIoPriorityLowest = 7;
  constexpr int kIoPriorityWhoProcess = 1;  // IOPRIO_WHO_PROCESS: a thread id names one thread
  const int priority = (kIoPriorityBestEffort << kIoPriorityClassShift) | kIoPriorityLowest;
  if (::syscall(SYS_ioprio_set, kIoPriorityWhoProcess, static_cast<int>(thread_id), priority) != 0) {
    log::Warn("maintenance: cannot lower the job thread's I/O priority: " +
              std::string(std::strerror(errno)));
  }
}

// Runs one job; what it did.
Result<JobFigures> RunJob(iceberg::TableCatalog& catalog, const JobRunner::Seams& seams,
                          const QueuedJob& job) {
  SERAC_ASSIGN_OR_RETURN(JobRunner::TableStorage storage, seams.storage_for(job.record.warehouse, job.table));
  iceberg::FileIO& io = *storage.io;
  switch (job.type) {
    case MaintenanceType::kSnapshotManagement: {
      ExpireOptions options;
      options.max_snapshot_age_ms =
          job.options.snapshots_older_than_ms.value_or(job.settings.max_snapshot_age_ms);
      options.min_snapshots_to_keep = job.options.retain_last.value_or(job.settings.min_snapshots_to_keep);
      options.snapshot_ids = job.options.snapshot_ids;
      SERAC_ASSIGN_OR_RETURN(ExpireResult expired, ExpireSnapshots(catalog, io, job.table, options));
      const int64_t files_removed = expired.manifest_lists_deleted + expired.manifests_deleted +
                                    expired.data_files_deleted + expired.delete_files_deleted +
                                    expired.statistics_files_deleted;
      JobFigures figures;
      figures.snapshots_removed = expired.snapshots_removed;
      figures.refs_removed = expired.refs_removed;
      figures.files_read = expired.files_read;
      figures.bytes_read = expired.bytes_read;
      figures.files_removed = files_removed;
      figures.data_files_removed = expired.data_files_deleted;
      figures.delete_files_removed = expired.delete_files_deleted;
      figures.bytes_removed = expired.bytes_deleted;
      return figures;
    }
    case MaintenanceType::kCompaction: {
      RewriteOptions options;
      options.target_file_bytes = job.settings.target_file_size_bytes;
      options.strategy = job.settings.strategy;
      SERAC_ASSIGN_OR_RETURN(RewriteResult rewritten, RewriteDataFiles(catalog, io, job.table, options));
      // Then the small manifests, the new ones included, into fewer (Java's RewriteManifests).
      SERAC_ASSIGN_OR_RETURN(RewriteManifestsResult manifests, RewriteManifests(catalog, io, job.table));
      JobFigures figures;
      figures.snapshot_id = manifests.snapshot_id != 0 ? manifests.snapshot_id : rewritten.snapshot_id;
      figures.manifests_rewritten = manifests.manifests_rewritten;
      figures.manifests_written = manifests.manifests_written;
      figures.files_read = rewritten.files_rewritten;
      figures.bytes_read = rewritten.bytes_read;
      figures.files_written = rewritten.files_written;
      figures.bytes_written = rewritten.bytes_written;
      figures.rows = rewritten.rows;
      figures.partitions = rewritten.partitions;
      figures.rows_deleted = rewritten.rows_deleted;
      figures.delete_files_read = rewritten.delete_files_read;
      figures.delete_files_removed = rewritten.delete_files_removed;
      return figures;
    }
    case MaintenanceType::kUnreferencedFileRemoval: {
      if (!storage.list_files || !seams.current_metadata) break;
      constexpr int64_t kDayMs = 24LL * 3600 * 1000;
      UnreferencedOptions options;
      options.unreferenced_older_than_ms =
          job.options.files_older_than_ms.value_or(job.settings.unreferenced_days * kDayMs);
      options.non_current_older_than_ms =
          job.options.files_older_than_ms.value_or(job.settings.non_current_days * kDayMs);
      SERAC_ASSIGN_OR_RETURN(std::string current, seams.current_metadata(job.record.warehouse, job.table));
      SERAC_ASSIGN_OR_RETURN(
          UnreferencedResult removed,
          RemoveUnreferencedFiles(catalog, io, job.table, current, storage.list_files, options));
      JobFigures figures;
      figures.files_listed = removed.files_listed;
      figures.files_reached = removed.files_reached;
      figures.files_kept_young = removed.files_kept_young;
      figures.files_read = removed.files_read;
      figures.bytes_read = removed.bytes_read;
      figures.files_removed = removed.files_removed;
      figures.bytes_removed = removed.bytes_removed;
      return figures;
    }
  }
  return Error(ErrorCode::kNotImplemented, "no job runs " + std::string(MaintenanceTypeName(job.type)));
}

}  // namespace

bool JobFigures::ChangedNothing() const {
  return files_read == 0 && snapshots_removed == 0 && files_removed == 0 && refs_removed.value_or(0) == 0 &&
         manifests_rewritten.value_or(0) == 0;
}

namespace {

// The figures as the job's record keeps them ("filesRead", "snapshotsRemoved", ...), the members the
// maintenance API shows.
Json FiguresJson(const JobFigures& f) {
  Json out = {{"filesRead", f.files_read},
              {"bytesRead", f.bytes_read},
              {"filesWritten", f.files_written},
              {"bytesWritten", f.bytes_written},
              {"snapshotsRemoved", f.snapshots_removed},
              {"filesRemoved", f.files_removed},
              {"bytesRemoved", f.bytes_removed}};
  auto optional = [&](const char* name, const std::optional<int64_t>& value) {
    if (value) out[name] = *value;
  };
  optional("snapshotId", f.snapshot_id);
  optional("manifestsRewritten", f.manifests_rewritten);
  optional("manifestsWritten", f.manifests_written);
  optional("rows", f.rows);
  optional("partitions", f.partitions);
  optional("rowsDeleted", f.rows_deleted);
  optional("deleteFilesRead", f.delete_files_read);
  optional("deleteFilesRemoved", f.delete_files_removed);
  optional("refsRemoved", f.refs_removed);
  optional("dataFilesRemoved", f.data_files_removed);
  optional("filesListed", f.files_listed);
  optional("filesReached", f.files_reached);
  optional("filesKeptYoung", f.files_kept_young);
  return out;
}

}  // namespace

struct JobRunner::Impl {
  meta::CatalogStore& store;
  Seams seams;
  int64_t check_interval_ms = 0;
  // Tables to look at, by uuid: the target and when (steady milliseconds). Guarded by mutex.
  std::map<std::string, std::pair<Target, int64_t>> checks;
  std::map<std::string, int64_t> last_checked;  // uuid: steady ms; guarded by mutex
  // (uuid, type): no automatic job before this steady ms. Guarded by mutex.
  std::map<std::pair<std::string, MaintenanceType>, int64_t> no_auto_before;
  std::map<std::string, int64_t> last_unreferenced_run;  // uuid: steady ms; guarded by mutex
  mutable std::mutex mutex;
  std::condition_variable wake;       // a job was queued, or the runner stops
  std::condition_variable idle;       // the queue emptied and nothing runs
  std::deque<QueuedJob> queue;        // guarded by mutex
  std::set<std::string> busy_tables;  // uuids with a job queued or running; guarded by mutex
  std::set<int64_t> active_jobs;      // guarded by mutex
  bool running_one = false;           // guarded by mutex
  bool checking = false;              // a table is being looked at; guarded by mutex
  bool stopping = false;              // guarded by mutex
  JobCounters counters;               // guarded by mutex
  std::thread worker;

  Impl(meta::CatalogStore& store_in, Seams seams_in, int64_t interval_ms)
      : store(store_in), seams(std::move(seams_in)), check_interval_ms(interval_ms) {}

  static int64_t SteadyMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // The next table whose look is due (its entry taken), or nullopt; `wait_ms` set to the wait
  // until the earliest one otherwise. Called with mutex held.
  std::optional<Target> TakeDueCheck(int64_t& wait_ms) {
    const int64_t now = SteadyMs();
    wait_ms = -1;
    for (auto it = checks.begin(); it != checks.end(); ++it) {
      if (it->second.second <= now) {
        Target target = std::move(it->second.first);
        last_checked[it->first] = now;
        checks.erase(it);
        return target;
      }
      const int64_t wait = it->second.second - now;
      if (wait_ms < 0 || wait < wait_ms) wait_ms = wait;
    }
    return std::nullopt;
  }

  // Looks at one table: the jobs due by its metadata and settings are queued (one per table: the
  // other waits for the next look, which the job's own commit brings).
  void Check(JobRunner& runner, const Target& target) {
    std::unique_ptr<iceberg::TableCatalog> catalog = seams.catalog_for(target.warehouse);
    Result<iceberg::TableMetadata> table = catalog->LoadTable(target.table);
    if (!table.ok() || table->table_uuid() != target.table_uuid) return;  // dropped or replaced meanwhile
    Result<MaintenanceSettings> settings =
        LoadTableSettings(store, target.warehouse, target.table_uuid, table->properties());
    if (!settings.ok()) return;
    const int64_t now_ms = ToUnixMillis(Now());
    for (MaintenanceType type : kMaintenanceTypes) {
      bool due = false;
      switch (type) {
        case MaintenanceType::kCompaction:
          due = CompactionDue(*table, *settings);
          break;
        case MaintenanceType::kSnapshotManagement:
          due = ExpiryDue(*table, *settings, now_ms);
          break;
        case MaintenanceType::kUnreferencedFileRemoval: {
          // Listing a table's files costs more than a look at its metadata: once a day at most.
          std::lock_guard lock(mutex);
          auto last = last_unreferenced_run.find(target.table_uuid);
          due =
              settings->unreferenced_file_removal_enabled && seams.current_metadata &&
              (last == last_unreferenced_run.end() || last->second + kAutoUnreferencedEveryMs <= SteadyMs());
          if (due) last_unreferenced_run[target.table_uuid] = SteadyMs();
          break;
        }
      }
      if (!due) continue;
      {
        std::lock_guard lock(mutex);
        auto held = no_auto_before.find({target.table_uuid, type});
        if (held != no_auto_before.end() && held->second > SteadyMs()) continue;
      }
      if (runner.StartJob(target, type, *settings, /*automatic=*/true, {}).ok()) return;
    }
  }

  void Finish(QueuedJob& job, const Result<JobFigures>& outcome) {
    job.record.ended_ms = ToUnixMillis(Now());
    Json body = Json::parse(job.record.json, nullptr, false);
    if (!body.is_object()) body = Json::object();
    if (outcome.ok()) {
      job.record.status = "succeeded";
      body.update(FiguresJson(*outcome));
    } else {
      job.record.status = "failed";
      body["error"] = outcome.status().message();
    }
    job.record.json = body.dump();
    // The claim goes first, outside the lock (an owner may ask another store): while the table is
    // still busy here no job of this runner can claim it in between.
    if (seams.owner) seams.owner->Release(JobTarget{job.record.warehouse, job.record.table_uuid, job.table});
    // The record that says the job ended and the table's release go together: whoever reads the
    // record may start the next job on the table at once.
    std::lock_guard lock(mutex);
    EndJob(job, outcome);
  }

  // Called with mutex held.
  void EndJob(const QueuedJob& job, const Result<JobFigures>& outcome) {
    Result<int64_t> saved = store.SaveMaintenanceJob(job.record);
    if (!saved.ok())
      log::Warn("maintenance: cannot record job " + std::to_string(job.record.id) + ": " +
                saved.status().message());
    busy_tables.erase(job.record.table_uuid);
    active_jobs.erase(job.record.id);
    if (job.automatic && (!outcome.ok() || outcome->ChangedNothing())) {
      no_auto_before[{job.record.table_uuid, job.type}] = SteadyMs() + kAutoJobRetryMs;
    }
    ++counters.jobs[{std::string(MaintenanceTypeName(job.type)), job.record.status}];
    if (outcome.ok()) {
      counters.files_read += static_cast<uint64_t>(outcome->files_read);
      counters.bytes_read += static_cast<uint64_t>(outcome->bytes_read);
      counters.files_written += static_cast<uint64_t>(outcome->files_written);
      counters.bytes_written += static_cast<uint64_t>(outcome->bytes_written);
      counters.snapshots_removed += static_cast<uint64_t>(outcome->snapshots_removed);
      counters.files_removed += static_cast<uint64_t>(outcome->files_removed);
      counters.bytes_removed += static_cast<uint64_t>(outcome->bytes_removed);
    }
  }

  void Work(JobRunner& runner) {
    LowerThisThreadsPriority();
    while (true) {
      QueuedJob job;
      {
        std::unique_lock lock(mutex);
        while (true) {
          if (stopping) return;
          if (!queue.empty()) break;
          int64_t wait_ms = -1;
          if (std::optional<Target> target = TakeDueCheck(wait_ms)) {
            checking = true;
            lock.unlock();
            Check(runner, *target);
            lock.lock();
            checking = false;
            if (queue.empty() && checks.empty()) idle.notify_all();
            continue;
          }
          if (wait_ms < 0) {
            wake.wait(lock);
          } else {
            wake.wait_for(lock, std::chrono::milliseconds(wait_ms));
          }
        }
        job = std::move(queue.front());
        queue.pop_front();
        running_one = true;
      }
      Result<JobFigures> outcome = Error(ErrorCode::kInternal, "the job did not run");
      try {
        std::unique_ptr<iceberg::TableCatalog> catalog = seams.catalog_for(job.record.warehouse);
        outcome = RunJob(*catalog, seams, job);
      } catch (const std::exception& e) {
        outcome = Error(ErrorCode::kInternal, std::string("the job stopped: ") + e.what());
      }
      Finish(job, outcome);
      std::lock_guard lock(mutex);
      running_one = false;
      if (queue.empty() && checks.empty()) idle.notify_all();
    }
  }
};

JobRunner::JobRunner(meta::CatalogStore& store, Seams seams, int64_t check_interval_ms)
    : impl_(std::make_unique<Impl>(store, std::move(seams), check_interval_ms)) {
  impl_->worker = std::thread([this] { impl_->Work(*this); });
}

void JobRunner::NoteCommit(const Target& target) {
  if (impl_->check_interval_ms <= 0) return;
  std::lock_guard lock(impl_->mutex);
  if (impl_->stopping || impl_->checks.count(target.table_uuid) != 0) return;
  int64_t due = Impl::SteadyMs() + impl_->check_interval_ms;
  if (auto last = impl_->last_checked.find(target.table_uuid); last != impl_->last_checked.end()) {
    due = std::max(due, last->second + impl_->check_interval_ms);
  }
  impl_->checks.emplace(target.table_uuid, std::make_pair(target, due));
  impl_->wake.notify_all();
}

JobRunner::~JobRunner() {
  std::deque<QueuedJob> dropped;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
    dropped.swap(impl_->queue);
  }
  impl_->wake.notify_all();
  if (impl_->worker.joinable()) impl_->worker.join();
  for (QueuedJob& job : dropped) {
    impl_->Finish(job, Error(ErrorCode::kUnavailable, "the server stopped before the job ran"));
  }
}

Result<int64_t> JobRunner::Start(const Target& target, MaintenanceType type,
                                 const MaintenanceSettings& settings, RunOptions options) {
  return StartJob(target, type, settings, false, std::move(options));
}

Result<int64_t> JobRunner::StartJob(const Target& target, MaintenanceType type,
                                    const MaintenanceSettings& settings, bool automatic, RunOptions options) {
  if (type == MaintenanceType::kUnreferencedFileRemoval && !impl_->seams.current_metadata) {
    return Error(ErrorCode::kNotImplemented, "this runner cannot list a table's files");
  }
  QueuedJob job;
  job.table = target.table;
  job.type = type;
  job.settings = settings;
  job.record.warehouse = target.warehouse;
  job.record.table_uuid = target.table_uuid;
  job.record.type = std::string(MaintenanceTypeName(type));
  job.record.started_ms = ToUnixMillis(Now());
  job.record.status = "running";
  job.automatic = automatic;
  Json described{{"table", target.table.DisplayName()}, {"trigger", automatic ? "automatic" : "requested"}};
  // What the request asked for instead of the settings, in the history with the job.
  if (options.files_older_than_ms) described["olderThanSeconds"] = *options.files_older_than_ms / 1000;
  if (options.snapshots_older_than_ms)
    described["olderThanSeconds"] = *options.snapshots_older_than_ms / 1000;
  if (options.retain_last) described["retainLast"] = *options.retain_last;
  if (!options.snapshot_ids.empty()) described["snapshotIds"] = options.snapshot_ids;
  if (!impl_->seams.node.empty()) described["node"] = impl_->seams.node;
  job.options = std::move(options);
  job.record.json = described.dump();
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return Error(ErrorCode::kUnavailable, "the server is stopping");
    if (!impl_->busy_tables.insert(target.table_uuid).second) {
      return Error(ErrorCode::kConflict,
                   target.table.DisplayName() + " has a maintenance job queued or running");
    }
  }
  if (impl_->seams.owner && !impl_->seams.owner->Claim(target)) {
    std::lock_guard lock(impl_->mutex);
    impl_->busy_tables.erase(target.table_uuid);
    return Error(ErrorCode::kConflict, target.table.DisplayName() + "'s maintenance runs on another server");
  }
  Result<int64_t> id = impl_->store.SaveMaintenanceJob(job.record);
  std::lock_guard lock(impl_->mutex);
  if (!id.ok()) {
    impl_->busy_tables.erase(target.table_uuid);
    if (impl_->seams.owner) impl_->seams.owner->Release(target);
    return id.status();
  }
  job.record.id = *id;
  impl_->active_jobs.insert(*id);
  impl_->queue.push_back(std::move(job));
  impl_->wake.notify_all();
  return *id;
}

bool JobRunner::Active(int64_t job_id) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->active_jobs.count(job_id) != 0;
}

void JobRunner::WaitIdle() {
  std::unique_lock lock(impl_->mutex);
  impl_->idle.wait(lock, [&] {
    return impl_->queue.empty() && !impl_->running_one && !impl_->checking && impl_->checks.empty();
  });
}

std::string JobRunner::RenderMetrics() const {
  std::lock_guard lock(impl_->mutex);
  const JobCounters& c = impl_->counters;
  std::string out;
  out += "# HELP serac_maintenance_jobs_total Table maintenance jobs by type and result.\n";
  out += "# TYPE serac_maintenance_jobs_total counter\n";
  for (const auto& [key, count] : c.jobs) {
    out += "serac_maintenance_jobs_total{type=\"" + key.first + "\",result=\"" + key.second + "\"} " +
           std::to_string(count) + "\n";
  }
  auto counter = [&](const char* name, const char* help, uint64_t value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
           std::to_string(value) + "\n";
  };
  counter("serac_maintenance_files_read_total", "Files maintenance jobs read.", c.files_read);
  counter("serac_maintenance_read_bytes_total", "Bytes of the files maintenance jobs read.", c.bytes_read);
  counter("serac_maintenance_files_written_total", "Files maintenance jobs wrote.", c.files_written);
  counter("serac_maintenance_written_bytes_total", "Bytes maintenance jobs wrote.", c.bytes_written);
  counter("serac_maintenance_snapshots_removed_total", "Snapshots maintenance jobs expired.",
          c.snapshots_removed);
  counter("serac_maintenance_files_removed_total", "Files maintenance jobs deleted.", c.files_removed);
  counter("serac_maintenance_removed_bytes_total", "Bytes of the files maintenance jobs deleted.",
          c.bytes_removed);
  return out;
}

}  // namespace serac::catalog
