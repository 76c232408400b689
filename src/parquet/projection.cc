// A table's own data file, written under any of its schemas, read in the current one as Java's
// readers read it: every field found by its Parquet field id at every depth (renames do not
// matter), promoted to its current type, absent fields filled with their initial-default or null,
// and fields dropped since left out.
#include <arrow/compute/api.h>
#include <arrow/util/decimal.h>

#include <charconv>

#include "iceberg/expression/expression.h"
#include "parquet/parquet_internal.h"

namespace serac::parquet {
namespace {

// Where a batch came from, for messages.
struct Origin {
  const std::string& path;
  int64_t first_row;
};

Status Mismatch(const Origin& origin, const std::string& column, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, origin.path + ": column " + column + ": " + why);
}

// `value` (of a primitive Iceberg type) as the Arrow scalar of `type`.
Result<std::shared_ptr<arrow::Scalar>> ScalarOf(const iceberg::Datum& value,
                                                const iceberg::Type& iceberg_type,
                                                const std::shared_ptr<arrow::DataType>& type) {
  using iceberg::TypeId;
  if (iceberg::IsNull(value)) return arrow::MakeNullScalar(type);
  switch (iceberg_type.id) {
    case TypeId::kBoolean:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::BooleanScalar>(std::get<bool>(value)));
    case TypeId::kInt:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::Int32Scalar>(std::get<int32_t>(value)));
    case TypeId::kDate:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::Date32Scalar>(std::get<int32_t>(value)));
    case TypeId::kLong:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::Int64Scalar>(std::get<int64_t>(value)));
    case TypeId::kTime:
      return std::shared_ptr<arrow::Scalar>(
          std::make_shared<arrow::Time64Scalar>(std::get<int64_t>(value), type));
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return std::shared_ptr<arrow::Scalar>(
          std::make_shared<arrow::TimestampScalar>(std::get<int64_t>(value), type));
    case TypeId::kFloat:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::FloatScalar>(std::get<float>(value)));
    case TypeId::kDouble:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::DoubleScalar>(std::get<double>(value)));
    case TypeId::kString:
      return std::shared_ptr<arrow::Scalar>(
          std::make_shared<arrow::StringScalar>(std::get<std::string>(value)));
    case TypeId::kBinary:
      return std::shared_ptr<arrow::Scalar>(
          std::make_shared<arrow::BinaryScalar>(std::get<std::string>(value)));
    case TypeId::kUuid:
    case TypeId::kFixed:
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::FixedSizeBinaryScalar>(
          arrow::Buffer::FromString(std::get<std::string>(value)), type));
    case TypeId::kDecimal: {
      const std::string& bytes = std::get<std::string>(value);
      auto decimal = arrow::Decimal128::FromBigEndian(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                      static_cast<int32_t>(bytes.size()));
      if (!decimal.ok()) return FromArrow(decimal.status(), "a decimal default");
      return std::shared_ptr<arrow::Scalar>(std::make_shared<arrow::Decimal128Scalar>(*decimal, type));
    }
    default:
      return Error(ErrorCode::kNotImplemented, "a default of type " + iceberg_type.Name());
  }
}

// The column of a field the file does not have: its initial-default in every row, else null (a
// required field without a default cannot be read from this file, as in Java).
Result<std::shared_ptr<arrow::ArrayData>> Absent(const iceberg::NestedField& target,
                                                 const std::shared_ptr<arrow::DataType>& type, int64_t length,
                                                 const Origin& origin, const std::string& column) {
  if (!target.initial_default_json.empty()) {
    SERAC_ASSIGN_OR_RETURN(iceberg::Datum value, iceberg::DefaultValue(target, target.initial_default_json));
    if (!iceberg::IsNull(value)) {
      SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Scalar> scalar, ScalarOf(value, target.type, type));
      auto filled = arrow::MakeArrayFromScalar(*scalar, length);
      if (!filled.ok()) return FromArrow(filled.status(), origin.path + ": column " + column);
      return (*filled)->data();
    }
  }
  if (target.required) {
    return Mismatch(origin, column,
                    "the file has no values for this required column, which has no initial-default");
  }
  auto nulls = arrow::MakeArrayOfNull(type, length);
  if (!nulls.ok()) return FromArrow(nulls.status(), origin.path + ": column " + column);
  auto data = std::make_shared<arrow::ArrayData>(*(*nulls)->data());
  ClearRequiredNulls(*data);
  return data;
}

Result<std::shared_ptr<arrow::ArrayData>> Project(const std::shared_ptr<arrow::ArrayData>& input,
                                                  const iceberg::NestedField& target,
                                                  const std::shared_ptr<arrow::DataType>& type,
                                                  const Origin& origin, const std::string& column);

// The index of the child of `type` (a struct's fields) carrying field id `id`, or -1.
int ChildWithId(const arrow::DataType& type, int32_t id) {
  for (int i = 0; i < type.num_fields(); ++i) {
    if (FieldIdOf(*type.field(i)) == id) return i;
  }
  return -1;
}

