// Walks over Iceberg schema JSON: validation, highest field id, v3-only features, id reassignment.
// Validation refuses whatever the reference's parser and Schema refuse (SchemaParser,
// Types.fromTypeName, SingleValueParser): serac stores schemas as sent, and Java engines re-parse
// them on every load, so one it would refuse leaves the table or view unloadable for them.
#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {
namespace {

Status Invalid(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Java's regular-expression \s, which the reference's type-name patterns use.
bool IsPatternSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\x0B' || c == '\f' || c == '\r';
}

std::string_view TrimPatternSpace(std::string_view text) {
  while (!text.empty() && IsPatternSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsPatternSpace(text.back())) text.remove_suffix(1);
  return text;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// One or more ASCII digits whose value fits an int32 (the reference reads them with parseInt).
std::optional<int32_t> DigitsValue(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > INT32_MAX) return std::nullopt;
  }
  return static_cast<int32_t>(value);
}

// The text between `open` right after `keyword` and the closing `close` that ends the name, if
// the name has that shape.
std::optional<std::string_view> Parameters(std::string_view name, std::string_view keyword, char open,
                                           char close) {
  if (!StartsWith(name, keyword) || name.size() < keyword.size() + 2) return std::nullopt;
  if (name[keyword.size()] != open || name.back() != close) return std::nullopt;
  return name.substr(keyword.size() + 1, name.size() - keyword.size() - 2);
}

Status BadTypeName(const std::string& name) {
  return Invalid("Cannot parse type string to primitive: " + name);
}

// "geometry", "geometry(crs)", "geography", "geography(crs)" and "geography(crs, algorithm)",
// with the reference's patterns (Types.fromTypeName). `lower` is the name in lower case.
Status CheckGeospatialName(const std::string& name, std::string_view lower) {
  const bool geography = StartsWith(lower, "geography");
  std::string_view rest = lower.substr(geography ? 9 : 8);
  while (!rest.empty() && IsPatternSpace(rest.front())) rest.remove_prefix(1);
  if (rest.empty()) return Status::Ok();
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return BadTypeName(name);
  std::string_view inside = rest.substr(1, rest.size() - 2);
  std::string_view crs = inside;
  if (!geography) {
    if (inside.find(')') != std::string_view::npos) return BadTypeName(name);
  } else if (const size_t comma = inside.find(','); comma != std::string_view::npos) {
    crs = inside.substr(0, comma);
    const std::string_view algorithm = TrimPatternSpace(inside.substr(comma + 1));
    const bool word = std::all_of(algorithm.begin(), algorithm.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    });
    if (!word) return BadTypeName(name);
    static const std::set<std::string, std::less<>> kAlgorithms = {"spherical", "vincenty", "thomas",
                                                                   "andoyer", "karney"};
    if (kAlgorithms.count(algorithm) == 0) {
      return Invalid("Invalid edge interpolation algorithm: " + std::string(algorithm));
    }
  }
  if (TrimPatternSpace(crs).empty()) return Invalid("Invalid CRS: (empty string)");
  return Status::Ok();
}

// A primitive type name the reference knows, in any letter case (Types.fromTypeName).
Status CheckPrimitiveName(const std::string& name) {
  static const std::set<std::string, std::less<>> kNames = {
      "boolean", "int",       "long",        "float",        "double",         "date",
      "time",    "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns", "string",
      "uuid",    "binary",    "unknown",     "variant",      "geometry",       "geography"};
  const std::string lower = AsciiLower(name);
  if (kNames.count(lower) != 0) return Status::Ok();
  if (StartsWith(lower, "geometry") || StartsWith(lower, "geography"))
    return CheckGeospatialName(name, lower);
  if (auto length = Parameters(lower, "fixed", '[', ']')) {
    if (!DigitsValue(TrimPatternSpace(*length))) return BadTypeName(name);
    return Status::Ok();
  }
  if (auto parameters = Parameters(lower, "decimal", '(', ')')) {
    const size_t comma = parameters->find(',');
    if (comma == std::string_view::npos) return BadTypeName(name);
    const std::optional<int32_t> precision = DigitsValue(TrimPatternSpace(parameters->substr(0, comma)));
    const std::optional<int32_t> scale = DigitsValue(TrimPatternSpace(parameters->substr(comma + 1)));
    if (!precision || !scale) return BadTypeName(name);
    if (*precision > 38) {
      return Invalid("Decimals with precision larger than 38 are not supported: " +
                     std::to_string(*precision));
    }
    return Status::Ok();
  }
  return BadTypeName(name);
}

