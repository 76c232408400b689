// Iceberg types as Arrow types (the Parquet writer turns those into the spec's Parquet types:
// decimals as INT32, INT64 or FIXED_LEN_BYTE_ARRAY by precision, timestamps in micro- or
// nanoseconds with their UTC adjustment, 3-level lists and maps), and single values read back from
// Arrow arrays.
#include <arrow/util/decimal.h>

#include "parquet/parquet_internal.h"

namespace serac::parquet {

namespace {

Status Unsupported(const iceberg::Type& type) {
  return Error(ErrorCode::kNotImplemented,
               "Parquet files of " + type.Name() + " columns are not supported yet");
}

std::shared_ptr<const arrow::KeyValueMetadata> FieldIdMetadata(int32_t id) {
  return arrow::key_value_metadata({"PARQUET:field_id"}, {std::to_string(id)});
}

}  // namespace

Status FromArrow(const arrow::Status& status, std::string_view context) {
  if (status.ok()) return Status::Ok();
  ErrorCode code = ErrorCode::kInvalidArgument;
  if (status.IsIOError()) code = ErrorCode::kIoError;
  if (status.IsNotImplemented()) code = ErrorCode::kNotImplemented;
  if (status.IsOutOfMemory()) {
    // The read pool's cap (or the machine) refused it: a file that needs more than
    // limits::kParquetReadMemoryBytesMax, or whose headers claim so.
    return Error(ErrorCode::kLimitExceeded,
                 std::string(context) + ": " + status.message() +
                     " (reading Parquet may hold at most limits::kParquetReadMemoryBytesMax)");
  }
  return Error(code, std::string(context) + ": " + status.message());
}

Result<std::shared_ptr<arrow::DataType>> ToArrowType(const iceberg::Type& type) {
  using iceberg::TypeId;
  switch (type.id) {
    case TypeId::kBoolean:
      return arrow::boolean();
    case TypeId::kInt:
      return arrow::int32();
    case TypeId::kLong:
      return arrow::int64();
    case TypeId::kFloat:
      return arrow::float32();
    case TypeId::kDouble:
      return arrow::float64();
    case TypeId::kDecimal:
      if (type.precision < 1 || type.precision > 38) return Unsupported(type);
      return arrow::decimal128(type.precision, type.scale);
    case TypeId::kDate:
      return arrow::date32();
    case TypeId::kTime:
      return arrow::time64(arrow::TimeUnit::MICRO);
    case TypeId::kTimestamp:
      return arrow::timestamp(arrow::TimeUnit::MICRO);
    case TypeId::kTimestampTz:
      return arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
    case TypeId::kTimestampNs:
      return arrow::timestamp(arrow::TimeUnit::NANO);
    case TypeId::kTimestampTzNs:
      return arrow::timestamp(arrow::TimeUnit::NANO, "UTC");
    case TypeId::kString:
      return arrow::utf8();
    case TypeId::kUuid:
      return arrow::fixed_size_binary(16);
    case TypeId::kFixed:
      return arrow::fixed_size_binary(type.length);
    case TypeId::kBinary:
      return arrow::binary();
    case TypeId::kStruct: {
      arrow::FieldVector children;
      for (const iceberg::NestedField& child : type.fields) {
        if (child.type.id == TypeId::kUnknown) continue;
        SERAC_ASSIGN_OR_RETURN(auto field, ToArrowField(child));
        children.push_back(std::move(field));
      }
      return arrow::struct_(children);
    }
    case TypeId::kList: {
      SERAC_ASSIGN_OR_RETURN(auto element, ToArrowField(type.fields.at(0)));
      return arrow::list(element);
    }
    case TypeId::kMap: {
      SERAC_ASSIGN_OR_RETURN(auto key, ToArrowField(type.fields.at(0)));
      SERAC_ASSIGN_OR_RETURN(auto value, ToArrowField(type.fields.at(1)));
      return std::shared_ptr<arrow::DataType>(
          std::make_shared<arrow::MapType>(key->WithNullable(false), value));
    }
    default:
      return Unsupported(type);
  }
}

Result<std::shared_ptr<arrow::Field>> ToArrowField(const iceberg::NestedField& field) {
  SERAC_ASSIGN_OR_RETURN(auto type, ToArrowType(field.type));
  return arrow::field(field.name, std::move(type), !field.required, FieldIdMetadata(field.id));
}

Result<std::shared_ptr<arrow::Schema>> ToArrowSchema(const iceberg::Schema& schema) {
  arrow::FieldVector fields;
  for (const iceberg::NestedField& field : schema.fields) {
    if (field.type.id == iceberg::TypeId::kUnknown) continue;  // always null: no column, as Java writes
    SERAC_ASSIGN_OR_RETURN(auto arrow_field, ToArrowField(field));
    fields.push_back(std::move(arrow_field));
  }
  return arrow::schema(fields,
                       arrow::key_value_metadata({"iceberg.schema"}, {iceberg::SchemaToJson(schema)}));
}

Result<iceberg::Datum> DatumAt(const arrow::Array& array, int64_t row, const iceberg::Type& type) {
  using iceberg::Datum;
  using iceberg::TypeId;
  if (array.IsNull(row)) return Datum{};
  switch (array.type_id()) {
    case arrow::Type::BOOL:
      return Datum(static_cast<const arrow::BooleanArray&>(array).Value(row));
    case arrow::Type::INT32:
      return Datum(static_cast<const arrow::Int32Array&>(array).Value(row));
    case arrow::Type::DATE32:
      return Datum(static_cast<const arrow::Date32Array&>(array).Value(row));
    case arrow::Type::INT64:
      return Datum(static_cast<const arrow::Int64Array&>(array).Value(row));
    case arrow::Type::TIME64:
      return Datum(static_cast<const arrow::Time64Array&>(array).Value(row));
    case arrow::Type::TIMESTAMP:
      return Datum(static_cast<const arrow::TimestampArray&>(array).Value(row));
    case arrow::Type::FLOAT:
      return Datum(static_cast<const arrow::FloatArray&>(array).Value(row));
    case arrow::Type::DOUBLE:
      return Datum(static_cast<const arrow::DoubleArray&>(array).Value(row));
    case arrow::Type::STRING:
      return Datum(std::string(static_cast<const arrow::StringArray&>(array).GetView(row)));
    case arrow::Type::BINARY:
      return Datum(std::string(static_cast<const arrow::BinaryArray&>(array).GetView(row)));
    case arrow::Type::FIXED_SIZE_BINARY:
      return Datum(std::string(static_cast<const arrow::FixedSizeBinaryArray&>(array).GetView(row)));
    case arrow::Type::DICTIONARY: {
      const auto& encoded = static_cast<const arrow::DictionaryArray&>(array);
      return DatumAt(*encoded.dictionary(), encoded.GetValueIndex(row), type);
    }
    case arrow::Type::DECIMAL128: {
      // Arrow keeps the unscaled value little-endian in 16 bytes; a Datum holds it big-endian,
      // in its fewest bytes.
      const arrow::Decimal128 value(static_cast<const arrow::Decimal128Array&>(array).GetValue(row));
      const std::array<uint8_t, 16> little = value.ToBytes();
      const std::string big(little.rbegin(), little.rend());
      return Datum(std::string(iceberg::TrimTwosComplement(big)));
    }
    default:
      return Error(ErrorCode::kInvalidArgument, "a " + array.type()->ToString() + " column cannot hold the " +
                                                    type.Name() + " values partitioned on");
  }
}

}  // namespace serac::parquet
