// Table metadata <-> JSON, for format versions 1, 2 and 3.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {
namespace {

const std::set<std::string>& ModelledTableFields() {
  static const std::set<std::string> kFields = {"format-version",
                                                "table-uuid",
                                                "location",
                                                "last-sequence-number",
                                                "last-updated-ms",
                                                "last-column-id",
                                                "schema",
                                                "schemas",
                                                "current-schema-id",
                                                "partition-spec",
                                                "partition-specs",
                                                "default-spec-id",
                                                "last-partition-id",
                                                "properties",
                                                "current-snapshot-id",
                                                "snapshots",
                                                "snapshot-log",
                                                "metadata-log",
                                                "sort-orders",
                                                "default-sort-order-id",
                                                "refs",
                                                "statistics",
                                                "partition-statistics",
                                                "next-row-id",
                                                "encryption-keys"};
  return kFields;
}

template <typename IdType>
const Json* FindById(const std::vector<Json>& items, const char* key, IdType id) {
  for (const Json& item : items) {
    if (item.at(key).get<IdType>() == id) return &item;
  }
  return nullptr;
}

Result<std::vector<Json>> ObjectArray(const Json& json, const char* key, bool required) {
  std::vector<Json> out;
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) {
    if (required) return Error(ErrorCode::kInvalidArgument, std::string("missing field: ") + key);
    return out;
  }
  if (!it->is_array()) return Error(ErrorCode::kInvalidArgument, std::string(key) + " must be an array");
  for (const Json& item : *it) {
    if (!item.is_object()) return Error(ErrorCode::kInvalidArgument, std::string(key) + " must hold objects");
    out.push_back(item);
  }
  return out;
}

Status ParseSchemas(const Json& json, TableModel* metadata) {
  SERAC_ASSIGN_OR_RETURN(metadata->schemas, ObjectArray(json, "schemas", false));
  if (metadata->schemas.empty()) {
    // v1 files written before "schemas" existed carry a single "schema".
    SERAC_ASSIGN_OR_RETURN(const Json* legacy, RequiredMember(json, "schema", Json::value_t::object));
    Json schema = *legacy;
    if (!schema.contains("schema-id")) schema["schema-id"] = 0;
    metadata->schemas.push_back(schema);
  }
  for (const Json& schema : metadata->schemas) {
    SERAC_RETURN_IF_ERROR(ValidateSchema(schema));
    SERAC_RETURN_IF_ERROR(RequiredInt32(schema, "schema-id").status());
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int32_t> current, OptionalInt32(json, "current-schema-id"));
  metadata->current_schema_id = current.value_or(metadata->schemas.front().at("schema-id").get<int32_t>());
  if (metadata->FindSchema(metadata->current_schema_id) == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "current-schema-id names no schema");
  }
  return Status::Ok();
}

Status ParseSpecs(const Json& json, TableModel* metadata) {
  SERAC_ASSIGN_OR_RETURN(metadata->partition_specs, ObjectArray(json, "partition-specs", false));
  if (metadata->partition_specs.empty()) {
    // v1 files written before "partition-specs" existed carry the default spec's fields only.
    SERAC_ASSIGN_OR_RETURN(const Json* legacy, RequiredMember(json, "partition-spec", Json::value_t::array));
    metadata->partition_specs.push_back(Json{{"spec-id", 0}, {"fields", *legacy}});
  }
  int32_t highest_field_id = kPartitionFieldIdStart - 1;
  for (Json& spec : metadata->partition_specs) {
    SERAC_RETURN_IF_ERROR(RequiredInt32(spec, "spec-id").status());
    // Files serac wrote for a create with v3 `source-ids` must stay readable.
    SERAC_RETURN_IF_ERROR(ValidatePartitionSpecFields(spec, SourceColumns::kSourceIdOrIds));
    int32_t next_legacy_id = kPartitionFieldIdStart;
    for (Json& field : spec["fields"]) {
      if (!field.contains("field-id")) field["field-id"] = next_legacy_id;  // v1: implied sequential ids
      next_legacy_id = field["field-id"].get<int32_t>() + 1;
      highest_field_id = std::max(highest_field_id, field["field-id"].get<int32_t>());
    }
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int32_t> default_spec, OptionalInt32(json, "default-spec-id"));
  metadata->default_spec_id =
      default_spec.value_or(metadata->partition_specs.front().at("spec-id").get<int32_t>());
  if (metadata->FindSpec(metadata->default_spec_id) == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "default-spec-id names no partition spec");
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int32_t> last_partition_id, OptionalInt32(json, "last-partition-id"));
  metadata->last_partition_id = last_partition_id.value_or(highest_field_id);
  return Status::Ok();
}