bool IsPrimitive(const Json& type, std::string_view lower_name) {
  return type.is_string() && AsciiLower(type.get<std::string>()) == lower_name;
}

bool IsHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
}

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// java.time's ISO_LOCAL_DATE: yyyy-MM-dd (a sign and more digits for years beyond 9999), a real day.
bool IsIsoDate(std::string_view text) {
  std::string_view year = text.substr(0, text.size() >= 6 ? text.size() - 6 : 0);
  if (year.empty() || text.size() < 10 || text[text.size() - 6] != '-' || text[text.size() - 3] != '-')
    return false;
  const bool signed_year = year.front() == '+' || year.front() == '-';
  if (signed_year) year.remove_prefix(1);
  if (!AllDigits(year) || year.size() < 4 || year.size() > 9 || (year.size() > 4 && !signed_year))
    return false;
  const std::string_view month = text.substr(text.size() - 5, 2);
  const std::string_view day = text.substr(text.size() - 2, 2);
  if (!AllDigits(month) || !AllDigits(day)) return false;
  const int64_t y = std::stoll(std::string(year)) * (text.front() == '-' ? -1 : 1);
  const int m = std::stoi(std::string(month));
  const int d = std::stoi(std::string(day));
  if (m < 1 || m > 12 || d < 1) return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

// java.time's ISO_LOCAL_TIME: HH:mm, then optionally :ss and a fraction of one to nine digits.
bool IsIsoTime(std::string_view text) {
  auto two_digits = [](std::string_view part, int max) {
    return part.size() == 2 && AllDigits(part) && std::stoi(std::string(part)) <= max;
  };
  if (text.size() < 5 || text[2] != ':' || !two_digits(text.substr(0, 2), 23) ||
      !two_digits(text.substr(3, 2), 59)) {
    return false;
  }
  text.remove_prefix(5);
  if (text.empty()) return true;
  if (text.size() < 3 || text[0] != ':' || !two_digits(text.substr(1, 2), 59)) return false;
  text.remove_prefix(3);
  // A fraction of up to nine digits after the point; java.time takes a bare point as well.
  if (text.empty()) return true;
  return text[0] == '.' && text.size() <= 10 && (text.size() == 1 || AllDigits(text.substr(1)));
}

bool IsIsoLocalDateTime(std::string_view text) {
  const size_t t = text.find('T');
  return t != std::string_view::npos && IsIsoDate(text.substr(0, t)) && IsIsoTime(text.substr(t + 1));
}

// java.time's ISO_DATE_TIME with the UTC offset the reference requires: Z, +00:00 or -00:00
// (seconds allowed). A trailing [zone] is refused, though java.time would check and take it.
bool IsIsoUtcDateTime(std::string_view text) {
  if (!text.empty() && text.back() == 'Z') return IsIsoLocalDateTime(text.substr(0, text.size() - 1));
  for (std::string_view offset : {"+00:00", "-00:00", "+00:00:00", "-00:00:00"}) {
    if (text.size() > offset.size() && text.substr(text.size() - offset.size()) == offset) {
      return IsIsoLocalDateTime(text.substr(0, text.size() - offset.size()));
    }
  }
  return false;
}

bool IsUuidText(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : std::isxdigit(static_cast<unsigned char>(text[i])) == 0) return false;
  }
  return true;
}

