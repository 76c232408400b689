#include "iceberg/write/snapshot_producer.h"

#include <algorithm>
#include <charconv>
#include <functional>

#include "common/limits.h"
#include "common/random.h"
#include "iceberg/write/snapshot_producer_internal.h"

namespace serac::iceberg {

namespace {

using State = SnapshotProducer::State;

int64_t ToLong(const std::string& text) {
  int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

Status Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

std::string MetadataDirectory(const TableMetadata& base) {
  auto it = base.properties().find("write.metadata.path");
  if (it != base.properties().end() && !it->second.empty()) return it->second;
  std::string location = base.location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  return location + "/metadata";
}

// Writes a finished manifest under the table's metadata directory and remembers it for CleanUp.
Result<ManifestFile> StoreManifest(State& state, const TableMetadata& base, ManifestWriter& writer) {
  const std::string location =
      MetadataDirectory(base) + "/" + RandomUuid() + "-m" + std::to_string(state.written.size()) + ".avro";
  SERAC_ASSIGN_OR_RETURN(ManifestWriter::Written written, writer.Finish(location));
  SERAC_RETURN_IF_ERROR(WriteFile(state.io, location, written.bytes).status());
  state.written.push_back(location);
  return std::move(written.manifest);
}

Result<PartitionSpec> SpecOf(const TableMetadata& base, int32_t spec_id) {
  std::optional<PartitionSpec> spec = base.FindSpec(spec_id);
  if (!spec) return Invalid("the table has no partition spec " + std::to_string(spec_id));
  return std::move(*spec);
}

Result<ManifestWriter> NewManifestWriter(const State& state, const TableMetadata& base, int32_t spec_id,
                                         ManifestContent content) {
  SERAC_ASSIGN_OR_RETURN(PartitionSpec spec, SpecOf(base, spec_id));
  ManifestWriterOptions options;
  options.format_version = base.format_version();
  options.content = content;
  options.snapshot_id = state.snapshot_id;
  return ManifestWriter::Make(base.CurrentSchema(), spec, options);
}

// Each spec's partition type, for reading manifests' partition summaries; absent when a spec's
// source columns are gone from the schema (its manifests are then read, not pruned).
std::map<int32_t, std::optional<Type>> PartitionTypes(const TableMetadata& base) {
  std::map<int32_t, std::optional<Type>> types;
  const Schema schema = base.CurrentSchema();
  for (const PartitionSpec& spec : base.Specs()) {
    Result<Type> type = PartitionType(spec, schema);
    types[spec.spec_id] = type.ok() ? std::optional<Type>(std::move(type).value()) : std::nullopt;
  }
  return types;
}

// Whether a manifest's partition summaries allow it to hold a file of `spec_id` and `partition`.
bool MayHold(const ManifestFile& manifest, int32_t spec_id, const PartitionTuple& partition,
             const std::map<int32_t, std::optional<Type>>& types) {
  if (manifest.partition_spec_id != spec_id) return false;
  auto type = types.find(spec_id);
  if (type == types.end() || !type->second || type->second->fields.size() != partition.size() ||
      manifest.partitions.size() != partition.size()) {
    return true;
  }
  for (size_t i = 0; i < partition.size(); ++i) {
    const PartitionFieldSummary& summary = manifest.partitions[i];
    const Datum& value = partition[i];
    const Type& field_type = type->second->fields[i].type;
    if (IsNull(value)) {
      if (!summary.contains_null) return false;
      continue;
    }
    if (IsNaN(value)) {
      if (summary.contains_nan && !*summary.contains_nan) return false;
      continue;
    }
    if (!summary.lower_bound || !summary.upper_bound) continue;
    Result<Datum> lower = FromSingleValue(field_type, *summary.lower_bound);
    Result<Datum> upper = FromSingleValue(field_type, *summary.upper_bound);
    if (!lower.ok() || !upper.ok()) continue;
    if (CompareDatums(field_type, value, *lower) < 0 || CompareDatums(field_type, value, *upper) > 0)
      return false;
  }
  return true;
}

bool HasLiveFiles(const ManifestFile& manifest) {
  return manifest.added_files_count > 0 || manifest.existing_files_count > 0;
}

// What this attempt removes from the current snapshot's manifests.
struct Removals {
  bool all = false;
  std::set<std::string> data_paths;
  std::set<std::string> delete_keys;
  std::vector<const DataFile*> data_files;    // for pruning by partition
  std::vector<const DataFile*> delete_files;  // for pruning by partition
  // DVs of the data files removed go with them (v3: a DV of a file that is gone is dangling).
  std::set<std::string> dangling_dv_data_paths;
  std::vector<const DataFile*> dangling_dv_files;
  // Delete files whose data sequence number is below this apply to no live data file.
  int64_t drop_deletes_below = 0;
  // RemoveRowsMatching: files all of whose rows match go; `filter_text` names it in errors.
  const FileFilter* filter = nullptr;
  std::string filter_text;
};

bool MarkedForRemoval(const ManifestEntry& entry, bool delete_manifest, const Removals& removals) {
  if (removals.all) return true;
  const DataFile& file = entry.file;
  if (removals.filter && removals.filter->Evaluate(file) == FileMatch::kAll) return true;
  if (!delete_manifest) return removals.data_paths.count(file.file_path) > 0;
  if (removals.delete_keys.count(ContentFileKey(file)) > 0) return true;
  if (IsDeletionVector(file) && file.referenced_data_file &&
      removals.dangling_dv_data_paths.count(*file.referenced_data_file) > 0) {
    return true;
  }
  const int64_t sequence = entry.sequence_number.value_or(0);
  return sequence > 0 && sequence < removals.drop_deletes_below;
}

bool MayNeedRewrite(const ManifestFile& manifest, bool delete_manifest, const Removals& removals,
                    const std::map<int32_t, std::optional<Type>>& types) {
  if (!HasLiveFiles(manifest)) return false;
  if (removals.all || removals.filter) return true;
  auto any_may_hold = [&](const std::vector<const DataFile*>& files) {
    return std::any_of(files.begin(), files.end(), [&](const DataFile* file) {
      return MayHold(manifest, file->spec_id, file->partition, types);
    });
  };
  if (!delete_manifest) return any_may_hold(removals.data_files);
  if (any_may_hold(removals.delete_files) || any_may_hold(removals.dangling_dv_files)) return true;
  return manifest.min_sequence_number > 0 && manifest.min_sequence_number < removals.drop_deletes_below;
}

Result<std::string> ReadManifestBytes(FileIO& io, const ManifestFile& manifest) {
  return io.ReadAll(manifest.manifest_path, limits::kManifestBytesMax, "limits::kManifestBytesMax");
}

// The manifest with its removed files marked DELETED and the rest EXISTING (entries an earlier
// snapshot deleted are dropped), or the manifest itself when it holds nothing to remove.
Result<State::Rewrite> RewriteManifest(State& state, const TableMetadata& base, const ManifestFile& manifest,
                                       bool delete_manifest, const Removals& removals) {
  SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadManifestBytes(state.io, manifest));
  SERAC_ASSIGN_OR_RETURN(ManifestReader reader, ManifestReader::Open(bytes, manifest));
  std::vector<ManifestEntry> live;
  bool any_marked = false;
  ManifestEntry entry;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
    if (!more) break;
    if (entry.status == EntryStatus::kDeleted) continue;
    const bool marked = MarkedForRemoval(entry, delete_manifest, removals);
    // Delete files only some of whose rows match stay, as Java leaves them; data files cannot.
    if (!marked && !delete_manifest && removals.filter &&
        removals.filter->Evaluate(entry.file) == FileMatch::kSome) {
      return Error(ErrorCode::kValidationFailed,
                   "Cannot delete file where some, but not all, rows match filter " + removals.filter_text +
                       ": " + entry.file.file_path);
    }
    any_marked = any_marked || marked;
    live.push_back(entry);
  }
  State::Rewrite rewrite;
  rewrite.manifest = manifest;
  if (!any_marked) return rewrite;
  SERAC_ASSIGN_OR_RETURN(ManifestWriter writer,
                         NewManifestWriter(state, base, manifest.partition_spec_id, manifest.content));
  for (ManifestEntry& kept : live) {
    if (MarkedForRemoval(kept, delete_manifest, removals)) {
      kept.status = EntryStatus::kDeleted;
      kept.snapshot_id = state.snapshot_id;
      rewrite.removed.push_back(kept.file);
    } else {
      kept.status = EntryStatus::kExisting;
    }
    SERAC_RETURN_IF_ERROR(writer.Add(kept));
  }
  SERAC_ASSIGN_OR_RETURN(rewrite.manifest, StoreManifest(state, base, writer));
  return rewrite;
}

// Runs RewriteManifest over the manifests that may hold something to remove, reusing an earlier
// attempt's rewrite of the same manifest; collects what was removed.
Result<std::vector<ManifestFile>> FilterManifests(State& state, const TableMetadata& base,
                                                  const std::vector<ManifestFile>& manifests,
                                                  bool delete_manifests, const Removals& removals,
                                                  const std::map<int32_t, std::optional<Type>>& types,
                                                  std::vector<DataFile>& removed) {
  std::vector<ManifestFile> filtered;
  filtered.reserve(manifests.size());
  for (const ManifestFile& manifest : manifests) {
    if (!MayNeedRewrite(manifest, delete_manifests, removals, types)) {
      filtered.push_back(manifest);
      continue;
    }
    const auto key =
        std::make_pair(manifest.manifest_path, delete_manifests ? removals.drop_deletes_below : 0);
    auto cached = state.rewrites.find(key);
    if (cached == state.rewrites.end()) {
      SERAC_ASSIGN_OR_RETURN(State::Rewrite rewrite,
                             RewriteManifest(state, base, manifest, delete_manifests, removals));
      cached = state.rewrites.emplace(key, std::move(rewrite)).first;
    }
    filtered.push_back(cached->second.manifest);
    removed.insert(removed.end(), cached->second.removed.begin(), cached->second.removed.end());
  }
  return filtered;
}

// Java's ListPacker(target, lookback 1).packEnd: bins filled from the last manifest backwards, so
// the bin left under-filled is the one with the newest manifests, merged again next time.
std::vector<std::vector<ManifestFile>> PackEnd(const std::vector<ManifestFile>& group, int64_t target) {
  std::vector<std::vector<ManifestFile>> bins;
  std::vector<ManifestFile> open;
  int64_t weight = 0;
  for (auto it = group.rbegin(); it != group.rend(); ++it) {
    if (!open.empty() && weight + it->manifest_length > target) {
      std::reverse(open.begin(), open.end());
      bins.push_back(std::move(open));
      open.clear();
      weight = 0;
    }
    open.push_back(*it);
    weight += it->manifest_length;
  }
  if (!open.empty()) {
    std::reverse(open.begin(), open.end());
    bins.push_back(std::move(open));
  }
  std::reverse(bins.begin(), bins.end());
  return bins;
}

// One manifest of a bin's entries, as Java's ManifestMergeManager writes it: this snapshot's adds
// and deletes stay so, deletes of earlier snapshots are dropped, everything else is EXISTING.
Result<ManifestFile> MergeBin(State& state, const TableMetadata& base, const std::vector<ManifestFile>& bin) {
  std::vector<std::string> key;
  for (const ManifestFile& manifest : bin) key.push_back(manifest.manifest_path);
  auto cached = state.merges.find(key);
  if (cached != state.merges.end()) return cached->second;
  SERAC_ASSIGN_OR_RETURN(ManifestWriter writer,
                         NewManifestWriter(state, base, bin.front().partition_spec_id, bin.front().content));
  ManifestEntry entry;
  for (const ManifestFile& manifest : bin) {
    SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadManifestBytes(state.io, manifest));
    // This snapshot's own manifests are read as written: their sequence numbers are not known yet.
    const bool committed = manifest.added_snapshot_id != state.snapshot_id;
    SERAC_ASSIGN_OR_RETURN(ManifestReader reader, ManifestReader::Open(bytes, manifest, committed));
    while (true) {
      SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
      if (!more) break;
      const bool ours = !committed || entry.snapshot_id == state.snapshot_id;
      if (entry.status == EntryStatus::kDeleted) {
        if (!ours) continue;
      } else if (!(entry.status == EntryStatus::kAdded && ours)) {
        entry.status = EntryStatus::kExisting;
      }
      SERAC_RETURN_IF_ERROR(writer.Add(entry));
    }
  }
  SERAC_ASSIGN_OR_RETURN(ManifestFile merged, StoreManifest(state, base, writer));
  state.merges.emplace(std::move(key), merged);
  return merged;
}