Status ParseSortOrders(const Json& json, TableModel* metadata) {
  SERAC_ASSIGN_OR_RETURN(metadata->sort_orders, ObjectArray(json, "sort-orders", false));
  if (metadata->sort_orders.empty()) {
    metadata->sort_orders.push_back(Json{{"order-id", kUnsortedOrderId}, {"fields", Json::array()}});
  }
  for (const Json& order : metadata->sort_orders) {
    // Files serac wrote before sort fields had to name a single `source-id` stay readable.
    SERAC_RETURN_IF_ERROR(ValidateSortOrder(order, SourceColumns::kSourceIdOrIds));
    SERAC_RETURN_IF_ERROR(RequiredInt32(order, "order-id").status());
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int32_t> default_order, OptionalInt32(json, "default-sort-order-id"));
  metadata->default_sort_order_id =
      default_order.value_or(metadata->sort_orders.front().at("order-id").get<int32_t>());
  if (metadata->FindSortOrder(metadata->default_sort_order_id) == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "default-sort-order-id names no sort order");
  }
  return Status::Ok();
}

Status ParseSnapshots(const Json& json, TableModel* metadata) {
  SERAC_ASSIGN_OR_RETURN(std::vector<Json> snapshots, ObjectArray(json, "snapshots", false));
  metadata->snapshots.reserve(snapshots.size());
  // The reference reads a v1 table's last sequence number as 0, whatever the file says.
  const int64_t last_sequence_number = metadata->format_version > 1 ? metadata->last_sequence_number : 0;
  for (Json& snapshot : snapshots) {
    SERAC_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
    SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> sequence, OptionalInt(snapshot, "sequence-number"));
    if (sequence.value_or(0) > last_sequence_number) {
      return Error(ErrorCode::kInvalidArgument,
                   "Invalid snapshot with sequence number " + std::to_string(*sequence) +
                       " greater than last sequence number " + std::to_string(last_sequence_number));
    }
    metadata->snapshots.push_back(StoredSnapshot::Make(std::move(snapshot)));
  }
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> current, OptionalInt(json, "current-snapshot-id"));
  metadata->current_snapshot_id = current.value_or(-1);
  auto refs = json.find("refs");
  if (refs != json.end() && !refs->is_null()) {
    if (!refs->is_object()) return Error(ErrorCode::kInvalidArgument, "refs must be an object");
    for (auto it = refs->begin(); it != refs->end(); ++it) {
      SERAC_RETURN_IF_ERROR(ValidateRef(*it));
      metadata->refs[it.key()] = *it;
    }
  }
  // Files written before refs existed imply the main branch from current-snapshot-id.
  if (metadata->current_snapshot_id != -1 && metadata->refs.count(kMainBranch) == 0) {
    metadata->refs[kMainBranch] = Json{{"snapshot-id", metadata->current_snapshot_id}, {"type", "branch"}};
  }
  SERAC_ASSIGN_OR_RETURN(std::vector<Json> log, ObjectArray(json, "snapshot-log", false));
  for (const Json& entry : log) {
    SERAC_ASSIGN_OR_RETURN(int64_t timestamp_ms, RequiredInt(entry, "timestamp-ms"));
    SERAC_ASSIGN_OR_RETURN(int64_t snapshot_id, RequiredInt(entry, "snapshot-id"));
    metadata->snapshot_log.push_back({timestamp_ms, snapshot_id});
  }
  return Status::Ok();
}

