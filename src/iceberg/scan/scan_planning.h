// Scan planning, as Java's TableScan and IncrementalAppendScan plan a scan: the data files of a
// snapshot that a row filter may match (decided from each file's partition and column metrics,
// expression.h's FileFilter), each with the residual of the filter for its partition and the delete
// files that apply to it as Java's DeleteFileIndex decides — its deletion vector (which then stands
// in for position delete files), position delete files of its partition or naming it, equality
// deletes of its partition or global ones with a newer sequence number whose column ranges can
// overlap its own. What the catalog's plan endpoints serve (the REST spec's PlanTableScan and
// FetchScanTasks); a plan over many files is cut into slices of data manifests that are planned
// one at a time.
// Thread-safety: a ScanPlanner is used by one thread; FileIO must allow its reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/expression/expression.h"
#include "iceberg/io/file_io.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"

namespace serac::iceberg {

struct ScanRequest {
  // A point-in-time scan: this snapshot, else the current one.
  std::optional<int64_t> snapshot_id;
  // An incremental append scan: data files added by the append snapshots after start (exclusive)
  // up to end (inclusive), start an ancestor of end; no delete files, as in Java.
  std::optional<int64_t> start_snapshot_id;
  std::optional<int64_t> end_snapshot_id;
  std::optional<Expression> filter;  // none: every row
  bool case_sensitive = true;
  // Bind the filter (and the names below) to the snapshot's schema rather than the table's current.
  bool use_snapshot_schema = false;
  std::vector<std::string> select;  // checked to name fields; the files do not depend on it
  // Columns whose metrics the tasks keep; none: files carry no column metrics (Java's default).
  std::optional<std::vector<std::string>> stats_fields;
};

struct PlannedTask {
  DataFile file;
  int64_t sequence_number = 0;    // the data file's data sequence number
  std::vector<uint32_t> deletes;  // indexes into ScanPlan::delete_files
  BoundExpression residual;
};

struct ScanPlan {
  std::vector<PlannedTask> tasks;
  std::vector<DataFile> delete_files;  // those some task names, each once
};

class ScanPlanner {
 public:
  // Resolves the snapshot (kNotFound naming a missing one; kInvalidArgument for a start that is not
  // an ancestor of end, or a start without an end), binds the filter and the names (kInvalidArgument
  // naming a column that is not there) and reads the manifest list. `metadata` must outlive the planner.
  static Result<ScanPlanner> Make(FileIO& io, const TableMetadata& metadata, const ScanRequest& request);

  // The scanned snapshot (-1: the table has none, and every plan is empty).
  int64_t snapshot_id() const { return snapshot_id_; }
  const Schema& schema() const { return schema_; }
  // The field ids whose metrics tasks keep (stats_fields resolved); empty: none.
  const std::vector<int32_t>& stats_field_ids() const { return stats_field_ids_; }

  // The data manifests to read, in manifest-list order, and how many live files each lists.
  size_t data_manifest_count() const { return data_manifests_.size(); }
  int64_t LiveFilesIn(size_t manifest_index) const;

  // Plans the data files of data manifests [begin, end), with the delete files that apply to them.
  Result<ScanPlan> Plan(size_t begin, size_t end);

 private:
  ScanPlanner(FileIO& io, const TableMetadata& metadata);
  Status LoadDeleteIndex();

  FileIO* io_;
  const TableMetadata* metadata_;
  Schema schema_;
  int64_t snapshot_id_ = -1;
  bool incremental_ = false;
  std::vector<int64_t> append_snapshot_ids_;  // incremental: the appends whose files are read
  std::optional<FileFilter> filter_;
  std::vector<int32_t> stats_field_ids_;
  std::vector<ManifestFile> data_manifests_;
  std::vector<ManifestFile> delete_manifests_;
  struct DeleteIndex;
  std::shared_ptr<DeleteIndex> delete_index_;  // read on the first Plan
};

}  // namespace serac::iceberg