// The children of a struct (or of a batch: `fields` its columns) in the target struct's fields.
Result<std::vector<std::shared_ptr<arrow::ArrayData>>> ProjectFields(
    const std::vector<std::shared_ptr<arrow::ArrayData>>& children, const arrow::DataType& input_type,
    const std::vector<iceberg::NestedField>& targets, const arrow::DataType& target_type, int64_t length,
    const Origin& origin, const std::string& parent) {
  std::vector<std::shared_ptr<arrow::ArrayData>> out;
  int arrow_index = 0;
  for (const iceberg::NestedField& target : targets) {
    if (target.type.id == iceberg::TypeId::kUnknown) continue;  // no Arrow column (ToArrowType)
    const std::shared_ptr<arrow::DataType>& child_type = target_type.field(arrow_index++)->type();
    const std::string column = parent.empty() ? target.name : parent + "." + target.name;
    const int found = ChildWithId(input_type, target.id);
    if (found < 0) {
      SERAC_ASSIGN_OR_RETURN(auto absent, Absent(target, child_type, length, origin, column));
      out.push_back(std::move(absent));
    } else {
      SERAC_ASSIGN_OR_RETURN(
          auto projected, Project(children[static_cast<size_t>(found)], target, child_type, origin, column));
      out.push_back(std::move(projected));
    }
  }
  return out;
}

Result<std::shared_ptr<arrow::ArrayData>> Project(const std::shared_ptr<arrow::ArrayData>& input,
                                                  const iceberg::NestedField& target,
                                                  const std::shared_ptr<arrow::DataType>& type,
                                                  const Origin& origin, const std::string& column) {
  using iceberg::TypeId;
  const arrow::DataType& input_type = *input->type;
  const auto kind_mismatch = [&] {
    return Mismatch(origin, column,
                    "the file holds " + input_type.ToString() + " where the table has " + target.type.Name());
  };
  auto nested = std::make_shared<arrow::ArrayData>(*input);  // same validity, offsets and offset
  nested->type = type;
  switch (target.type.id) {
    case TypeId::kStruct: {
      if (input_type.id() != arrow::Type::STRUCT) return kind_mismatch();
      // A struct's children span its offset too: they are projected whole.
      SERAC_ASSIGN_OR_RETURN(nested->child_data,
                             ProjectFields(input->child_data, input_type, target.type.fields, *type,
                                           input->offset + input->length, origin, column));
      return nested;
    }
    case TypeId::kList: {
      if (input_type.id() != arrow::Type::LIST) return kind_mismatch();
      SERAC_ASSIGN_OR_RETURN(auto element, Project(input->child_data[0], target.type.fields[0],
                                                   type->field(0)->type(), origin, column + ".element"));
      nested->child_data = {std::move(element)};
      return nested;
    }
    case TypeId::kMap: {
      if (input_type.id() != arrow::Type::MAP) return kind_mismatch();
      const auto& entries = input->child_data[0];
      const auto& entries_type = type->field(0)->type();
      SERAC_ASSIGN_OR_RETURN(auto key, Project(entries->child_data[0], target.type.fields[0],
                                               entries_type->field(0)->type(), origin, column + ".key"));
      SERAC_ASSIGN_OR_RETURN(auto value, Project(entries->child_data[1], target.type.fields[1],
                                                 entries_type->field(1)->type(), origin, column + ".value"));
      auto projected_entries = std::make_shared<arrow::ArrayData>(*entries);
      projected_entries->type = entries_type;
      projected_entries->child_data = {std::move(key), std::move(value)};
      nested->child_data = {std::move(projected_entries)};
      return nested;
    }
    default:
      break;
  }
  if (!target.type.is_primitive() || input_type.num_fields() > 0) return kind_mismatch();
  if (input_type.Equals(*type, /*check_metadata=*/false)) return input;
  // A promotion the table's evolution made (int to long, float to double, a wider decimal), or the
  // same values in another Arrow form (a dictionary, a large string): converted exactly or refused.
  auto cast = arrow::compute::Cast(*arrow::MakeArray(input), type, arrow::compute::CastOptions::Safe());
  if (!cast.ok()) {
    return Mismatch(origin, column,
                    "the file's " + input_type.ToString() + " values do not convert to " +
                        target.type.Name() + " (" + cast.status().message() + ")");
  }
  return (*cast)->data();
}

}  // namespace

std::optional<int32_t> FieldIdOf(const arrow::Field& field) {
  if (field.metadata() == nullptr) return std::nullopt;
  auto text = field.metadata()->Get("PARQUET:field_id");
  if (!text.ok()) return std::nullopt;
  int32_t id = 0;
  const std::string& digits = *text;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return id;
}

bool HasFieldIds(const arrow::Schema& schema) {
  for (const auto& field : schema.fields()) {
    if (FieldIdOf(*field).has_value()) return true;
  }
  return false;
}

Result<std::shared_ptr<arrow::RecordBatch>> ProjectByFieldId(
    const arrow::RecordBatch& input, const std::shared_ptr<arrow::Schema>& arrow_schema,
    const iceberg::Schema& schema, const std::string& path, int64_t first_row) {
  const Origin origin{path, first_row};
  std::vector<std::shared_ptr<arrow::ArrayData>> children;
  for (int c = 0; c < input.num_columns(); ++c) children.push_back(input.column_data(c));
  const arrow::StructType input_type(input.schema()->fields());
  const arrow::StructType target_type(arrow_schema->fields());
  SERAC_ASSIGN_OR_RETURN(auto columns, ProjectFields(children, input_type, schema.fields, target_type,
                                                     input.num_rows(), origin, ""));
  return arrow::RecordBatch::Make(arrow_schema, input.num_rows(), std::move(columns));
}

}  // namespace serac::parquet