Result<std::vector<ManifestFile>> MergeManifests(State& state, const TableMetadata& base,
                                                 const std::vector<ManifestFile>& manifests,
                                                 const ManifestMergeOptions& options) {
  if (!options.enabled || manifests.empty()) return manifests;
  const std::string& first = manifests.front().manifest_path;
  std::map<int32_t, std::vector<ManifestFile>, std::greater<int32_t>> groups;
  groups[manifests.front().partition_spec_id];  // the first manifest's spec first, as Java orders
  for (const ManifestFile& manifest : manifests) groups[manifest.partition_spec_id].push_back(manifest);
  std::vector<ManifestFile> merged;
  for (const auto& [spec_id, group] : groups) {
    for (const std::vector<ManifestFile>& bin : PackEnd(group, options.target_size_bytes)) {
      const bool has_first = std::any_of(bin.begin(), bin.end(),
                                         [&](const ManifestFile& m) { return m.manifest_path == first; });
      if (bin.size() == 1 || (has_first && static_cast<int64_t>(bin.size()) < options.min_count_to_merge)) {
        merged.insert(merged.end(), bin.begin(), bin.end());
      } else {
        SERAC_ASSIGN_OR_RETURN(ManifestFile one, MergeBin(state, base, bin));
        merged.push_back(std::move(one));
      }
    }
  }
  return merged;
}

