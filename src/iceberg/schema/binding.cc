#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "iceberg/schema/binding_internal.h"

namespace serac::iceberg {
namespace {

// What a source type is, as far as the transforms care.
enum class TypeKind {
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,
  kDate,
  kTime,
  kTimestamp,
  kTimestampNano,
  kString,
  kUuid,
  kFixed,
  kBinary,
  kUnknown,
  kGeospatial,
  kOtherPrimitive,
  kVariant,
  kStruct,
  kList,
  kMap,
};

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

TypeKind KindOf(const Json& type) {
  if (type.is_object()) {
    const std::string kind = StringOr(type, "type", "");
    if (kind == "struct") return TypeKind::kStruct;
    if (kind == "list") return TypeKind::kList;
    if (kind == "map") return TypeKind::kMap;
    return TypeKind::kOtherPrimitive;
  }
  if (!type.is_string()) return TypeKind::kOtherPrimitive;
  const std::string name = Lower(type.get<std::string>());
  static const std::map<std::string, TypeKind, std::less<>> kNamed = {
      {"boolean", TypeKind::kBoolean},
      {"int", TypeKind::kInt},
      {"long", TypeKind::kLong},
      {"float", TypeKind::kFloat},
      {"double", TypeKind::kDouble},
      {"date", TypeKind::kDate},
      {"time", TypeKind::kTime},
      {"timestamp", TypeKind::kTimestamp},
      {"timestamptz", TypeKind::kTimestamp},
      {"timestamp_ns", TypeKind::kTimestampNano},
      {"timestamptz_ns", TypeKind::kTimestampNano},
      {"string", TypeKind::kString},
      {"uuid", TypeKind::kUuid},
      {"binary", TypeKind::kBinary},
      {"unknown", TypeKind::kUnknown},
      {"variant", TypeKind::kVariant}};
  if (auto it = kNamed.find(name); it != kNamed.end()) return it->second;
  if (StartsWith(name, "decimal")) return TypeKind::kDecimal;
  if (StartsWith(name, "fixed")) return TypeKind::kFixed;
  if (StartsWith(name, "geometry") || StartsWith(name, "geography")) return TypeKind::kGeospatial;
  return TypeKind::kOtherPrimitive;
}

bool IsPrimitive(TypeKind kind) {
  return kind != TypeKind::kVariant && kind != TypeKind::kStruct && kind != TypeKind::kList &&
         kind != TypeKind::kMap;
}

// A transform's name without its argument, lower-case ("bucket", "truncate", "day", ...).
std::string TransformName(const std::string& transform) {
  std::string name = Lower(transform);
  const size_t bracket = name.find('[');
  if (bracket != std::string::npos && !name.empty() && name.back() == ']') name.resize(bracket);
  return name;
}

// The reference's canTransform for each transform; transforms it does not know apply to anything.
bool CanTransform(const std::string& transform, TypeKind kind) {
  const std::string name = TransformName(transform);
  switch (kind) {
    case TypeKind::kVariant:
    case TypeKind::kStruct:
    case TypeKind::kList:
    case TypeKind::kMap:
      return name == "void";
    default:
      break;
  }
  if (name == "identity") return kind != TypeKind::kGeospatial;
  if (name == "bucket") {
    switch (kind) {
      case TypeKind::kInt:
      case TypeKind::kLong:
      case TypeKind::kDate:
      case TypeKind::kTime:
      case TypeKind::kTimestamp:
      case TypeKind::kTimestampNano:
      case TypeKind::kString:
      case TypeKind::kBinary:
      case TypeKind::kFixed:
      case TypeKind::kDecimal:
      case TypeKind::kUuid:
        return true;
      default:
        return false;
    }
  }
  if (name == "truncate") {
    return kind == TypeKind::kInt || kind == TypeKind::kLong || kind == TypeKind::kString ||
           kind == TypeKind::kBinary || kind == TypeKind::kDecimal;
  }
  if (name == "year" || name == "month" || name == "day") {
    return kind == TypeKind::kDate || kind == TypeKind::kTimestamp || kind == TypeKind::kTimestampNano;
  }
  if (name == "hour") return kind == TypeKind::kTimestamp || kind == TypeKind::kTimestampNano;
  return true;  // void, and transforms from a newer spec
}

// Every field id of a schema with its type and the id of the field that holds it.
struct FieldEntry {
  const Json* type = nullptr;
  std::optional<int64_t> parent;
};

void IndexType(const Json& type, std::optional<int64_t> parent, std::map<int64_t, FieldEntry>& index);

void IndexChild(const Json& holder, const char* id_key, const char* type_key, std::optional<int64_t> parent,
                std::map<int64_t, FieldEntry>& index) {
  auto id = holder.find(id_key);
  auto type = holder.find(type_key);
  if (id == holder.end() || !id->is_number_integer() || type == holder.end()) return;
  const int64_t field_id = id->get<int64_t>();
  index[field_id] = FieldEntry{&*type, parent};
  IndexType(*type, field_id, index);
}

void IndexType(const Json& type, std::optional<int64_t> parent, std::map<int64_t, FieldEntry>& index) {
  if (!type.is_object()) return;
  const std::string kind = StringOr(type, "type", "");
  if (kind == "struct") {
    auto fields = type.find("fields");
    if (fields == type.end() || !fields->is_array()) return;
    for (const Json& field : *fields) {
      if (field.is_object()) IndexChild(field, "id", "type", parent, index);
    }
  } else if (kind == "list") {
    IndexChild(type, "element-id", "element", parent, index);
  } else if (kind == "map") {
    IndexChild(type, "key-id", "key", parent, index);
    IndexChild(type, "value-id", "value", parent, index);
  }
}

// Full (dot-joined) names of a schema's fields, as the reference indexes them: a list's element is
// "<list>.element", a map's "<map>.key" and "<map>.value".
void IndexNames(const Json& type, const std::string& prefix, std::map<std::string, int64_t>& names) {
  if (!type.is_object()) return;
  auto add = [&](const std::string& name, const Json& holder, const char* id_key, const char* type_key) {
    auto id = holder.find(id_key);
    if (id == holder.end() || !id->is_number_integer()) return;
    const std::string full = prefix.empty() ? name : prefix + "." + name;
    names.emplace(full, id->get<int64_t>());
    if (auto child = holder.find(type_key); child != holder.end()) IndexNames(*child, full, names);
  };
  const std::string kind = StringOr(type, "type", "");
  if (kind == "struct") {
    auto fields = type.find("fields");
    if (fields == type.end() || !fields->is_array()) return;
    for (const Json& field : *fields) {
      if (field.is_object()) add(StringOr(field, "name", ""), field, "id", "type");
    }
  } else if (kind == "list") {
    add("element", type, "element-id", "element");
  } else if (kind == "map") {
    add("key", type, "key-id", "key");
    add("value", type, "value-id", "value");
  }
}

std::string TypeText(const Json& type) {
  return type.is_string() ? type.get<std::string>() : StringOr(type, "type", type.dump());
}

std::string FieldText(const Json& field) { return field.dump(); }

// One partition or sort field against the schema's index: its source column exists, is a
// primitive, and suits the transform. `what` is "partition" or "sort", the word the reference's
// messages use. Returns the source's entry for further checks.
Result<const FieldEntry*> BindSource(const Json& field, int64_t source_id,
                                     const std::map<int64_t, FieldEntry>& index, const char* what) {
  auto entry = index.find(source_id);
  if (entry == index.end()) {
    // Java checks this one with ValidationException, the rest of the binding with IllegalArgumentException.
    return Error(ErrorCode::kValidationFailed,
                 std::string("Cannot find source column for ") + what + " field: " + FieldText(field));
  }
  const TypeKind kind = KindOf(*entry->second.type);
  if (!IsPrimitive(kind)) {
    return Error(
        ErrorCode::kInvalidArgument,
        std::string("Cannot ") + what + " by non-primitive source field: " + TypeText(*entry->second.type));
  }
  const std::string transform = StringOr(field, "transform", "");
  if (!CanTransform(transform, kind)) {
    return Error(ErrorCode::kInvalidArgument,
                 "Invalid source type " + TypeText(*entry->second.type) + " for transform: " + transform);
  }
  return &entry->second;
}

// The fields of a spec or order that name a source column by an integer id (shape errors are
// the parsers' to report).
template <typename Visit>
Status ForEachSourcedField(const Json& spec_or_order, Visit visit) {
  auto fields = spec_or_order.find("fields");
  if (fields == spec_or_order.end() || !fields->is_array()) return Status::Ok();
  for (const Json& field : *fields) {
    auto source = field.find("source-id");
    if (source == field.end() || !source->is_number_integer()) continue;
    SERAC_RETURN_IF_ERROR(visit(field, source->get<int64_t>()));
  }
  return Status::Ok();
}

}  // namespace

Status CheckSpecCompatible(const Json& spec, const Json& schema) {
  std::map<int64_t, FieldEntry> index;
  IndexType(schema, std::nullopt, index);
  return ForEachSourcedField(spec, [&](const Json& field, int64_t source_id) -> Status {
    // A void field stands for a dropped column (v1): it binds to anything, even nothing.
    if (TransformName(StringOr(field, "transform", "")) == "void") return Status::Ok();
    SERAC_ASSIGN_OR_RETURN(const FieldEntry* entry, BindSource(field, source_id, index, "partition"));
    for (std::optional<int64_t> parent = entry->parent; parent;) {
      const FieldEntry& holder = index.at(*parent);
      if (KindOf(*holder.type) != TypeKind::kStruct) {
        return Error(ErrorCode::kInvalidArgument,
                     "Invalid partition field parent: " + TypeText(*holder.type));
      }
      parent = holder.parent;
    }
    return Status::Ok();
  });
}

Status CheckSpecFieldNames(const Json& spec, const Json& schema) {
  std::map<std::string, int64_t> names;
  IndexNames(schema, "", names);
  std::map<int64_t, FieldEntry> index;
  IndexType(schema, std::nullopt, index);
  return ForEachSourcedField(spec, [&](const Json& field, int64_t source_id) -> Status {
    if (index.count(source_id) == 0) return Status::Ok();  // a dropped source: the name is history
    const std::string name = StringOr(field, "name", "");
    auto column = names.find(name);
    if (column != names.end() && column->second != source_id) {
      return Error(ErrorCode::kInvalidArgument,
                   "Cannot create identity partition sourced from different field in schema: " + name);
    }
    return Status::Ok();
  });
}

bool SchemaHasField(const Json& schema, const std::string& full_name) {
  std::map<std::string, int64_t> names;
  IndexNames(schema, "", names);
  return names.count(full_name) != 0;
}

Status CheckSortOrderCompatible(const Json& order, const Json& schema) {
  std::map<int64_t, FieldEntry> index;
  IndexType(schema, std::nullopt, index);
  return ForEachSourcedField(order, [&](const Json& field, int64_t source_id) -> Status {
    return BindSource(field, source_id, index, "sort").status();
  });
}

}  // namespace serac::iceberg