Status ParseLogsAndExtras(const Json& json, TableModel* metadata) {
  SERAC_ASSIGN_OR_RETURN(std::vector<Json> log, ObjectArray(json, "metadata-log", false));
  for (const Json& entry : log) {
    SERAC_ASSIGN_OR_RETURN(int64_t timestamp_ms, RequiredInt(entry, "timestamp-ms"));
    SERAC_ASSIGN_OR_RETURN(std::string file, RequiredString(entry, "metadata-file"));
    metadata->metadata_log.push_back({timestamp_ms, file});
  }
  SERAC_ASSIGN_OR_RETURN(metadata->statistics, ObjectArray(json, "statistics", false));
  for (const Json& entry : metadata->statistics) SERAC_RETURN_IF_ERROR(ValidateStatisticsFile(entry));
  SERAC_ASSIGN_OR_RETURN(metadata->partition_statistics, ObjectArray(json, "partition-statistics", false));
  for (const Json& entry : metadata->partition_statistics) {
    SERAC_RETURN_IF_ERROR(ValidatePartitionStatisticsFile(entry));
  }
  SERAC_ASSIGN_OR_RETURN(metadata->encryption_keys, ObjectArray(json, "encryption-keys", false));
  for (const Json& entry : metadata->encryption_keys) SERAC_RETURN_IF_ERROR(ValidateEncryptionKey(entry));
  auto properties = json.find("properties");
  if (properties != json.end() && !properties->is_null()) {
    SERAC_ASSIGN_OR_RETURN(metadata->properties, StringMap(*properties));
  }
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (ModelledTableFields().count(it.key()) == 0) metadata->extra_fields[it.key()] = *it;
  }
  return Status::Ok();
}

Status ParseHeader(const Json& json, TableModel* metadata) {
  SERAC_ASSIGN_OR_RETURN(int64_t version, RequiredInt(json, "format-version"));
  if (version < kTableFormatVersionMin || version > kTableFormatVersionMax) {
    return Error(ErrorCode::kInvalidArgument, "unsupported format-version " + std::to_string(version));
  }
  metadata->format_version = static_cast<int>(version);
  if (version >= 2 || json.contains("table-uuid")) {
    SERAC_ASSIGN_OR_RETURN(metadata->table_uuid, RequiredString(json, "table-uuid"));
  }
  SERAC_ASSIGN_OR_RETURN(metadata->location, RequiredString(json, "location"));
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> sequence, OptionalInt(json, "last-sequence-number"));
  if (version >= 2 && !sequence)
    return Error(ErrorCode::kInvalidArgument, "missing field: last-sequence-number");
  metadata->last_sequence_number = sequence.value_or(0);
  SERAC_ASSIGN_OR_RETURN(metadata->last_updated_ms, RequiredInt(json, "last-updated-ms"));
  SERAC_ASSIGN_OR_RETURN(metadata->last_column_id, RequiredInt32(json, "last-column-id"));
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> next_row_id, OptionalInt(json, "next-row-id"));
  metadata->next_row_id = next_row_id.value_or(0);
  return Status::Ok();
}

Json IdArray(const std::vector<Json>& items) { return Json(items); }

}  // namespace

const Json* TableModel::FindSchema(int32_t schema_id) const {
  return FindById(schemas, "schema-id", schema_id);
}
const Json* TableModel::FindSpec(int32_t spec_id) const {
  return FindById(partition_specs, "spec-id", spec_id);
}
const Json* TableModel::FindSortOrder(int32_t order_id) const {
  return FindById(sort_orders, "order-id", order_id);
}
const Json* TableModel::FindSnapshot(int64_t snapshot_id) const {
  // Newest first: commits ask about the snapshots they just made or the current one.
  for (auto it = snapshots.rbegin(); it != snapshots.rend(); ++it) {
    if ((*it)->id() == snapshot_id) return &(*it)->json();
  }
  return nullptr;
}

