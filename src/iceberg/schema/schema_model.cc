// The typed schema of schema.h, converted from and to the spec's JSON. Validation is the one the
// catalog applies (ValidateSchema in schema.cc); this file only maps a valid schema's JSON to values.
#include <algorithm>
#include <cctype>

#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/schema/partition.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {
namespace {

struct PrimitiveName {
  std::string_view name;
  TypeId id;
};

constexpr PrimitiveName kPrimitiveNames[] = {
    {"boolean", TypeId::kBoolean},
    {"int", TypeId::kInt},
    {"long", TypeId::kLong},
    {"float", TypeId::kFloat},
    {"double", TypeId::kDouble},
    {"date", TypeId::kDate},
    {"time", TypeId::kTime},
    {"timestamp", TypeId::kTimestamp},
    {"timestamptz", TypeId::kTimestampTz},
    {"timestamp_ns", TypeId::kTimestampNs},
    {"timestamptz_ns", TypeId::kTimestampTzNs},
    {"string", TypeId::kString},
    {"uuid", TypeId::kUuid},
    {"binary", TypeId::kBinary},
    {"variant", TypeId::kVariant},
    {"unknown", TypeId::kUnknown},
};

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// The digits of `text` with blanks around them; ValidateSchema has checked they are there.
int32_t Number(std::string_view text) {
  int32_t value = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') value = value * 10 + (c - '0');
  }
  return value;
}

Type PrimitiveFromName(const std::string& written) {
  const std::string name = Lower(written);
  Type type;
  for (const PrimitiveName& primitive : kPrimitiveNames) {
    if (name == primitive.name) {
      type.id = primitive.id;
      return type;
    }
  }
  if (name.starts_with("decimal")) {
    const size_t open = name.find('(');
    const size_t comma = name.find(',', open);
    type.id = TypeId::kDecimal;
    type.precision = Number(std::string_view(name).substr(open + 1, comma - open - 1));
    type.scale = Number(std::string_view(name).substr(comma + 1));
    return type;
  }
  if (name.starts_with("fixed")) {
    type.id = TypeId::kFixed;
    type.length = Number(std::string_view(name).substr(5));
    return type;
  }
  // geometry / geography, with their parameters as written (a CRS is case-sensitive).
  const bool geography = name.starts_with("geography");
  type.id = geography ? TypeId::kGeography : TypeId::kGeometry;
  type.parameters = written.substr(geography ? 9 : 8);
  return type;
}

NestedField FieldFromJson(const Json& field);

Type TypeFromJson(const Json& json) {
  if (json.is_string()) return PrimitiveFromName(json.get<std::string>());
  Type type;
  const std::string kind = json.at("type").get<std::string>();
  if (kind == "struct") {
    type.id = TypeId::kStruct;
    for (const Json& field : json.at("fields")) type.fields.push_back(FieldFromJson(field));
  } else if (kind == "list") {
    type.id = TypeId::kList;
    NestedField element;
    element.id = json.at("element-id").get<int32_t>();
    element.name = "element";
    element.required = json.at("element-required").get<bool>();
    element.type = TypeFromJson(json.at("element"));
    type.fields.push_back(std::move(element));
  } else {
    type.id = TypeId::kMap;
    NestedField key;
    key.id = json.at("key-id").get<int32_t>();
    key.name = "key";
    key.required = true;
    key.type = TypeFromJson(json.at("key"));
    NestedField value;
    value.id = json.at("value-id").get<int32_t>();
    value.name = "value";
    value.required = json.at("value-required").get<bool>();
    value.type = TypeFromJson(json.at("value"));
    type.fields.push_back(std::move(key));
    type.fields.push_back(std::move(value));
  }
  return type;
}

NestedField FieldFromJson(const Json& json) {
  NestedField field;
  field.id = json.at("id").get<int32_t>();
  field.name = json.at("name").get<std::string>();
  field.required = json.at("required").get<bool>();
  field.type = TypeFromJson(json.at("type"));
  if (auto doc = json.find("doc"); doc != json.end() && doc->is_string()) field.doc = doc->get<std::string>();
  if (auto initial = json.find("initial-default"); initial != json.end() && !initial->is_null()) {
    field.initial_default_json = initial->dump();
  }
  if (auto write = json.find("write-default"); write != json.end() && !write->is_null()) {
    field.write_default_json = write->dump();
  }
  return field;
}

Json TypeToJson(const Type& type);

Json FieldToJson(const NestedField& field) {
  Json json = {
      {"id", field.id}, {"name", field.name}, {"required", field.required}, {"type", TypeToJson(field.type)}};
  if (!field.doc.empty()) json["doc"] = field.doc;
  if (!field.initial_default_json.empty()) json["initial-default"] = Json::parse(field.initial_default_json);
  if (!field.write_default_json.empty()) json["write-default"] = Json::parse(field.write_default_json);
  return json;
}

