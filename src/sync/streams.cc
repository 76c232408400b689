// streams.json: the streams discover found (each {"stream": {...}} with its type schema) and the
// ones selected for sync (selected_streams, by namespace), read and written in OLake's shape.
#include <set>

#include "common/encoding.h"
#include "common/json_reads.h"
#include "sync/config.h"

namespace serac::sync {
namespace {

Status FieldError(const std::string& file, const std::string& field, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, file + ": " + field + ": " + message);
}

// Members of `object` not in `known` are reported once each.
void ReportUnknown(const Json& object, const std::set<std::string>& known, const std::string& file,
                   const std::string& prefix, std::vector<ConfigNotice>& notices) {
  for (const auto& [name, value] : object.items()) {
    if (!known.count(name)) notices.push_back({file, prefix + "." + name, "unknown field, ignored"});
  }
}

Result<std::string> OptionalString(const Json& object, const char* key, const std::string& file,
                                   const std::string& prefix) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return FieldError(file, prefix + "." + key, "must be a string");
  return it->get<std::string>();
}

Result<bool> OptionalBool(const Json& object, const char* key, const std::string& file,
                          const std::string& prefix) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return false;
  if (!it->is_boolean()) return FieldError(file, prefix + "." + key, "must be true or false");
  return it->get<bool>();
}

Result<std::vector<std::string>> OptionalStrings(const Json& object, const char* key, const std::string& file,
                                                 const std::string& prefix) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_array()) return FieldError(file, prefix + "." + key, "must be an array of strings");
  for (const Json& item : *it) {
    if (!item.is_string()) return FieldError(file, prefix + "." + key, "must be an array of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<Stream> ReadStream(const Json& wrapper, const std::string& file, const std::string& prefix,
                          std::vector<ConfigNotice>& notices) {
  if (!wrapper.is_object()) return FieldError(file, prefix, "must be an object {\"stream\": {...}}");
  auto inner = wrapper.find("stream");
  if (inner == wrapper.end() || !inner->is_object())
    return FieldError(file, prefix + ".stream", "is required");
  ReportUnknown(wrapper, {"stream"}, file, prefix, notices);
  const Json& json = *inner;
  const std::string at = prefix + ".stream";
  ReportUnknown(json,
                {"name", "namespace", "type_schema", "supported_sync_modes", "source_defined_primary_key",
                 "available_cursor_fields", "sync_mode", "cursor_field", "destination_database",
                 "destination_table", "additional_properties", "additional_properties_schema",
                 // What discover proposes for a selection; the selection's own fields decide, as in OLake.
                 "default_stream_properties"},
                file, at, notices);
  Stream stream;
  SERAC_ASSIGN_OR_RETURN(stream.name, OptionalString(json, "name", file, at));
  if (stream.name.empty()) return FieldError(file, at + ".name", "is required");
  SERAC_ASSIGN_OR_RETURN(stream.namespace_name, OptionalString(json, "namespace", file, at));
  SERAC_ASSIGN_OR_RETURN(stream.primary_key, OptionalStrings(json, "source_defined_primary_key", file, at));
  SERAC_ASSIGN_OR_RETURN(stream.cursor_fields, OptionalStrings(json, "available_cursor_fields", file, at));
  SERAC_ASSIGN_OR_RETURN(stream.cursor_field, OptionalString(json, "cursor_field", file, at));
  SERAC_ASSIGN_OR_RETURN(stream.destination_database, OptionalString(json, "destination_database", file, at));
  SERAC_ASSIGN_OR_RETURN(stream.destination_table, OptionalString(json, "destination_table", file, at));
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> modes,
                         OptionalStrings(json, "supported_sync_modes", file, at));
  for (const std::string& mode : modes) {
    auto parsed = ParseSyncMode(mode);
    if (!parsed.ok()) return FieldError(file, at + ".supported_sync_modes", parsed.status().message());
    stream.supported_sync_modes.push_back(*parsed);
  }
  SERAC_ASSIGN_OR_RETURN(std::string mode, OptionalString(json, "sync_mode", file, at));
  if (!mode.empty()) {
    auto parsed = ParseSyncMode(mode);
    if (!parsed.ok()) return FieldError(file, at + ".sync_mode", parsed.status().message());
    stream.sync_mode = *parsed;
  }
  auto schema = json.find("type_schema");
  if (schema != json.end() && !schema->is_null()) {
    if (!schema->is_object()) return FieldError(file, at + ".type_schema", "must be an object");
    auto properties = schema->find("properties");
    if (properties != schema->end() && !properties->is_null()) {
      if (!properties->is_object())
        return FieldError(file, at + ".type_schema.properties", "must be an object");
      for (const auto& [name, property] : properties->items()) {
        const std::string column_at = at + ".type_schema.properties." + name;
        if (!property.is_object()) return FieldError(file, column_at, "must be an object");
        StreamColumn column;
        column.name = name;
        auto types = property.find("type");
        if (types != property.end() && types->is_string()) {
          column.types.push_back(types->get<std::string>());
        } else {
          SERAC_ASSIGN_OR_RETURN(column.types, OptionalStrings(property, "type", file, column_at));
        }
        SERAC_ASSIGN_OR_RETURN(column.destination_name,
                               OptionalString(property, "destination_column_name", file, column_at));
        stream.columns.push_back(std::move(column));
      }
    }
  }
  return stream;
}

