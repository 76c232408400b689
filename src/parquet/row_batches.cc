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

struct RowBatchBuilder::State {
  iceberg::Schema schema;
  std::shared_ptr<arrow::Schema> arrow_schema;
  std::vector<size_t> fields;  // per Arrow column: its index in schema.fields
  std::vector<int> column_of;  // per schema field: its Arrow column, or -1 (unknown type)
  std::vector<std::unique_ptr<arrow::ArrayBuilder>> builders;
  int64_t rows = 0;
  Status error = Status::Ok();
  int64_t error_row = 0;  // the failed value's row, counted from 0 in this batch

  // The column's builder when it takes `kind`; nullptr (and the first error kept) otherwise.
  template <typename Builder>
  Builder* Take(size_t column, std::initializer_list<iceberg::TypeId> kinds) {
    if (column >= column_of.size() || column_of[column] < 0) {
      Fail(column, "no such column");
      return nullptr;
    }
    const iceberg::TypeId id = schema.fields[column].type.id;
    for (iceberg::TypeId kind : kinds) {
      if (kind == id) return static_cast<Builder*>(builders[static_cast<size_t>(column_of[column])].get());
    }
    Fail(column, "a value of the wrong kind for a " + schema.fields[column].type.Name() + " column");
    return nullptr;
  }
  void Fail(size_t column, const std::string& what) {
    if (!error.ok()) return;
    const std::string name =
        column < schema.fields.size() ? schema.fields[column].name : std::to_string(column);
    error = Error(ErrorCode::kInvalidArgument, "column " + name + ": " + what);
    error_row = rows;
  }
  void Check(const arrow::Status& status, size_t column) {
    if (!status.ok()) Fail(column, status.message());
  }
};

Result<RowBatchBuilder> RowBatchBuilder::Make(const iceberg::Schema& schema) {
  auto state = std::make_unique<State>();
  state->schema = schema;
  SERAC_ASSIGN_OR_RETURN(state->arrow_schema, ToArrowSchema(schema));
  state->column_of.assign(schema.fields.size(), -1);
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (schema.fields[i].type.id == TypeId::kUnknown) continue;
    state->column_of[i] = static_cast<int>(state->fields.size());
    state->fields.push_back(i);
  }
  for (int c = 0; c < state->arrow_schema->num_fields(); ++c) {
    std::unique_ptr<arrow::ArrayBuilder> builder;
    SERAC_RETURN_IF_ERROR(FromArrow(
        arrow::MakeBuilder(arrow::default_memory_pool(), state->arrow_schema->field(c)->type(), &builder),
        "building rows"));
    state->builders.push_back(std::move(builder));
  }
  return RowBatchBuilder(std::move(state));
}

RowBatchBuilder::RowBatchBuilder(std::unique_ptr<State> state) : state_(std::move(state)) {}
RowBatchBuilder::RowBatchBuilder(RowBatchBuilder&&) noexcept = default;
RowBatchBuilder& RowBatchBuilder::operator=(RowBatchBuilder&&) noexcept = default;
RowBatchBuilder::~RowBatchBuilder() = default;

