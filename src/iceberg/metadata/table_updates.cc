// Commit updates: the metadata changes a client asks for, applied in order the way the reference
// builder does (id reuse for identical schemas/specs/orders, "-1 = added in this commit", row
// lineage, logs). Stale client state is kConflict (409); malformed or forbidden changes are
// kInvalidArgument (400).
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "common/random.h"
#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/metadata/metadata_limits_internal.h"
#include "iceberg/schema/binding_internal.h"

namespace serac::iceberg {
namespace {

Status BadRequest(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }
// The rules Java's TableMetadata.Builder checks with ValidationException (its other checks, and its
// parsers, throw IllegalArgumentException: BadRequest here).
Status Invalid(const std::string& message) { return Error(ErrorCode::kValidationFailed, message); }

// Partition fields compared without their field ids (a re-sent spec matches its stored twin).
Json FieldsWithout(const Json& fields, const char* key) {
  Json out = Json::array();
  for (Json field : fields) {
    field.erase(key);
    out.push_back(field);
  }
  return out;
}

std::string SpecContentKey(const Json& spec) { return FieldsWithout(spec.at("fields"), "field-id").dump(); }
std::string SortOrderContentKey(const Json& order) { return order.at("fields").dump(); }

template <typename Predicate>
bool EraseIf(std::vector<Json>* items, Predicate predicate) {
  const size_t before = items->size();
  items->erase(std::remove_if(items->begin(), items->end(), predicate), items->end());
  return items->size() != before;
}

// Replaces the entry with the same id, or appends; returns whether anything changed.
bool Upsert(std::vector<Json>* items, const char* id_key, const Json& entry) {
  for (Json& item : *items) {
    if (item.at(id_key) == entry.at(id_key)) {
      if (item == entry) return false;
      item = entry;
      return true;
    }
  }
  items->push_back(entry);
  return true;
}

class TableBuilder {
 public:
  TableBuilder(TableModel base, bool is_create, const CommitOptions& options)
      : metadata_(std::move(base)),
        base_last_updated_ms_(metadata_.last_updated_ms),
        is_create_(is_create),
        options_(options) {}

  Status Apply(const TableUpdate& update) {
    return std::visit([this](const auto& one) { return Do(one); }, update);
  }
  Result<TableCommitOutcome> Finish();

 private:
  Status Do(const AssignUuid& update);
  Status Do(const UpgradeFormatVersion& update) { return UpgradeTo(update.format_version); }
  Status UpgradeTo(int64_t version);
  Status Do(const AddSchema& update);
  Status Do(const SetCurrentSchema& update);
  Status Do(const AddPartitionSpec& update);
  Status Do(const SetDefaultSpec& update);
  Status Do(const AddSortOrder& update);
  Status Do(const SetDefaultSortOrder& update);
  Status Do(const AddSnapshot& update);
  Status CheckRowLineage(const Json& snapshot);
  Status Do(const SetSnapshotRef& update);
  Status Do(const RemoveSnapshots& update);
  void RemoveRef(const std::string& name);
  Status Do(const RemoveSnapshotRef& update);
  Status Do(const SetLocation& update);
  Status Do(const SetProperties& update);
  Status Do(const RemoveProperties& update);
  Status Do(const SetStatistics& update);
  Status Do(const RemoveStatistics& update) {
    return RemoveStatisticsOf(update.snapshot_id, &metadata_.statistics);
  }
  Status Do(const SetPartitionStatistics& update);
  Status Do(const RemovePartitionStatistics& update) {
    return RemoveStatisticsOf(update.snapshot_id, &metadata_.partition_statistics);
  }
  Status RemoveStatisticsOf(int64_t snapshot_id, std::vector<Json>* list);
  Status Do(const RemovePartitionSpecs& update);
  Status Do(const RemoveSchemas& update);
  Status Do(const AddEncryptionKey& update);
  Status Do(const RemoveEncryptionKey& update);
  Status Do(const EnableRowLineage&) { return Status::Ok(); }  // v3 always has row lineage
  Result<int32_t> ResolveLastAdded(int32_t id, const std::optional<int32_t>& last_added, const char* what);
  Status CleanSnapshotLog();
  void AppendMetadataLog();
  Status CheckTimestamps() const;
  Status CheckDefaultsBind() const;

