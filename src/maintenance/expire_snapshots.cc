#include "maintenance/expire_snapshots.h"

#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/limits.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/write/table_catalog.h"
#include "maintenance/table_properties.h"

namespace serac::maintenance {
namespace {

using iceberg::Snapshot;
using iceberg::SnapshotRef;
using iceberg::TableMetadata;

constexpr int64_t kDefaultMaxSnapshotAgeMs = 5LL * 24 * 3600 * 1000;  // Java's five days
constexpr int32_t kDefaultMinSnapshotsToKeep = 1;
constexpr int64_t kDefaultMaxRefAgeMs = std::numeric_limits<int64_t>::max();

int64_t PropertyOr(const TableMetadata& table, const char* name, int64_t fallback) {
  return IntegerProperty(table.properties(), name, 0).value_or(fallback);
}

// What one planning of the expiry removes from `table`.
struct ExpiryPlan {
  std::vector<std::string> refs_removed;
  std::vector<int64_t> snapshots_removed;
};

Result<ExpiryPlan> PlanExpiry(const TableMetadata& table, const ExpireOptions& options, int64_t now_ms) {
  const int64_t max_age_ms = options.max_snapshot_age_ms.value_or(
      PropertyOr(table, "history.expire.max-snapshot-age-ms", kDefaultMaxSnapshotAgeMs));
  const int64_t expire_older_than = now_ms - max_age_ms;
  const int32_t min_to_keep = options.min_snapshots_to_keep.value_or(static_cast<int32_t>(
      PropertyOr(table, "history.expire.min-snapshots-to-keep", kDefaultMinSnapshotsToKeep)));
  const int64_t max_ref_age_ms = options.max_ref_age_ms.value_or(
      PropertyOr(table, "history.expire.max-ref-age-ms", kDefaultMaxRefAgeMs));

  std::map<int64_t, Snapshot> snapshots;
  for (Snapshot& snapshot : table.Snapshots()) snapshots.emplace(snapshot.snapshot_id, std::move(snapshot));
  auto ancestors = [&](int64_t head, auto&& visit) {
    std::set<int64_t> seen;  // a cycle in a damaged file must not loop forever
    for (auto it = snapshots.find(head); it != snapshots.end() && seen.insert(it->first).second;) {
      if (!visit(it->second)) return;
      if (!it->second.parent_snapshot_id) return;
      it = snapshots.find(*it->second.parent_snapshot_id);
    }
  };

  ExpiryPlan plan;
  std::map<std::string, SnapshotRef> retained_refs;
  for (const auto& [name, ref] : table.Refs()) {
    auto snapshot = snapshots.find(ref.snapshot_id);
    if (name == "main") {
      retained_refs.emplace(name, ref);
    } else if (snapshot != snapshots.end() &&
               now_ms - snapshot->second.timestamp_ms <= ref.max_ref_age_ms.value_or(max_ref_age_ms)) {
      retained_refs.emplace(name, ref);
    } else {
      plan.refs_removed.push_back(name);
    }
  }

  std::set<int64_t> retained;
  std::set<int64_t> reached;  // by a retained ref: a branch's ancestors, a tag's snapshot
  for (const auto& [name, ref] : retained_refs) {
    retained.insert(ref.snapshot_id);
    if (ref.type != iceberg::RefType::kBranch) {
      reached.insert(ref.snapshot_id);
      continue;
    }
    const int64_t branch_older_than =
        ref.max_snapshot_age_ms ? now_ms - *ref.max_snapshot_age_ms : expire_older_than;
    const size_t branch_min =
        static_cast<size_t>(std::max(1, ref.min_snapshots_to_keep.value_or(min_to_keep)));
    size_t kept = 0;
    bool keeping = true;
    ancestors(ref.snapshot_id, [&](const Snapshot& ancestor) {
      reached.insert(ancestor.snapshot_id);
      if (keeping && (kept < branch_min || ancestor.timestamp_ms >= branch_older_than)) {
        retained.insert(ancestor.snapshot_id);
        ++kept;
      } else {
        keeping = false;
      }
      return true;
    });
  }
  for (const auto& [id, snapshot] : snapshots) {
    if (reached.count(id) == 0 && snapshot.timestamp_ms >= expire_older_than) retained.insert(id);
  }
  // Snapshots asked for by id go whatever their age, unless a ref still points at them.
  for (int64_t id : options.snapshot_ids) {
    if (snapshots.count(id) == 0) {
      return Error(ErrorCode::kNotFound, "the table has no snapshot " + std::to_string(id));
    }
    std::string holders;
    for (const auto& [name, ref] : retained_refs) {
      if (ref.snapshot_id == id) holders += (holders.empty() ? "" : ", ") + name;
    }
    if (!holders.empty()) {
      return Error(ErrorCode::kInvalidArgument, "cannot expire snapshot " + std::to_string(id) +
                                                    ": it is the head of " + holders +
                                                    " (a branch's or tag's current snapshot stays)");
    }
    retained.erase(id);
  }
  for (const auto& [id, snapshot] : snapshots) {
    if (retained.count(id) == 0) plan.snapshots_removed.push_back(id);
  }
  return plan;
}

// The commit of `plan`: every ref asserted as planned, so that a ref that moved meanwhile (a new
// snapshot on a branch, a new tag) makes the job plan again instead of removing what it needs.
iceberg::TableChanges ExpiryCommit(const TableMetadata& table, const ExpiryPlan& plan) {
  iceberg::TableChanges changes;
  changes.requirements.push_back(iceberg::AssertTableUuid{table.table_uuid()});
  for (const auto& [name, ref] : table.Refs()) {
    changes.requirements.push_back(iceberg::AssertRefSnapshotId{name, ref.snapshot_id});
  }
  for (const std::string& name : plan.refs_removed)
    changes.updates.push_back(iceberg::RemoveSnapshotRef{name});
  if (!plan.snapshots_removed.empty()) {
    changes.updates.push_back(iceberg::RemoveSnapshots{plan.snapshots_removed});
  }
  return changes;
}

// Expiry as the commit loop makes it: planned again on the table as it is after every lost race.
class Expiry final : public iceberg::ChangeMaker {
 public:
  Expiry(const iceberg::TableRef& table, const ExpireOptions& options, int64_t now_ms)
      : table_(table), options_(options), now_ms_(now_ms) {}