// filter_config: {"logical_operator": "and"|"or", "conditions": [{"column", "operator", "value"}]};
// nullopt when it has no conditions (OLake then reads the filter text).
Result<std::optional<StreamFilter>> ReadFilterConfig(const Json& json, const std::string& where) {
  if (!json.is_object()) return Error(ErrorCode::kInvalidArgument, where + ": must be an object");
  StreamFilter filter;
  auto conditions = json.find("conditions");
  if (conditions == json.end() || conditions->is_null() || (conditions->is_array() && conditions->empty())) {
    return std::optional<StreamFilter>();
  }
  if (!conditions->is_array())
    return Error(ErrorCode::kInvalidArgument, where + ".conditions: must be an array");
  auto logical = json.find("logical_operator");
  if (logical != json.end() && !logical->is_null()) {
    const std::string op = logical->is_string() ? AsciiLower(logical->get<std::string>()) : "";
    if (op != "and" && op != "or") {
      return Error(ErrorCode::kInvalidArgument, where + ".logical_operator: must be \"and\" or \"or\"");
    }
    filter.connective = op == "and" ? "AND" : "OR";
  }
  for (size_t i = 0; i < conditions->size(); ++i) {
    const Json& item = (*conditions)[i];
    const std::string at = where + ".conditions[" + std::to_string(i) + "]";
    if (!item.is_object()) return Error(ErrorCode::kInvalidArgument, at + ": must be an object");
    FilterCondition condition;
    if (item.contains("column") && item["column"].is_string())
      condition.column = item["column"].get<std::string>();
    if (item.contains("operator") && item["operator"].is_string())
      condition.op = item["operator"].get<std::string>();
    auto value = item.find("value");
    if (value == item.end() || value->is_null()) {
      condition.kind = FilterCondition::Value::kNull;
    } else if (value->is_string()) {
      condition.kind = FilterCondition::Value::kString;
      condition.value = value->get<std::string>();
    } else if (value->is_boolean()) {
      condition.kind = FilterCondition::Value::kBoolean;
      condition.value = value->get<bool>() ? "true" : "false";
    } else if (value->is_number()) {
      condition.kind = FilterCondition::Value::kNumber;
      condition.value = value->dump();
    } else {
      return Error(ErrorCode::kInvalidArgument, at + ".value: must be a string, number, boolean or null");
    }
    filter.conditions.push_back(std::move(condition));
  }
  SERAC_RETURN_IF_ERROR(CheckFilterConditions(filter, where));
  return std::optional<StreamFilter>(std::move(filter));
}