  TableModel metadata_;
  const int64_t base_last_updated_ms_;
  const bool is_create_;
  const CommitOptions& options_;
  bool changed_ = false;
  std::optional<int32_t> last_added_schema_id_;
  std::optional<int32_t> last_added_spec_id_;
  std::optional<int32_t> last_added_order_id_;
  // Ids this commit added: "-1 = the last added" names only these (the reference's rule).
  std::set<int32_t> added_schema_ids_;
  std::set<int32_t> added_spec_ids_;
  std::set<int32_t> added_order_ids_;
  std::set<int64_t> added_snapshot_ids_;
  // Stored schemas, specs and sort orders by content (the reference's loops over all of them).
  ContentIds schema_ids_{"schema-id", SchemaContentKey, 0, /*last_wins=*/true};
  ContentIds spec_ids_{"spec-id", SpecContentKey, 0, /*last_wins=*/false};
  ContentIds order_ids_{"order-id", SortOrderContentKey, kFirstSortOrderId, /*last_wins=*/false};
  std::vector<int64_t> main_snapshots_set_;  // main branch heads set by this commit, in order
  bool removed_snapshots_ = false;           // this commit removed at least one snapshot
};

Status TableBuilder::Do(const AssignUuid& update) {
  const std::string& uuid = update.uuid;
  if (uuid.empty()) return BadRequest("uuid must not be empty");
  if (uuid == metadata_.table_uuid) return Status::Ok();
  metadata_.table_uuid = uuid;
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::UpgradeTo(int64_t version) {
  if (version > kTableFormatVersionMax) {
    return BadRequest("cannot upgrade table to unsupported format version v" + std::to_string(version));
  }
  if (version < metadata_.format_version) {
    return BadRequest("cannot downgrade v" + std::to_string(metadata_.format_version) + " table to v" +
                      std::to_string(version));
  }
  if (version == metadata_.format_version) return Status::Ok();
  if (metadata_.format_version < kRowLineageFormatVersion && version >= kRowLineageFormatVersion) {
    metadata_.next_row_id = 0;  // existing snapshots keep a null first-row-id
  }
  metadata_.format_version = static_cast<int>(version);
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const AddSchema& update) {
  const Json* schema = update.schema.get();
  SERAC_RETURN_IF_ERROR(ValidateSchema(*schema));
  SERAC_RETURN_IF_ERROR(CheckSchemaFieldCount(*schema));
  SERAC_RETURN_IF_ERROR(CheckSchemaCompatibleWithFormat(*schema, metadata_.format_version));
  // The reference ignores the request's last-column-id: ids are never reused, so the table's
  // last column id is the larger of its own and the new schema's highest.
  const int32_t new_last_column_id = std::max<int32_t>(metadata_.last_column_id, HighestFieldId(*schema));
  std::optional<int32_t> existing_id = schema_ids_.Find(metadata_.schemas, *schema);
  if (existing_id && new_last_column_id == metadata_.last_column_id) {
    // An identical schema: nothing changes, and "-1" names it only if this commit added it and
    // added some schema before (the reference's isNewSchema).
    const bool added_here = last_added_schema_id_ && added_schema_ids_.count(*existing_id) != 0;
    last_added_schema_id_ = added_here ? existing_id : std::nullopt;
    return Status::Ok();
  }
  metadata_.last_column_id = new_last_column_id;
  int32_t schema_id = existing_id.value_or(schema_ids_.NextId(metadata_.schemas));
  if (!existing_id) {
    Json stored = *schema;
    stored["schema-id"] = schema_id;
    metadata_.schemas.push_back(stored);
    schema_ids_.Added(metadata_.schemas, metadata_.schemas.back());
    added_schema_ids_.insert(schema_id);
  }
  last_added_schema_id_ = schema_id;
  changed_ = true;
  return Status::Ok();
}

Result<int32_t> TableBuilder::ResolveLastAdded(int32_t id, const std::optional<int32_t>& last_added,
                                               const char* what) {
  if (id != kLastAdded) return id;
  if (!last_added) return Invalid(std::string("cannot set last added ") + what + ": none was added");
  return *last_added;
}

Status TableBuilder::Do(const SetCurrentSchema& update) {
  SERAC_ASSIGN_OR_RETURN(int32_t id, ResolveLastAdded(update.schema_id, last_added_schema_id_, "schema"));
  if (id == metadata_.current_schema_id) return Status::Ok();
  if (metadata_.FindSchema(id) == nullptr)
    return BadRequest("cannot set current schema to unknown schema " + std::to_string(id));
  metadata_.current_schema_id = id;
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const AddPartitionSpec& update) {
  const Json* requested = update.spec.get();
  SERAC_RETURN_IF_ERROR(ValidatePartitionSpecFields(*requested));
  Json spec = *requested;
  int32_t next_field_id = metadata_.last_partition_id + 1;
  int32_t position = 0;
  for (Json& field : spec["fields"]) {
    if (!field.contains("field-id") || field["field-id"].is_null()) field["field-id"] = next_field_id++;
    if (metadata_.format_version == 1 &&
        field["field-id"].get<int32_t>() != kPartitionFieldIdStart + position) {
      return Invalid("v1 partition specs need sequential field ids from 1000");
    }
    ++position;
  }
  if (std::optional<int32_t> existing_id = spec_ids_.Find(metadata_.partition_specs, spec)) {
    // "-1" names the reused spec only while the last added one is from this commit (the
    // reference's isNewSpec, which looks at the last added id, not at this one).
    const bool added_here = last_added_spec_id_ && added_spec_ids_.count(*last_added_spec_id_) != 0;
    last_added_spec_id_ = added_here ? existing_id : std::nullopt;
    return Status::Ok();
  }
  if (const Json* schema = metadata_.FindSchema(metadata_.current_schema_id); schema != nullptr) {
    SERAC_RETURN_IF_ERROR(CheckSpecCompatible(spec, *schema));
    SERAC_RETURN_IF_ERROR(CheckSpecFieldNames(spec, *schema));
  }
  const int32_t spec_id = spec_ids_.NextId(metadata_.partition_specs);
  spec["spec-id"] = spec_id;
  for (const Json& field : spec["fields"]) {
    metadata_.last_partition_id = std::max(metadata_.last_partition_id, field["field-id"].get<int32_t>());
  }
  metadata_.partition_specs.push_back(spec);
  spec_ids_.Added(metadata_.partition_specs, metadata_.partition_specs.back());
  added_spec_ids_.insert(spec_id);
  last_added_spec_id_ = spec_id;
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const SetDefaultSpec& update) {
  SERAC_ASSIGN_OR_RETURN(int32_t id, ResolveLastAdded(update.spec_id, last_added_spec_id_, "partition spec"));
  if (id == metadata_.default_spec_id && metadata_.FindSpec(id) != nullptr) return Status::Ok();
  if (metadata_.FindSpec(id) == nullptr)
    return BadRequest("cannot set default to unknown spec " + std::to_string(id));
  metadata_.default_spec_id = id;
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const AddSortOrder& update) {
  const Json* requested = update.sort_order.get();
  SERAC_RETURN_IF_ERROR(ValidateSortOrder(*requested));
  Json order = *requested;
  const Json& fields = order["fields"];
  std::optional<int32_t> order_id;
  if (fields.empty()) order_id = kUnsortedOrderId;
  if (!order_id) order_id = order_ids_.Find(metadata_.sort_orders, order);
  if (order_id && metadata_.FindSortOrder(*order_id) != nullptr) {
    // As for specs: the reference's isNewOrder looks at the last added id.
    const bool added_here = last_added_order_id_ && added_order_ids_.count(*last_added_order_id_) != 0;
    last_added_order_id_ = added_here ? order_id : std::nullopt;
    return Status::Ok();
  }
  if (const Json* schema = metadata_.FindSchema(metadata_.current_schema_id); schema != nullptr) {
    SERAC_RETURN_IF_ERROR(CheckSortOrderCompatible(order, *schema));
  }
  order["order-id"] = order_id.value_or(order_ids_.NextId(metadata_.sort_orders));
  metadata_.sort_orders.push_back(order);
  order_ids_.Added(metadata_.sort_orders, metadata_.sort_orders.back());
  last_added_order_id_ = order["order-id"].get<int32_t>();
  added_order_ids_.insert(*last_added_order_id_);
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const SetDefaultSortOrder& update) {
  SERAC_ASSIGN_OR_RETURN(int32_t id,
                         ResolveLastAdded(update.sort_order_id, last_added_order_id_, "sort order"));
  if (metadata_.FindSortOrder(id) == nullptr) {
    return BadRequest("cannot set default to unknown sort order " + std::to_string(id));
  }
  if (id == metadata_.default_sort_order_id) return Status::Ok();
  metadata_.default_sort_order_id = id;
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::CheckRowLineage(const Json& snapshot) {
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> first_row_id, OptionalInt(snapshot, "first-row-id"));
  if (!first_row_id) return Invalid("cannot add a snapshot: first-row-id is null");
  if (*first_row_id < metadata_.next_row_id) {
    return Error(ErrorCode::kConflict, "cannot add a snapshot: first-row-id is behind table next-row-id: " +
                                           std::to_string(*first_row_id) + " < " +
                                           std::to_string(metadata_.next_row_id));
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> added_rows, OptionalInt(snapshot, "added-rows"));
  if (!added_rows) return BadRequest("cannot add a snapshot: added-rows is null");
  metadata_.next_row_id += *added_rows;
  return Status::Ok();
}

Status TableBuilder::Do(const AddSnapshot& update) {
  const Json* snapshot = update.snapshot.get();
  SERAC_RETURN_IF_ERROR(ValidateAddedSnapshot(*snapshot, metadata_.format_version));
  if (metadata_.schemas.empty()) return Invalid("attempting to add a snapshot before a schema is added");
  if (metadata_.partition_specs.empty())
    return Invalid("attempting to add a snapshot before a spec is added");
  if (metadata_.sort_orders.empty())
    return Invalid("attempting to add a snapshot before a sort order is added");
  const int64_t snapshot_id = snapshot->at("snapshot-id").get<int64_t>();
  if (metadata_.FindSnapshot(snapshot_id) != nullptr) {
    return Invalid("snapshot already exists for id: " + std::to_string(snapshot_id));
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> schema_id, OptionalInt(*snapshot, "schema-id"));
  if (schema_id && metadata_.FindSchema(static_cast<int32_t>(*schema_id)) == nullptr) {
    return BadRequest("snapshot names unknown schema " + std::to_string(*schema_id));
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> sequence, OptionalInt(*snapshot, "sequence-number"));
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> parent, OptionalInt(*snapshot, "parent-snapshot-id"));
  if (metadata_.format_version >= 2) {
    if (!sequence) return BadRequest("snapshot without sequence-number in a v2+ table");
    // The reference exempts snapshots without a parent (a replaced table's new history).
    if (parent && *sequence <= metadata_.last_sequence_number) {
      return Error(ErrorCode::kConflict, "cannot add snapshot with sequence number " +
                                             std::to_string(*sequence) + " older than last sequence number " +
                                             std::to_string(metadata_.last_sequence_number));
    }
  }
  if (metadata_.format_version >= kRowLineageFormatVersion) SERAC_RETURN_IF_ERROR(CheckRowLineage(*snapshot));
  metadata_.last_sequence_number = std::max(metadata_.last_sequence_number, sequence.value_or(0));
  metadata_.snapshots.push_back(StoredSnapshot::Make(*snapshot));
  added_snapshot_ids_.insert(snapshot_id);
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const SetSnapshotRef& update) {
  const std::string& name = update.ref_name;
  Json ref = {{"snapshot-id", update.ref.snapshot_id},
              {"type", update.ref.type == RefType::kTag ? "tag" : "branch"}};
  if (update.ref.min_snapshots_to_keep) ref["min-snapshots-to-keep"] = *update.ref.min_snapshots_to_keep;
  if (update.ref.max_snapshot_age_ms) ref["max-snapshot-age-ms"] = *update.ref.max_snapshot_age_ms;
  if (update.ref.max_ref_age_ms) ref["max-ref-age-ms"] = *update.ref.max_ref_age_ms;
  auto existing = metadata_.refs.find(name);
  if (existing != metadata_.refs.end() && existing->second == ref) return Status::Ok();
  const int64_t snapshot_id = ref["snapshot-id"].get<int64_t>();
  const Json* snapshot = metadata_.FindSnapshot(snapshot_id);
  if (snapshot == nullptr)
    return Invalid("Cannot set " + name + " to unknown snapshot: " + std::to_string(snapshot_id));
  if (name == kMainBranch && ref["type"] != "branch")
    return Invalid("Cannot set main to a tag, it must be a branch");
  if (name == kMainBranch) {
    metadata_.current_snapshot_id = snapshot_id;
    // The reference logs a snapshot this commit added at its own time, and a move of main to an
    // older snapshot (a rollback) at the time of the change.
    const int64_t time_of_change = added_snapshot_ids_.count(snapshot_id) != 0
                                       ? snapshot->at("timestamp-ms").get<int64_t>()
                                       : options_.now_ms;
    metadata_.snapshot_log.push_back({time_of_change, snapshot_id});
    main_snapshots_set_.push_back(snapshot_id);
  }
  metadata_.refs[name] = ref;
  changed_ = true;
  return Status::Ok();
}

void TableBuilder::RemoveRef(const std::string& name) {
  if (name == kMainBranch) metadata_.current_snapshot_id = -1;
  if (metadata_.refs.erase(name) != 0) changed_ = true;
}

Status TableBuilder::Do(const RemoveSnapshots& update) {
  const std::set<int64_t> doomed(update.snapshot_ids.begin(), update.snapshot_ids.end());
  auto in_doomed = [&](const Json& item) { return doomed.count(item.at("snapshot-id").get<int64_t>()) != 0; };
  const size_t snapshots_before = metadata_.snapshots.size();
  std::erase_if(metadata_.snapshots,
                [&](const StoredSnapshotPtr& snapshot) { return doomed.count(snapshot->id()) != 0; });
  if (metadata_.snapshots.size() == snapshots_before) return Status::Ok();
  changed_ = true;
  removed_snapshots_ = true;
  EraseIf(&metadata_.statistics, in_doomed);
  EraseIf(&metadata_.partition_statistics, in_doomed);
  std::vector<std::string> dangling;
  for (const auto& [name, ref] : metadata_.refs) {
    if (metadata_.FindSnapshot(ref.at("snapshot-id").get<int64_t>()) == nullptr) dangling.push_back(name);
  }
  for (const std::string& name : dangling) RemoveRef(name);
  return Status::Ok();
}

Status TableBuilder::Do(const RemoveSnapshotRef& update) {
  if (metadata_.refs.count(update.ref_name) != 0) RemoveRef(update.ref_name);
  return Status::Ok();
}

Status TableBuilder::Do(const SetLocation& update) {
  const std::string& location = update.location;
  if (location.empty()) return BadRequest("location must not be empty");
  if (location == metadata_.location) return Status::Ok();
  metadata_.location = location;
  changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const SetProperties& update) {
  for (const auto& [key, value] : update.updates) {
    if (key == kFormatVersionProperty) {
      // Reserved: selects the format version and is never stored.
      if (value.size() != 1 || value[0] < '0' || value[0] > '9')
        return BadRequest("invalid format-version " + value);
      SERAC_RETURN_IF_ERROR(UpgradeTo(value[0] - '0'));
      continue;
    }
    auto [it, inserted] = metadata_.properties.try_emplace(key, value);
    if (!inserted && it->second == value) continue;
    it->second = value;
    changed_ = true;
  }
  return Status::Ok();
}

Status TableBuilder::Do(const RemoveProperties& update) {
  for (const std::string& key : update.removals) {
    if (metadata_.properties.erase(key) != 0) changed_ = true;
  }
  return Status::Ok();
}

Status TableBuilder::Do(const SetStatistics& update) {
  SERAC_RETURN_IF_ERROR(ValidateStatisticsFile(*update.statistics));
  if (Upsert(&metadata_.statistics, "snapshot-id", *update.statistics)) changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const SetPartitionStatistics& update) {
  SERAC_RETURN_IF_ERROR(ValidatePartitionStatisticsFile(*update.partition_statistics));
  if (Upsert(&metadata_.partition_statistics, "snapshot-id", *update.partition_statistics)) changed_ = true;
  return Status::Ok();
}

Status TableBuilder::RemoveStatisticsOf(int64_t snapshot_id, std::vector<Json>* list) {
  if (EraseIf(list, [&](const Json& item) { return item.at("snapshot-id").get<int64_t>() == snapshot_id; })) {
    changed_ = true;
  }
  return Status::Ok();
}

Status TableBuilder::Do(const RemovePartitionSpecs& update) {
  const std::set<int64_t> doomed(update.spec_ids.begin(), update.spec_ids.end());
  if (doomed.count(metadata_.default_spec_id) != 0)
    return BadRequest("cannot remove the default partition spec");
  EraseIf(&metadata_.partition_specs,
          [&](const Json& spec) { return doomed.count(spec.at("spec-id").get<int64_t>()) != 0; });
  spec_ids_.Forget();
  if (!doomed.empty()) changed_ = true;  // the reference writes a version even when none was there
  return Status::Ok();
}

Status TableBuilder::Do(const RemoveSchemas& update) {
  const std::set<int64_t> doomed(update.schema_ids.begin(), update.schema_ids.end());
  if (doomed.count(metadata_.current_schema_id) != 0) return BadRequest("cannot remove the current schema");
  EraseIf(&metadata_.schemas,
          [&](const Json& schema) { return doomed.count(schema.at("schema-id").get<int64_t>()) != 0; });
  schema_ids_.Forget();
  if (!doomed.empty()) changed_ = true;  // the reference writes a version even when none was there
  return Status::Ok();
}

Status TableBuilder::Do(const AddEncryptionKey& update) {
  const Json* key = update.encryption_key.get();
  SERAC_RETURN_IF_ERROR(ValidateEncryptionKey(*key));
  // The specification's EncryptedKey: encrypted-by-id is a string when present, never null.
  SERAC_RETURN_IF_ERROR(CheckStringOrAbsent(*key, "encrypted-by-id"));
  if (Upsert(&metadata_.encryption_keys, "key-id", *key)) changed_ = true;
  return Status::Ok();
}

Status TableBuilder::Do(const RemoveEncryptionKey& update) {
  if (EraseIf(&metadata_.encryption_keys,
              [&](const Json& key) { return key.at("key-id") == update.key_id; })) {
    changed_ = true;
  }
  return Status::Ok();
}

// The reference builder's rule (TableMetadata.Builder#updateSnapshotLog). The log changes only in
// a commit that removed snapshots or superseded a main head it had added itself (a transaction's
// intermediate snapshot): the intermediate head's entry goes, the history before it stays; an
// entry whose snapshot is gone goes too, and when this commit removed snapshots so does the
// history before it, which would otherwise show a later snapshot current while the removed one
// was. The newest entry must then name the current snapshot.
Status TableBuilder::CleanSnapshotLog() {
  std::set<int64_t> intermediate;
  for (int64_t id : main_snapshots_set_) {
    if (id != metadata_.current_snapshot_id && added_snapshot_ids_.count(id) != 0) intermediate.insert(id);
  }
  if (intermediate.empty() && !removed_snapshots_) return Status::Ok();
  // Which log entries name a snapshot the table still has. Both lists grow in commit order, so
  // the log is nearly always a subsequence of the snapshots and one walk along both answers it;
  // otherwise one sorted list of the ids does. A table with thousands of snapshots would spend
  // most of every commit here with a search through the snapshots per log entry.
  const std::vector<SnapshotLogEntry>& log = metadata_.snapshot_log;
  std::vector<bool> exists(log.size(), true);
  size_t next_snapshot = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    while (next_snapshot < metadata_.snapshots.size() &&
           metadata_.snapshots[next_snapshot]->id() != log[i].snapshot_id) {
      ++next_snapshot;
    }
    if (next_snapshot == metadata_.snapshots.size()) {
      std::vector<int64_t> existing;
      existing.reserve(metadata_.snapshots.size());
      for (const StoredSnapshotPtr& snapshot : metadata_.snapshots) existing.push_back(snapshot->id());
      std::sort(existing.begin(), existing.end());
      for (size_t j = i; j < log.size(); ++j) {
        exists[j] = std::binary_search(existing.begin(), existing.end(), log[j].snapshot_id);
      }
      break;
    }
    ++next_snapshot;
  }
  std::vector<SnapshotLogEntry> kept;
  kept.reserve(log.size());
  for (size_t i = 0; i < log.size(); ++i) {
    const SnapshotLogEntry& entry = log[i];
    if (exists[i]) {
      if (intermediate.count(entry.snapshot_id) == 0) kept.push_back(entry);
    } else if (removed_snapshots_) {
      kept.clear();
    }
  }
  if (metadata_.FindSnapshot(metadata_.current_snapshot_id) != nullptr &&
      (kept.empty() || kept.back().snapshot_id != metadata_.current_snapshot_id)) {
    return Invalid("Cannot set invalid snapshot log: latest entry is not the current snapshot");
  }
  metadata_.snapshot_log = std::move(kept);
  return Status::Ok();
}

void TableBuilder::AppendMetadataLog() {
  if (is_create_ || options_.previous_metadata_location.empty()) return;
  metadata_.metadata_log.push_back({base_last_updated_ms_, options_.previous_metadata_location});
  int64_t keep = kPreviousVersionsMaxDefault;
  auto it = metadata_.properties.find(kPreviousVersionsMaxProperty);
  if (it != metadata_.properties.end()) {
    try {
      keep = std::stoll(it->second);
    } catch (const std::exception&) {
      keep = kPreviousVersionsMaxDefault;  // an unreadable property falls back to the default
    }
  }
  keep = std::max<int64_t>(keep, 1);
  if (static_cast<int64_t>(metadata_.metadata_log.size()) > keep) {
    metadata_.metadata_log.erase(metadata_.metadata_log.begin(),
                                 metadata_.metadata_log.end() - static_cast<std::ptrdiff_t>(keep));
  }
}

// The reference's checks of every metadata it builds: clocks of different writers may differ by a
// minute, no more. A commit that breaks them would leave a file Java engines refuse to load.
Status TableBuilder::CheckTimestamps() const {
  constexpr int64_t kClockToleranceMs = 60 * 1000;
  const std::vector<SnapshotLogEntry>& log = metadata_.snapshot_log;
  for (size_t i = 1; i < log.size(); ++i) {
    if (log[i].timestamp_ms - log[i - 1].timestamp_ms < -kClockToleranceMs) {
      return BadRequest("[BUG] Expected sorted snapshot log entries.");
    }
  }
  if (!log.empty() && metadata_.last_updated_ms - log.back().timestamp_ms < -kClockToleranceMs) {
    return BadRequest("Invalid update timestamp " + std::to_string(metadata_.last_updated_ms) +
                      ": before last snapshot log entry at " + std::to_string(log.back().timestamp_ms));
  }
  const auto& previous = metadata_.metadata_log;
  for (size_t i = 1; i < previous.size(); ++i) {
    if (previous[i].timestamp_ms - previous[i - 1].timestamp_ms < -kClockToleranceMs) {
      return BadRequest("[BUG] Expected sorted previous metadata log entries.");
    }
  }
  if (!previous.empty() && metadata_.last_updated_ms - previous.back().timestamp_ms < -kClockToleranceMs) {
    return BadRequest("Invalid update timestamp " + std::to_string(metadata_.last_updated_ms) +
                      ": before the latest metadata log entry timestamp " +
                      std::to_string(previous.back().timestamp_ms));
  }
  return Status::Ok();
}

// The default spec and sort order must bind to the current schema after every commit (a new
// schema may not drop a column they use).
Status TableBuilder::CheckDefaultsBind() const {
  const Json* schema = metadata_.FindSchema(metadata_.current_schema_id);
  if (schema == nullptr) return Status::Ok();
  if (const Json* spec = metadata_.FindSpec(metadata_.default_spec_id); spec != nullptr) {
    SERAC_RETURN_IF_ERROR(CheckSpecCompatible(*spec, *schema));
  }
  if (const Json* order = metadata_.FindSortOrder(metadata_.default_sort_order_id); order != nullptr) {
    SERAC_RETURN_IF_ERROR(CheckSortOrderCompatible(*order, *schema));
  }
  return Status::Ok();
}

Result<TableCommitOutcome> TableBuilder::Finish() {
  if (is_create_) {
    if (metadata_.FindSchema(metadata_.current_schema_id) == nullptr) {
      return BadRequest("creating a table needs a current schema");
    }
    if (metadata_.partition_specs.empty()) {
      metadata_.partition_specs.push_back(Json{{"spec-id", 0}, {"fields", Json::array()}});
      metadata_.default_spec_id = 0;
    }
    if (metadata_.sort_orders.empty()) {
      metadata_.sort_orders.push_back(Json{{"order-id", kUnsortedOrderId}, {"fields", Json::array()}});
      metadata_.default_sort_order_id = kUnsortedOrderId;
    }
    if (metadata_.table_uuid.empty()) {
      metadata_.table_uuid = options_.new_table_uuid.empty() ? RandomUuid() : options_.new_table_uuid;
    }
    changed_ = true;
  }
  if (changed_) {
    SERAC_RETURN_IF_ERROR(CheckPropertyLimits(metadata_.properties));
    SERAC_RETURN_IF_ERROR(CheckDefaultsBind());
    SERAC_RETURN_IF_ERROR(CleanSnapshotLog());
    AppendMetadataLog();
    // The server's clock, never a snapshot's (the reference since 1.11): writers' clocks differ.
    metadata_.last_updated_ms = options_.now_ms;
    SERAC_RETURN_IF_ERROR(CheckTimestamps());
  }
  return TableCommitOutcome{std::move(metadata_), changed_};
}

// The reference builds a created table at the first requested format version, else the default.
int InitialFormatVersion(const std::vector<TableUpdate>& updates) {
  for (const TableUpdate& update : updates) {
    if (const auto* upgrade = std::get_if<UpgradeFormatVersion>(&update)) {
      return static_cast<int>(
          std::clamp<int64_t>(upgrade->format_version, kTableFormatVersionMin, kTableFormatVersionMax));
    }
  }
  return kTableFormatVersionDefault;
}

}  // namespace

