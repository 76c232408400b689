// The server's maintenance jobs, run with the table operations of maintenance/ (which the CLI runs
// too): one worker thread runs them one at a time (so maintenance takes at
// most one core, and foreground requests keep the rest), at most one job per table queued or running,
// each recorded in the catalog store (meta::MaintenanceJobRecord) when queued and again when it ends,
// with its figures (files and bytes read and written, snapshots and files removed) and its error.
// Jobs run over the writers' seams, so the commits they make are the catalog's own, validated as any
// writer's: a job that loses to a writer retries or gives up, never wins.
//
// Jobs also start by themselves: a commit to a table (NoteCommit) makes the runner look at it, at
// most once per check interval, and start compaction or expiry when the table's metadata says it is
// due (settings.h: CompactionDue, ExpiryDue), and unreferenced-file removal once a day. A job started so that
// changed nothing or failed is not started by itself again for that table before kAutoJobRetryMs.
//
// A job whose record says "running" but which no runner holds was cut short by a server stop (kill
// -9 included: every job's commit is atomic, so the table is as it was before the job or after it);
// Active() tells a reader so.
//
// Which node runs a table's jobs is asked of a JobOwner before a job is queued: one server runs
// every job it starts; with several servers on one catalog, a job runs where its table's lease is
// held, and a server that cannot take it leaves the job to the holder.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/maintenance_settings.h"
#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/write/table_catalog.h"
#include "maintenance/remove_unreferenced_files.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

inline constexpr int64_t kAutoJobRetryMs = 3600LL * 1000;  // see JobRunner
inline constexpr int64_t kAutoUnreferencedEveryMs =
    24LL * 3600 * 1000;  // a table's files listed at most so often

// What a job did: the figures its record keeps (the maintenance API shows them under the names in
// JobFiguresToJson) and the server's metrics sum.
struct JobFigures {
  // Every job's.
  int64_t files_read = 0;
  int64_t bytes_read = 0;
  int64_t files_written = 0;
  int64_t bytes_written = 0;
  int64_t snapshots_removed = 0;
  int64_t files_removed = 0;
  int64_t bytes_removed = 0;
  // Compaction's.
  std::optional<int64_t> snapshot_id;
  std::optional<int64_t> manifests_rewritten;
  std::optional<int64_t> manifests_written;
  std::optional<int64_t> rows;
  std::optional<int64_t> partitions;
  std::optional<int64_t> rows_deleted;
  std::optional<int64_t> delete_files_read;
  // Compaction's and snapshot expiry's.
  std::optional<int64_t> delete_files_removed;
  // Snapshot expiry's.
  std::optional<int64_t> refs_removed;
  std::optional<int64_t> data_files_removed;
  // Unreferenced-file removal's.
  std::optional<int64_t> files_listed;
  std::optional<int64_t> files_reached;
  std::optional<int64_t> files_kept_young;

  // Nothing was read, removed or rewritten: an automatic job so is not started again soon.
  bool ChangedNothing() const;
};

struct JobTarget {
  std::string warehouse;
  std::string table_uuid;
  iceberg::TableRef table;
};

// Who runs a table's jobs. Claim is asked before a job is queued (false: another node runs the
// table's jobs, so this one queues none), Release when the job has ended.
class JobOwner {
 public:
  virtual ~JobOwner() = default;
  virtual bool Claim(const JobTarget& target) = 0;
  virtual void Release(const JobTarget& target) = 0;
};

class JobRunner {
 public:
  // One table's files as its jobs reach them: read, written and deleted through `io`, listed by
  // `list_files` (null: no unreferenced-file job runs), both confined to what the table owns, so
  // that no job made for one table touches another's files.
  struct TableStorage {
    std::unique_ptr<iceberg::FileIO> io;
    maintenance::ListFiles list_files;
  };
  // What jobs reach beyond the catalog store: the tables of one warehouse (committed to with the
  // server's authority), each table's files, and a table's current metadata file. Without
  // current_metadata, no unreferenced-file job runs.
  struct Seams {
    // Null: this server runs every job it starts.
    std::shared_ptr<JobOwner> owner;
    // This server's name among several (the lease holder), kept in each job's record as "node" so
    // that another server can tell whether the job still runs; empty with one server.
    std::string node;
    std::function<std::unique_ptr<iceberg::TableCatalog>(const std::string& warehouse)> catalog_for;
    std::function<Result<TableStorage>(const std::string& warehouse, const iceberg::TableRef& table)>
        storage_for;
    std::function<Result<std::string>(const std::string& warehouse, const iceberg::TableRef& table)>
        current_metadata;
  };
  // `check_interval_ms`: how long after a commit (and after the last look) a table is looked at
  // again; 0: jobs start only when asked.
  JobRunner(meta::CatalogStore& store, Seams seams, int64_t check_interval_ms);
  // Lets the running job finish; queued ones are recorded as failed (the server stopped).
  ~JobRunner();

  using Target = JobTarget;
  // What a job asked for now takes instead of the settings (Spark's procedures' arguments).
  struct RunOptions {
    // Unreferenced-file removal: the age past which unreferenced files go, instead of the days.
    std::optional<int64_t> files_older_than_ms;
    // Snapshot expiry: the age past which snapshots expire (instead of maxSnapshotAgeHours, and
    // without its one-hour floor), how many each branch keeps (instead of minSnapshotsToKeep), and
    // snapshots expired whatever their age (ExpireOptions::snapshot_ids).
    std::optional<int64_t> snapshots_older_than_ms;
    std::optional<int32_t> retain_last;
    std::vector<int64_t> snapshot_ids;
  };
  // Records the job as running and queues it; its record's id. kConflict while the table has a
  // job queued or running, or its jobs run on another node; kNotImplemented for a type the server
  // does not run yet.
  Result<int64_t> Start(const Target& target, MaintenanceType type, const MaintenanceSettings& settings,
                        RunOptions options = {});
  // A commit landed on the table: it is looked at once the check interval has passed.
  void NoteCommit(const Target& target);
  bool Active(int64_t job_id) const;
  // Returns once nothing is queued or running (tables waiting for a look included).
  void WaitIdle();
  // Prometheus text: serac_maintenance_jobs_total{type,result} and the files, bytes and snapshots
  // jobs read, wrote and removed.
  std::string RenderMetrics() const;

 private:
  Result<int64_t> StartJob(const Target& target, MaintenanceType type, const MaintenanceSettings& settings,
                           bool automatic, RunOptions options);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace serac::catalog
