// The conflict checks a snapshot producer runs on every attempt, as Java's MergingSnapshotProducer
// runs them: the snapshots committed since the change's base are read (only the manifests each of
// them added), and what they removed or added is held against what this change depends on.
#include <map>
#include <set>

#include "common/limits.h"
#include "iceberg/write/snapshot_producer_internal.h"

namespace serac::iceberg {

namespace {

using State = SnapshotProducer::State;

constexpr int32_t kDeleteFilePathFieldId = 2147483546;  // the spec's reserved file_path column

Status Conflict(const std::string& message) { return Error(ErrorCode::kValidationFailed, message); }

// The snapshots after `from` up to the current one, newest first.
Result<std::vector<Snapshot>> SnapshotsSince(const TableMetadata& base, std::optional<int64_t> from) {
  std::vector<Snapshot> chain;
  std::optional<Snapshot> at = base.CurrentSnapshot();
  while (at) {
    if (from && at->snapshot_id == *from) return chain;
    chain.push_back(*at);
    if (!at->parent_snapshot_id) break;
    std::optional<Snapshot> parent = base.FindSnapshot(*at->parent_snapshot_id);
    if (!parent) break;
    at = std::move(parent);
  }
  if (!from) return chain;
  return Conflict("Cannot determine history between starting snapshot " + std::to_string(*from) +
                  " and the current snapshot: it is no longer an ancestor of main");
}

// What one newer snapshot did, from the manifests it added.
struct SnapshotChanges {
  std::vector<DataFile> removed_data;
  std::vector<DataFile> added_deletes;
};

Result<SnapshotChanges> ChangesOf(FileIO& io, const Snapshot& snapshot, bool want_removed_data,
                                  bool want_added_deletes) {
  SnapshotChanges changes;
  SERAC_ASSIGN_OR_RETURN(std::vector<ManifestFile> manifests, ReadSnapshotManifests(io, snapshot));
  ManifestEntry entry;
  for (const ManifestFile& manifest : manifests) {
    if (manifest.added_snapshot_id != snapshot.snapshot_id) continue;
    const bool deletes = manifest.content == ManifestContent::kDeletes;
    if (deletes ? !want_added_deletes || manifest.added_files_count == 0
                : !want_removed_data || manifest.deleted_files_count == 0) {
      continue;
    }
    SERAC_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(manifest.manifest_path, limits::kManifestBytesMax,
                                                         "limits::kManifestBytesMax"));
    SERAC_ASSIGN_OR_RETURN(ManifestReader reader, ManifestReader::Open(bytes, manifest));
    while (true) {
      SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
      if (!more) break;
      if (entry.snapshot_id != snapshot.snapshot_id) continue;
      if (deletes && entry.status == EntryStatus::kAdded) changes.added_deletes.push_back(entry.file);
      if (!deletes && entry.status == EntryStatus::kDeleted) changes.removed_data.push_back(entry.file);
    }
  }
  return changes;
}

std::string OperationOf(const Snapshot& snapshot) {
  auto it = snapshot.summary.find("operation");
  return it == snapshot.summary.end() ? std::string() : it->second;
}

// Whether a delete file added later may delete rows of `data` (Java's DeleteFileIndex, without
// the column statistics of equality deletes: a same-partition equality delete counts).
bool MayApplyTo(const DataFile& deletes, const DataFile& data, bool ignore_equality_deletes) {
  if (deletes.content == FileContent::kEqualityDeletes) {
    if (ignore_equality_deletes) return false;
    if (deletes.partition.empty()) return true;  // unpartitioned: global
    return deletes.spec_id == data.spec_id && deletes.partition == data.partition;
  }
  if (deletes.referenced_data_file) return *deletes.referenced_data_file == data.file_path;
  if (deletes.spec_id != data.spec_id || deletes.partition != data.partition) return false;
  std::optional<std::string> lower;
  std::optional<std::string> upper;
  for (const auto& [id, bound] : deletes.lower_bounds)
    if (id == kDeleteFilePathFieldId) lower = bound;
  for (const auto& [id, bound] : deletes.upper_bounds)
    if (id == kDeleteFilePathFieldId) upper = bound;
  if (lower && data.file_path < *lower) return false;
  if (upper && data.file_path > *upper) return false;
  return true;
}

}  // namespace

Status ValidateConcurrentChanges(State& state, const TableMetadata& base, std::optional<int64_t> from) {
  // What this change depends on.
  std::set<std::string> referenced;     // data files its position deletes and DVs name
  std::set<std::string> dv_referenced;  // data files it adds a DV for
  for (const DataFile& file : state.added_deletes) {
    if (file.content != FileContent::kPositionDeletes || !file.referenced_data_file) continue;
    referenced.insert(*file.referenced_data_file);
    if (IsDeletionVector(file)) dv_referenced.insert(*file.referenced_data_file);
  }
  const bool check_referenced = state.kind == ProducerKind::kRowDelta && !referenced.empty();
  const bool check_dvs = state.kind == ProducerKind::kRowDelta && !dv_referenced.empty();
  const bool check_rewritten = state.kind == ProducerKind::kReplaceFiles && !state.removed_data.empty();
  if (!check_referenced && !check_dvs && !check_rewritten) return Status::Ok();

  SERAC_ASSIGN_OR_RETURN(std::vector<Snapshot> newer, SnapshotsSince(base, from));
  for (const Snapshot& snapshot : newer) {
    const std::string operation = OperationOf(snapshot);
    // A concurrent "delete" that dropped a whole data file leaves nothing for a DV to delete from:
    // Java skips those when it looks for missing data files, and so does this.
    const bool removes_data = operation == "overwrite" || operation == "replace";
    SERAC_ASSIGN_OR_RETURN(
        SnapshotChanges changes,
        ChangesOf(state.io, snapshot, check_referenced && removes_data, check_dvs || check_rewritten));
    if (check_referenced) {
      for (const DataFile& file : changes.removed_data) {
        if (referenced.count(file.file_path)) {
          return Conflict("Cannot commit, missing data files: " + file.file_path + " (removed by snapshot " +
                          std::to_string(snapshot.snapshot_id) + ")");
        }
      }
    }
    for (const DataFile& deletes : changes.added_deletes) {
      if (check_dvs && IsDeletionVector(deletes) && deletes.referenced_data_file &&
          dv_referenced.count(*deletes.referenced_data_file)) {
        return Conflict("Found concurrently added DV for " + *deletes.referenced_data_file + ": " +
                        deletes.file_path + " (snapshot " + std::to_string(snapshot.snapshot_id) + ")");
      }
      if (!check_rewritten) continue;
      for (const DataFile& data : state.removed_data) {
        if (MayApplyTo(deletes, data, state.kept_data_sequence_number.has_value())) {
          return Conflict("Cannot commit, found new delete for replaced data file: " + data.file_path + " (" +
                          deletes.file_path + ", snapshot " + std::to_string(snapshot.snapshot_id) + ")");
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace serac::iceberg