StoredSnapshot::StoredSnapshot(Json json, int64_t id, std::string text)
    : json_(std::move(json)), id_(id), text_(std::move(text)) {}

std::shared_ptr<const StoredSnapshot> StoredSnapshot::Make(Json json) {
  const int64_t id = json.at("snapshot-id").get<int64_t>();
  std::string text = json.dump(-1, ' ', false, Json::error_handler_t::replace);
  return std::shared_ptr<const StoredSnapshot>(new StoredSnapshot(std::move(json), id, std::move(text)));
}

// The reference's rules (SnapshotParser, BaseSnapshot): what it refuses, serac must not store.
Status ValidateSnapshot(const Json& snapshot) {
  if (!snapshot.is_object()) return Error(ErrorCode::kInvalidArgument, "snapshot must be an object");
  SERAC_ASSIGN_OR_RETURN(int64_t snapshot_id, RequiredInt(snapshot, "snapshot-id"));
  SERAC_ASSIGN_OR_RETURN(int64_t timestamp_ms, RequiredInt(snapshot, "timestamp-ms"));
  (void)snapshot_id;
  (void)timestamp_ms;
  // Present means a number: the reference reads these whenever the key is there, null or not.
  for (const char* key : {"sequence-number", "parent-snapshot-id"}) {
    if (snapshot.contains(key)) SERAC_RETURN_IF_ERROR(RequiredInt(snapshot, key).status());
  }
  if (snapshot.contains("summary")) SERAC_RETURN_IF_ERROR(CheckStringMap(snapshot, "summary"));
  SERAC_RETURN_IF_ERROR(OptionalInt32(snapshot, "schema-id").status());
  SERAC_RETURN_IF_ERROR(CheckOptionalString(snapshot, "key-id"));
  if (snapshot.contains("manifest-list")) {
    SERAC_RETURN_IF_ERROR(RequiredString(snapshot, "manifest-list").status());
  } else {
    SERAC_RETURN_IF_ERROR(CheckStringList(snapshot, "manifests"));  // v1's list embedded in the snapshot
  }
  // Row lineage, checked in every format version as the reference does when it parses.
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> first_row_id, OptionalInt(snapshot, "first-row-id"));
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> added_rows, OptionalInt(snapshot, "added-rows"));
  if (first_row_id && *first_row_id < 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "Invalid first-row-id (cannot be negative): " + std::to_string(*first_row_id));
  }
  if (added_rows && *added_rows < 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "Invalid added-rows (cannot be negative): " + std::to_string(*added_rows));
  }
  if (first_row_id && !added_rows) {
    return Error(ErrorCode::kInvalidArgument, "Invalid added-rows (required when first-row-id is set): null");
  }
  return Status::Ok();
}

Status ValidateAddedSnapshot(const Json& snapshot, int format_version) {
  SERAC_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  // What the specification's Snapshot schema requires of a snapshot a client adds, beyond what the
  // reference's parser takes from a file: a manifest list to plan from (v2 on), a summary with its
  // operation, no null where a string belongs, and a parent that is another snapshot.
  SERAC_RETURN_IF_ERROR(CheckStringOrAbsent(snapshot, "key-id"));
  if (format_version >= 2) {
    SERAC_ASSIGN_OR_RETURN(std::string manifest_list, RequiredString(snapshot, "manifest-list"));
    if (manifest_list.empty()) return Error(ErrorCode::kInvalidArgument, "manifest-list must not be empty");
  }
  SERAC_ASSIGN_OR_RETURN(const Json* summary, RequiredMember(snapshot, "summary", Json::value_t::object));
  SERAC_RETURN_IF_ERROR(RequiredString(*summary, "operation").status());
  if (snapshot.contains("parent-snapshot-id") &&
      snapshot.at("parent-snapshot-id") == snapshot.at("snapshot-id")) {
    return Error(ErrorCode::kInvalidArgument, "a snapshot cannot be its own parent");
  }
  // A v1 table's last sequence number is 0 and the reference sets it to the added snapshot's.
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> sequence, OptionalInt(snapshot, "sequence-number"));
  if (format_version == 1 && sequence.value_or(0) != 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "Sequence number must be 0 in v1: " + std::to_string(*sequence));
  }
  return Status::Ok();
}

