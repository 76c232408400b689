#include "iceberg/snapshot_producer.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "common/limits.h"
#include "common/random.h"

namespace serac::iceberg {

namespace {

using Json = nlohmann::json;

int64_t ToLong(const std::string& text) {
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// Java's SnapshotSummary totals: the previous total plus what was added; none when a previous
// snapshot lacks it.
void SetTotal(std::map<std::string, std::string>& summary, const std::optional<Snapshot>& previous,
              const std::string& total_key, int64_t added) {
  if (!previous) {
    summary[total_key] = std::to_string(added);
    return;
  }
  auto it = previous->summary.find(total_key);
  if (it == previous->summary.end()) return;
  summary[total_key] = std::to_string(ToLong(it->second) + added);
}

std::string MetadataDirectory(const TableMetadata& base) {
  auto it = base.properties().find("write.metadata.path");
  if (it != base.properties().end() && !it->second.empty()) return it->second;
  std::string location = base.location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  return location + "/metadata";
}

Status WriteWhole(FileIO& io, const std::string& location, const std::string& bytes) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, io.Create(location));
  Status written = file->Write(bytes);
  if (!written.ok()) {
    file->Abort();
    return written;
  }
  return file->Close().status();
}

}  // namespace

int64_t NewSnapshotId() {
  const std::string bytes = RandomBytes(8);
  uint64_t value = 0;
  for (char c : bytes) value = (value << 8) | static_cast<uint8_t>(c);
  value &= 0x7FFFFFFFFFFFFFFFULL;
  return value == 0 ? 1 : static_cast<int64_t>(value);
}

AppendProducer::AppendProducer(FileIO& io, std::vector<DataFile> files,
                               std::map<std::string, std::string> summary)
    : io_(io), files_(std::move(files)), summary_(std::move(summary)), snapshot_id_(NewSnapshotId()) {}