// The scale of a decimal text as java.math.BigDecimal reads it, if it reads it at all.
std::optional<int64_t> DecimalTextScale(std::string_view text) {
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) text.remove_prefix(1);
  int64_t exponent = 0;
  if (const size_t e = text.find_first_of("eE"); e != std::string_view::npos) {
    std::string_view digits = text.substr(e + 1);
    const bool negative = !digits.empty() && digits.front() == '-';
    if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
    if (!AllDigits(digits) || digits.size() > 9) return std::nullopt;
    exponent = std::stoll(std::string(digits)) * (negative ? -1 : 1);
    text = text.substr(0, e);
  }
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  if (whole.empty() && fraction.empty()) return std::nullopt;
  if ((!whole.empty() && !AllDigits(whole)) || (!fraction.empty() && !AllDigits(fraction)))
    return std::nullopt;
  return static_cast<int64_t>(fraction.size()) - exponent;
}

// Whether a non-null default suits the field's type, as the reference's SingleValueParser and
// NestedField decide: nested, variant, unknown and geospatial types take no default at all.
bool DefaultFitsType(const Json& value, const Json& type) {
  if (!type.is_string()) return false;
  const std::string name = AsciiLower(type.get<std::string>());
  if (name == "boolean") return value.is_boolean();
  if (name == "int" || name == "long") {
    const int64_t max = name == "int" ? INT32_MAX : INT64_MAX;
    const int64_t min = name == "int" ? INT32_MIN : INT64_MIN;
    if (value.is_number_unsigned()) return value.get<uint64_t>() <= static_cast<uint64_t>(max);
    return value.is_number_integer() && value.get<int64_t>() >= min && value.get<int64_t>() <= max;
  }
  if (name == "float" || name == "double") return value.is_number_float();
  if (!value.is_string()) return false;
  const std::string text = value.get<std::string>();
  if (name == "string") return true;
  if (name == "uuid") return IsUuidText(text);
  if (name == "date") return IsIsoDate(text);
  if (name == "time") return IsIsoTime(text);
  if (name == "timestamp" || name == "timestamp_ns") return IsIsoLocalDateTime(text);
  if (name == "timestamptz" || name == "timestamptz_ns") return IsIsoUtcDateTime(text);
  if (name == "binary") return text.size() % 2 == 0 && IsHex(text);
  if (auto length = Parameters(name, "fixed", '[', ']')) {
    const std::optional<int32_t> bytes = DigitsValue(TrimPatternSpace(*length));
    return bytes && text.size() == static_cast<size_t>(*bytes) * 2 && IsHex(text);
  }
  if (auto parameters = Parameters(name, "decimal", '(', ')')) {
    const std::optional<int32_t> scale =
        DigitsValue(TrimPatternSpace(parameters->substr(parameters->find(',') + 1)));
    const std::optional<int64_t> text_scale = DecimalTextScale(text);
    return scale && text_scale && *text_scale == *scale;
  }
  return false;
}

Status CheckDefault(const Json& field, const char* key, const std::string& name) {
  auto value = field.find(key);
  if (value == field.end() || value->is_null()) return Status::Ok();
  const Json& type = field.at("type");
  if (!DefaultFitsType(*value, type)) {
    return Invalid("Cannot parse " + std::string(key) + " of field " + name + " as a " +
                   (type.is_string() ? type.get<std::string>() : StringOr(type, "type", "nested")) +
                   " value: " + ShownJson(*value));
  }
  return Status::Ok();
}

// What the reference's schema checks need of one field: a struct field, list element, map key or value.
struct FieldFacts {
  std::string full_name;  // "a.b", "tags.element", "props.value.x"
  const Json* type = nullptr;
  bool required = false;
  std::optional<int32_t> parent;  // the field it is nested in; none at the top level
};

// Checks a schema as the reference parses it (SchemaParser, Types.fromTypeName) and builds it
// (Schema: unique full names and ids, identifier fields).
class SchemaChecker {
 public:
  Status CheckStruct(const Json& type, uint32_t depth, std::optional<int32_t> parent,
                     const std::string& path);
  Status CheckIdentifierField(int32_t id) const;

 private:
  Status CheckType(const Json& type, uint32_t depth, std::optional<int32_t> parent, const std::string& path);
  Status CheckStructField(const Json& field, uint32_t depth, std::optional<int32_t> parent,
                          const std::string& path);
  Status CheckList(const Json& type, uint32_t depth, std::optional<int32_t> parent, const std::string& path);
  Status CheckMap(const Json& type, uint32_t depth, std::optional<int32_t> parent, const std::string& path);
  // Records a field, which must be new by id and full name; a required one may not be of type unknown.
  Status Add(int32_t id, const std::string& short_name, const Json& type, bool required,
             std::optional<int32_t> parent, const std::string& path);