// Java's SnapshotSummary counters for added and removed files.
struct FileCounts {
  int64_t data_files = 0, records = 0, size = 0;
  int64_t delete_files = 0, position_delete_files = 0, equality_delete_files = 0, dvs = 0;
  int64_t position_deletes = 0, equality_deletes = 0;

  void Count(const DataFile& file) {
    const bool dv = IsDeletionVector(file);
    size += dv ? file.content_size_in_bytes.value_or(0) : file.file_size_in_bytes;
    switch (file.content) {
      case FileContent::kData:
        ++data_files;
        records += file.record_count;
        break;
      case FileContent::kPositionDeletes:
        ++delete_files;
        ++(dv ? dvs : position_delete_files);
        position_deletes += file.record_count;
        break;
      case FileContent::kEqualityDeletes:
        ++delete_files;
        ++equality_delete_files;
        equality_deletes += file.record_count;
        break;
    }
  }
};

void SetIfPositive(std::map<std::string, std::string>& summary, const char* key, int64_t value) {
  if (value > 0) summary[key] = std::to_string(value);
}

// Java's totals: the previous snapshot's plus what was added minus what was removed; none when a
// previous snapshot lacks the total.
void SetTotal(std::map<std::string, std::string>& summary, const std::optional<Snapshot>& previous,
              const std::string& total_key, int64_t added, int64_t removed) {
  int64_t total = 0;
  if (previous) {
    auto it = previous->summary.find(total_key);
    if (it == previous->summary.end()) return;
    total = ToLong(it->second);
  }
  summary[total_key] = std::to_string(total + added - removed);
}