Result<StreamSelection> ReadSelection(const Json& json, const std::string& namespace_name,
                                      const std::string& file, const std::string& at,
                                      std::vector<ConfigNotice>& notices) {
  if (!json.is_object()) return FieldError(file, at, "must be an object");
  ReportUnknown(json,
                {"stream_name", "partition_regex", "normalization", "append_mode", "chunk_column", "filter",
                 "selected_columns", "sync_new_columns", "update_type", "use_source_column_names",
                 "filter_config", "engines", "append_only"},
                file, at, notices);
  if (json.contains("append_only")) {
    // Older OLake documentation's name; OLake reads append_mode, and so does serac.
    notices.push_back({file, at + ".append_only", "not read: OLake's field is append_mode"});
  }
  StreamSelection selection;
  selection.namespace_name = namespace_name;
  SERAC_ASSIGN_OR_RETURN(selection.stream_name, OptionalString(json, "stream_name", file, at));
  if (selection.stream_name.empty()) return FieldError(file, at + ".stream_name", "is required");
  SERAC_ASSIGN_OR_RETURN(selection.partition_regex, OptionalString(json, "partition_regex", file, at));
  if (json.contains("normalization")) {
    SERAC_ASSIGN_OR_RETURN(selection.normalization, OptionalBool(json, "normalization", file, at));
  }
  SERAC_ASSIGN_OR_RETURN(selection.append_mode, OptionalBool(json, "append_mode", file, at));
  SERAC_ASSIGN_OR_RETURN(selection.chunk_column, OptionalString(json, "chunk_column", file, at));
  SERAC_ASSIGN_OR_RETURN(selection.filter, OptionalString(json, "filter", file, at));
  const std::string stream_at = file + ": stream " + namespace_name + "." + selection.stream_name;
  auto filter_config = json.find("filter_config");
  if (filter_config != json.end() && !filter_config->is_null()) {
    // OLake reads filter_config when it has conditions, else the filter text.
    selection.row_filter_origin = stream_at + ": filter_config";
    SERAC_ASSIGN_OR_RETURN(std::optional<StreamFilter> parsed,
                           ReadFilterConfig(*filter_config, selection.row_filter_origin));
    selection.row_filter = std::move(parsed);
  }
  if (!selection.row_filter && !selection.filter.empty()) {
    selection.row_filter_origin = stream_at + ": filter";
    SERAC_ASSIGN_OR_RETURN(selection.row_filter,
                           ParseFilterText(selection.filter, selection.row_filter_origin));
  }
  SERAC_ASSIGN_OR_RETURN(selection.sync_new_columns, OptionalBool(json, "sync_new_columns", file, at));
  SERAC_ASSIGN_OR_RETURN(selection.update_type, OptionalString(json, "update_type", file, at));
  if (!selection.update_type.empty() && selection.update_type != "eq" && selection.update_type != "pos" &&
      selection.update_type != "dv") {
    return FieldError(file, at + ".update_type",
                      "must be eq, pos or dv, not \"" + selection.update_type + "\"");
  }
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> engines, OptionalStrings(json, "engines", file, at));
  SERAC_ASSIGN_OR_RETURN(selection.engines, ParseEngines(engines, file, at + ".engines"));
  if (!selection.update_type.empty()) {
    if (auto refusing = EngineNotReading(selection.engines, selection.update_type)) {
      return FieldError(file, at + ".update_type",
                        selection.update_type + " deletes are not read by " + *refusing +
                            ", one of the stream's engines (the README's table says who reads what)");
    }
  }
  if (!selection.normalization) {
    notices.push_back(
        {file, at + ".normalization",
         "false is not applied: serac writes every column as a typed column (OLake's "
         "normalized form, json and jsonb as their text), not the row as JSON in one data column"});
  }
  if (!selection.chunk_column.empty()) {
    notices.push_back(
        {file, at + ".chunk_column",
         "not used: serac cuts full loads into ranges of heap pages (ctid), which needs no column"});
  }
  if (json.contains("use_source_column_names")) {
    notices.push_back({file, at + ".use_source_column_names", "not used: serac keeps source column names"});
  }
  auto columns = json.find("selected_columns");
  if (columns != json.end() && !columns->is_null()) {
    if (columns->is_array()) {
      SERAC_ASSIGN_OR_RETURN(selection.selected_columns, OptionalStrings(json, "selected_columns", file, at));
    } else if (columns->is_object()) {
      const std::string columns_at = at + ".selected_columns";
      ReportUnknown(*columns, {"columns", "sync_new_columns"}, file, columns_at, notices);
      SERAC_ASSIGN_OR_RETURN(std::vector<std::string> names,
                             OptionalStrings(*columns, "columns", file, columns_at));
      if (!names.empty()) selection.selected_columns = std::move(names);
      SERAC_ASSIGN_OR_RETURN(bool sync_new, OptionalBool(*columns, "sync_new_columns", file, columns_at));
      selection.sync_new_columns = selection.sync_new_columns || sync_new;
    } else {
      return FieldError(file, at + ".selected_columns",
                        "must be an array of column names or {\"columns\": [...]}");
    }
  }
  return selection;
}

}  // namespace