Json TypeToJson(const Type& type) {
  switch (type.id) {
    case TypeId::kStruct: {
      Json fields = Json::array();
      for (const NestedField& field : type.fields) fields.push_back(FieldToJson(field));
      return Json{{"type", "struct"}, {"fields", std::move(fields)}};
    }
    case TypeId::kList: {
      const NestedField& element = type.fields.at(0);
      return Json{{"type", "list"},
                  {"element-id", element.id},
                  {"element", TypeToJson(element.type)},
                  {"element-required", element.required}};
    }
    case TypeId::kMap: {
      const NestedField& key = type.fields.at(0);
      const NestedField& value = type.fields.at(1);
      return Json{{"type", "map"},
                  {"key-id", key.id},
                  {"key", TypeToJson(key.type)},
                  {"value-id", value.id},
                  {"value", TypeToJson(value.type)},
                  {"value-required", value.required}};
    }
    default:
      return type.Name();
  }
}

const NestedField* FindIn(const std::vector<NestedField>& fields, int32_t field_id) {
  for (const NestedField& field : fields) {
    if (field.id == field_id) return &field;
    if (const NestedField* found = FindIn(field.type.fields, field_id)) return found;
  }
  return nullptr;
}

int32_t HighestIn(const std::vector<NestedField>& fields) {
  int32_t highest = 0;
  for (const NestedField& field : fields)
    highest = std::max({highest, field.id, HighestIn(field.type.fields)});
  return highest;
}

}  // namespace

std::string Type::Name() const {
  switch (id) {
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(precision) + ", " + std::to_string(scale) + ")";
    case TypeId::kFixed:
      return "fixed[" + std::to_string(length) + "]";
    case TypeId::kGeometry:
      return "geometry" + parameters;
    case TypeId::kGeography:
      return "geography" + parameters;
    case TypeId::kStruct:
      return "struct";
    case TypeId::kList:
      return "list";
    case TypeId::kMap:
      return "map";
    default:
      for (const PrimitiveName& primitive : kPrimitiveNames) {
        if (primitive.id == id) return std::string(primitive.name);
      }
      return "unknown";
  }
}

const NestedField* Schema::FindField(int32_t field_id) const { return FindIn(fields, field_id); }

const NestedField* Schema::FindFieldByName(std::string_view dotted_name) const {
  const std::vector<NestedField>* level = &fields;
  const NestedField* found = nullptr;
  while (true) {
    const size_t dot = dotted_name.find('.');
    const std::string_view part = dotted_name.substr(0, dot);
    found = nullptr;
    for (const NestedField& field : *level) {
      if (field.name == part) {
        found = &field;
        break;
      }
    }
    if (found == nullptr || dot == std::string_view::npos) return found;
    level = &found->type.fields;
    dotted_name.remove_prefix(dot + 1);
  }
}

int32_t Schema::HighestFieldId() const { return HighestIn(fields); }

Schema SchemaFromJson(const Json& json) {
  Schema schema;
  if (auto id = json.find("schema-id"); id != json.end() && id->is_number_integer()) {
    schema.schema_id = id->get<int32_t>();
  }
  for (const Json& field : json.at("fields")) schema.fields.push_back(FieldFromJson(field));
  if (auto identifiers = json.find("identifier-field-ids");
      identifiers != json.end() && identifiers->is_array()) {
    for (const Json& id : *identifiers) schema.identifier_field_ids.push_back(id.get<int32_t>());
  }
  return schema;
}

Result<Schema> ParseSchema(std::string_view text) {
  SERAC_ASSIGN_OR_RETURN(Json json, ParseJson(text));
  SERAC_RETURN_IF_ERROR(ValidateSchema(json));
  SERAC_RETURN_IF_ERROR(OptionalInt32(json, "schema-id").status());
  return SchemaFromJson(json);
}

Json SchemaToJsonTree(const Schema& schema) {
  Json json = TypeToJson(Type{.id = TypeId::kStruct, .fields = schema.fields});
  json["schema-id"] = schema.schema_id;
  if (!schema.identifier_field_ids.empty()) json["identifier-field-ids"] = schema.identifier_field_ids;
  return json;
}

std::string SchemaToJson(const Schema& schema) {
  return SchemaToJsonTree(schema).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string PartitionSpecToJson(const PartitionSpec& spec) {
  Json fields = Json::array();
  for (const PartitionField& field : spec.fields) {
    Json entry = {{"name", field.name}, {"transform", field.transform}, {"field-id", field.field_id}};
    if (field.source_ids.size() == 1) {
      entry["source-id"] = field.source_ids[0];
    } else {
      entry["source-ids"] = field.source_ids;
    }
    fields.push_back(std::move(entry));
  }
  return Json{{"spec-id", spec.spec_id}, {"fields", fields}}.dump(-1, ' ', false,
                                                                  Json::error_handler_t::replace);
}

}  // namespace serac::iceberg