std::string PartitionKey(const DataFile& file) {
  std::string key = std::to_string(file.spec_id) + ":";
  for (const Datum& value : file.partition)
    key += std::to_string(value.index()) + DatumToText(Type{}, value) + "/";
  return key;
}

const char* OperationOf(ProducerKind kind, const State& state) {
  const bool adds_data = !state.added_data.empty();
  const bool adds_deletes = !state.added_deletes.empty();
  const bool removes_data = !state.removed_data.empty() || state.remove_all || state.row_filter;
  switch (kind) {
    case ProducerKind::kAppend:
      return "append";
    case ProducerKind::kOverwrite:
      return adds_data ? "overwrite" : "delete";
    case ProducerKind::kRowDelta:
      if (adds_data && !adds_deletes && !removes_data) return "append";
      if (!adds_data && !removes_data) return "delete";
      return "overwrite";
    case ProducerKind::kReplaceFiles:
      return "replace";
  }
  return "overwrite";
}

// What the kind allows, and what the format version allows.
Status CheckChange(const State& state, int version) {
  const bool removes =
      !state.removed_data.empty() || !state.removed_deletes.empty() || state.remove_all || state.row_filter;
  switch (state.kind) {
    case ProducerKind::kAppend:
      if (removes || !state.added_deletes.empty()) return Invalid("an append only adds data files");
      break;
    case ProducerKind::kOverwrite:
      if (!state.added_deletes.empty() || !state.removed_deletes.empty()) {
        return Invalid("an overwrite adds and removes data files only");
      }
      break;
    case ProducerKind::kRowDelta:
      if (state.remove_all || state.row_filter) return Invalid("a row delta removes files one by one");
      break;
    case ProducerKind::kReplaceFiles:
      if (state.remove_all || state.row_filter) return Invalid("a replace names the files it replaces");
      if (state.removed_data.empty() && !state.added_data.empty()) {
        return Invalid("a replace that adds data files must remove the data files they replace");
      }
      if (state.removed_data.empty() && state.removed_deletes.empty()) {
        return Invalid("a replace must remove files");
      }
      break;
  }
  if (state.kept_data_sequence_number && state.kind != ProducerKind::kReplaceFiles) {
    return Invalid("only a replace keeps data sequence numbers");
  }
  for (const DataFile& file : state.added_deletes) {
    if (file.content == FileContent::kData) return Invalid("not a delete file: " + file.file_path);
    if (version < 2) return Invalid("delete files need format version 2 or later: " + file.file_path);
    const bool dv = IsDeletionVector(file);
    if (dv && version < 3) return Invalid("deletion vectors need format version 3: " + file.file_path);
    if (dv && !file.referenced_data_file)
      return Invalid("a deletion vector names its data file: " + file.file_path);
    if (version >= 3 && file.content == FileContent::kPositionDeletes && !dv) {
      return Invalid("format version 3 keeps position deletes as deletion vectors: " + file.file_path);
    }
    if (file.content == FileContent::kEqualityDeletes && file.equality_ids.empty()) {
      return Invalid("an equality delete file names its equality columns: " + file.file_path);
    }
  }
  for (const DataFile& file : state.added_data) {
    if (file.content != FileContent::kData) return Invalid("not a data file: " + file.file_path);
  }
  return Status::Ok();
}

}  // namespace

