// Table metadata for a CreateTableRequest: the server assigns every id afresh, as the reference does.
#include <algorithm>
#include <string>

#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/metadata/metadata_limits_internal.h"
#include "iceberg/schema/binding_internal.h"

namespace serac::iceberg {
namespace {

// Table properties with a meaning of their own that are never stored as properties.
bool IsReservedProperty(const std::string& key) {
  return key == kFormatVersionProperty || key == "uuid" || key == "snapshot-count" ||
         key == "current-snapshot-id" || key == "current-snapshot-summary" ||
         key == "current-snapshot-timestamp-ms" || key == "current-schema" ||
         key == "default-partition-spec" || key == "default-sort-order";
}

// What the reference checks of a new table's properties (MetricsConfig.validate and
// PropertyUtil.validateCommitProperties): a column metrics mode names a column of the schema, and
// the commit retry settings are non-negative integers. Engines read both when they write.
Status CheckNewTableProperties(const std::map<std::string, std::string>& properties, const Json& schema) {
  constexpr std::string_view kColumnMetricsPrefix = "write.metadata.metrics.column.";
  for (const auto& [key, value] : properties) {
    if (key.starts_with(kColumnMetricsPrefix)) {
      const std::string column = key.substr(kColumnMetricsPrefix.size());
      if (!SchemaHasField(schema, column)) {
        return Error(ErrorCode::kInvalidArgument, "Invalid metrics config, could not find column " + column +
                                                      " from table prop " + key + " in schema");
      }
    }
  }
  for (const char* key : {"commit.retry.num-retries", "commit.retry.min-wait-ms", "commit.retry.max-wait-ms",
                          "commit.retry.total-timeout-ms"}) {
    auto it = properties.find(key);
    if (it == properties.end()) continue;
    // Integer.parseInt: an optional sign, then decimal digits, within 32 bits.
    std::string_view digits = it->second;
    const bool negative = !digits.empty() && digits.front() == '-';
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
    const bool is_int =
        !digits.empty() && digits.size() <= 10 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        std::stoll(std::string(digits)) <= (negative ? 2147483648LL : 2147483647LL);
    if (!is_int)
      return Error(ErrorCode::kInvalidArgument,
                   std::string("Table property ") + key + " must have integer value");
    if (negative && std::stoll(std::string(digits)) != 0) {
      return Error(ErrorCode::kInvalidArgument,
                   std::string("Table property ") + key + " must have non negative integer value");
    }
  }
  return Status::Ok();
}

Result<int> FormatVersionFromProperties(const std::map<std::string, std::string>& properties) {
  auto it = properties.find(kFormatVersionProperty);
  if (it == properties.end()) return kTableFormatVersionDefault;
  const std::string& text = it->second;
  if (text.size() != 1 || text[0] < '0' + kTableFormatVersionMin || text[0] > '0' + kTableFormatVersionMax) {
    return Error(ErrorCode::kInvalidArgument, "unsupported format-version: " + text);
  }
  return text[0] - '0';
}

// Points a partition or sort field at the reassigned column ids (`source-id`, or v3 `source-ids`).
Status RebindSourceIds(Json* field, const std::map<int64_t, int64_t>& id_map) {
  auto rebind = [&](Json* id) -> Status {
    if (!id->is_number_integer()) return Error(ErrorCode::kInvalidArgument, "source id must be an integer");
    auto found = id_map.find(id->get<int64_t>());
    if (found == id_map.end()) {
      return Error(ErrorCode::kInvalidArgument, "source id " + id->dump() + " names no column of the schema");
    }
    *id = found->second;
    return Status::Ok();
  };
  bool has_source = false;
  if (auto it = field->find("source-id"); it != field->end() && !it->is_null()) {
    SERAC_RETURN_IF_ERROR(rebind(&*it));
    has_source = true;
  }
  if (auto it = field->find("source-ids"); it != field->end() && !it->is_null()) {
    if (!it->is_array()) return Error(ErrorCode::kInvalidArgument, "source-ids must be an array");
    for (Json& id : *it) SERAC_RETURN_IF_ERROR(rebind(&id));
    has_source = true;
  }
  if (!has_source) return Error(ErrorCode::kInvalidArgument, "field without source-id");
  return Status::Ok();
}

Result<Json> FreshPartitionSpec(const std::optional<Json>& requested,
                                const std::map<int64_t, int64_t>& id_map) {
  Json spec{{"spec-id", 0}, {"fields", Json::array()}};
  if (!requested) return spec;
  SERAC_RETURN_IF_ERROR(ValidatePartitionSpecFields(*requested, SourceColumns::kSourceIdOrIds));
  int32_t next_field_id = kPartitionFieldIdStart;
  for (const Json& requested_field : requested->at("fields")) {
    Json field = requested_field;
    SERAC_RETURN_IF_ERROR(RebindSourceIds(&field, id_map));
    field["field-id"] = next_field_id++;
    spec["fields"].push_back(field);
  }
  return spec;
}

Result<Json> FreshSortOrder(const std::optional<Json>& requested, const std::map<int64_t, int64_t>& id_map) {
  Json order{{"order-id", kUnsortedOrderId}, {"fields", Json::array()}};
  if (!requested) return order;
  SERAC_RETURN_IF_ERROR(ValidateSortOrder(*requested));
  for (const Json& requested_field : requested->at("fields")) {
    Json field = requested_field;
    SERAC_RETURN_IF_ERROR(RebindSourceIds(&field, id_map));
    order["fields"].push_back(field);
  }
  if (!order["fields"].empty()) order["order-id"] = kFirstSortOrderId;
  return order;
}

}  // namespace

Result<CreateTableRequest> ParseCreateTableRequest(const Json& body) {
  if (!body.is_object()) return Error(ErrorCode::kInvalidArgument, "create table request must be an object");
  CreateTableRequest request;
  SERAC_ASSIGN_OR_RETURN(request.name, RequiredString(body, "name"));
  if (request.name.empty()) return Error(ErrorCode::kInvalidArgument, "table name must not be empty");
  if (auto it = body.find("location"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return Error(ErrorCode::kInvalidArgument, "location must be a string");
    request.location = it->get<std::string>();
  }
  SERAC_ASSIGN_OR_RETURN(const Json* schema, RequiredMember(body, "schema", Json::value_t::object));
  request.schema = *schema;
  if (auto it = body.find("partition-spec"); it != body.end() && !it->is_null()) request.partition_spec = *it;
  if (auto it = body.find("write-order"); it != body.end() && !it->is_null()) request.write_order = *it;
  if (auto it = body.find("properties"); it != body.end() && !it->is_null()) {
    SERAC_ASSIGN_OR_RETURN(request.properties, StringMap(*it));
  }
  if (auto it = body.find("stage-create"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return Error(ErrorCode::kInvalidArgument, "stage-create must be a boolean");
    request.stage_create = it->get<bool>();
  }
  return request;
}

Result<TableModel> NewTableMetadata(const CreateTableRequest& request, std::string_view location,
                                    std::string_view table_uuid, int64_t now_ms) {
  TableModel metadata;
  SERAC_ASSIGN_OR_RETURN(metadata.format_version, FormatVersionFromProperties(request.properties));
  SERAC_RETURN_IF_ERROR(ValidateSchema(request.schema));
  SERAC_RETURN_IF_ERROR(CheckSchemaCompatibleWithFormat(request.schema, metadata.format_version));
  std::map<int64_t, int64_t> id_map;
  Json schema = ReassignFieldIds(request.schema, &id_map);
  schema["schema-id"] = 0;
  SERAC_ASSIGN_OR_RETURN(Json spec, FreshPartitionSpec(request.partition_spec, id_map));
  SERAC_ASSIGN_OR_RETURN(Json order, FreshSortOrder(request.write_order, id_map));

  metadata.table_uuid = std::string(table_uuid);
  metadata.location = std::string(location);
  metadata.last_updated_ms = now_ms;
  metadata.last_column_id = HighestFieldId(schema);
  metadata.schemas = {schema};
  metadata.current_schema_id = 0;
  metadata.last_partition_id = kPartitionFieldIdStart - 1 + static_cast<int32_t>(spec["fields"].size());
  metadata.partition_specs = {spec};
  metadata.default_spec_id = 0;
  metadata.default_sort_order_id = order["order-id"].get<int32_t>();
  metadata.sort_orders = {order};
  // New tables write Parquet with zstd unless the request says otherwise, as the reference
  // records it (its persisted defaults for new tables).
  metadata.properties[kParquetCompressionProperty] = kParquetCompressionDefault;
  for (const auto& [key, value] : request.properties) {
    if (!IsReservedProperty(key)) metadata.properties[key] = value;
  }
  SERAC_RETURN_IF_ERROR(CheckPropertyLimits(metadata.properties));
  SERAC_RETURN_IF_ERROR(CheckNewTableProperties(metadata.properties, schema));
  SERAC_RETURN_IF_ERROR(CheckSchemaFieldCount(schema));
  metadata.next_row_id = 0;
  return metadata;
}

}  // namespace serac::iceberg
