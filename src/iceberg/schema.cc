// Walks over Iceberg schema JSON: validation, highest field id, v3-only features, id reassignment.
#include <algorithm>
#include <functional>
#include <string>

#include "common/limits.h"
#include "iceberg/metadata_internal.h"

namespace serac::iceberg {
namespace {

Status ValidateType(const Json& type, uint32_t depth);

Status ValidateStructType(const Json& type, uint32_t depth) {
  SERAC_ASSIGN_OR_RETURN(const Json* fields, RequiredMember(type, "fields", Json::value_t::array));
  for (const Json& field : *fields) {
    SERAC_ASSIGN_OR_RETURN(int64_t id, RequiredInt(field, "id"));
    (void)id;
    SERAC_ASSIGN_OR_RETURN(std::string name, RequiredString(field, "name"));
    auto type_it = field.find("type");
    if (type_it == field.end()) return Error(ErrorCode::kInvalidArgument, "field without type: " + name);
    SERAC_RETURN_IF_ERROR(ValidateType(*type_it, depth + 1));
  }
  return Status::Ok();
}

Status ValidateType(const Json& type, uint32_t depth) {
  if (depth > limits::kIcebergTypeNestingDepthMax) {
    return Error(ErrorCode::kLimitExceeded, "schema nesting deeper than kIcebergTypeNestingDepthMax");
  }
  if (type.is_string()) return Status::Ok();  // a primitive; unknown names are kept as sent
  SERAC_ASSIGN_OR_RETURN(std::string kind, RequiredString(type, "type"));
  if (kind == "struct") return ValidateStructType(type, depth);
  if (kind == "list") {
    SERAC_ASSIGN_OR_RETURN(int64_t element_id, RequiredInt(type, "element-id"));
    (void)element_id;
    auto element = type.find("element");
    if (element == type.end()) return Error(ErrorCode::kInvalidArgument, "list type without element");
    return ValidateType(*element, depth + 1);
  }
  if (kind == "map") {
    SERAC_ASSIGN_OR_RETURN(int64_t key_id, RequiredInt(type, "key-id"));
    SERAC_ASSIGN_OR_RETURN(int64_t value_id, RequiredInt(type, "value-id"));
    (void)key_id;
    (void)value_id;
    auto key = type.find("key");
    auto value = type.find("value");
    if (key == type.end() || value == type.end()) {
      return Error(ErrorCode::kInvalidArgument, "map type without key or value");
    }
    SERAC_RETURN_IF_ERROR(ValidateType(*key, depth + 1));
    return ValidateType(*value, depth + 1);
  }
  return Error(ErrorCode::kInvalidArgument, "unknown nested type: " + kind);
}

// Calls `visit_type` for every type node (primitives included), `visit_field` for every struct
// field and `visit_id` for every field id, nested ones included. Only called on validated schemas.
struct TypeVisitor {
  std::function<void(const Json&)> visit_type = [](const Json&) {};
  std::function<void(const Json&)> visit_field = [](const Json&) {};
  std::function<void(int64_t)> visit_id = [](int64_t) {};
};

void WalkType(const Json& type, const TypeVisitor& visitor) {
  visitor.visit_type(type);
  if (!type.is_object()) return;
  const std::string kind = type.value("type", "");
  if (kind == "struct") {
    for (const Json& field : type.at("fields")) {
      visitor.visit_field(field);
      visitor.visit_id(field.at("id").get<int64_t>());
      WalkType(field.at("type"), visitor);
    }
  } else if (kind == "list") {
    visitor.visit_id(type.at("element-id").get<int64_t>());
    WalkType(type.at("element"), visitor);
  } else if (kind == "map") {
    visitor.visit_id(type.at("key-id").get<int64_t>());
    visitor.visit_id(type.at("value-id").get<int64_t>());
    WalkType(type.at("key"), visitor);
    WalkType(type.at("value"), visitor);
  }
}

bool IsV3OnlyPrimitive(const std::string& name) {
  return name == "timestamp_ns" || name == "timestamptz_ns" || name == "variant" || name == "unknown" ||
         name.rfind("geometry", 0) == 0 || name.rfind("geography", 0) == 0;
}

Json ReassignType(const Json& type, int64_t* next_id, std::map<int64_t, int64_t>* id_map);

Json ReassignStruct(const Json& type, int64_t* next_id, std::map<int64_t, int64_t>* id_map) {
  Json out = type;
  // A struct's own fields are numbered before any of their children, as the reference does.
  for (Json& field : out["fields"]) {
    const int64_t new_id = ++*next_id;
    (*id_map)[field.at("id").get<int64_t>()] = new_id;
    field["id"] = new_id;
  }
  for (Json& field : out["fields"]) field["type"] = ReassignType(field.at("type"), next_id, id_map);
  return out;
}

Json ReassignType(const Json& type, int64_t* next_id, std::map<int64_t, int64_t>* id_map) {
  if (!type.is_object()) return type;
  const std::string kind = type.value("type", "");
  if (kind == "struct") return ReassignStruct(type, next_id, id_map);
  Json out = type;
  if (kind == "list") {
    const int64_t element_id = ++*next_id;
    (*id_map)[type.at("element-id").get<int64_t>()] = element_id;
    out["element-id"] = element_id;
    out["element"] = ReassignType(type.at("element"), next_id, id_map);
  } else if (kind == "map") {
    const int64_t key_id = ++*next_id;
    const int64_t value_id = ++*next_id;
    (*id_map)[type.at("key-id").get<int64_t>()] = key_id;
    (*id_map)[type.at("value-id").get<int64_t>()] = value_id;
    out["key-id"] = key_id;
    out["value-id"] = value_id;
    out["key"] = ReassignType(type.at("key"), next_id, id_map);
    out["value"] = ReassignType(type.at("value"), next_id, id_map);
  }
  return out;
}

Json WithoutSchemaId(const Json& schema) {
  Json copy = schema;
  copy.erase("schema-id");
  auto identifiers = copy.find("identifier-field-ids");
  if (identifiers != copy.end() && (identifiers->is_null() || identifiers->empty())) copy.erase(identifiers);
  return copy;
}

}  // namespace

Status ValidateSchema(const Json& schema) {
  if (!schema.is_object()) return Error(ErrorCode::kInvalidArgument, "schema must be an object");
  SERAC_ASSIGN_OR_RETURN(std::string kind, RequiredString(schema, "type"));
  if (kind != "struct") return Error(ErrorCode::kInvalidArgument, "schema type must be struct");
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> schema_id, OptionalInt(schema, "schema-id"));
  (void)schema_id;
  auto identifiers = schema.find("identifier-field-ids");
  if (identifiers != schema.end() && !identifiers->is_null()) {
    if (!identifiers->is_array())
      return Error(ErrorCode::kInvalidArgument, "identifier-field-ids must be an array");
    for (const Json& id : *identifiers) {
      if (!id.is_number_integer())
        return Error(ErrorCode::kInvalidArgument, "identifier-field-ids must hold integers");
    }
  }
  return ValidateStructType(schema, 0);
}

