#include "iceberg/scan/scan_planning.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "common/limits.h"
#include "iceberg/scan/table_files.h"

namespace serac::iceberg {
namespace {

Status Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

// The position-delete column `file_path` (reserved field id), whose equal bounds name the one data
// file a position delete file was written for.
constexpr int32_t kDeleteFilePathFieldId = 2147483546;

// The one data file a position delete file applies to, when it names one (Java's
// ContentFileUtil.referencedDataFile).
std::optional<std::string> ReferencedDataFile(const DataFile& deletes) {
  if (deletes.referenced_data_file) return deletes.referenced_data_file;
  const std::string* lower = FindBound(deletes.lower_bounds, kDeleteFilePathFieldId);
  const std::string* upper = FindBound(deletes.upper_bounds, kDeleteFilePathFieldId);
  if (lower && upper && *lower == *upper) return *lower;
  return std::nullopt;
}

// Whether an equality delete file can hold a row of `data` (Java's canContainEqDeletesForFile):
// for each equality column, ruled out by nulls on one side and none on the other, or by value
// ranges that do not overlap.
bool EqualityDeletesMayApply(const DataFile& data, const DataFile& deletes, const Schema& schema) {
  for (int32_t id : deletes.equality_ids) {
    const NestedField* field = schema.FindField(id);
    if (!field || !field->type.is_primitive()) continue;
    const auto data_nulls = FindCount(data.null_value_counts, id);
    const auto data_values = FindCount(data.value_counts, id);
    const auto delete_nulls = FindCount(deletes.null_value_counts, id);
    const auto delete_values = FindCount(deletes.value_counts, id);
    const bool data_has_null = data_nulls && *data_nulls > 0;
    const bool delete_has_null = delete_nulls && *delete_nulls > 0;
    if (data_has_null && delete_has_null) continue;
    const bool data_all_null = data_nulls && data_values && *data_nulls == *data_values;
    const bool delete_all_null = delete_nulls && delete_values && *delete_nulls == *delete_values;
    const bool data_no_null = data_nulls && *data_nulls == 0;
    const bool delete_no_null = delete_nulls && *delete_nulls == 0;
    if (data_all_null && delete_no_null) return false;
    if (delete_all_null && data_no_null) return false;
    const std::string* data_lower = FindBound(data.lower_bounds, id);
    const std::string* data_upper = FindBound(data.upper_bounds, id);
    const std::string* delete_lower = FindBound(deletes.lower_bounds, id);
    const std::string* delete_upper = FindBound(deletes.upper_bounds, id);
    if (!data_lower || !data_upper || !delete_lower || !delete_upper) continue;
    auto dl = FromSingleValue(field->type, *data_lower);
    auto du = FromSingleValue(field->type, *data_upper);
    auto el = FromSingleValue(field->type, *delete_lower);
    auto eu = FromSingleValue(field->type, *delete_upper);
    if (!dl.ok() || !du.ok() || !el.ok() || !eu.ok() || IsNull(*dl) || IsNull(*du) || IsNull(*el) ||
        IsNull(*eu) || IsNaN(*dl) || IsNaN(*du) || IsNaN(*el) || IsNaN(*eu)) {
      continue;
    }
    if (CompareDatums(field->type, *du, *el) < 0 || CompareDatums(field->type, *eu, *dl) < 0) return false;
  }
  return true;
}

}  // namespace

// The live delete files of the snapshot, indexed the ways Java's DeleteFileIndex looks them up.
struct ScanPlanner::DeleteIndex {
  std::vector<LiveFile> files;
  std::unordered_map<std::string, uint32_t> dv_by_data_file;
  std::unordered_map<std::string, std::vector<uint32_t>> position_by_data_file;
  std::unordered_map<std::string, std::vector<uint32_t>> position_by_partition;
  std::unordered_map<std::string, std::vector<uint32_t>> equality_by_partition;
  std::vector<uint32_t> equality_global;
};

ScanPlanner::ScanPlanner(FileIO& io, const TableMetadata& metadata) : io_(&io), metadata_(&metadata) {}

Result<ScanPlanner> ScanPlanner::Make(FileIO& io, const TableMetadata& metadata, const ScanRequest& request) {
  ScanPlanner planner(io, metadata);
  planner.schema_ = metadata.CurrentSchema();
  std::optional<Snapshot> snapshot;
  if (request.start_snapshot_id && !request.end_snapshot_id) {
    return Invalid("start-snapshot-id needs end-snapshot-id: an incremental scan has both ends");
  }
  if (request.end_snapshot_id) {
    planner.incremental_ = true;
    snapshot = metadata.FindSnapshot(*request.end_snapshot_id);
    if (!snapshot) {
      return Error(ErrorCode::kNotFound,
                   "no snapshot " + std::to_string(*request.end_snapshot_id) + " in the table");
    }
    // The ancestors of end back to start (exclusive), appends only.
    std::optional<Snapshot> at = snapshot;
    bool reached_start = !request.start_snapshot_id;
    for (size_t steps = 0; at; ++steps) {
      if (request.start_snapshot_id && at->snapshot_id == *request.start_snapshot_id) {
        reached_start = true;
        break;
      }
      if (at->operation() == "append") planner.append_snapshot_ids_.push_back(at->snapshot_id);
      if (!at->parent_snapshot_id || steps > metadata.snapshot_count()) break;
      at = metadata.FindSnapshot(*at->parent_snapshot_id);
    }
    if (!reached_start) {
      return Invalid("start-snapshot-id " + std::to_string(*request.start_snapshot_id) +
                     " is not an ancestor of end-snapshot-id " + std::to_string(*request.end_snapshot_id));
    }
    std::sort(planner.append_snapshot_ids_.begin(), planner.append_snapshot_ids_.end());
  } else if (request.snapshot_id) {
    snapshot = metadata.FindSnapshot(*request.snapshot_id);
    if (!snapshot) {
      return Error(ErrorCode::kNotFound,
                   "no snapshot " + std::to_string(*request.snapshot_id) + " in the table");
    }
  } else {
    snapshot = metadata.CurrentSnapshot();
  }
  if (snapshot && request.use_snapshot_schema && snapshot->schema_id) {
    if (auto schema = metadata.FindSchema(*snapshot->schema_id)) planner.schema_ = std::move(*schema);
  }

  auto find = [&](const std::string& name, const char* what) -> Result<const NestedField*> {
    const NestedField* field = FindColumn(planner.schema_, name, request.case_sensitive);
    if (!field) return Invalid(std::string(what) + ": no column " + name + " in the table's schema");
    return field;
  };
  for (const std::string& name : request.select) SERAC_RETURN_IF_ERROR(find(name, "select").status());
  if (request.stats_fields) {
    for (const std::string& name : *request.stats_fields) {
      SERAC_ASSIGN_OR_RETURN(const NestedField* field, find(name, "stats-fields"));
      planner.stats_field_ids_.push_back(field->id);
    }
  }
  BoundExpression bound;  // kTrue
  if (request.filter) {
    SERAC_ASSIGN_OR_RETURN(bound, BindExpression(*request.filter, planner.schema_, request.case_sensitive));
  }
  planner.filter_.emplace(std::move(bound), metadata);

  if (!snapshot) return planner;
  planner.snapshot_id_ = snapshot->snapshot_id;
  SERAC_ASSIGN_OR_RETURN(std::vector<ManifestFile> manifests, ReadSnapshotManifests(io, *snapshot));
  for (ManifestFile& manifest : manifests) {
    if (manifest.content == ManifestContent::kDeletes) {
      if (!planner.incremental_ && (manifest.added_files_count > 0 || manifest.existing_files_count > 0)) {
        planner.delete_manifests_.push_back(std::move(manifest));
      }
      continue;
    }
    if (planner.incremental_) {
      if (manifest.added_files_count == 0 ||
          !std::binary_search(planner.append_snapshot_ids_.begin(), planner.append_snapshot_ids_.end(),
                              manifest.added_snapshot_id)) {
        continue;
      }
    } else if (manifest.added_files_count == 0 && manifest.existing_files_count == 0) {
      continue;
    }
    planner.data_manifests_.push_back(std::move(manifest));
  }
  return planner;
}

int64_t ScanPlanner::LiveFilesIn(size_t manifest_index) const {
  const ManifestFile& manifest = data_manifests_.at(manifest_index);
  return static_cast<int64_t>(manifest.added_files_count) +
         (incremental_ ? 0 : manifest.existing_files_count);
}

Status ScanPlanner::LoadDeleteIndex() {
  auto index = std::make_shared<DeleteIndex>();
  for (const ManifestFile& manifest : delete_manifests_) {
    SERAC_RETURN_IF_ERROR(ForEachLiveEntry(*io_, manifest, [&](ManifestEntry& entry) -> Status {
      if (index->files.size() >= limits::kScanPlanDeleteFilesMax) {
        return Error(ErrorCode::kLimitExceeded,
                     "the snapshot has more than limits::kScanPlanDeleteFilesMax (" +
                         std::to_string(limits::kScanPlanDeleteFilesMax) +
                         ") delete files; compact the table");
      }
      const uint32_t at = static_cast<uint32_t>(index->files.size());
      LiveFile live;
      live.file = entry.file;
      live.sequence_number = entry.sequence_number.value_or(0);
      live.file_sequence_number = entry.file_sequence_number.value_or(0);
      const DataFile& file = live.file;
      if (file.content == FileContent::kPositionDeletes) {
        if (IsDeletionVector(file) && file.referenced_data_file) {
          index->dv_by_data_file[*file.referenced_data_file] = at;
        } else if (auto referenced = ReferencedDataFile(file)) {
          index->position_by_data_file[*referenced].push_back(at);
        } else {
          index->position_by_partition[PartitionGroupKey(file.spec_id, file.partition)].push_back(at);
        }
      } else if (file.content == FileContent::kEqualityDeletes) {
        const std::optional<PartitionSpec> spec = metadata_->FindSpec(file.spec_id);
        if (!spec || spec->is_unpartitioned()) {
          index->equality_global.push_back(at);
        } else {
          index->equality_by_partition[PartitionGroupKey(file.spec_id, file.partition)].push_back(at);
        }
      }
      index->files.push_back(std::move(live));
      return Status::Ok();
    }));
  }
  delete_index_ = std::move(index);
  return Status::Ok();
}

Result<ScanPlan> ScanPlanner::Plan(size_t begin, size_t end) {
  ScanPlan plan;
  end = std::min(end, data_manifests_.size());
  if (begin >= end) return plan;
  if (!delete_index_) SERAC_RETURN_IF_ERROR(LoadDeleteIndex());
  const DeleteIndex& deletes = *delete_index_;
  std::unordered_map<uint32_t, uint32_t> plan_index_of;  // delete index -> ScanPlan::delete_files
  auto attach = [&](PlannedTask& task, uint32_t at) {
    auto [it, added] = plan_index_of.try_emplace(at, static_cast<uint32_t>(plan.delete_files.size()));
    if (added) plan.delete_files.push_back(deletes.files[at].file);
    task.deletes.push_back(it->second);
  };

  // The delete files of one planned data file.
  auto attach_deletes = [&](PlannedTask& task) {
    const int64_t seq = task.sequence_number;
    const std::string& path = task.file.file_path;
    // Equality deletes: newer than the data file (strictly), of its partition or global.
    auto add_equality = [&](const std::vector<uint32_t>& candidates) {
      for (uint32_t at : candidates) {
        const LiveFile& candidate = deletes.files[at];
        if (candidate.sequence_number > seq && EqualityDeletesMayApply(task.file, candidate.file, schema_)) {
          attach(task, at);
        }
      }
    };
    add_equality(deletes.equality_global);
    const std::string partition_key = PartitionGroupKey(task.file.spec_id, task.file.partition);
    if (auto it = deletes.equality_by_partition.find(partition_key);
        it != deletes.equality_by_partition.end()) {
      add_equality(it->second);
    }
    // A DV stands in for every position delete file of its data file.
    if (auto dv = deletes.dv_by_data_file.find(path);
        dv != deletes.dv_by_data_file.end() && deletes.files[dv->second].sequence_number >= seq) {
      attach(task, dv->second);
      return;
    }
    auto add_position = [&](const std::unordered_map<std::string, std::vector<uint32_t>>& by,
                            const std::string& key) {
      auto it = by.find(key);
      if (it == by.end()) return;
      for (uint32_t at : it->second) {
        if (deletes.files[at].sequence_number >= seq) attach(task, at);
      }
    };
    add_position(deletes.position_by_partition, partition_key);
    add_position(deletes.position_by_data_file, path);
  };

  for (size_t m = begin; m < end; ++m) {
    SERAC_RETURN_IF_ERROR(ForEachLiveEntry(*io_, data_manifests_[m], [&](ManifestEntry& entry) {
      if (incremental_ && (entry.status != EntryStatus::kAdded || !entry.snapshot_id ||
                           !std::binary_search(append_snapshot_ids_.begin(), append_snapshot_ids_.end(),
                                               *entry.snapshot_id))) {
        return Status::Ok();
      }
      if (filter_->Evaluate(entry.file) == FileMatch::kNone) return Status::Ok();
      PlannedTask& task = plan.tasks.emplace_back();
      task.sequence_number = entry.sequence_number.value_or(0);
      task.residual = filter_->Residual(entry.file);
      task.file = entry.file;
      if (!deletes.files.empty()) attach_deletes(task);
      return Status::Ok();
    }));
  }
  return plan;
}

}  // namespace serac::iceberg