Result<TableCommitOutcome> ApplyTableCommit(const TableModel* current, const TableChanges& changes,
                                            const CommitOptions& options) {
  try {
    SERAC_RETURN_IF_ERROR(CheckCommitSize(changes.requirements.size(), changes.updates.size()));
    SERAC_RETURN_IF_ERROR(CheckTableRequirements(current, changes.requirements));
    TableModel base;
    if (current != nullptr) {
      base = *current;
    } else {
      base.format_version = InitialFormatVersion(changes.updates);
    }
    TableBuilder builder(std::move(base), current == nullptr, options);
    for (const TableUpdate& update : changes.updates) SERAC_RETURN_IF_ERROR(builder.Apply(update));
    return builder.Finish();
  } catch (const Json::exception& e) {
    // Entry checks should make this unreachable; never let a client's JSON take the server down.
    return BadRequest(std::string("malformed commit: ") + e.what());
  }
}

Result<TableCommitResult> CommitTable(const TableMetadata* current, const TableChanges& changes,
                                      const CommitOptions& options) {
  SERAC_ASSIGN_OR_RETURN(
      TableCommitOutcome outcome,
      ApplyTableCommit(current != nullptr ? &current->model() : nullptr, changes, options));
  if (!outcome.changed && current != nullptr) return TableCommitResult{*current, false};
  return TableCommitResult{TableMetadata(std::make_shared<const TableModel>(std::move(outcome.metadata))),
                           outcome.changed};
}

}  // namespace serac::iceberg