  Result<iceberg::TableChanges> Prepare(const TableMetadata& base, int64_t) override {
    auto gc = base.properties().find("gc.enabled");
    if (gc != base.properties().end() && gc->second == "false") {
      return Error(ErrorCode::kValidationFailed,
                   table_.DisplayName() +
                       " has gc.enabled=false: its files may belong to another table, so "
                       "snapshots are not expired");
    }
    SERAC_ASSIGN_OR_RETURN(const ExpiryPlan plan, PlanExpiry(base, options_, now_ms_));
    asked_.clear();
    for (int64_t id : plan.snapshots_removed) asked_.push_back(*base.FindSnapshot(id));
    refs_removed_ = static_cast<int64_t>(plan.refs_removed.size());
    statistics_before_ = base.StatisticsFiles();
    return ExpiryCommit(base, plan);
  }
  bool Landed(const TableMetadata& table) const override {
    for (const Snapshot& snapshot : asked_) {
      if (table.FindSnapshot(snapshot.snapshot_id)) return false;
    }
    return true;
  }
  void Finish(bool landed) override {
    if (!landed) refs_removed_ = 0;
  }

  std::vector<Snapshot>& asked() { return asked_; }  // the snapshots the last attempt removed, as they were
  const std::vector<std::string>& statistics_before() const { return statistics_before_; }
  int64_t refs_removed() const { return refs_removed_; }