void RowBatchBuilder::AppendNull(size_t column) {
  State& s = *state_;
  if (column >= s.column_of.size() || s.column_of[column] < 0) return s.Fail(column, "no such column");
  if (s.schema.fields[column].required) return s.Fail(column, "null in a required column");
  s.Check(s.builders[static_cast<size_t>(s.column_of[column])]->AppendNull(), column);
}
void RowBatchBuilder::AppendBool(size_t column, bool value) {
  if (auto* b = state_->Take<arrow::BooleanBuilder>(column, {TypeId::kBoolean}))
    state_->Check(b->Append(value), column);
}
void RowBatchBuilder::AppendInt(size_t column, int32_t value) {
  const TypeId id =
      column < state_->schema.fields.size() ? state_->schema.fields[column].type.id : TypeId::kInt;
  if (id == TypeId::kLong)
    return AppendLong(column, value);  // widening, as a table's long column takes an int
  if (id == TypeId::kDate) {
    if (auto* b = state_->Take<arrow::Date32Builder>(column, {TypeId::kDate}))
      state_->Check(b->Append(value), column);
    return;
  }
  if (auto* b = state_->Take<arrow::Int32Builder>(column, {TypeId::kInt}))
    state_->Check(b->Append(value), column);
}
void RowBatchBuilder::AppendLong(size_t column, int64_t value) {
  const TypeId id =
      column < state_->schema.fields.size() ? state_->schema.fields[column].type.id : TypeId::kLong;
  if (id == TypeId::kTime) {
    if (auto* b = state_->Take<arrow::Time64Builder>(column, {TypeId::kTime}))
      state_->Check(b->Append(value), column);
    return;
  }
  if (id == TypeId::kTimestamp || id == TypeId::kTimestampTz) {
    if (auto* b = state_->Take<arrow::TimestampBuilder>(column, {TypeId::kTimestamp, TypeId::kTimestampTz})) {
      state_->Check(b->Append(value), column);
    }
    return;
  }
  if (auto* b = state_->Take<arrow::Int64Builder>(column, {TypeId::kLong}))
    state_->Check(b->Append(value), column);
}
void RowBatchBuilder::AppendFloat(size_t column, float value) {
  const TypeId id =
      column < state_->schema.fields.size() ? state_->schema.fields[column].type.id : TypeId::kFloat;
  if (id == TypeId::kDouble) return AppendDouble(column, value);
  if (auto* b = state_->Take<arrow::FloatBuilder>(column, {TypeId::kFloat}))
    state_->Check(b->Append(value), column);
}
void RowBatchBuilder::AppendDouble(size_t column, double value) {
  if (auto* b = state_->Take<arrow::DoubleBuilder>(column, {TypeId::kDouble}))
    state_->Check(b->Append(value), column);
}
void RowBatchBuilder::AppendBytes(size_t column, std::string_view value) {
  State& s = *state_;
  const TypeId id = column < s.schema.fields.size() ? s.schema.fields[column].type.id : TypeId::kString;
  if (id == TypeId::kString) {
    if (auto* b = s.Take<arrow::StringBuilder>(column, {TypeId::kString})) s.Check(b->Append(value), column);
  } else if (id == TypeId::kBinary) {
    if (auto* b = s.Take<arrow::BinaryBuilder>(column, {TypeId::kBinary})) s.Check(b->Append(value), column);
  } else if (auto* b = s.Take<arrow::FixedSizeBinaryBuilder>(column, {TypeId::kUuid, TypeId::kFixed})) {
    if (static_cast<int32_t>(value.size()) != b->byte_width()) {
      return s.Fail(column,
                    std::to_string(value.size()) + " bytes for a " + s.schema.fields[column].type.Name());
    }
    s.Check(b->Append(value.data()), column);
  }
}
void RowBatchBuilder::AppendDecimal(size_t column, __int128 unscaled) {
  if (auto* b = state_->Take<arrow::Decimal128Builder>(column, {TypeId::kDecimal})) {
    const auto bits = static_cast<unsigned __int128>(unscaled);
    const arrow::Decimal128 value(static_cast<int64_t>(bits >> 64), static_cast<uint64_t>(bits));
    if (!value.FitsInPrecision(state_->schema.fields[column].type.precision)) {
      return state_->Fail(column, "a value beyond " + state_->schema.fields[column].type.Name());
    }
    state_->Check(b->Append(value), column);
  }
}
void RowBatchBuilder::AppendValue(size_t column, const RowValue& value) {
  State& s = *state_;
  if (column < s.column_of.size() && s.column_of[column] < 0 && iceberg::IsNull(value.datum) &&
      !value.elements) {
    return;  // an unknown-typed column: always null, and without an Arrow column
  }
  if (column >= s.column_of.size() || s.column_of[column] < 0) return s.Fail(column, "no such column");
  const iceberg::NestedField& field = s.schema.fields[column];
  arrow::ArrayBuilder& builder = *s.builders[static_cast<size_t>(s.column_of[column])];
  if (iceberg::IsNull(value.datum) && !value.elements) return AppendNull(column);
  if (field.type.id == TypeId::kList) {
    if (!value.elements) return s.Fail(column, "a single value for a list");
    auto& list = static_cast<arrow::ListBuilder&>(builder);
    s.Check(list.Append(), column);
    const iceberg::NestedField& element = field.type.fields.at(0);
    for (const iceberg::Datum& item : *value.elements) {
      if (iceberg::IsNull(item) && element.required)
        return s.Fail(column, "a null element in a list of required elements");
      Result<bool> fits = AppendPrimitive(*list.value_builder(), element.type, item);
      if (!fits.ok()) return s.Fail(column, fits.status().message());
      if (!*fits) return s.Fail(column, "an element that is not a " + element.type.Name());
    }
    return;
  }
  if (value.elements) return s.Fail(column, "a list for a " + field.type.Name() + " column");
  Result<bool> fits = AppendPrimitive(builder, field.type, value.datum);
  if (!fits.ok()) return s.Fail(column, fits.status().message());
  if (!*fits) s.Fail(column, "a value that is not a " + field.type.Name());
}
void RowBatchBuilder::EndRow() {
  State& s = *state_;
  ++s.rows;
  if (!s.error.ok()) return;
  for (size_t c = 0; c < s.builders.size(); ++c) {
    if (s.builders[c]->length() != s.rows) {
      s.Fail(s.fields[c], s.builders[c]->length() < s.rows ? "no value" : "more than one value");
      return;
    }
  }
}
int64_t RowBatchBuilder::rows() const { return state_->rows; }

Result<std::shared_ptr<arrow::RecordBatch>> TakeBatch(RowBatchBuilder::State& state,
                                                      const std::string& context, int64_t first_row) {
  if (!state.error.ok()) {
    Status error =
        Error(state.error.code(), context + ": row " + std::to_string(first_row + state.error_row) + ": " +
                                      state.error.message());
    state.error = Status::Ok();
    for (auto& builder : state.builders) builder->Reset();
    state.rows = 0;
    return error;
  }
  arrow::ArrayVector arrays;
  for (auto& builder : state.builders) {
    std::shared_ptr<arrow::Array> array;
    SERAC_RETURN_IF_ERROR(FromArrow(builder->Finish(&array), context));
    arrays.push_back(std::move(array));
  }
  const int64_t rows = state.rows;
  state.rows = 0;
  return arrow::RecordBatch::Make(state.arrow_schema, rows, std::move(arrays));
}

}  // namespace serac::parquet
