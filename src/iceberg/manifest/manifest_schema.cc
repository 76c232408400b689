// The Avro schemas of manifests and manifest lists, built as Java Iceberg builds them: the Iceberg
// struct types of V1Metadata, V2Metadata and V3Metadata, converted by the rules of Java's
// TypeToSchema (AvroSchemaUtil.convert).
#include <cmath>
#include <nlohmann/json.hpp>

#include "iceberg/manifest/manifest.h"
#include "iceberg/manifest/manifest_internal.h"

namespace serac::iceberg {

namespace {

Type Primitive(TypeId id) {
  Type type;
  type.id = id;
  return type;
}

NestedField Field(int32_t id, std::string name, bool required, Type type) {
  NestedField field;
  field.id = id;
  field.name = std::move(name);
  field.required = required;
  field.type = std::move(type);
  return field;
}

Type Struct(std::vector<NestedField> fields) {
  Type type;
  type.id = TypeId::kStruct;
  type.fields = std::move(fields);
  return type;
}

Type ListOf(int32_t element_id, Type element) {
  Type type;
  type.id = TypeId::kList;
  type.fields.push_back(Field(element_id, "element", true, std::move(element)));
  return type;
}

Type MapOf(int32_t key_id, Type key, int32_t value_id, Type value) {
  Type type;
  type.id = TypeId::kMap;
  type.fields.push_back(Field(key_id, "key", true, std::move(key)));
  type.fields.push_back(Field(value_id, "value", true, std::move(value)));
  return type;
}

Type IntToLong(int32_t key_id, int32_t value_id) {
  return MapOf(key_id, Primitive(TypeId::kInt), value_id, Primitive(TypeId::kLong));
}
Type IntToBinary(int32_t key_id, int32_t value_id) {
  return MapOf(key_id, Primitive(TypeId::kInt), value_id, Primitive(TypeId::kBinary));
}

Type DataFileType(int format_version, const Type& partition_type) {
  std::vector<NestedField> fields;
  if (format_version >= 2) fields.push_back(Field(134, "content", true, Primitive(TypeId::kInt)));
  fields.push_back(Field(100, "file_path", true, Primitive(TypeId::kString)));
  fields.push_back(Field(101, "file_format", true, Primitive(TypeId::kString)));
  fields.push_back(Field(102, "partition", true, partition_type));
  fields.push_back(Field(103, "record_count", true, Primitive(TypeId::kLong)));
  fields.push_back(Field(104, "file_size_in_bytes", true, Primitive(TypeId::kLong)));
  if (format_version == 1)
    fields.push_back(Field(105, "block_size_in_bytes", true, Primitive(TypeId::kLong)));
  fields.push_back(Field(108, "column_sizes", false, IntToLong(117, 118)));
  fields.push_back(Field(109, "value_counts", false, IntToLong(119, 120)));
  fields.push_back(Field(110, "null_value_counts", false, IntToLong(121, 122)));
  fields.push_back(Field(137, "nan_value_counts", false, IntToLong(138, 139)));
  fields.push_back(Field(125, "lower_bounds", false, IntToBinary(126, 127)));
  fields.push_back(Field(128, "upper_bounds", false, IntToBinary(129, 130)));
  fields.push_back(Field(131, "key_metadata", false, Primitive(TypeId::kBinary)));
  fields.push_back(Field(132, "split_offsets", false, ListOf(133, Primitive(TypeId::kLong))));
  if (format_version >= 2)
    fields.push_back(Field(135, "equality_ids", false, ListOf(136, Primitive(TypeId::kInt))));
  fields.push_back(Field(140, "sort_order_id", false, Primitive(TypeId::kInt)));
  if (format_version == 2)
    fields.push_back(Field(143, "referenced_data_file", false, Primitive(TypeId::kString)));
  if (format_version >= 3) {
    fields.push_back(Field(142, "first_row_id", false, Primitive(TypeId::kLong)));
    fields.push_back(Field(143, "referenced_data_file", false, Primitive(TypeId::kString)));
    fields.push_back(Field(144, "content_offset", false, Primitive(TypeId::kLong)));
    fields.push_back(Field(145, "content_size_in_bytes", false, Primitive(TypeId::kLong)));
  }
  return Struct(std::move(fields));
}

Type ManifestEntryType(int format_version, const Type& partition_type) {
  std::vector<NestedField> fields;
  fields.push_back(Field(0, "status", true, Primitive(TypeId::kInt)));
  fields.push_back(Field(1, "snapshot_id", false, Primitive(TypeId::kLong)));
  if (format_version >= 2) {
    fields.push_back(Field(3, "sequence_number", false, Primitive(TypeId::kLong)));
    fields.push_back(Field(4, "file_sequence_number", false, Primitive(TypeId::kLong)));
  }
  fields.push_back(Field(2, "data_file", true, DataFileType(format_version, partition_type)));
  return Struct(std::move(fields));
}

Type FieldSummaryType() {
  return Struct({Field(509, "contains_null", true, Primitive(TypeId::kBoolean)),
                 Field(518, "contains_nan", false, Primitive(TypeId::kBoolean)),
                 Field(510, "lower_bound", false, Primitive(TypeId::kBinary)),
                 Field(511, "upper_bound", false, Primitive(TypeId::kBinary))});
}

Type ManifestFileType(int format_version) {
  const bool v2 = format_version >= 2;  // counts and sequence numbers required from v2 on
  std::vector<NestedField> fields;
  fields.push_back(Field(500, "manifest_path", true, Primitive(TypeId::kString)));
  fields.push_back(Field(501, "manifest_length", true, Primitive(TypeId::kLong)));
  fields.push_back(Field(502, "partition_spec_id", true, Primitive(TypeId::kInt)));
  if (v2) {
    fields.push_back(Field(517, "content", true, Primitive(TypeId::kInt)));
    fields.push_back(Field(515, "sequence_number", true, Primitive(TypeId::kLong)));
    fields.push_back(Field(516, "min_sequence_number", true, Primitive(TypeId::kLong)));
  }
  fields.push_back(Field(503, "added_snapshot_id", false, Primitive(TypeId::kLong)));
  fields.push_back(Field(504, "added_files_count", v2, Primitive(TypeId::kInt)));
  fields.push_back(Field(505, "existing_files_count", v2, Primitive(TypeId::kInt)));
  fields.push_back(Field(506, "deleted_files_count", v2, Primitive(TypeId::kInt)));
  const NestedField partitions = Field(507, "partitions", false, ListOf(508, FieldSummaryType()));
  if (!v2) fields.push_back(partitions);
  fields.push_back(Field(512, "added_rows_count", v2, Primitive(TypeId::kLong)));
  fields.push_back(Field(513, "existing_rows_count", v2, Primitive(TypeId::kLong)));
  fields.push_back(Field(514, "deleted_rows_count", v2, Primitive(TypeId::kLong)));
  if (v2) fields.push_back(partitions);
  fields.push_back(Field(519, "key_metadata", false, Primitive(TypeId::kBinary)));
  if (format_version >= 3) fields.push_back(Field(520, "first_row_id", false, Primitive(TypeId::kLong)));
  return Struct(std::move(fields));
}

bool ValidAvroName(std::string_view name) {
  if (name.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  for (char c : name) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Java's AvroSchemaUtil.sanitize: a leading digit gets "_" before it, any other invalid character
// becomes "_x" and its code in upper-case hex.
std::string SanitizeName(std::string_view name) {
  std::string out;
  auto hex = [](uint32_t code) {
    static const char kDigits[] = "0123456789ABCDEF";
    std::string text;
    do {
      text.insert(text.begin(), kDigits[code & 0xF]);
      code >>= 4;
    } while (code != 0);
    return text;
  };
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (letter || (digit && i > 0)) {
      out.push_back(c);
    } else if (digit) {
      out += "_";
      out.push_back(c);
    } else {
      out += "_x" + hex(static_cast<uint8_t>(c));
    }
  }
  return out;
}

avro::SchemaPtr Named(avro::Type type, std::string name) {
  auto schema = std::make_shared<avro::Schema>();
  schema->type = type;
  schema->name = std::move(name);
  return schema;
}

avro::SchemaPtr ConvertType(const Type& type, std::optional<int32_t> field_id);

avro::SchemaPtr ConvertStruct(const Type& type, const std::string& record_name) {
  auto record = std::make_shared<avro::Schema>();
  record->type = avro::Type::kRecord;
  record->name = record_name;
  for (const NestedField& field : type.fields) {
    avro::Field out;
    out.name = ValidAvroName(field.name) ? field.name : SanitizeName(field.name);
    if (out.name != field.name) out.properties["iceberg-field-name"] = nlohmann::json(field.name).dump();
    avro::SchemaPtr converted = ConvertType(field.type, field.id);
    if (!field.required) {
      out.type = avro::Optional(std::move(converted));
      out.default_json = "null";
    } else {
      out.type = std::move(converted);
    }
    out.field_id = field.id;
    record->fields.push_back(std::move(out));
  }
  return record;
}

avro::SchemaPtr ConvertType(const Type& type, std::optional<int32_t> field_id) {
  auto with_logical = [](avro::Type base, const char* logical) {
    auto schema = std::make_shared<avro::Schema>();
    schema->type = base;
    schema->logical_type = logical;
    return schema;
  };
  switch (type.id) {
    case TypeId::kBoolean:
      return avro::Primitive(avro::Type::kBoolean);
    case TypeId::kInt:
      return avro::Primitive(avro::Type::kInt);
    case TypeId::kLong:
      return avro::Primitive(avro::Type::kLong);
    case TypeId::kFloat:
      return avro::Primitive(avro::Type::kFloat);
    case TypeId::kDouble:
      return avro::Primitive(avro::Type::kDouble);
    case TypeId::kDate:
      return with_logical(avro::Type::kInt, "date");
    case TypeId::kTime:
      return with_logical(avro::Type::kLong, "time-micros");
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      const bool nanos = type.id == TypeId::kTimestampNs || type.id == TypeId::kTimestampTzNs;
      auto schema = std::make_shared<avro::Schema>();
      schema->type = avro::Type::kLong;
      schema->logical_type = nanos ? "timestamp-nanos" : "timestamp-micros";
      const bool utc = type.id == TypeId::kTimestampTz || type.id == TypeId::kTimestampTzNs;
      schema->properties["adjust-to-utc"] = utc ? "true" : "false";
      return schema;
    }
    case TypeId::kString:
      return avro::Primitive(avro::Type::kString);
    case TypeId::kUuid: {
      auto schema = std::make_shared<avro::Schema>();
      schema->type = avro::Type::kFixed;
      schema->name = "uuid_fixed";
      schema->fixed_size = 16;
      schema->logical_type = "uuid";
      return schema;
    }
    case TypeId::kFixed: {
      auto schema = std::make_shared<avro::Schema>();
      schema->type = avro::Type::kFixed;
      schema->name = "fixed_" + std::to_string(type.length);
      schema->fixed_size = type.length;
      return schema;
    }
    case TypeId::kDecimal: {
      auto schema = std::make_shared<avro::Schema>();
      schema->type = avro::Type::kFixed;
      schema->name = "decimal_" + std::to_string(type.precision) + "_" + std::to_string(type.scale);
      schema->fixed_size = DecimalRequiredBytes(type.precision);
      schema->logical_type = "decimal";
      schema->precision = type.precision;
      schema->scale = type.scale;
      // Written from the attributes, as a parsed schema keeps them.
      schema->properties["precision"] = std::to_string(type.precision);
      schema->properties["scale"] = std::to_string(type.scale);
      return schema;
    }
    case TypeId::kBinary:
    case TypeId::kGeometry:
    case TypeId::kGeography:
      return avro::Primitive(avro::Type::kBytes);
    case TypeId::kUnknown:
      return avro::Primitive(avro::Type::kNull);
    case TypeId::kVariant: {
      auto record = Named(avro::Type::kRecord, field_id ? "r" + std::to_string(*field_id) : "variant");
      auto mutable_record = std::const_pointer_cast<avro::Schema>(record);
      mutable_record->logical_type = "variant";
      for (const char* name : {"metadata", "value"}) {
        avro::Field field;
        field.name = name;
        field.type = avro::Primitive(avro::Type::kBytes);
        mutable_record->fields.push_back(std::move(field));
      }
      return record;
    }
    case TypeId::kStruct:
      return ConvertStruct(type, "r" + std::to_string(field_id.value_or(0)));
    case TypeId::kList: {
      const NestedField& element = type.fields.at(0);
      auto schema = std::make_shared<avro::Schema>();
      schema->type = avro::Type::kArray;
      avro::SchemaPtr item = ConvertType(element.type, element.id);
      schema->items = element.required ? item : avro::Optional(item);
      schema->element_id = element.id;
      return schema;
    }
    case TypeId::kMap: {
      const NestedField& key = type.fields.at(0);
      const NestedField& value = type.fields.at(1);
      avro::SchemaPtr value_schema = ConvertType(value.type, value.id);
      if (!value.required) value_schema = avro::Optional(value_schema);
      auto schema = std::make_shared<avro::Schema>();
      if (key.type.id == TypeId::kString) {
        schema->type = avro::Type::kMap;
        schema->values = value_schema;
        schema->key_id = key.id;
        schema->value_id = value.id;
        return schema;
      }
      auto entry = std::make_shared<avro::Schema>();
      entry->type = avro::Type::kRecord;
      entry->name = "k" + std::to_string(key.id) + "_v" + std::to_string(value.id);
      avro::Field key_field;
      key_field.name = "key";
      key_field.type = ConvertType(key.type, key.id);
      key_field.field_id = key.id;
      avro::Field value_field;
      value_field.name = "value";
      value_field.type = value_schema;
      value_field.field_id = value.id;
      entry->fields.push_back(std::move(key_field));
      entry->fields.push_back(std::move(value_field));
      schema->type = avro::Type::kArray;
      schema->items = entry;
      schema->logical_type = "map";
      return schema;
    }
  }
  return avro::Primitive(avro::Type::kNull);
}

}  // namespace

int32_t DecimalRequiredBytes(int32_t precision) {
  // The fewest bytes whose two's complement holds every unscaled value of `precision` digits.
  for (int32_t bytes = 1; bytes <= 16; ++bytes) {
    const long double largest = std::pow(2.0L, 8 * bytes - 1) - 1;
    if (largest >= std::pow(10.0L, precision) - 1) return bytes;
  }
  return 16;
}

avro::SchemaPtr ToAvroSchema(const Type& struct_type, const std::string& record_name) {
  return ConvertStruct(struct_type, record_name);
}

avro::SchemaPtr ManifestEntrySchema(int format_version, const Type& partition_type) {
  return ToAvroSchema(ManifestEntryType(format_version, partition_type), "manifest_entry");
}

avro::SchemaPtr ManifestListSchema(int format_version) {
  return ToAvroSchema(ManifestFileType(format_version), "manifest_file");
}

std::string PartitionFieldsJson(const PartitionSpec& spec) {
  nlohmann::json fields = nlohmann::json::array();
  for (const PartitionField& field : spec.fields) {
    nlohmann::json out = nlohmann::json::object();
    out["name"] = field.name;
    out["transform"] = field.transform;
    if (field.source_ids.size() == 1) {
      out["source-id"] = field.source_ids[0];
    } else {
      out["source-ids"] = field.source_ids;
    }
    out["field-id"] = field.field_id;
    fields.push_back(std::move(out));
  }
  return fields.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace serac::iceberg
