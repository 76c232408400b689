// The Iceberg schema as typed values: what a writer maps its columns to (PostgreSQL to Iceberg to
// Parquet) and what scan planning binds expressions against. Parsed from and written back to the
// spec's JSON with the same checks the catalog applies to a schema a client sends (Java's
// SchemaParser), so a Schema value is always valid; the JSON library stays inside iceberg/.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace serac::iceberg {

enum class TypeId : uint8_t {
  // Primitives.
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kDecimal,  // Type::precision, Type::scale
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kTimestampNs,    // v3
  kTimestampTzNs,  // v3
  kString,
  kUuid,
  kFixed,  // Type::length
  kBinary,
  kVariant,    // v3
  kUnknown,    // v3
  kGeometry,   // v3; Type::parameters keeps "(crs)" as written
  kGeography,  // v3; Type::parameters keeps "(crs, algorithm)" as written
  // Nested.
  kStruct,  // Type::fields
  kList,    // Type::fields[0] is the element ("element", field id, required)
  kMap,     // Type::fields[0] the key, fields[1] the value
};

struct NestedField;

struct Type {
  TypeId id = TypeId::kString;
  int32_t precision = 0;   // kDecimal
  int32_t scale = 0;       // kDecimal
  int32_t length = 0;      // kFixed
  std::string parameters;  // kGeometry / kGeography: the part after the name, e.g. "(srid:4326)"
  std::vector<NestedField> fields;

  bool is_primitive() const { return id < TypeId::kStruct; }
  // The spec's name of a primitive: "long", "decimal(10, 2)", "fixed[16]", "timestamptz_ns", ...;
  // "struct", "list" or "map" for nested types.
  std::string Name() const;
};

struct NestedField {
  int32_t id = 0;
  std::string name;  // "element", "key" and "value" inside lists and maps
  bool required = false;
  Type type;
  std::string doc;  // empty when absent
  // v3 default values, as the JSON text the schema holds ("42", "\"a\"", ...); empty when absent.
  std::string initial_default_json;
  std::string write_default_json;
};

struct Schema {
  int32_t schema_id = 0;
  std::vector<NestedField> fields;  // the top-level struct's fields
  std::vector<int32_t> identifier_field_ids;

  // The field with this id at any depth, or nullptr.
  const NestedField* FindField(int32_t field_id) const;
  // The field at this dotted path of names ("a.b.c"; list elements and map keys and values by
  // their names "element", "key", "value"), or nullptr. Names are case-sensitive, as in Java.
  const NestedField* FindFieldByName(std::string_view dotted_name) const;
  // The highest field id at any depth (0 for an empty schema): the table's last-column-id floor.
  int32_t HighestFieldId() const;
};

// Parses one schema object ({"type": "struct", "schema-id": ..., "fields": [...]}) as the catalog
// checks a schema a client sends: kInvalidArgument naming what is wrong.
Result<Schema> ParseSchema(std::string_view json);
// The schema as the spec's JSON object (compact).
std::string SchemaToJson(const Schema& schema);

}  // namespace serac::iceberg