Result<StreamCatalog> ParseStreams(std::string_view text, const std::string& file,
                                   std::vector<ConfigNotice>& notices) {
  auto parsed = ParseJson(text);
  if (!parsed.ok()) return Error(ErrorCode::kInvalidArgument, file + ": " + parsed.status().message());
  const Json& json = *parsed;
  if (!json.is_object()) return FieldError(file, "(document)", "must be a JSON object");
  ReportUnknown(json, {"streams", "selected_streams"}, file, "", notices);
  StreamCatalog catalog;
  auto streams = json.find("streams");
  if (streams != json.end() && !streams->is_null()) {
    if (!streams->is_array()) return FieldError(file, "streams", "must be an array");
    for (size_t i = 0; i < streams->size(); ++i) {
      SERAC_ASSIGN_OR_RETURN(Stream stream,
                             ReadStream((*streams)[i], file, "streams[" + std::to_string(i) + "]", notices));
      catalog.streams.push_back(std::move(stream));
    }
  }
  auto selected = json.find("selected_streams");
  if (selected != json.end() && !selected->is_null()) {
    if (!selected->is_object())
      return FieldError(file, "selected_streams", "must be an object of namespaces");
    for (const auto& [namespace_name, list] : selected->items()) {
      const std::string at = "selected_streams." + namespace_name;
      if (!list.is_array()) return FieldError(file, at, "must be an array");
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string item_at = at + "[" + std::to_string(i) + "]";
        SERAC_ASSIGN_OR_RETURN(StreamSelection selection,
                               ReadSelection(list[i], namespace_name, file, item_at, notices));
        if (!catalog.Find(namespace_name, selection.stream_name)) {
          return FieldError(file, item_at + ".stream_name",
                            "no stream " + namespace_name + "." + selection.stream_name + " in \"streams\"");
        }
        catalog.selected.push_back(std::move(selection));
      }
    }
  }
  return catalog;
}

std::string StreamsToJson(const StreamCatalog& catalog) {
  Json streams = Json::array();
  for (const Stream& stream : catalog.streams) {
    Json properties = Json::object();
    for (const StreamColumn& column : stream.columns) {
      Json property = {{"type", column.types}};
      if (!column.destination_name.empty()) property["destination_column_name"] = column.destination_name;
      properties[column.name] = property;
    }
    Json modes = Json::array();
    for (SyncMode mode : stream.supported_sync_modes) modes.push_back(SyncModeName(mode));
    Json body = {{"name", stream.name},
                 {"namespace", stream.namespace_name},
                 {"type_schema", {{"properties", properties}}},
                 {"supported_sync_modes", modes},
                 {"source_defined_primary_key", stream.primary_key},
                 {"available_cursor_fields", stream.cursor_fields},
                 {"sync_mode", SyncModeName(stream.sync_mode)}};
    if (!stream.cursor_field.empty()) body["cursor_field"] = stream.cursor_field;
    if (!stream.destination_database.empty()) body["destination_database"] = stream.destination_database;
    if (!stream.destination_table.empty()) body["destination_table"] = stream.destination_table;
    streams.push_back(Json{{"stream", body}});
  }
  Json selected = Json::object();
  for (const StreamSelection& selection : catalog.selected) {
    Json entry = {{"stream_name", selection.stream_name},
                  {"partition_regex", selection.partition_regex},
                  {"normalization", selection.normalization},
                  {"append_mode", selection.append_mode},
                  {"sync_new_columns", selection.sync_new_columns}};
    if (!selection.chunk_column.empty()) entry["chunk_column"] = selection.chunk_column;
    if (!selection.filter.empty()) entry["filter"] = selection.filter;
    if (!selection.update_type.empty()) entry["update_type"] = selection.update_type;
    if (!selection.engines.empty()) entry["engines"] = selection.engines;
    if (selection.selected_columns) {
      entry["selected_columns"] = {{"columns", *selection.selected_columns},
                                   {"sync_new_columns", selection.sync_new_columns}};
    }
    selected[selection.namespace_name].push_back(entry);
  }
  return Json{{"selected_streams", selected}, {"streams", streams}}.dump(2);
}

}  // namespace serac::sync
