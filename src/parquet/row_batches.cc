// Rows given value by value (iceberg::Datum per column, lists as their elements) as Arrow batches
// with the table's columns: what `serac sync` hands the data file writer. Each value must already
// be of its column's type as partition.h represents it; this only checks the kind and builds.
#include <arrow/util/decimal.h>

#include <cstring>

#include "parquet/parquet_internal.h"

namespace serac::parquet {
namespace {

using iceberg::TypeId;

// A decimal's unscaled value (big-endian two's complement, at most 16 bytes) as Arrow's.
Result<arrow::Decimal128> DecimalOf(const std::string& big_endian) {
  if (big_endian.empty() || big_endian.size() > 16) {
    return Error(ErrorCode::kInvalidArgument, "a decimal of " + std::to_string(big_endian.size()) + " bytes");
  }
  uint8_t bytes[16];
  const bool negative = (static_cast<uint8_t>(big_endian[0]) & 0x80) != 0;
  std::memset(bytes, negative ? 0xFF : 0, sizeof(bytes));
  std::memcpy(bytes + 16 - big_endian.size(), big_endian.data(), big_endian.size());
  uint64_t high = 0;
  uint64_t low = 0;
  for (int i = 0; i < 8; ++i) high = (high << 8) | bytes[i];
  for (int i = 8; i < 16; ++i) low = (low << 8) | bytes[i];
  return arrow::Decimal128(static_cast<int64_t>(high), low);
}

template <typename T>
const T* As(const iceberg::Datum& datum) {
  return std::get_if<T>(&datum);
}

// Appends one primitive value to a builder made for `type`; false when the Datum's kind is wrong.
Result<bool> AppendPrimitive(arrow::ArrayBuilder& builder, const iceberg::Type& type,
                             const iceberg::Datum& datum) {
  if (iceberg::IsNull(datum)) {
    SERAC_RETURN_IF_ERROR(FromArrow(builder.AppendNull(), "building rows"));
    return true;
  }
  arrow::Status status;
  switch (type.id) {
    case TypeId::kBoolean: {
      const bool* value = As<bool>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::BooleanBuilder&>(builder).Append(*value);
      break;
    }
    case TypeId::kInt: {
      const int32_t* value = As<int32_t>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::Int32Builder&>(builder).Append(*value);
      break;
    }
    case TypeId::kDate: {
      const int32_t* value = As<int32_t>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::Date32Builder&>(builder).Append(*value);
      break;
    }
    case TypeId::kLong: {
      const int64_t* value = As<int64_t>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::Int64Builder&>(builder).Append(*value);
      break;
    }
    case TypeId::kTime: {
      const int64_t* value = As<int64_t>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::Time64Builder&>(builder).Append(*value);
      break;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs: {
      const int64_t* value = As<int64_t>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::TimestampBuilder&>(builder).Append(*value);
      break;
    }
    case TypeId::kFloat: {
      const float* value = As<float>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::FloatBuilder&>(builder).Append(*value);
      break;
    }
    case TypeId::kDouble: {
      const double* value = As<double>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::DoubleBuilder&>(builder).Append(*value);
      break;
    }
    case TypeId::kDecimal: {
      const std::string* value = As<std::string>(datum);
      if (value == nullptr) return false;
      SERAC_ASSIGN_OR_RETURN(arrow::Decimal128 decimal, DecimalOf(*value));
      status = static_cast<arrow::Decimal128Builder&>(builder).Append(decimal);
      break;
    }
    case TypeId::kString: {
      const std::string* value = As<std::string>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::StringBuilder&>(builder).Append(*value);
      break;
    }
    case TypeId::kBinary: {
      const std::string* value = As<std::string>(datum);
      if (value == nullptr) return false;
      status = static_cast<arrow::BinaryBuilder&>(builder).Append(*value);
      break;
    }
    case TypeId::kUuid:
    case TypeId::kFixed: {
      const std::string* value = As<std::string>(datum);
      const size_t width = type.id == TypeId::kUuid ? 16 : static_cast<size_t>(type.length);
      if (value == nullptr || value->size() != width) return false;
      status = static_cast<arrow::FixedSizeBinaryBuilder&>(builder).Append(value->data());
      break;
    }
    default:
      return Error(ErrorCode::kNotImplemented, "rows of " + type.Name() + " columns are not supported yet");
  }
  SERAC_RETURN_IF_ERROR(FromArrow(status, "building rows"));
  return true;
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> RowsToBatch(const std::vector<Row>& rows,
                                                        const std::shared_ptr<arrow::Schema>& arrow_schema,
                                                        const iceberg::Schema& schema,
                                                        const std::string& context, int64_t first_row) {
  // The table's columns that have an Arrow column (unknown ones have none), in order.
  std::vector<size_t> columns;
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (schema.fields[i].type.id != TypeId::kUnknown) columns.push_back(i);
  }
  if (static_cast<int>(columns.size()) != arrow_schema->num_fields()) {
    return Error(ErrorCode::kInternal, "the Arrow schema does not match the table's columns");
  }
  arrow::ArrayVector arrays;
  for (int c = 0; c < arrow_schema->num_fields(); ++c) {
    const size_t field_index = columns[static_cast<size_t>(c)];
    const iceberg::NestedField& field = schema.fields[field_index];
    std::unique_ptr<arrow::ArrayBuilder> builder;
    SERAC_RETURN_IF_ERROR(
        FromArrow(arrow::MakeBuilder(arrow::default_memory_pool(), arrow_schema->field(c)->type(), &builder),
                  "building rows"));
    SERAC_RETURN_IF_ERROR(FromArrow(builder->Reserve(static_cast<int64_t>(rows.size())), "building rows"));
    const bool is_list = field.type.id == TypeId::kList;
    for (size_t r = 0; r < rows.size(); ++r) {
      auto wrong = [&](const std::string& what) {
        return Error(ErrorCode::kInvalidArgument, context + ": row " +
                                                      std::to_string(first_row + static_cast<int64_t>(r)) +
                                                      ": column " + field.name + ": " + what);
      };
      const Row& row = rows[r];
      if (row.size() != schema.fields.size()) {
        return wrong(std::to_string(row.size()) + " values for " + std::to_string(schema.fields.size()) +
                     " columns");
      }
      const RowValue& value = row[field_index];
      if (iceberg::IsNull(value.datum) && !value.elements) {
        if (field.required) return wrong("null in a required column");
        SERAC_RETURN_IF_ERROR(FromArrow(builder->AppendNull(), "building rows"));
        continue;
      }
      if (is_list) {
        if (!value.elements) return wrong("a single value for a list");
        auto& list = static_cast<arrow::ListBuilder&>(*builder);
        SERAC_RETURN_IF_ERROR(FromArrow(list.Append(), "building rows"));
        const iceberg::NestedField& element = field.type.fields.at(0);
        for (const iceberg::Datum& item : *value.elements) {
          if (iceberg::IsNull(item) && element.required)
            return wrong("a null element in a list of required elements");
          SERAC_ASSIGN_OR_RETURN(bool fits, AppendPrimitive(*list.value_builder(), element.type, item));
          if (!fits) return wrong("an element that is not a " + element.type.Name());
        }
        continue;
      }
      if (value.elements) return wrong("a list for a " + field.type.Name() + " column");
      SERAC_ASSIGN_OR_RETURN(bool fits, AppendPrimitive(*builder, field.type, value.datum));
      if (!fits) return wrong("a value that is not a " + field.type.Name());
    }
    std::shared_ptr<arrow::Array> array;
    SERAC_RETURN_IF_ERROR(FromArrow(builder->Finish(&array), "building rows"));
    arrays.push_back(std::move(array));
  }
  return arrow::RecordBatch::Make(arrow_schema, static_cast<int64_t>(rows.size()), std::move(arrays));
}

}  // namespace serac::parquet