 private:
  const iceberg::TableRef& table_;
  const ExpireOptions& options_;
  const int64_t now_ms_;
  std::vector<Snapshot> asked_;
  std::vector<std::string> statistics_before_;  // the statistics files listed before the last attempt
  int64_t refs_removed_ = 0;
};

// Deletes a file that no remaining snapshot reaches; one already gone counts as deleted.
bool DeleteUnreached(iceberg::FileIO& io, const std::string& location) {
  Status deleted = io.Delete(location);
  return deleted.ok() || deleted.code() == ErrorCode::kNotFound;
}

// The files only the expired snapshots reached, deleted (ReachableFileCleanup's rule): manifests
// named by no remaining snapshot's list, and the live files of those that no remaining manifest
// holds live. Reading a remaining snapshot's manifests must succeed, or nothing but the expired
// manifest lists is deleted: a file is only deleted when it is known to be unreached.
Status DeleteExpiredFiles(iceberg::FileIO& io, const std::vector<Snapshot>& expired,
                          const std::vector<Snapshot>& remaining, ExpireResult& result) {
  std::set<std::string> remaining_manifests;
  std::vector<iceberg::ManifestFile> remaining_manifest_files;
  for (const Snapshot& snapshot : remaining) {
    if (snapshot.manifest_list.empty()) {
      for (const std::string& path : snapshot.manifests) remaining_manifests.insert(path);  // v1
      continue;
    }
    SERAC_ASSIGN_OR_RETURN(std::vector<iceberg::ManifestFile> manifests,
                           iceberg::ReadSnapshotManifests(io, snapshot));
    ++result.files_read;
    for (iceberg::ManifestFile& manifest : manifests) {
      if (remaining_manifests.insert(manifest.manifest_path).second) {
        remaining_manifest_files.push_back(std::move(manifest));
      }
    }
  }
  std::set<std::string> remaining_lists;
  for (const Snapshot& snapshot : remaining) remaining_lists.insert(snapshot.manifest_list);

  std::map<std::string, iceberg::ManifestFile> doomed_manifests;
  for (const Snapshot& snapshot : expired) {
    if (snapshot.manifest_list.empty()) continue;  // v1: its manifests are listed in the metadata
    Result<std::vector<iceberg::ManifestFile>> manifests = iceberg::ReadSnapshotManifests(io, snapshot);
    if (!manifests.ok()) continue;  // gone already (an earlier run deleted it): nothing to learn
    ++result.files_read;
    for (iceberg::ManifestFile& manifest : *manifests) {
      if (remaining_manifests.count(manifest.manifest_path) == 0) {
        doomed_manifests.emplace(manifest.manifest_path, std::move(manifest));
      }
    }
  }

  // The live files of the doomed manifests, then those still live in a remaining manifest kept.
  std::map<std::string, std::pair<iceberg::FileContent, int64_t>> doomed_files;
  iceberg::ManifestEntry entry;
  auto read_live = [&](const iceberg::ManifestFile& manifest, auto&& on_live) -> Status {
    Result<std::string> bytes =
        io.ReadAll(manifest.manifest_path, limits::kManifestBytesMax, "limits::kManifestBytesMax");
    if (!bytes.ok()) return bytes.status();
    ++result.files_read;
    result.bytes_read += static_cast<int64_t>(bytes->size());
    SERAC_ASSIGN_OR_RETURN(iceberg::ManifestReader reader, iceberg::ManifestReader::Open(*bytes, manifest));
    while (true) {
      SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
      if (!more) return Status::Ok();
      if (entry.status != iceberg::EntryStatus::kDeleted) on_live(entry.file);
    }
  };
  for (const auto& [path, manifest] : doomed_manifests) {
    Status read = read_live(manifest, [&](const iceberg::DataFile& file) {
      doomed_files.emplace(file.file_path, std::make_pair(file.content, file.file_size_in_bytes));
    });
    if (!read.ok() && read.code() != ErrorCode::kNotFound) return read;
  }
  if (!doomed_files.empty()) {
    for (const iceberg::ManifestFile& manifest : remaining_manifest_files) {
      SERAC_RETURN_IF_ERROR(
          read_live(manifest, [&](const iceberg::DataFile& file) { doomed_files.erase(file.file_path); }));
    }
  }

  for (const auto& [path, file] : doomed_files) {
    if (!DeleteUnreached(io, path)) continue;
    ++(file.first == iceberg::FileContent::kData ? result.data_files_deleted : result.delete_files_deleted);
    result.bytes_deleted += file.second;
  }
  for (const auto& [path, manifest] : doomed_manifests) {
    if (!DeleteUnreached(io, path)) continue;
    ++result.manifests_deleted;
    result.bytes_deleted += manifest.manifest_length;
  }
  for (const Snapshot& snapshot : expired) {
    if (snapshot.manifest_list.empty() || remaining_lists.count(snapshot.manifest_list) != 0) continue;
    if (DeleteUnreached(io, snapshot.manifest_list)) ++result.manifest_lists_deleted;
  }
  return Status::Ok();
}

}  // namespace

Result<ExpireResult> ExpireSnapshots(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                     const iceberg::TableRef& table, const ExpireOptions& options) {
  const int64_t now_ms = options.now_ms != 0 ? options.now_ms : ToUnixMillis(Now());
  ExpireResult result;
  Expiry expiry(table, options, now_ms);
  Status committed = iceberg::CommitChange(catalog, table, expiry);
  // A lost answer is settled below, from the table as it is now.
  if (!committed.ok() && committed.code() != ErrorCode::kOutcomeUnknown) return committed;
  result.refs_removed = expiry.refs_removed();
  std::vector<Snapshot>& asked = expiry.asked();
  const std::vector<std::string>& statistics_before = expiry.statistics_before();

  // What was removed, known from the table as it is now (a lost answer's commit included).
  SERAC_ASSIGN_OR_RETURN(TableMetadata current, catalog.LoadTable(table));
  std::vector<Snapshot> expired;
  for (Snapshot& snapshot : asked) {
    if (!current.FindSnapshot(snapshot.snapshot_id)) expired.push_back(std::move(snapshot));
  }
  result.snapshots_removed = static_cast<int64_t>(expired.size());
  if (expired.empty() || !options.delete_files) return result;
  SERAC_RETURN_IF_ERROR(DeleteExpiredFiles(io, expired, current.Snapshots(), result));
  // The statistics files the removed snapshots had (the commit dropped them from the metadata).
  const std::vector<std::string> statistics_now = current.StatisticsFiles();
  const std::set<std::string> listed(statistics_now.begin(), statistics_now.end());
  for (const std::string& path : std::set<std::string>(statistics_before.begin(), statistics_before.end())) {
    if (listed.count(path) == 0 && DeleteUnreached(io, path)) ++result.statistics_files_deleted;
  }
  return result;
}

}  // namespace serac::maintenance
