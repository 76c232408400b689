#include "maintenance/rewrite_manifests.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/limits.h"
#include "common/random.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/schema/partition.h"
#include "iceberg/write/snapshot_producer.h"
#include "iceberg/write/table_catalog.h"

namespace serac::maintenance {
namespace {

using iceberg::ManifestContent;
using iceberg::ManifestEntry;
using iceberg::ManifestFile;
using iceberg::TableMetadata;

struct Attempt {
  std::vector<std::string> written;  // new manifests and the list, removed if the commit does not land
  RewriteManifestsResult result;
  iceberg::TableChanges changes;
  bool nothing_to_do = false;
};

Result<Attempt> PrepareRewrite(iceberg::FileIO& io, const TableMetadata& base,
                               const RewriteManifestsOptions& options, int64_t now_ms) {
  Attempt attempt;
  const std::optional<iceberg::Snapshot> current = base.CurrentSnapshot();
  if (!current) {
    attempt.nothing_to_do = true;
    return attempt;
  }
  SERAC_ASSIGN_OR_RETURN(iceberg::ManifestMergeOptions merge,
                         iceberg::ManifestMergeOptions::FromTableProperties(base.properties()));
  const int64_t target =
      options.target_manifest_bytes > 0 ? options.target_manifest_bytes : merge.target_size_bytes;
  SERAC_ASSIGN_OR_RETURN(std::vector<ManifestFile> manifests, iceberg::ReadSnapshotManifests(io, *current));

  // Small manifests by (content, spec), in list order. Entries are written clustered by partition.
  std::map<std::pair<int, int32_t>, std::vector<size_t>> small;
  for (size_t i = 0; i < manifests.size(); ++i) {
    if (manifests[i].manifest_length < target) {
      small[{static_cast<int>(manifests[i].content), manifests[i].partition_spec_id}].push_back(i);
    }
  }
  std::vector<bool> replaced(manifests.size(), false);
  std::vector<ManifestFile> created;
  const int64_t snapshot_id = iceberg::NewSnapshotId();
  const std::string directory = base.location() + "/metadata/";
  const iceberg::Schema current_schema = base.CurrentSchema();
  const std::vector<iceberg::Schema> schemas = base.Schemas();
  for (const auto& [key, indexes] : small) {
    if (static_cast<int32_t>(indexes.size()) < std::max(options.min_manifests, 2)) continue;
    const std::optional<iceberg::PartitionSpec> spec = base.FindSpec(key.second);
    if (!spec) continue;  // a spec the metadata lost: its manifests stay as they are
    // The manifests of an older spec whose source column was dropped since are written with the
    // newest schema that still has it (a manifest's partition types come from its spec's sources).
    const iceberg::Schema* schema = &current_schema;
    if (!iceberg::PartitionType(*spec, current_schema).ok()) {
      schema = nullptr;
      for (auto it = schemas.rbegin(); it != schemas.rend() && schema == nullptr; ++it) {
        if (iceberg::PartitionType(*spec, *it).ok()) schema = &*it;
      }
      if (schema == nullptr) continue;  // no schema has its sources: its manifests stay as they are
    }
    std::vector<ManifestEntry> entries;
    for (size_t i : indexes) {
      const ManifestFile& manifest = manifests[i];
      // Live entries only: deleted ones are history the new list need not repeat.
      SERAC_RETURN_IF_ERROR(iceberg::ForEachLiveEntry(io, manifest, [&](ManifestEntry& entry) {
        entry.status = iceberg::EntryStatus::kExisting;
        entries.push_back(entry);
        return Status::Ok();
      }));
      attempt.result.bytes_read += manifest.manifest_length;
      attempt.result.manifests_rewritten++;
    }
    std::stable_sort(entries.begin(), entries.end(), [](const ManifestEntry& a, const ManifestEntry& b) {
      return iceberg::PartitionGroupKey(0, a.file.partition) <
             iceberg::PartitionGroupKey(0, b.file.partition);
    });
    iceberg::ManifestWriterOptions writer_options;
    writer_options.format_version = base.format_version();
    writer_options.content = static_cast<ManifestContent>(key.first);
    writer_options.snapshot_id = snapshot_id;
    std::optional<iceberg::ManifestWriter> writer;
    auto finish = [&]() -> Status {
      if (!writer || writer->entries() == 0) return Status::Ok();
      const std::string path = directory + RandomUuid() + "-m" + std::to_string(created.size()) + ".avro";
      SERAC_ASSIGN_OR_RETURN(iceberg::ManifestWriter::Written written, writer->Finish(path));
      SERAC_RETURN_IF_ERROR(iceberg::WriteFile(io, path, written.bytes).status());
      attempt.written.push_back(path);
      attempt.result.bytes_written += static_cast<int64_t>(written.bytes.size());
      created.push_back(std::move(written.manifest));
      writer.reset();
      return Status::Ok();
    };
    for (const ManifestEntry& entry : entries) {
      if (!writer) {
        SERAC_ASSIGN_OR_RETURN(iceberg::ManifestWriter made,
                               iceberg::ManifestWriter::Make(*schema, *spec, writer_options));
        writer.emplace(std::move(made));
      }
      SERAC_RETURN_IF_ERROR(writer->Add(entry));
      attempt.result.entries++;
      if (static_cast<int64_t>(writer->approximate_size()) >= target) SERAC_RETURN_IF_ERROR(finish());
    }
    SERAC_RETURN_IF_ERROR(finish());
    for (size_t i : indexes) replaced[i] = true;
  }
  if (attempt.result.manifests_rewritten == 0) {
    attempt.nothing_to_do = true;
    return attempt;
  }

  // The new list: the manifests kept, in their order, then the rewritten ones.
  std::vector<ManifestFile> listed;
  for (size_t i = 0; i < manifests.size(); ++i) {
    if (!replaced[i]) listed.push_back(manifests[i]);
  }
  const size_t kept = listed.size();
  for (ManifestFile& manifest : created) listed.push_back(std::move(manifest));
  const int64_t sequence_number = base.last_sequence_number() + 1;
  iceberg::ManifestListWriterOptions list_options;
  list_options.format_version = base.format_version();
  list_options.snapshot_id = snapshot_id;
  list_options.parent_snapshot_id = current->snapshot_id;
  list_options.sequence_number = sequence_number;
  list_options.first_row_id = base.next_row_id();
  SERAC_ASSIGN_OR_RETURN(iceberg::WrittenManifestList list, iceberg::WriteManifestList(listed, list_options));
  const std::string list_location =
      directory + "snap-" + std::to_string(snapshot_id) + "-1-" + RandomUuid() + ".avro";
  SERAC_RETURN_IF_ERROR(iceberg::WriteFile(io, list_location, list.bytes).status());
  attempt.written.push_back(list_location);
  attempt.result.manifests_written = static_cast<int64_t>(listed.size() - kept);

  // Java's summary of a manifest rewrite: no file added or removed, the totals carried over.
  std::map<std::string, std::string> summary;
  summary["operation"] = "replace";
  summary["manifests-created"] = std::to_string(attempt.result.manifests_written);
  summary["manifests-kept"] = std::to_string(kept);
  summary["manifests-replaced"] = std::to_string(attempt.result.manifests_rewritten);
  summary["entries-processed"] = std::to_string(attempt.result.entries);
  summary["changed-partition-count"] = "0";
  for (const auto& [name, value] : current->summary) {
    if (name.rfind("total-", 0) == 0) summary[name] = value;
  }
  summary["engine-name"] = "serac";
  iceberg::Snapshot snapshot;
  snapshot.snapshot_id = snapshot_id;
  snapshot.parent_snapshot_id = current->snapshot_id;
  snapshot.sequence_number = sequence_number;
  snapshot.timestamp_ms = std::max(now_ms, base.last_updated_ms());
  snapshot.manifest_list = list_location;
  snapshot.summary = std::move(summary);
  snapshot.schema_id = base.current_schema_id();
  snapshot.first_row_id = base.next_row_id();
  snapshot.added_rows = list.assigned_rows;
  attempt.changes = iceberg::SnapshotOnMain(base, snapshot);
  attempt.result.snapshot_id = snapshot_id;
  return attempt;
}

// The rewrite as the commit loop makes it: prepared again on every lost race, the files of each
// attempt that did not land deleted.
class ManifestRewrite final : public iceberg::ChangeMaker {
 public:
  ManifestRewrite(iceberg::FileIO& io, const RewriteManifestsOptions& options) : io_(io), options_(options) {}

