// Requirements and updates read from the REST protocol's JSON (the catalog's route) and written
// to it (the REST client), with the reference parsers' rules and wording: a malformed member is
// kInvalidArgument naming it, an unknown kind kNotImplemented.
#include <limits>
#include <string>
#include <utility>

#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/metadata/metadata_limits_internal.h"

namespace serac::iceberg {
namespace {

Status BadRequest(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

// The member moved out of the request as a shared document.
Result<JsonDocument> TakeObject(Json& object, const char* key) {
  SERAC_ASSIGN_OR_RETURN(const Json* member, RequiredMember(object, key, Json::value_t::object));
  (void)member;
  return std::make_shared<const Json>(std::move(object[key]));
}

Result<std::vector<int64_t>> IntList(const Json& update, const char* key) {
  SERAC_ASSIGN_OR_RETURN(const Json* list, RequiredMember(update, key, Json::value_t::array));
  std::vector<int64_t> out;
  out.reserve(list->size());
  for (const Json& item : *list) {
    if (!item.is_number_integer()) return BadRequest(std::string(key) + " must hold integers");
    out.push_back(item.get<int64_t>());
  }
  return out;
}

const char* RefTypeName(RefType type) { return type == RefType::kTag ? "tag" : "branch"; }

// set-snapshot-ref's members that make the ref, checked as the reference checks a ref.
Result<SnapshotRef> ReadRef(const Json& update) {
  Json ref = Json::object();
  for (const char* key :
       {"snapshot-id", "type", "max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"}) {
    auto it = update.find(key);
    if (it != update.end() && !it->is_null()) ref[key] = *it;
  }
  SERAC_RETURN_IF_ERROR(ValidateRef(ref));
  SnapshotRef out;
  out.snapshot_id = ref["snapshot-id"].get<int64_t>();
  out.type = ref["type"] == "tag" ? RefType::kTag : RefType::kBranch;
  if (ref.contains("min-snapshots-to-keep")) {
    SERAC_ASSIGN_OR_RETURN(out.min_snapshots_to_keep, OptionalInt32(ref, "min-snapshots-to-keep"));
  }
  if (ref.contains("max-snapshot-age-ms"))
    out.max_snapshot_age_ms = ref["max-snapshot-age-ms"].get<int64_t>();
  if (ref.contains("max-ref-age-ms")) out.max_ref_age_ms = ref["max-ref-age-ms"].get<int64_t>();
  return out;
}

}  // namespace

Result<TableRequirement> ParseTableRequirement(Json& requirement) {
  if (!requirement.is_object()) return BadRequest("requirement must be an object");
  SERAC_ASSIGN_OR_RETURN(std::string type, RequiredString(requirement, "type"));
  if (type == "assert-create") return TableRequirement(AssertCreate{});
  if (type == "assert-table-uuid") {
    SERAC_ASSIGN_OR_RETURN(std::string uuid, RequiredString(requirement, "uuid"));
    return TableRequirement(AssertTableUuid{std::move(uuid)});
  }
  if (type == "assert-ref-snapshot-id") {
    SERAC_ASSIGN_OR_RETURN(std::string ref, RequiredString(requirement, "ref"));
    SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> snapshot_id, OptionalInt(requirement, "snapshot-id"));
    return TableRequirement(AssertRefSnapshotId{std::move(ref), snapshot_id});
  }
  if (type == "assert-last-assigned-field-id") {
    SERAC_ASSIGN_OR_RETURN(int64_t id, RequiredInt(requirement, "last-assigned-field-id"));
    return TableRequirement(AssertLastAssignedFieldId{id});
  }
  if (type == "assert-current-schema-id") {
    SERAC_ASSIGN_OR_RETURN(int64_t id, RequiredInt(requirement, "current-schema-id"));
    return TableRequirement(AssertCurrentSchemaId{id});
  }
  if (type == "assert-last-assigned-partition-id") {
    SERAC_ASSIGN_OR_RETURN(int64_t id, RequiredInt(requirement, "last-assigned-partition-id"));
    return TableRequirement(AssertLastAssignedPartitionId{id});
  }
  if (type == "assert-default-spec-id") {
    SERAC_ASSIGN_OR_RETURN(int64_t id, RequiredInt(requirement, "default-spec-id"));
    return TableRequirement(AssertDefaultSpecId{id});
  }
  if (type == "assert-default-sort-order-id") {
    SERAC_ASSIGN_OR_RETURN(int64_t id, RequiredInt(requirement, "default-sort-order-id"));
    return TableRequirement(AssertDefaultSortOrderId{id});
  }
  return Error(ErrorCode::kNotImplemented, "unknown requirement type: " + type);
}

Result<TableUpdate> ParseTableUpdate(Json& update) {
  if (!update.is_object()) return BadRequest("update must be an object");
  SERAC_ASSIGN_OR_RETURN(std::string action, RequiredString(update, "action"));
  if (action == "assign-uuid") {
    SERAC_ASSIGN_OR_RETURN(std::string uuid, RequiredString(update, "uuid"));
    return TableUpdate(AssignUuid{std::move(uuid)});
  }
  if (action == "upgrade-format-version") {
    SERAC_ASSIGN_OR_RETURN(int64_t version, RequiredInt(update, "format-version"));
    return TableUpdate(UpgradeFormatVersion{version});
  }
  if (action == "add-schema") {
    AddSchema out;
    // Ignored when applied (as the reference ignores it), so only an integer is kept.
    auto last = update.find("last-column-id");
    if (last != update.end() && last->is_number_integer()) out.last_column_id = last->get<int64_t>();
    SERAC_ASSIGN_OR_RETURN(out.schema, TakeObject(update, "schema"));
    return TableUpdate(std::move(out));
  }
  if (action == "set-current-schema") {
    SERAC_ASSIGN_OR_RETURN(int32_t id, RequiredInt32(update, "schema-id"));
    return TableUpdate(SetCurrentSchema{id});
  }
  if (action == "add-spec") {
    SERAC_ASSIGN_OR_RETURN(JsonDocument spec, TakeObject(update, "spec"));
    return TableUpdate(AddPartitionSpec{std::move(spec)});
  }
  if (action == "set-default-spec") {
    SERAC_ASSIGN_OR_RETURN(int32_t id, RequiredInt32(update, "spec-id"));
    return TableUpdate(SetDefaultSpec{id});
  }
  if (action == "add-sort-order") {
    SERAC_ASSIGN_OR_RETURN(JsonDocument order, TakeObject(update, "sort-order"));
    return TableUpdate(AddSortOrder{std::move(order)});
  }
  if (action == "set-default-sort-order") {
    SERAC_ASSIGN_OR_RETURN(int32_t id, RequiredInt32(update, "sort-order-id"));
    return TableUpdate(SetDefaultSortOrder{id});
  }
  if (action == "add-snapshot") {
    SERAC_ASSIGN_OR_RETURN(JsonDocument snapshot, TakeObject(update, "snapshot"));
    return TableUpdate(AddSnapshot{std::move(snapshot)});
  }
  if (action == "set-snapshot-ref") {
    SERAC_ASSIGN_OR_RETURN(std::string name, RequiredString(update, "ref-name"));
    if (name.empty()) return BadRequest("ref-name must not be empty");
    SERAC_ASSIGN_OR_RETURN(SnapshotRef ref, ReadRef(update));
    return TableUpdate(SetSnapshotRef{std::move(name), ref});
  }
  if (action == "remove-snapshots") {
    SERAC_ASSIGN_OR_RETURN(std::vector<int64_t> ids, IntList(update, "snapshot-ids"));
    return TableUpdate(RemoveSnapshots{std::move(ids)});
  }
  if (action == "remove-snapshot-ref") {
    SERAC_ASSIGN_OR_RETURN(std::string name, RequiredString(update, "ref-name"));
    return TableUpdate(RemoveSnapshotRef{std::move(name)});
  }
  if (action == "set-location") {
    SERAC_ASSIGN_OR_RETURN(std::string location, RequiredString(update, "location"));
    return TableUpdate(SetLocation{std::move(location)});
  }
  if (action == "set-properties") {
    SERAC_ASSIGN_OR_RETURN(auto properties, PropertyUpdates(update));
    return TableUpdate(SetProperties{std::move(properties)});
  }
  if (action == "remove-properties") {
    SERAC_ASSIGN_OR_RETURN(std::vector<std::string> removals, PropertyRemovals(update));
    return TableUpdate(RemoveProperties{std::move(removals)});
  }
  if (action == "set-statistics") {
    SERAC_ASSIGN_OR_RETURN(JsonDocument statistics, TakeObject(update, "statistics"));
    return TableUpdate(SetStatistics{std::move(statistics)});
  }
  if (action == "remove-statistics") {
    SERAC_ASSIGN_OR_RETURN(int64_t snapshot_id, RequiredInt(update, "snapshot-id"));
    return TableUpdate(RemoveStatistics{snapshot_id});
  }
  if (action == "set-partition-statistics") {
    SERAC_ASSIGN_OR_RETURN(JsonDocument statistics, TakeObject(update, "partition-statistics"));
    return TableUpdate(SetPartitionStatistics{std::move(statistics)});
  }
  if (action == "remove-partition-statistics") {
    SERAC_ASSIGN_OR_RETURN(int64_t snapshot_id, RequiredInt(update, "snapshot-id"));
    return TableUpdate(RemovePartitionStatistics{snapshot_id});
  }
  if (action == "remove-partition-specs") {
    SERAC_ASSIGN_OR_RETURN(std::vector<int64_t> ids, IntList(update, "spec-ids"));
    return TableUpdate(RemovePartitionSpecs{std::move(ids)});
  }
  if (action == "remove-schemas") {
    SERAC_ASSIGN_OR_RETURN(std::vector<int64_t> ids, IntList(update, "schema-ids"));
    return TableUpdate(RemoveSchemas{std::move(ids)});
  }
  if (action == "add-encryption-key") {
    SERAC_ASSIGN_OR_RETURN(JsonDocument key, TakeObject(update, "encryption-key"));
    return TableUpdate(AddEncryptionKey{std::move(key)});
  }
  if (action == "remove-encryption-key") {
    SERAC_ASSIGN_OR_RETURN(std::string key_id, RequiredString(update, "key-id"));
    return TableUpdate(RemoveEncryptionKey{std::move(key_id)});
  }
  if (action == "enable-row-lineage") return TableUpdate(EnableRowLineage{});
  return Error(ErrorCode::kNotImplemented, "unknown update action: " + action);
}

Json TableRequirementToJson(const TableRequirement& requirement) {
  struct Writer {
    Json operator()(const AssertCreate&) const { return {{"type", "assert-create"}}; }
    Json operator()(const AssertTableUuid& r) const {
      return {{"type", "assert-table-uuid"}, {"uuid", r.uuid}};
    }
    Json operator()(const AssertRefSnapshotId& r) const {
      return {{"type", "assert-ref-snapshot-id"},
              {"ref", r.ref},
              {"snapshot-id", r.snapshot_id ? Json(*r.snapshot_id) : Json(nullptr)}};
    }
    Json operator()(const AssertLastAssignedFieldId& r) const {
      return {{"type", "assert-last-assigned-field-id"},
              {"last-assigned-field-id", r.last_assigned_field_id}};
    }
    Json operator()(const AssertCurrentSchemaId& r) const {
      return {{"type", "assert-current-schema-id"}, {"current-schema-id", r.current_schema_id}};
    }
    Json operator()(const AssertLastAssignedPartitionId& r) const {
      return {{"type", "assert-last-assigned-partition-id"},
              {"last-assigned-partition-id", r.last_assigned_partition_id}};
    }
    Json operator()(const AssertDefaultSpecId& r) const {
      return {{"type", "assert-default-spec-id"}, {"default-spec-id", r.default_spec_id}};
    }
    Json operator()(const AssertDefaultSortOrderId& r) const {
      return {{"type", "assert-default-sort-order-id"}, {"default-sort-order-id", r.default_sort_order_id}};
    }
  };
  return std::visit(Writer{}, requirement);
}

Json TableUpdateToJson(const TableUpdate& update) {
  struct Writer {
    Json operator()(const AssignUuid& u) const { return {{"action", "assign-uuid"}, {"uuid", u.uuid}}; }
    Json operator()(const UpgradeFormatVersion& u) const {
      return {{"action", "upgrade-format-version"}, {"format-version", u.format_version}};
    }
    Json operator()(const AddSchema& u) const {
      Json out = {{"action", "add-schema"}, {"schema", *u.schema}};
      if (u.last_column_id) out["last-column-id"] = *u.last_column_id;
      return out;
    }
    Json operator()(const SetCurrentSchema& u) const {
      return {{"action", "set-current-schema"}, {"schema-id", u.schema_id}};
    }
    Json operator()(const AddPartitionSpec& u) const { return {{"action", "add-spec"}, {"spec", *u.spec}}; }
    Json operator()(const SetDefaultSpec& u) const {
      return {{"action", "set-default-spec"}, {"spec-id", u.spec_id}};
    }
    Json operator()(const AddSortOrder& u) const {
      return {{"action", "add-sort-order"}, {"sort-order", *u.sort_order}};
    }
    Json operator()(const SetDefaultSortOrder& u) const {
      return {{"action", "set-default-sort-order"}, {"sort-order-id", u.sort_order_id}};
    }
    Json operator()(const AddSnapshot& u) const {
      return {{"action", "add-snapshot"}, {"snapshot", *u.snapshot}};
    }
    Json operator()(const SetSnapshotRef& u) const {
      Json out = {{"action", "set-snapshot-ref"},
                  {"ref-name", u.ref_name},
                  {"type", RefTypeName(u.ref.type)},
                  {"snapshot-id", u.ref.snapshot_id}};
      if (u.ref.min_snapshots_to_keep) out["min-snapshots-to-keep"] = *u.ref.min_snapshots_to_keep;
      if (u.ref.max_snapshot_age_ms) out["max-snapshot-age-ms"] = *u.ref.max_snapshot_age_ms;
      if (u.ref.max_ref_age_ms) out["max-ref-age-ms"] = *u.ref.max_ref_age_ms;
      return out;
    }
    Json operator()(const RemoveSnapshots& u) const {
      return {{"action", "remove-snapshots"}, {"snapshot-ids", u.snapshot_ids}};
    }
    Json operator()(const RemoveSnapshotRef& u) const {
      return {{"action", "remove-snapshot-ref"}, {"ref-name", u.ref_name}};
    }
    Json operator()(const SetLocation& u) const {
      return {{"action", "set-location"}, {"location", u.location}};
    }
    Json operator()(const SetProperties& u) const {
      return {{"action", "set-properties"}, {"updates", u.updates}};
    }
    Json operator()(const RemoveProperties& u) const {
      return {{"action", "remove-properties"}, {"removals", u.removals}};
    }
    Json operator()(const SetStatistics& u) const {
      return {{"action", "set-statistics"}, {"statistics", *u.statistics}};
    }
    Json operator()(const RemoveStatistics& u) const {
      return {{"action", "remove-statistics"}, {"snapshot-id", u.snapshot_id}};
    }
    Json operator()(const SetPartitionStatistics& u) const {
      return {{"action", "set-partition-statistics"}, {"partition-statistics", *u.partition_statistics}};
    }
    Json operator()(const RemovePartitionStatistics& u) const {
      return {{"action", "remove-partition-statistics"}, {"snapshot-id", u.snapshot_id}};
    }
    Json operator()(const RemovePartitionSpecs& u) const {
      return {{"action", "remove-partition-specs"}, {"spec-ids", u.spec_ids}};
    }
    Json operator()(const RemoveSchemas& u) const {
      return {{"action", "remove-schemas"}, {"schema-ids", u.schema_ids}};
    }
    Json operator()(const AddEncryptionKey& u) const {
      return {{"action", "add-encryption-key"}, {"encryption-key", *u.encryption_key}};
    }
    Json operator()(const RemoveEncryptionKey& u) const {
      return {{"action", "remove-encryption-key"}, {"key-id", u.key_id}};
    }
    Json operator()(const EnableRowLineage&) const { return {{"action", "enable-row-lineage"}}; }
  };
  return std::visit(Writer{}, update);
}

AddSchema AddSchema::Of(const Schema& schema, int32_t last_column_id) {
  return AddSchema{std::make_shared<const Json>(SchemaToJsonTree(schema)), last_column_id};
}

AddSnapshot AddSnapshot::Of(const Snapshot& snapshot, int format_version) {
  Json out = Json::object();
  out["snapshot-id"] = snapshot.snapshot_id;
  if (snapshot.parent_snapshot_id) out["parent-snapshot-id"] = *snapshot.parent_snapshot_id;
  if (format_version >= 2) out["sequence-number"] = snapshot.sequence_number;
  out["timestamp-ms"] = snapshot.timestamp_ms;
  out["manifest-list"] = snapshot.manifest_list;
  out["summary"] = snapshot.summary;
  if (snapshot.schema_id) out["schema-id"] = *snapshot.schema_id;
  if (format_version >= 3) {
    if (snapshot.first_row_id) out["first-row-id"] = *snapshot.first_row_id;
    if (snapshot.added_rows) out["added-rows"] = *snapshot.added_rows;
  }
  return AddSnapshot{std::make_shared<const Json>(std::move(out))};
}

TableChanges SnapshotOnMain(const TableMetadata& base, const Snapshot& snapshot) {
  TableChanges changes;
  changes.requirements = {AssertTableUuid{base.table_uuid()},
                          AssertRefSnapshotId{kMainBranch, snapshot.parent_snapshot_id}};
  changes.updates = {AddSnapshot::Of(snapshot, base.format_version()),
                     SetSnapshotRef{kMainBranch, SnapshotRef{.snapshot_id = snapshot.snapshot_id}}};
  return changes;
}

bool TableChanges::asserts_create() const {
  for (const TableRequirement& requirement : requirements) {
    if (std::holds_alternative<AssertCreate>(requirement)) return true;
  }
  return false;
}

Result<TableChanges> TableChanges::FromJson(Json requirements, Json updates) {
  if (requirements.is_null()) requirements = Json::array();
  if (updates.is_null()) updates = Json::array();
  if (!requirements.is_array()) return BadRequest("requirements must be an array");
  if (!updates.is_array()) return BadRequest("updates must be an array");
  SERAC_RETURN_IF_ERROR(CheckCommitSize(requirements.size(), updates.size()));
  TableChanges changes;
  try {
    changes.requirements.reserve(requirements.size());
    for (Json& requirement : requirements) {
      SERAC_ASSIGN_OR_RETURN(TableRequirement parsed, ParseTableRequirement(requirement));
      changes.requirements.push_back(std::move(parsed));
    }
    changes.updates.reserve(updates.size());
    for (Json& update : updates) {
      SERAC_ASSIGN_OR_RETURN(TableUpdate parsed, ParseTableUpdate(update));
      changes.updates.push_back(std::move(parsed));
    }
  } catch (const Json::exception& e) {
    // The reads above check before they take; never let a client's JSON take the server down.
    return BadRequest(std::string("malformed commit: ") + e.what());
  }
  return changes;
}

Result<TableChanges> TableChanges::Parse(std::string_view requirements_json, std::string_view updates_json) {
  SERAC_ASSIGN_OR_RETURN(Json requirements, ParseJson(requirements_json));
  SERAC_ASSIGN_OR_RETURN(Json updates, ParseJson(updates_json));
  return FromJson(std::move(requirements), std::move(updates));
}

Status CheckTableRequirements(const TableModel* current, const Json& requirements) {
  SERAC_ASSIGN_OR_RETURN(TableChanges changes, TableChanges::FromJson(requirements, Json::array()));
  return CheckTableRequirements(current, changes.requirements);
}

Result<TableCommitOutcome> ApplyTableCommit(const TableModel* current, const Json& requirements,
                                            const Json& updates, const CommitOptions& options) {
  SERAC_ASSIGN_OR_RETURN(TableChanges changes, TableChanges::FromJson(requirements, updates));
  return ApplyTableCommit(current, changes, options);
}

std::string TableChanges::RequirementsJson() const {
  Json out = Json::array();
  for (const TableRequirement& requirement : requirements) out.push_back(TableRequirementToJson(requirement));
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string TableChanges::UpdatesJson() const {
  Json out = Json::array();
  for (const TableUpdate& update : updates) out.push_back(TableUpdateToJson(update));
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace serac::iceberg