Status ValidateRef(const Json& ref) {
  SERAC_ASSIGN_OR_RETURN(int64_t snapshot_id, RequiredInt(ref, "snapshot-id"));
  (void)snapshot_id;
  SERAC_ASSIGN_OR_RETURN(std::string type, RequiredString(ref, "type"));
  if (type != "branch" && type != "tag")
    return Error(ErrorCode::kInvalidArgument, "ref type must be branch or tag");
  for (const char* key : {"max-ref-age-ms", "max-snapshot-age-ms", "min-snapshots-to-keep"}) {
    SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> value, OptionalInt(ref, key));
    if (value && *value <= 0)
      return Error(ErrorCode::kInvalidArgument, std::string(key) + " must be positive");
    if (value && type == "tag" && std::string(key) != "max-ref-age-ms") {
      return Error(ErrorCode::kInvalidArgument, std::string("tags do not support ") + key);
    }
  }
  return Status::Ok();
}

namespace {

std::string Lowered(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// A partition or sort field's source column: an int32 `source-id`, or where allowed v3's
// `source-ids`, a non-empty array of them.
Status ValidateSourceColumns(const Json& field, SourceColumns sources) {
  const bool has_ids = field.contains("source-ids") && !field.at("source-ids").is_null();
  if (sources == SourceColumns::kSourceIdOrIds && has_ids && !field.contains("source-id")) {
    SERAC_RETURN_IF_ERROR(CheckInt32List(field, "source-ids"));
    if (field.at("source-ids").empty())
      return Error(ErrorCode::kInvalidArgument, "source-ids must not be empty");
    return Status::Ok();
  }
  return RequiredInt32(field, "source-id").status();
}

}  // namespace

// The reference's SortOrderParser: each field needs all four members, in any letter case.
Status ValidateSortOrder(const Json& order, SourceColumns sources) {
  if (!order.is_object()) return Error(ErrorCode::kInvalidArgument, "sort order must be an object");
  SERAC_ASSIGN_OR_RETURN(const Json* fields, RequiredMember(order, "fields", Json::value_t::array));
  for (const Json& field : *fields) {
    if (!field.is_object()) return Error(ErrorCode::kInvalidArgument, "sort fields must be objects");
    SERAC_RETURN_IF_ERROR(RequiredString(field, "transform").status());
    SERAC_RETURN_IF_ERROR(ValidateSourceColumns(field, sources));
    SERAC_ASSIGN_OR_RETURN(std::string direction, RequiredString(field, "direction"));
    if (const std::string lower = Lowered(direction); lower != "asc" && lower != "desc") {
      return Error(ErrorCode::kInvalidArgument, "Invalid sort direction: " + direction);
    }
    SERAC_ASSIGN_OR_RETURN(std::string null_order, RequiredString(field, "null-order"));
    if (const std::string lower = Lowered(null_order); lower != "nulls-first" && lower != "nulls-last") {
      return Error(ErrorCode::kInvalidArgument, "Unexpected null order: " + null_order);
    }
  }
  return OptionalInt32(order, "order-id").status();
}

// The reference's PartitionSpecParser and the names its PartitionSpec.Builder takes.
Status ValidatePartitionSpecFields(const Json& spec, SourceColumns sources) {
  if (!spec.is_object()) return Error(ErrorCode::kInvalidArgument, "partition spec must be an object");
  SERAC_ASSIGN_OR_RETURN(const Json* fields, RequiredMember(spec, "fields", Json::value_t::array));
  std::set<std::string> names;
  size_t with_field_id = 0;
  for (const Json& field : *fields) {
    if (!field.is_object()) return Error(ErrorCode::kInvalidArgument, "partition fields must be objects");
    SERAC_ASSIGN_OR_RETURN(std::string name, RequiredString(field, "name"));
    SERAC_RETURN_IF_ERROR(RequiredString(field, "transform").status());
    SERAC_RETURN_IF_ERROR(ValidateSourceColumns(field, sources));
    if (field.contains("field-id")) {
      SERAC_RETURN_IF_ERROR(RequiredInt32(field, "field-id").status());
      ++with_field_id;
    }
    if (name.empty()) return Error(ErrorCode::kInvalidArgument, "Cannot use empty partition name: " + name);
    if (!names.insert(name).second) {
      return Error(ErrorCode::kInvalidArgument, "Cannot use partition name more than once: " + name);
    }
  }
  if (with_field_id != 0 && with_field_id != fields->size()) {
    return Error(
        ErrorCode::kInvalidArgument,
        "Cannot parse spec with missing field IDs: " + std::to_string(fields->size() - with_field_id) +
            " missing of " + std::to_string(fields->size()) + " fields.");
  }
  return OptionalInt32(spec, "spec-id").status();
}

// The reference's StatisticsFileParser.
Status ValidateStatisticsFile(const Json& file) {
  if (!file.is_object()) return Error(ErrorCode::kInvalidArgument, "statistics must be an object");
  SERAC_RETURN_IF_ERROR(RequiredInt(file, "snapshot-id").status());
  SERAC_RETURN_IF_ERROR(RequiredString(file, "statistics-path").status());
  SERAC_RETURN_IF_ERROR(RequiredInt(file, "file-size-in-bytes").status());
  SERAC_RETURN_IF_ERROR(RequiredInt(file, "file-footer-size-in-bytes").status());
  auto blobs = file.find("blob-metadata");
  if (blobs == file.end() || !blobs->is_array()) {
    return Error(ErrorCode::kInvalidArgument, std::string("Cannot parse blob metadata from non-array: ") +
                                                  (blobs == file.end() ? "null" : blobs->type_name()));
  }
  for (const Json& blob : *blobs) {
    if (!blob.is_object()) return Error(ErrorCode::kInvalidArgument, "blob-metadata must hold objects");
    SERAC_RETURN_IF_ERROR(RequiredString(blob, "type").status());
    SERAC_RETURN_IF_ERROR(RequiredInt(blob, "snapshot-id").status());
    SERAC_RETURN_IF_ERROR(RequiredInt(blob, "sequence-number").status());
    SERAC_RETURN_IF_ERROR(CheckInt32List(blob, "fields"));
    if (blob.contains("properties")) SERAC_RETURN_IF_ERROR(CheckStringMap(blob, "properties"));
  }
  return Status::Ok();
}

// The reference's PartitionStatisticsFileParser.
Status ValidatePartitionStatisticsFile(const Json& file) {
  if (!file.is_object()) return Error(ErrorCode::kInvalidArgument, "partition statistics must be an object");
  SERAC_RETURN_IF_ERROR(RequiredInt(file, "snapshot-id").status());
  SERAC_RETURN_IF_ERROR(RequiredString(file, "statistics-path").status());
  return RequiredInt(file, "file-size-in-bytes").status();
}

// The reference's EncryptedKeyParser, which Base64-decodes the key metadata.
Status ValidateEncryptionKey(const Json& key) {
  if (!key.is_object()) return Error(ErrorCode::kInvalidArgument, "encryption key must be an object");
  SERAC_RETURN_IF_ERROR(RequiredString(key, "key-id").status());
  SERAC_ASSIGN_OR_RETURN(std::string metadata, RequiredString(key, "encrypted-key-metadata"));
  if (!IsBase64(metadata)) {
    return Error(ErrorCode::kInvalidArgument, "encrypted-key-metadata is not valid Base64");
  }
  SERAC_RETURN_IF_ERROR(CheckOptionalString(key, "encrypted-by-id"));
  if (key.contains("properties")) SERAC_RETURN_IF_ERROR(CheckStringMap(key, "properties"));
  return Status::Ok();
}

Result<TableModel> ParseTableMetadata(const Json& json) {
  if (!json.is_object()) return Error(ErrorCode::kInvalidArgument, "table metadata must be an object");
  TableModel metadata;
  SERAC_RETURN_IF_ERROR(ParseHeader(json, &metadata));
  SERAC_RETURN_IF_ERROR(ParseSchemas(json, &metadata));
  SERAC_RETURN_IF_ERROR(ParseSpecs(json, &metadata));
  SERAC_RETURN_IF_ERROR(ParseSortOrders(json, &metadata));
  SERAC_RETURN_IF_ERROR(ParseSnapshots(json, &metadata));
  SERAC_RETURN_IF_ERROR(ParseLogsAndExtras(json, &metadata));
  return metadata;
}

namespace {

bool Selected(const TableModel& metadata, const StoredSnapshot& snapshot, SnapshotSelection selection) {
  if (selection == SnapshotSelection::kAll) return true;
  const int64_t id = snapshot.id();
  return std::any_of(metadata.refs.begin(), metadata.refs.end(), [&](const auto& entry) {
    return entry.second.at("snapshot-id").template get<int64_t>() == id;
  });
}

// Every field but the snapshots and the two logs, which grow with every commit and are written
// apart (as Json values in TableMetadataToJson, straight into the text in TableMetadataToJsonText).
Json TableMetadataWithoutHistory(const TableModel& metadata) {
  Json out = metadata.extra_fields.is_object() ? metadata.extra_fields : Json::object();
  out["format-version"] = metadata.format_version;
  if (!metadata.table_uuid.empty() || metadata.format_version >= 2) out["table-uuid"] = metadata.table_uuid;
  out["location"] = metadata.location;
  if (metadata.format_version >= 2) out["last-sequence-number"] = metadata.last_sequence_number;
  out["last-updated-ms"] = metadata.last_updated_ms;
  out["last-column-id"] = metadata.last_column_id;
  out["schemas"] = IdArray(metadata.schemas);
  out["current-schema-id"] = metadata.current_schema_id;
  out["partition-specs"] = IdArray(metadata.partition_specs);
  out["default-spec-id"] = metadata.default_spec_id;
  out["last-partition-id"] = metadata.last_partition_id;
  if (metadata.format_version == 1) {
    // v1 readers may only know the single current schema and default spec.
    if (const Json* schema = metadata.FindSchema(metadata.current_schema_id)) out["schema"] = *schema;
    if (const Json* spec = metadata.FindSpec(metadata.default_spec_id))
      out["partition-spec"] = spec->at("fields");
  }
  out["properties"] = metadata.properties;
  // From v3 a table without a current snapshot says null, as the reference writes it; older
  // readers of v1 and v2 files expect -1.
  if (metadata.format_version >= kRowLineageFormatVersion && metadata.current_snapshot_id == -1) {
    out["current-snapshot-id"] = nullptr;
  } else {
    out["current-snapshot-id"] = metadata.current_snapshot_id;
  }
  Json refs = Json::object();
  for (const auto& [name, ref] : metadata.refs) refs[name] = ref;
  out["refs"] = refs;
  out["sort-orders"] = IdArray(metadata.sort_orders);
  out["default-sort-order-id"] = metadata.default_sort_order_id;
  out["statistics"] = IdArray(metadata.statistics);
  out["partition-statistics"] = IdArray(metadata.partition_statistics);
  if (metadata.format_version >= kRowLineageFormatVersion) out["next-row-id"] = metadata.next_row_id;
  if (!metadata.encryption_keys.empty()) out["encryption-keys"] = IdArray(metadata.encryption_keys);
  return out;
}

// The logs as text, in the order and shape the Json values below dump to.
void AppendLogsText(const TableModel& metadata, std::string& text) {
  text += ",\"metadata-log\":[";
  for (size_t i = 0; i < metadata.metadata_log.size(); ++i) {
    if (i != 0) text += ',';
    AppendMetadataLogEntryText(metadata.metadata_log[i], text);
  }
  text += "],\"snapshot-log\":[";
  for (size_t i = 0; i < metadata.snapshot_log.size(); ++i) {
    if (i != 0) text += ',';
    AppendSnapshotLogEntryText(metadata.snapshot_log[i], text);
  }
  text += ']';
}

}  // namespace

void AppendMetadataLogEntryText(const MetadataLogEntry& entry, std::string& text) {
  text += "{\"metadata-file\":";
  AppendJsonString(text, entry.metadata_file);
  text += ",\"timestamp-ms\":";
  text += std::to_string(entry.timestamp_ms);
  text += '}';
}

void AppendSnapshotLogEntryText(const SnapshotLogEntry& entry, std::string& text) {
  text += "{\"snapshot-id\":";
  text += std::to_string(entry.snapshot_id);
  text += ",\"timestamp-ms\":";
  text += std::to_string(entry.timestamp_ms);
  text += '}';
}

std::string TableMetadataHeadText(const TableModel& metadata) {
  std::string text =
      TableMetadataWithoutHistory(metadata).dump(-1, ' ', false, Json::error_handler_t::replace);
  // The object always has fields, so it ends in '}' after at least one member.
  text.pop_back();
  return text;
}

Json TableMetadataToJson(const TableModel& metadata, SnapshotSelection selection) {
  Json out = TableMetadataWithoutHistory(metadata);
  Json snapshot_log = Json::array();
  for (const auto& entry : metadata.snapshot_log) {
    snapshot_log.push_back({{"timestamp-ms", entry.timestamp_ms}, {"snapshot-id", entry.snapshot_id}});
  }
  out["snapshot-log"] = std::move(snapshot_log);
  Json metadata_log = Json::array();
  for (const auto& entry : metadata.metadata_log) {
    metadata_log.push_back({{"timestamp-ms", entry.timestamp_ms}, {"metadata-file", entry.metadata_file}});
  }
  out["metadata-log"] = std::move(metadata_log);
  Json snapshots = Json::array();
  for (const StoredSnapshotPtr& snapshot : metadata.snapshots) {
    if (Selected(metadata, *snapshot, selection)) snapshots.push_back(snapshot->json());
  }
  out["snapshots"] = std::move(snapshots);
  return out;
}

std::string TableMetadataToJsonText(const TableModel& metadata, SnapshotSelection selection) {
  std::string text = TableMetadataHeadText(metadata);
  size_t history_bytes = 64;
  for (const StoredSnapshotPtr& snapshot : metadata.snapshots) history_bytes += snapshot->text().size() + 1;
  for (const MetadataLogEntry& entry : metadata.metadata_log)
    history_bytes += entry.metadata_file.size() + 48;
  history_bytes += metadata.snapshot_log.size() * 64;
  text.reserve(text.size() + history_bytes);
  AppendLogsText(metadata, text);
  text += ",\"snapshots\":[";
  bool first = true;
  for (const StoredSnapshotPtr& snapshot : metadata.snapshots) {
    if (!Selected(metadata, *snapshot, selection)) continue;
    if (!first) text += ',';
    first = false;
    text += snapshot->text();
  }
  text += "]}";
  return text;
}

}  // namespace serac::iceberg