Result<ManifestMergeOptions> ManifestMergeOptions::FromTableProperties(
    const std::map<std::string, std::string>& properties) {
  ManifestMergeOptions options;
  auto read_long = [&](const char* key, int64_t& out, int64_t minimum) -> Status {
    auto it = properties.find(key);
    if (it == properties.end()) return Status::Ok();
    int64_t value = 0;
    auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
    if (error != std::errc() || end != it->second.data() + it->second.size() || value < minimum) {
      return Invalid(std::string("table property ") + key + " is not a number of at least " +
                     std::to_string(minimum) + ": \"" + it->second + "\"");
    }
    out = value;
    return Status::Ok();
  };
  if (auto it = properties.find("commit.manifest-merge.enabled"); it != properties.end()) {
    if (it->second != "true" && it->second != "false") {
      return Invalid("table property commit.manifest-merge.enabled is neither true nor false: \"" +
                     it->second + "\"");
    }
    options.enabled = it->second == "true";
  }
  SERAC_RETURN_IF_ERROR(read_long("commit.manifest.target-size-bytes", options.target_size_bytes, 1));
  int64_t min_count = options.min_count_to_merge;
  SERAC_RETURN_IF_ERROR(read_long("commit.manifest.min-count-to-merge", min_count, 0));
  options.min_count_to_merge = static_cast<int32_t>(std::min<int64_t>(min_count, INT32_MAX));
  return options;
}

int64_t NewSnapshotId() {
  const std::string bytes = RandomBytes(8);
  uint64_t value = 0;
  for (char c : bytes) value = (value << 8) | static_cast<uint8_t>(c);
  value &= 0x7FFFFFFFFFFFFFFFULL;
  return value == 0 ? 1 : static_cast<int64_t>(value);
}

std::string ContentFileKey(const DataFile& file) {
  if (!file.content_offset) return file.file_path;
  return file.file_path + "#" + std::to_string(*file.content_offset);
}

Result<std::vector<ManifestFile>> ReadSnapshotManifests(FileIO& io, const Snapshot& snapshot) {
  if (snapshot.manifest_list.empty()) {
    return Error(ErrorCode::kNotImplemented,
                 "snapshot " + std::to_string(snapshot.snapshot_id) +
                     " lists its manifests itself (format v1 without a manifest list)");
  }
  SERAC_ASSIGN_OR_RETURN(std::string list, io.ReadAll(snapshot.manifest_list, limits::kManifestListBytesMax,
                                                      "limits::kManifestListBytesMax"));
  return ReadManifestList(list, snapshot.manifest_list);
}

SnapshotProducer::SnapshotProducer(FileIO& io, ProducerKind kind, std::map<std::string, std::string> summary)
    : state_(std::make_unique<State>(io, kind)) {
  state_->extra_summary = std::move(summary);
  state_->snapshot_id = NewSnapshotId();
}

SnapshotProducer::~SnapshotProducer() = default;

void SnapshotProducer::AddDataFile(DataFile file) { state_->added_data.push_back(std::move(file)); }
void SnapshotProducer::AddDeleteFile(DataFile file) { state_->added_deletes.push_back(std::move(file)); }
void SnapshotProducer::RemoveDataFile(DataFile file) { state_->removed_data.push_back(std::move(file)); }
void SnapshotProducer::RemoveDeleteFile(DataFile file) { state_->removed_deletes.push_back(std::move(file)); }
void SnapshotProducer::RemoveAllFiles() { state_->remove_all = true; }

void SnapshotProducer::RemoveRowsMatching(Expression filter, bool added_must_match) {
  state_->row_filter = std::move(filter);
  state_->added_must_match_filter = added_must_match;
}
void SnapshotProducer::KeepDataSequenceNumber(int64_t sequence_number) {
  state_->kept_data_sequence_number = sequence_number;
}
void SnapshotProducer::ValidateFromSnapshot(std::optional<int64_t> snapshot_id) {
  state_->validate_from_set = true;
  state_->validate_from = snapshot_id;
}
int64_t SnapshotProducer::snapshot_id() const { return state_->snapshot_id; }

