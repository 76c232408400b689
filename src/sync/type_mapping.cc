// The mapping table of type_mapping.h.
#include "sync/type_mapping.h"

#include <map>

namespace serac::sync {
namespace {

iceberg::Type Primitive(iceberg::TypeId id) {
  iceberg::Type type;
  type.id = id;
  return type;
}

MappedType Text() { return {Primitive(iceberg::TypeId::kString), true}; }

// numeric's typmod packs (precision << 16 | scale) + 4 (VARHDRSZ); -1 when unconstrained.
MappedType Numeric(int32_t type_modifier) {
  if (type_modifier < 4) return Text();  // unconstrained: any number of digits
  const int32_t packed = type_modifier - 4;
  const int32_t precision = (packed >> 16) & 0xFFFF;
  int32_t scale = packed & 0xFFFF;
  if (scale & 0x8000) scale -= 0x10000;  // PostgreSQL 15 allows negative scales
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) return Text();
  iceberg::Type type = Primitive(iceberg::TypeId::kDecimal);
  type.precision = precision;
  type.scale = scale;
  return {type, false};
}

Result<MappedType> BaseType(const std::string& name, int32_t type_modifier) {
  using iceberg::TypeId;
  static const std::map<std::string, TypeId> kExact = {
      {"bool", TypeId::kBoolean},
      {"int2", TypeId::kInt},
      {"int4", TypeId::kInt},
      {"int8", TypeId::kLong},
      {"oid", TypeId::kLong},
      {"float4", TypeId::kFloat},
      {"float8", TypeId::kDouble},
      {"date", TypeId::kDate},
      {"time", TypeId::kTime},
      {"timestamp", TypeId::kTimestamp},
      {"timestamptz", TypeId::kTimestampTz},
      {"uuid", TypeId::kUuid},
      {"bytea", TypeId::kBinary},
      {"text", TypeId::kString},
      {"varchar", TypeId::kString},
      {"bpchar", TypeId::kString},
      {"char", TypeId::kString},
      {"name", TypeId::kString},
      {"citext", TypeId::kString},
  };
  if (name == "numeric") return Numeric(type_modifier);
  if (name == "money") {
    // money's text depends on lc_monetary ("$1,234.56"); its value is exact in cents as numeric.
    iceberg::Type type = Primitive(iceberg::TypeId::kDecimal);
    type.precision = 19;
    type.scale = 2;
    return MappedType{type, false};
  }
  auto it = kExact.find(name);
  if (it != kExact.end()) return MappedType{Primitive(it->second), false};
  return Text();  // timetz, interval, json, jsonb, inet, cidr, macaddr, xml, bit, varbit, tsvector, ...
}

}  // namespace

Result<MappedType> IcebergTypeFor(const PgType& column) {
  if (column.category == 'A') {
    if (column.element_name.empty()) {
      return Error(ErrorCode::kInvalidArgument, "array type " + column.name + " without its element type");
    }
    // Elements of enum, composite and range types are text; the rest map as columns do.
    MappedType element = Text();
    if (column.element_kind == 'b') {
      SERAC_ASSIGN_OR_RETURN(element, BaseType(column.element_name, column.type_modifier));
    }
    iceberg::Type list = Primitive(iceberg::TypeId::kList);
    iceberg::NestedField item;
    item.name = "element";
    item.required = false;
    item.type = element.type;
    list.fields.push_back(std::move(item));
    return MappedType{list, element.as_text};
  }
  switch (column.type_kind) {
    case 'b':
      return BaseType(column.name, column.type_modifier);
    case 'd':
      // A domain is its base type with the domain's constraints, which the source enforces.
      if (column.element_name.empty()) {
        return Error(ErrorCode::kInvalidArgument, "domain " + column.name + " without its base type");
      }
      if (column.element_kind != 'b') return Text();
      return BaseType(column.element_name, column.type_modifier);
    default:
      return Text();  // enums, composites, ranges, multiranges, pseudo-types
  }
}

}  // namespace serac::sync