int32_t HighestFieldId(const Json& schema) {
  int64_t highest = 0;
  TypeVisitor visitor;
  visitor.visit_id = [&](int64_t id) { highest = std::max(highest, id); };
  WalkType(schema, visitor);
  return static_cast<int32_t>(highest);
}

Status CheckSchemaCompatibleWithFormat(const Json& schema, int format_version) {
  if (format_version >= kRowLineageFormatVersion) return Status::Ok();
  Status status;
  TypeVisitor visitor;
  visitor.visit_type = [&](const Json& type) {
    if (status.ok() && type.is_string() && IsV3OnlyPrimitive(type.get<std::string>())) {
      status =
          Error(ErrorCode::kInvalidArgument, "type " + type.get<std::string>() + " needs format version 3");
    }
  };
  visitor.visit_field = [&](const Json& field) {
    auto initial = field.find("initial-default");
    if (status.ok() && initial != field.end() && !initial->is_null()) {
      status = Error(ErrorCode::kInvalidArgument,
                     "initial-default of field " + field.value("name", "") + " needs format version 3");
    }
  };
  WalkType(schema, visitor);
  return status;
}

Json ReassignFieldIds(const Json& schema, std::map<int64_t, int64_t>* id_map) {
  int64_t next_id = 0;
  Json out = ReassignStruct(schema, &next_id, id_map);
  auto identifiers = out.find("identifier-field-ids");
  if (identifiers != out.end() && identifiers->is_array()) {
    Json remapped = Json::array();
    for (const Json& id : *identifiers) {
      auto found = id_map->find(id.get<int64_t>());
      remapped.push_back(found == id_map->end() ? id.get<int64_t>() : found->second);
    }
    *identifiers = remapped;
  }
  return out;
}

bool SameSchema(const Json& a, const Json& b) { return WithoutSchemaId(a) == WithoutSchemaId(b); }

}  // namespace serac::iceberg