Result<PreparedCommit> SnapshotProducer::Prepare(const TableMetadata& base, int64_t now_ms) {
  State& s = *state_;
  const int version = base.format_version();
  const std::optional<Snapshot> current = base.CurrentSnapshot();
  ++s.attempt;
  SERAC_RETURN_IF_ERROR(CheckChange(s, version));
  if (!s.validate_from_set) {
    s.validate_from_set = true;
    if (current) s.validate_from = current->snapshot_id;
  }
  SERAC_RETURN_IF_ERROR(ValidateConcurrentChanges(s, base, s.validate_from));
  SERAC_ASSIGN_OR_RETURN(ManifestMergeOptions merge_options,
                         ManifestMergeOptions::FromTableProperties(base.properties()));

  // The new files' manifests, written once: the snapshot id is fixed, and entries inherit their
  // sequence numbers from the manifest list of whichever attempt lands. Data files go to the
  // default spec; delete files to the spec of the data they delete from.
  if (!s.new_manifests_written) {
    const int32_t default_spec = base.default_spec_id();
    if (!s.added_data.empty()) {
      SERAC_ASSIGN_OR_RETURN(ManifestWriter writer,
                             NewManifestWriter(s, base, default_spec, ManifestContent::kData));
      for (DataFile& file : s.added_data) {
        file.spec_id = default_spec;
        ManifestEntry entry;
        entry.status = EntryStatus::kAdded;
        entry.file = file;
        if (version == 1) entry.snapshot_id = s.snapshot_id;
        entry.sequence_number = s.kept_data_sequence_number;
        SERAC_RETURN_IF_ERROR(writer.Add(entry));
      }
      SERAC_ASSIGN_OR_RETURN(ManifestFile manifest, StoreManifest(s, base, writer));
      s.new_data_manifests.push_back(std::move(manifest));
    }
    std::map<int32_t, std::vector<const DataFile*>> deletes_by_spec;
    for (const DataFile& file : s.added_deletes) deletes_by_spec[file.spec_id].push_back(&file);
    for (const auto& [spec_id, files] : deletes_by_spec) {
      SERAC_ASSIGN_OR_RETURN(ManifestWriter writer,
                             NewManifestWriter(s, base, spec_id, ManifestContent::kDeletes));
      for (const DataFile* file : files) {
        ManifestEntry entry;
        entry.status = EntryStatus::kAdded;
        entry.file = *file;
        SERAC_RETURN_IF_ERROR(writer.Add(entry));
      }
      SERAC_ASSIGN_OR_RETURN(ManifestFile manifest, StoreManifest(s, base, writer));
      s.new_delete_manifests.push_back(std::move(manifest));
    }
    s.new_manifests_written = true;
  }

  // The current snapshot's manifests, with what this change removes marked DELETED.
  std::vector<ManifestFile> data_manifests;
  std::vector<ManifestFile> delete_manifests;
  if (current) {
    SERAC_ASSIGN_OR_RETURN(std::vector<ManifestFile> existing, ReadSnapshotManifests(s.io, *current));
    for (ManifestFile& manifest : existing) {
      (manifest.content == ManifestContent::kData ? data_manifests : delete_manifests)
          .push_back(std::move(manifest));
    }
  }
  const size_t committed_manifests = data_manifests.size() + delete_manifests.size();
  const auto types = PartitionTypes(base);
  Removals removals;
  removals.all = s.remove_all;
  std::optional<FileFilter> filter;
  if (s.row_filter) {
    SERAC_ASSIGN_OR_RETURN(BoundExpression bound, BindExpression(*s.row_filter, base.CurrentSchema()));
    filter.emplace(std::move(bound), base);
    removals.filter = &*filter;
    removals.filter_text = s.row_filter->ToString();
    if (s.added_must_match_filter) {
      for (DataFile file : s.added_data) {
        file.spec_id = base.default_spec_id();
        if (filter->Evaluate(file) != FileMatch::kAll && file.record_count > 0) {
          return Error(ErrorCode::kValidationFailed,
                       "Cannot append file with rows that do not match filter: " + removals.filter_text +
                           ": " + file.file_path);
        }
      }
    }
  }
  for (const DataFile& file : s.removed_data) {
    removals.data_paths.insert(file.file_path);
    removals.data_files.push_back(&file);
    removals.dangling_dv_data_paths.insert(file.file_path);
    removals.dangling_dv_files.push_back(&file);
  }
  for (const DataFile& file : s.removed_deletes) {
    removals.delete_keys.insert(ContentFileKey(file));
    removals.delete_files.push_back(&file);
  }
  std::vector<DataFile> removed;
  if (!removals.data_paths.empty() || removals.all || removals.filter) {
    SERAC_ASSIGN_OR_RETURN(data_manifests,
                           FilterManifests(s, base, data_manifests, false, removals, types, removed));
  }
  // The data files a row filter removed take their DVs with them, as files removed by name do.
  const std::vector<DataFile> removed_by_filter = removals.filter ? removed : std::vector<DataFile>{};
  for (const DataFile& file : removed_by_filter) {
    if (removals.dangling_dv_data_paths.insert(file.file_path).second)
      removals.dangling_dv_files.push_back(&file);
  }
  // Delete files older than every live data file apply to nothing any more (Java drops them too).
  removals.drop_deletes_below = base.last_sequence_number();
  for (const ManifestFile& manifest : data_manifests) {
    if (manifest.min_sequence_number != kUnassignedSequenceNumber) {
      removals.drop_deletes_below = std::min(removals.drop_deletes_below, manifest.min_sequence_number);
    }
  }
  // Rewritten files that keep an older data sequence number still need the deletes after it.
  if (s.kept_data_sequence_number) {
    removals.drop_deletes_below = std::min(removals.drop_deletes_below, *s.kept_data_sequence_number);
  }
  if (version < 2) removals.drop_deletes_below = 0;
  SERAC_ASSIGN_OR_RETURN(delete_manifests,
                         FilterManifests(s, base, delete_manifests, true, removals, types, removed));

  // Every file named for removal must have been live.
  std::set<std::string> found;
  for (const DataFile& file : removed)
    found.insert(file.content == FileContent::kData ? file.file_path : ContentFileKey(file));
  std::string missing;
  for (const std::string& path : removals.data_paths) {
    if (!found.count(path)) missing += (missing.empty() ? "" : ", ") + path;
  }
  for (const std::string& key : removals.delete_keys) {
    if (!found.count(key)) missing += (missing.empty() ? "" : ", ") + key;
  }
  if (!missing.empty()) {
    return Error(ErrorCode::kValidationFailed, "Missing required files to delete: " + missing);
  }

  // New manifests first, then the kept ones; empty manifests of earlier snapshots are dropped.
  auto assemble = [&](const std::vector<ManifestFile>& fresh, const std::vector<ManifestFile>& kept) {
    std::vector<ManifestFile> all = fresh;
    for (const ManifestFile& manifest : kept) {
      if (HasLiveFiles(manifest) || manifest.added_snapshot_id == s.snapshot_id) all.push_back(manifest);
    }
    return all;
  };
  SERAC_ASSIGN_OR_RETURN(
      std::vector<ManifestFile> manifests,
      MergeManifests(s, base, assemble(s.new_data_manifests, data_manifests), merge_options));
  SERAC_ASSIGN_OR_RETURN(
      std::vector<ManifestFile> merged_deletes,
      MergeManifests(s, base, assemble(s.new_delete_manifests, delete_manifests), merge_options));
  manifests.insert(manifests.end(), merged_deletes.begin(), merged_deletes.end());

  const int64_t sequence_number = version >= 2 ? base.last_sequence_number() + 1 : 0;
  ManifestListWriterOptions list_options;
  list_options.format_version = version;
  list_options.snapshot_id = s.snapshot_id;
  if (current) list_options.parent_snapshot_id = current->snapshot_id;
  list_options.sequence_number = sequence_number;
  list_options.first_row_id = base.next_row_id();
  SERAC_ASSIGN_OR_RETURN(WrittenManifestList list, WriteManifestList(manifests, list_options));
  const std::string list_location = MetadataDirectory(base) + "/snap-" + std::to_string(s.snapshot_id) + "-" +
                                    std::to_string(s.attempt) + "-" + RandomUuid() + ".avro";
  SERAC_RETURN_IF_ERROR(WriteFile(s.io, list_location, list.bytes).status());
  s.written.push_back(list_location);

  // The summary Java writes.
  FileCounts added;
  FileCounts gone;
  std::set<std::string> partitions;
  for (const DataFile& file : s.added_data) {
    added.Count(file);
    partitions.insert(PartitionKey(file));
  }
  for (const DataFile& file : s.added_deletes) {
    added.Count(file);
    partitions.insert(PartitionKey(file));
  }
  for (const DataFile& file : removed) {
    gone.Count(file);
    partitions.insert(PartitionKey(file));
  }
  std::map<std::string, std::string> summary = s.extra_summary;
  summary["operation"] = OperationOf(s.kind, s);
  SetIfPositive(summary, "added-data-files", added.data_files);
  SetIfPositive(summary, "deleted-data-files", gone.data_files);
  SetIfPositive(summary, "added-equality-delete-files", added.equality_delete_files);
  SetIfPositive(summary, "removed-equality-delete-files", gone.equality_delete_files);
  SetIfPositive(summary, "added-position-delete-files", added.position_delete_files);
  SetIfPositive(summary, "removed-position-delete-files", gone.position_delete_files);
  SetIfPositive(summary, "added-delete-files", added.delete_files);
  SetIfPositive(summary, "removed-delete-files", gone.delete_files);
  SetIfPositive(summary, "added-dvs", added.dvs);
  SetIfPositive(summary, "removed-dvs", gone.dvs);
  SetIfPositive(summary, "added-records", added.records);
  SetIfPositive(summary, "deleted-records", gone.records);
  SetIfPositive(summary, "added-files-size", added.size);
  SetIfPositive(summary, "removed-files-size", gone.size);
  SetIfPositive(summary, "added-position-deletes", added.position_deletes);
  SetIfPositive(summary, "removed-position-deletes", gone.position_deletes);
  SetIfPositive(summary, "added-equality-deletes", added.equality_deletes);
  SetIfPositive(summary, "removed-equality-deletes", gone.equality_deletes);
  summary["changed-partition-count"] = std::to_string(partitions.size());
  SetTotal(summary, current, "total-records", added.records, gone.records);
  SetTotal(summary, current, "total-files-size", added.size, gone.size);
  SetTotal(summary, current, "total-data-files", added.data_files, gone.data_files);
  SetTotal(summary, current, "total-delete-files", added.delete_files, gone.delete_files);
  SetTotal(summary, current, "total-position-deletes", added.position_deletes, gone.position_deletes);
  SetTotal(summary, current, "total-equality-deletes", added.equality_deletes, gone.equality_deletes);
  int64_t created = 0;
  for (const ManifestFile& manifest : manifests)
    created += manifest.added_snapshot_id == s.snapshot_id ? 1 : 0;
  summary["manifests-created"] = std::to_string(created);
  summary["manifests-kept"] = std::to_string(static_cast<int64_t>(manifests.size()) - created);
  std::set<std::string> listed;
  for (const ManifestFile& manifest : manifests) listed.insert(manifest.manifest_path);
  int64_t replaced_count = 0;
  if (current) {
    // Committed manifests this list no longer names: rewritten, merged or emptied.
    replaced_count = static_cast<int64_t>(committed_manifests) -
                     static_cast<int64_t>(manifests.size() - static_cast<size_t>(created));
  }
  summary["manifests-replaced"] = std::to_string(std::max<int64_t>(0, replaced_count));
  summary["engine-name"] = "serac";

  Snapshot snapshot;
  snapshot.snapshot_id = s.snapshot_id;
  if (current) snapshot.parent_snapshot_id = current->snapshot_id;
  snapshot.sequence_number = sequence_number;
  snapshot.timestamp_ms = std::max(now_ms, base.last_updated_ms());
  snapshot.manifest_list = list_location;
  snapshot.summary = std::move(summary);
  snapshot.schema_id = base.current_schema_id();
  snapshot.first_row_id = base.next_row_id();
  snapshot.added_rows = list.assigned_rows;

  PreparedCommit commit;
  commit.changes = SnapshotOnMain(base, snapshot);
  commit.snapshot_id = s.snapshot_id;
  commit.manifest_list = list_location;
  return commit;
}

void SnapshotProducer::CleanUp(const std::string& committed_list) {
  State& s = *state_;
  std::set<std::string> keep;
  if (!committed_list.empty()) {
    keep.insert(committed_list);
    // The manifests the committed list names stay; the rest of what attempts wrote goes.
    Result<std::string> list =
        s.io.ReadAll(committed_list, limits::kManifestListBytesMax, "limits::kManifestListBytesMax");
    if (!list.ok()) return;  // unsure what landed: leave everything for orphan removal
    Result<std::vector<ManifestFile>> manifests = ReadManifestList(*list, committed_list);
    if (!manifests.ok()) return;
    for (const ManifestFile& manifest : *manifests) keep.insert(manifest.manifest_path);
  }
  for (const std::string& location : s.written) {
    if (!keep.count(location)) (void)s.io.Delete(location);
  }
}

}  // namespace serac::iceberg