  std::map<int32_t, FieldFacts> fields_;
  std::map<std::string, int32_t> ids_by_name_;
};

Status SchemaChecker::Add(int32_t id, const std::string& short_name, const Json& type, bool required,
                          std::optional<int32_t> parent, const std::string& path) {
  if (required && IsPrimitive(type, "unknown")) {
    return Invalid("Cannot create required field with unknown type: " + short_name);
  }
  const std::string full_name = path.empty() ? short_name : path + "." + short_name;
  auto [named, new_name] = ids_by_name_.emplace(full_name, id);
  if (!new_name) {
    return Invalid("Invalid schema: multiple fields for name " + full_name + ": " +
                   std::to_string(named->second) + " and " + std::to_string(id));
  }
  auto [existing, new_id] = fields_.emplace(id, FieldFacts{full_name, &type, required, parent});
  if (!new_id) {
    return Invalid("Invalid schema: multiple fields for id " + std::to_string(id) + ": " +
                   existing->second.full_name + " and " + full_name);
  }
  return Status::Ok();
}

Status SchemaChecker::CheckType(const Json& type, uint32_t depth, std::optional<int32_t> parent,
                                const std::string& path) {
  if (depth > limits::kIcebergTypeNestingDepthMax) {
    return Error(ErrorCode::kLimitExceeded, "schema nesting deeper than kIcebergTypeNestingDepthMax");
  }
  if (type.is_string()) return CheckPrimitiveName(type.get<std::string>());
  const std::string kind = StringOr(type, "type", "");
  if (kind == "struct") return CheckStruct(type, depth, parent, path);
  if (kind == "list") return CheckList(type, depth, parent, path);
  if (kind == "map") return CheckMap(type, depth, parent, path);
  return Invalid("Cannot parse type from json: " + ShownJson(type));
}

Status SchemaChecker::CheckStruct(const Json& type, uint32_t depth, std::optional<int32_t> parent,
                                  const std::string& path) {
  auto fields = type.find("fields");
  if (fields == type.end() || fields->is_null()) return Invalid("Cannot parse missing field: fields");
  if (!fields->is_array()) return Invalid("Cannot parse struct fields from non-array: " + ShownJson(*fields));
  for (const Json& field : *fields) SERAC_RETURN_IF_ERROR(CheckStructField(field, depth, parent, path));
  return Status::Ok();
}

Status SchemaChecker::CheckStructField(const Json& field, uint32_t depth, std::optional<int32_t> parent,
                                       const std::string& path) {
  if (!field.is_object()) return Invalid("Cannot parse struct field from non-object: " + ShownJson(field));
  SERAC_ASSIGN_OR_RETURN(int32_t id, RequiredInt32(field, "id"));
  SERAC_ASSIGN_OR_RETURN(std::string name, RequiredString(field, "name"));
  auto type = field.find("type");
  if (type == field.end() || type->is_null())
    return Invalid("Cannot parse missing field: type (of field " + name + ")");
  SERAC_RETURN_IF_ERROR(CheckOptionalString(field, "doc"));
  SERAC_ASSIGN_OR_RETURN(bool required, RequiredBool(field, "required"));
  SERAC_RETURN_IF_ERROR(Add(id, name, *type, required, parent, path));
  SERAC_RETURN_IF_ERROR(CheckType(*type, depth + 1, id, path.empty() ? name : path + "." + name));
  SERAC_RETURN_IF_ERROR(CheckDefault(field, "initial-default", name));
  return CheckDefault(field, "write-default", name);
}

Status SchemaChecker::CheckList(const Json& type, uint32_t depth, std::optional<int32_t> parent,
                                const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(int32_t element_id, RequiredInt32(type, "element-id"));
  auto element = type.find("element");
  if (element == type.end() || element->is_null()) return Invalid("Cannot parse missing field: element");
  SERAC_ASSIGN_OR_RETURN(bool element_required, RequiredBool(type, "element-required"));
  SERAC_RETURN_IF_ERROR(Add(element_id, "element", *element, element_required, parent, path));
  return CheckType(*element, depth + 1, element_id, path + ".element");
}