  Result<iceberg::TableChanges> Prepare(const TableMetadata& base, int64_t now_ms) override {
    if (attempt_) RemoveWritten();  // the last attempt lost its race
    SERAC_ASSIGN_OR_RETURN(Attempt attempt, PrepareRewrite(io_, base, options_, now_ms));
    attempt_ = std::move(attempt);
    return attempt_->changes;
  }
  bool Landed(const TableMetadata& table) const override {
    return attempt_ && table.FindSnapshot(attempt_->result.snapshot_id).has_value();
  }
  void Finish(bool landed) override {
    if (!landed && attempt_) RemoveWritten();
    if (landed && attempt_) result_ = attempt_->result;
  }
  const RewriteManifestsResult& result() const { return result_; }

 private:
  void RemoveWritten() {
    for (const std::string& location : attempt_->written) (void)io_.Delete(location);
    attempt_.reset();
  }

  iceberg::FileIO& io_;
  const RewriteManifestsOptions& options_;
  std::optional<Attempt> attempt_;
  RewriteManifestsResult result_;  // of the attempt that landed; empty when there was nothing to do
};

}  // namespace

Result<RewriteManifestsResult> RewriteManifests(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                                const iceberg::TableRef& table,
                                                const RewriteManifestsOptions& options) {
  ManifestRewrite rewrite(io, options);
  SERAC_RETURN_IF_ERROR(iceberg::CommitChange(catalog, table, rewrite));
  return rewrite.result();
}

}  // namespace serac::maintenance