Result<PreparedCommit> AppendProducer::Prepare(const TableMetadata& base, int64_t now_ms) {
  const int version = base.format_version();
  const std::string metadata_dir = MetadataDirectory(base);
  const std::optional<Snapshot> current = base.CurrentSnapshot();
  ++attempt_;

  // The new files' manifest, written once: the commit's snapshot id is fixed, and entries inherit
  // their sequence numbers from the manifest list of whichever attempt lands.
  if (new_manifests_.empty() && !files_.empty()) {
    ManifestWriterOptions options;
    options.format_version = version;
    options.snapshot_id = snapshot_id_;
    SERAC_ASSIGN_OR_RETURN(ManifestWriter writer,
                           ManifestWriter::Make(base.CurrentSchema(), base.DefaultSpec(), options));
    for (const DataFile& file : files_) {
      ManifestEntry entry;
      entry.status = EntryStatus::kAdded;
      entry.file = file;
      if (version == 1) entry.snapshot_id = snapshot_id_;
      SERAC_RETURN_IF_ERROR(writer.Add(entry));
    }
    const std::string location = metadata_dir + "/" + RandomUuid() + "-m0.avro";
    SERAC_ASSIGN_OR_RETURN(ManifestWriter::Written written, writer.Finish(location));
    SERAC_RETURN_IF_ERROR(WriteWhole(io_, location, written.bytes));
    new_manifests_.push_back(std::move(written.manifest));
  }

  // This commit's manifests first, then the current snapshot's.
  std::vector<ManifestFile> manifests = new_manifests_;
  if (current) {
    if (current->manifest_list.empty()) {
      return Error(ErrorCode::kNotImplemented,
                   "the current snapshot lists its manifests itself (format v1 without a manifest list)");
    }
    SERAC_ASSIGN_OR_RETURN(
        std::string list,
        io_.ReadAll(current->manifest_list, limits::kManifestListBytesMax, "limits::kManifestListBytesMax"));
    SERAC_ASSIGN_OR_RETURN(std::vector<ManifestFile> existing,
                           ReadManifestList(list, current->manifest_list));
    manifests.insert(manifests.end(), existing.begin(), existing.end());
  }

  const int64_t sequence_number = version >= 2 ? base.last_sequence_number() + 1 : 0;
  ManifestListWriterOptions list_options;
  list_options.format_version = version;
  list_options.snapshot_id = snapshot_id_;
  if (current) list_options.parent_snapshot_id = current->snapshot_id;
  list_options.sequence_number = sequence_number;
  list_options.first_row_id = base.next_row_id();
  SERAC_ASSIGN_OR_RETURN(WrittenManifestList list, WriteManifestList(manifests, list_options));
  const std::string list_location = metadata_dir + "/snap-" + std::to_string(snapshot_id_) + "-" +
                                    std::to_string(attempt_) + "-" + RandomUuid() + ".avro";
  SERAC_RETURN_IF_ERROR(WriteWhole(io_, list_location, list.bytes));
  lists_written_.push_back(list_location);

  // The summary Java's MergeAppend writes.
  int64_t added_records = 0;
  int64_t added_size = 0;
  std::set<std::string> partitions;
  for (const DataFile& file : files_) {
    added_records += file.record_count;
    added_size += file.file_size_in_bytes;
    std::string key;
    for (const Datum& value : file.partition)
      key += std::to_string(value.index()) + DatumToText(Type{}, value) + "/";
    partitions.insert(key);
  }
  std::map<std::string, std::string> summary = summary_;
  summary["operation"] = "append";
  summary["added-data-files"] = std::to_string(files_.size());
  summary["added-records"] = std::to_string(added_records);
  summary["added-files-size"] = std::to_string(added_size);
  summary["changed-partition-count"] = std::to_string(partitions.size());
  SetTotal(summary, current, "total-records", added_records);
  SetTotal(summary, current, "total-files-size", added_size);
  SetTotal(summary, current, "total-data-files", static_cast<int64_t>(files_.size()));
  SetTotal(summary, current, "total-delete-files", 0);
  SetTotal(summary, current, "total-position-deletes", 0);
  SetTotal(summary, current, "total-equality-deletes", 0);
  summary["engine-name"] = "serac";

  Json snapshot = Json::object();
  snapshot["snapshot-id"] = snapshot_id_;
  if (current) snapshot["parent-snapshot-id"] = current->snapshot_id;
  if (version >= 2) snapshot["sequence-number"] = sequence_number;
  snapshot["timestamp-ms"] = std::max(now_ms, base.last_updated_ms());
  snapshot["manifest-list"] = list_location;
  snapshot["summary"] = summary;
  snapshot["schema-id"] = base.current_schema_id();
  if (version >= 3) {
    snapshot["first-row-id"] = base.next_row_id();
    snapshot["added-rows"] = list.assigned_rows;
  }

  Json requirements = Json::array();
  requirements.push_back({{"type", "assert-table-uuid"}, {"uuid", base.table_uuid()}});
  Json ref = {{"type", "assert-ref-snapshot-id"}, {"ref", kMainBranch}};
  ref["snapshot-id"] = current ? Json(current->snapshot_id) : Json(nullptr);
  requirements.push_back(std::move(ref));
  Json updates = Json::array();
  updates.push_back({{"action", "add-snapshot"}, {"snapshot", snapshot}});
  updates.push_back({{"action", "set-snapshot-ref"},
                     {"ref-name", kMainBranch},
                     {"type", "branch"},
                     {"snapshot-id", snapshot_id_}});

  PreparedCommit commit;
  commit.requirements_json = requirements.dump(-1, ' ', false, Json::error_handler_t::replace);
  commit.updates_json = updates.dump(-1, ' ', false, Json::error_handler_t::replace);
  commit.snapshot_id = snapshot_id_;
  commit.manifest_list = list_location;
  return commit;
}

void AppendProducer::CleanUp(const std::string& committed_list) {
  for (const std::string& list : lists_written_) {
    if (list != committed_list) (void)io_.Delete(list);
  }
  if (committed_list.empty()) {
    for (const ManifestFile& manifest : new_manifests_) (void)io_.Delete(manifest.manifest_path);
  }
}

}  // namespace serac::iceberg