Status SchemaChecker::CheckMap(const Json& type, uint32_t depth, std::optional<int32_t> parent,
                               const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(int32_t key_id, RequiredInt32(type, "key-id"));
  auto key = type.find("key");
  if (key == type.end() || key->is_null()) return Invalid("Cannot parse missing field: key");
  SERAC_ASSIGN_OR_RETURN(int32_t value_id, RequiredInt32(type, "value-id"));
  auto value = type.find("value");
  if (value == type.end() || value->is_null()) return Invalid("Cannot parse missing field: value");
  SERAC_ASSIGN_OR_RETURN(bool value_required, RequiredBool(type, "value-required"));
  SERAC_RETURN_IF_ERROR(Add(key_id, "key", *key, /*required=*/true, parent, path));
  SERAC_RETURN_IF_ERROR(Add(value_id, "value", *value, value_required, parent, path));
  SERAC_RETURN_IF_ERROR(CheckType(*key, depth + 1, key_id, path + ".key"));
  return CheckType(*value, depth + 1, value_id, path + ".value");
}

// The reference's rule (Schema.validateIdentifierField): a required primitive that is not a float
// or double, reached from the top only through required struct fields.
Status SchemaChecker::CheckIdentifierField(int32_t id) const {
  auto found = fields_.find(id);
  if (found == fields_.end()) {
    return Invalid("Cannot add fieldId " + std::to_string(id) +
                   " as an identifier field: field does not exist");
  }
  const FieldFacts& field = found->second;
  const std::string prefix = "Cannot add field " + field.full_name + " as an identifier field: ";
  const bool primitive = field.type->is_string() && !IsPrimitive(*field.type, "variant");
  if (!primitive) return Invalid(prefix + "not a primitive type field");
  if (!field.required) return Invalid(prefix + "not a required field");
  if (IsPrimitive(*field.type, "float") || IsPrimitive(*field.type, "double")) {
    return Invalid(prefix + "must not be float or double field");
  }
  for (std::optional<int32_t> parent = field.parent; parent; parent = fields_.at(*parent).parent) {
    const FieldFacts& outer = fields_.at(*parent);
    if (StringOr(*outer.type, "type", "") != "struct")
      return Invalid(prefix + "must not be nested in " + outer.full_name);
    if (!outer.required)
      return Invalid(prefix + "must not be nested in an optional field " + outer.full_name);
  }
  return Status::Ok();
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
  const std::string kind = StringOr(type, "type", "");
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

// Type names are read in any letter case, so the check ignores it too.
bool IsV3OnlyPrimitive(const std::string& type_name) {
  const std::string name = AsciiLower(type_name);
  return name == "timestamp_ns" || name == "timestamptz_ns" || name == "variant" || name == "unknown" ||
         StartsWith(name, "geometry") || StartsWith(name, "geography");
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
  const std::string kind = StringOr(type, "type", "");
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
  if (kind != "struct") return Invalid("Cannot create schema, not a struct type: " + kind);
  SERAC_RETURN_IF_ERROR(OptionalInt32(schema, "schema-id").status());
  SchemaChecker checker;
  SERAC_RETURN_IF_ERROR(checker.CheckStruct(schema, 0, std::nullopt, ""));
  auto identifiers = schema.find("identifier-field-ids");
  if (identifiers != schema.end() && !identifiers->is_null()) {
    SERAC_RETURN_IF_ERROR(CheckInt32List(schema, "identifier-field-ids"));
    for (const Json& id : *identifiers)
      SERAC_RETURN_IF_ERROR(checker.CheckIdentifierField(id.get<int32_t>()));
  }
  return Status::Ok();
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
                     "initial-default of field " + StringOr(field, "name", "") + " needs format version 3");
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

std::string SchemaContentKey(const Json& schema) { return WithoutSchemaId(schema).dump(); }

}  // namespace serac::iceberg
