// Avro schemas in their JSON form: parsing with named types and namespaces, Iceberg's id attributes
// and logical types, and writing back with every attribute kept.
#include <nlohmann/json.hpp>
#include <set>

#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/avro/avro.h"

namespace serac::iceberg::avro {

namespace {

using OrderedJson = nlohmann::ordered_json;

Status Invalid(std::string message) {
  return Error(ErrorCode::kInvalidArgument, "Avro schema: " + std::move(message));
}

constexpr std::pair<std::string_view, Type> kPrimitiveNames[] = {
    {"null", Type::kNull},   {"boolean", Type::kBoolean}, {"int", Type::kInt},     {"long", Type::kLong},
    {"float", Type::kFloat}, {"double", Type::kDouble},   {"bytes", Type::kBytes}, {"string", Type::kString},
};

std::optional<Type> PrimitiveType(std::string_view name) {
  for (const auto& [primitive, type] : kPrimitiveNames) {
    if (primitive == name) return type;
  }
  return std::nullopt;
}

bool IsValidName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

bool IsValidFullName(std::string_view full_name) {
  size_t start = 0;
  while (true) {
    const size_t dot = full_name.find('.', start);
    if (!IsValidName(full_name.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

Result<std::optional<int32_t>> OptionalId(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return std::optional<int32_t>();
  if (!it->is_number_integer()) return Invalid(std::string(key) + " must be an integer");
  const int64_t id = it->get<int64_t>();
  if (id < INT32_MIN || id > INT32_MAX) return Invalid(std::string(key) + " out of range");
  return std::optional<int32_t>(static_cast<int32_t>(id));
}

class Parser {
 public:
  Result<SchemaPtr> Parse(const Json& json, const std::string& enclosing_namespace, uint32_t depth) {
    if (depth > limits::kAvroSchemaDepthMax) {
      return Invalid("nested deeper than limits::kAvroSchemaDepthMax (" +
                     std::to_string(limits::kAvroSchemaDepthMax) + ")");
    }
    if (json.is_string()) return Named(json.get<std::string>(), enclosing_namespace);
    if (json.is_array()) return Union(json, enclosing_namespace, depth);
    if (!json.is_object()) return Invalid("a schema is a type name, an object or a union array");
    auto type_member = json.find("type");
    if (type_member == json.end()) return Invalid("an object schema needs \"type\"");
    if (!type_member->is_string()) {
      // {"type": {...}} or {"type": [...]}: the type itself is nested (attributes beside it ignored).
      return Parse(*type_member, enclosing_namespace, depth + 1);
    }
    const std::string type_name = type_member->get<std::string>();
    auto schema = std::make_shared<Schema>();
    if (std::optional<Type> primitive = PrimitiveType(type_name)) {
      schema->type = *primitive;
    } else if (type_name == "record" || type_name == "error") {
      schema->type = Type::kRecord;
    } else if (type_name == "enum") {
      schema->type = Type::kEnum;
    } else if (type_name == "array") {
      schema->type = Type::kArray;
    } else if (type_name == "map") {
      schema->type = Type::kMap;
    } else if (type_name == "fixed") {
      schema->type = Type::kFixed;
    } else {
      return Named(type_name, enclosing_namespace);  // {"type": "some.Record"}
    }
    SERAC_RETURN_IF_ERROR(Attributes(json, *schema));
    switch (schema->type) {
      case Type::kRecord:
        return Record(json, std::move(schema), enclosing_namespace, depth);
      case Type::kEnum:
        return Enum(json, std::move(schema), enclosing_namespace);
      case Type::kFixed:
        return Fixed(json, std::move(schema), enclosing_namespace);
      case Type::kArray: {
        auto items = json.find("items");
        if (items == json.end()) return Invalid("an array needs \"items\"");
        SERAC_ASSIGN_OR_RETURN(schema->items, Parse(*items, enclosing_namespace, depth + 1));
        SERAC_ASSIGN_OR_RETURN(schema->element_id, OptionalId(json, "element-id"));
        return SchemaPtr(std::move(schema));
      }
      case Type::kMap: {
        auto values = json.find("values");
        if (values == json.end()) return Invalid("a map needs \"values\"");
        SERAC_ASSIGN_OR_RETURN(schema->values, Parse(*values, enclosing_namespace, depth + 1));
        SERAC_ASSIGN_OR_RETURN(schema->key_id, OptionalId(json, "key-id"));
        SERAC_ASSIGN_OR_RETURN(schema->value_id, OptionalId(json, "value-id"));
        return SchemaPtr(std::move(schema));
      }
      default:
        return SchemaPtr(std::move(schema));
    }
  }

 private:
  // The logical type and the attributes serac does not interpret, kept for writing back.
  Status Attributes(const Json& json, Schema& schema) {
    static const std::set<std::string> kStructural = {
        "type", "name",    "namespace", "fields",  "symbols",    "items",  "values",
        "size", "aliases", "doc",       "default", "element-id", "key-id", "value-id"};
    for (const auto& [key, value] : json.items()) {
      if (key == "logicalType") {
        if (!value.is_string()) return Invalid("logicalType must be a string");
        schema.logical_type = value.get<std::string>();
      } else if ((key == "precision" || key == "scale") && value.is_number_integer()) {
        const int64_t number = value.get<int64_t>();
        if (number < 0 || number > INT32_MAX) return Invalid(key + " out of range");
        (key == "precision" ? schema.precision : schema.scale) = static_cast<int32_t>(number);
        schema.properties[key] = value.dump();
      } else if (!kStructural.count(key)) {
        schema.properties[key] = value.dump(-1, ' ', false, Json::error_handler_t::replace);
      }
    }
    return Status::Ok();
  }

  Result<std::string> FullName(const Json& json, const std::string& enclosing_namespace,
                               std::string& own_namespace) {
    SERAC_ASSIGN_OR_RETURN(std::string name, RequiredString(json, "name"));
    std::string space = enclosing_namespace;
    if (auto ns = json.find("namespace"); ns != json.end() && !ns->is_null()) {
      if (!ns->is_string()) return Invalid("namespace must be a string");
      space = ns->get<std::string>();
    }
    std::string full = name.find('.') != std::string::npos || space.empty() ? name : space + "." + name;
    if (!IsValidFullName(full)) return Invalid("invalid name \"" + full + "\"");
    if (PrimitiveType(full)) return Invalid("a named type cannot be called \"" + full + "\"");
    own_namespace = full.substr(0, full.rfind('.') == std::string::npos ? 0 : full.rfind('.'));
    if (!named_.emplace(full, nullptr).second) return Invalid("type \"" + full + "\" is defined twice");
    return full;
  }

  Result<SchemaPtr> Named(const std::string& name, const std::string& enclosing_namespace) {
    if (std::optional<Type> primitive = PrimitiveType(name)) return Primitive(*primitive);
    // A name without a dot is relative to the enclosing namespace first.
    auto found = named_.end();
    if (name.find('.') == std::string::npos && !enclosing_namespace.empty()) {
      found = named_.find(enclosing_namespace + "." + name);
    }
    if (found == named_.end()) found = named_.find(name);
    if (found == named_.end()) return Invalid("unknown type \"" + name + "\"");
    if (found->second == nullptr) return Invalid("recursive type \"" + found->first + "\" is not supported");
    return found->second;
  }

  Result<SchemaPtr> Union(const Json& json, const std::string& enclosing_namespace, uint32_t depth) {
    auto schema = std::make_shared<Schema>();
    schema->type = Type::kUnion;
    std::set<std::string> seen;
    for (const Json& branch_json : json) {
      SERAC_ASSIGN_OR_RETURN(SchemaPtr branch, Parse(branch_json, enclosing_namespace, depth + 1));
      if (branch->type == Type::kUnion) return Invalid("a union cannot directly contain a union");
      const bool named =
          branch->type == Type::kRecord || branch->type == Type::kEnum || branch->type == Type::kFixed;
      const std::string key = named ? branch->name : std::string(TypeName(branch->type));
      if (!seen.insert(key).second) return Invalid("a union holds " + key + " twice");
      schema->branches.push_back(std::move(branch));
    }
    if (schema->branches.empty()) return Invalid("a union needs at least one branch");
    return SchemaPtr(std::move(schema));
  }

  Status Aliases(const Json& json, std::vector<std::string>& aliases) {
    auto it = json.find("aliases");
    if (it == json.end()) return Status::Ok();
    if (!it->is_array()) return Invalid("aliases must be an array of names");
    for (const Json& alias : *it) {
      if (!alias.is_string()) return Invalid("aliases must be an array of names");
      aliases.push_back(alias.get<std::string>());
    }
    return Status::Ok();
  }

  Result<SchemaPtr> Record(const Json& json, std::shared_ptr<Schema> schema,
                           const std::string& enclosing_namespace, uint32_t depth) {
    std::string own_namespace;
    SERAC_ASSIGN_OR_RETURN(schema->name, FullName(json, enclosing_namespace, own_namespace));
    auto fields = json.find("fields");
    if (fields == json.end() || !fields->is_array())
      return Invalid("record " + schema->name + " needs \"fields\"");
    std::set<std::string> names;
    for (const Json& field_json : *fields) {
      if (!field_json.is_object()) return Invalid("a field of " + schema->name + " is not an object");
      Field field;
      SERAC_ASSIGN_OR_RETURN(field.name, RequiredString(field_json, "name"));
      if (!IsValidName(field.name)) return Invalid("invalid field name \"" + field.name + "\"");
      if (!names.insert(field.name).second) return Invalid("field " + field.name + " appears twice");
      auto type = field_json.find("type");
      if (type == field_json.end()) return Invalid("field " + field.name + " needs \"type\"");
      SERAC_ASSIGN_OR_RETURN(field.type, Parse(*type, own_namespace, depth + 1));
      if (auto value = field_json.find("default"); value != field_json.end()) {
        field.default_json = value->dump(-1, ' ', false, Json::error_handler_t::replace);
      }
      SERAC_RETURN_IF_ERROR(Aliases(field_json, field.aliases));
      SERAC_ASSIGN_OR_RETURN(field.field_id, OptionalId(field_json, "field-id"));
      field.doc = StringOr(field_json, "doc", "");
      for (const auto& [key, value] : field_json.items()) {
        if (key != "name" && key != "type" && key != "default" && key != "aliases" && key != "field-id" &&
            key != "doc") {
          field.properties[key] = value.dump(-1, ' ', false, Json::error_handler_t::replace);
        }
      }
      schema->fields.push_back(std::move(field));
    }
    named_[schema->name] = schema;
    return SchemaPtr(std::move(schema));
  }

  Result<SchemaPtr> Enum(const Json& json, std::shared_ptr<Schema> schema,
                         const std::string& enclosing_namespace) {
    std::string own_namespace;
    SERAC_ASSIGN_OR_RETURN(schema->name, FullName(json, enclosing_namespace, own_namespace));
    auto symbols = json.find("symbols");
    if (symbols == json.end() || !symbols->is_array())
      return Invalid("enum " + schema->name + " needs \"symbols\"");
    std::set<std::string> seen;
    for (const Json& symbol : *symbols) {
      if (!symbol.is_string() || !IsValidName(symbol.get<std::string>())) {
        return Invalid("enum " + schema->name + " has an invalid symbol");
      }
      if (!seen.insert(symbol.get<std::string>()).second) return Invalid("enum symbol repeated");
      schema->symbols.push_back(symbol.get<std::string>());
    }
    if (auto fallback = json.find("default"); fallback != json.end()) {
      if (!fallback->is_string() || !seen.count(fallback->get<std::string>())) {
        return Invalid("enum " + schema->name + " default is not one of its symbols");
      }
      schema->enum_default = fallback->get<std::string>();
    }
    named_[schema->name] = schema;
    return SchemaPtr(std::move(schema));
  }

  Result<SchemaPtr> Fixed(const Json& json, std::shared_ptr<Schema> schema,
                          const std::string& enclosing_namespace) {
    std::string own_namespace;
    SERAC_ASSIGN_OR_RETURN(schema->name, FullName(json, enclosing_namespace, own_namespace));
    auto size = json.find("size");
    if (size == json.end() || !size->is_number_integer() || size->get<int64_t>() < 0 ||
        size->get<int64_t>() > static_cast<int64_t>(limits::kAvroFixedBytesMax)) {
      return Invalid("fixed " + schema->name + " needs a size from 0 to limits::kAvroFixedBytesMax");
    }
    schema->fixed_size = static_cast<int32_t>(size->get<int64_t>());
    named_[schema->name] = schema;
    return SchemaPtr(std::move(schema));
  }

  // Full name → the type once parsed; null while it is still being parsed (a reference then is a
  // recursion).
  std::map<std::string, SchemaPtr> named_;
};

// ---- Writing ----

OrderedJson PropertyValue(const std::string& json_text) {
  OrderedJson value = OrderedJson::parse(json_text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? OrderedJson(json_text) : value;
}

class Writer {
 public:
  OrderedJson Write(const Schema& schema) {
    const bool named =
        schema.type == Type::kRecord || schema.type == Type::kEnum || schema.type == Type::kFixed;
    if (named && !written_.insert(schema.name).second) return OrderedJson(schema.name);
    if (schema.type == Type::kUnion) {
      OrderedJson branches = OrderedJson::array();
      for (const SchemaPtr& branch : schema.branches) branches.push_back(Write(*branch));
      return branches;
    }
    const bool plain = schema.logical_type.empty() && schema.properties.empty();
    if (!named && plain && schema.type != Type::kArray && schema.type != Type::kMap) {
      return OrderedJson(std::string(TypeName(schema.type)));
    }
    OrderedJson out = OrderedJson::object();
    out["type"] = std::string(TypeName(schema.type));
    if (named) out["name"] = schema.name;
    switch (schema.type) {
      case Type::kRecord: {
        OrderedJson fields = OrderedJson::array();
        for (const Field& field : schema.fields) fields.push_back(WriteField(field));
        out["fields"] = std::move(fields);
        break;
      }
      case Type::kEnum:
        out["symbols"] = schema.symbols;
        if (schema.enum_default) out["default"] = *schema.enum_default;
        break;
      case Type::kFixed:
        out["size"] = schema.fixed_size;
        break;
      case Type::kArray:
        out["items"] = Write(*schema.items);
        if (schema.element_id) out["element-id"] = *schema.element_id;
        break;
      case Type::kMap:
        out["values"] = Write(*schema.values);
        if (schema.key_id) out["key-id"] = *schema.key_id;
        if (schema.value_id) out["value-id"] = *schema.value_id;
        break;
      default:
        break;
    }
    if (!schema.logical_type.empty()) out["logicalType"] = schema.logical_type;
    for (const auto& [key, value] : schema.properties) out[key] = PropertyValue(value);
    return out;
  }

 private:
  OrderedJson WriteField(const Field& field) {
    OrderedJson out = OrderedJson::object();
    out["name"] = field.name;
    out["type"] = Write(*field.type);
    if (!field.doc.empty()) out["doc"] = field.doc;
    if (field.default_json) out["default"] = PropertyValue(*field.default_json);
    if (!field.aliases.empty()) out["aliases"] = field.aliases;
    if (field.field_id) out["field-id"] = *field.field_id;
    for (const auto& [key, value] : field.properties) out[key] = PropertyValue(value);
    return out;
  }

  std::set<std::string> written_;
};

}  // namespace

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kNull:
      return "null";
    case Type::kBoolean:
      return "boolean";
    case Type::kInt:
      return "int";
    case Type::kLong:
      return "long";
    case Type::kFloat:
      return "float";
    case Type::kDouble:
      return "double";
    case Type::kBytes:
      return "bytes";
    case Type::kString:
      return "string";
    case Type::kRecord:
      return "record";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kUnion:
      return "union";
    case Type::kFixed:
      return "fixed";
  }
  return "unknown";
}

int Schema::FieldIndex(std::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

const Schema* Schema::OptionalOf() const {
  if (type != Type::kUnion || branches.size() != 2) return nullptr;
  if (branches[0]->type == Type::kNull) return branches[1].get();
  if (branches[1]->type == Type::kNull) return branches[0].get();
  return nullptr;
}

Result<SchemaPtr> ParseSchema(std::string_view json) {
  if (json.size() > limits::kAvroHeaderBytesMax) return Invalid("larger than limits::kAvroHeaderBytesMax");
  Result<Json> parsed = ParseJson(json);
  if (!parsed.ok()) return Invalid(parsed.status().message());
  Parser parser;
  return parser.Parse(*parsed, "", 0);
}

std::string SchemaToJson(const Schema& schema) {
  Writer writer;
  return writer.Write(schema).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

SchemaPtr Primitive(Type type, std::string logical_type) {
  auto schema = std::make_shared<Schema>();
  schema->type = type;
  schema->logical_type = std::move(logical_type);
  return schema;
}

SchemaPtr Optional(SchemaPtr type) {
  auto schema = std::make_shared<Schema>();
  schema->type = Type::kUnion;
  schema->branches = {Primitive(Type::kNull), std::move(type)};
  return schema;
}

}  // namespace serac::iceberg::avro
