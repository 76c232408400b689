#include "parquet/row_deletes.h"

#include <arrow/compute/api.h>
#include <arrow/io/api.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <algorithm>
#include <cstring>

#include "common/random.h"
#include "parquet/parquet_internal.h"

namespace serac::parquet {

namespace {

constexpr int32_t kDeleteFilePathFieldId = 2147483546;
constexpr int32_t kDeletePositionFieldId = 2147483545;

// Appends one value of a key to `key`: its kind, then its bytes (strings length-prefixed), so
// that different keys never encode alike.
void AppendKeyDatum(const iceberg::Datum& value, std::string& key) {
  key.push_back(static_cast<char>('a' + value.index()));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          const auto size = static_cast<uint32_t>(v.size());
          key.append(reinterpret_cast<const char*>(&size), sizeof(size));
          key += v;
        } else if constexpr (!std::is_same_v<T, std::monostate>) {
          key.append(reinterpret_cast<const char*>(&v), sizeof(v));
        }
      },
      value);
}

Status AppendKeyValue(const arrow::Array& column, int64_t row, const iceberg::Type& type, std::string& key) {
  SERAC_ASSIGN_OR_RETURN(iceberg::Datum value, DatumAt(column, row, type));
  AppendKeyDatum(value, key);
  return Status::Ok();
}

// One integer key as DataFileKeyIndex keeps it: big-endian with the sign bit flipped.
std::string CanonicalInteger(int64_t value) {
  const uint64_t bits = static_cast<uint64_t>(value) ^ (uint64_t{1} << 63);
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(bits >> (8 * (7 - i)));
  return bytes;
}

}  // namespace

Result<RowKeys> RowKeys::Read(const std::string& path, InputFormat format, const iceberg::Schema& schema) {
  return ReadColumns(path, format, schema, nullptr, nullptr);
}

Result<RowKeys> RowKeys::ReadEqualityDeletes(iceberg::FileIO& io, const iceberg::DataFile& delete_file,
                                             const iceberg::Schema& schema) {
  if (delete_file.equality_ids.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 delete_file.file_path + ": an equality delete file without equality ids");
  }
  return ReadColumns(delete_file.file_path, InputFormat::kParquet, schema, &io, &delete_file.equality_ids);
}

Result<RowKeys> RowKeys::ReadColumns(const std::string& path, InputFormat format,
                                     const iceberg::Schema& schema, iceberg::FileIO* io,
                                     const std::vector<int32_t>* only_field_ids) {
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Schema> table_arrow, ToArrowSchema(schema));
  const InputFile input{path, format, io};
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatchReader> batches,
                         OpenInputBatches(input, *table_arrow, nullptr));
  RowKeys keys;
  std::shared_ptr<arrow::Schema> key_arrow;
  // A table's equality delete file, written under any of its schemas, is read by field id (its
  // columns may have been renamed since); a key file a user gives, by name.
  const bool by_field_id = only_field_ids != nullptr && HasFieldIds(*batches->schema());
  int64_t rows = 0;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> batch,
                           NextInputBatch(*batches, input, *table_arrow, rows));
    if (batch == nullptr) break;
    if (key_arrow == nullptr) {
      for (const auto& field : batch->schema()->fields()) {
        const std::optional<int32_t> id = by_field_id ? FieldIdOf(*field) : std::nullopt;
        const iceberg::NestedField* column =
            by_field_id ? (id ? schema.FindField(*id) : nullptr) : schema.FindFieldByName(field->name());
        if (only_field_ids != nullptr &&
            (column == nullptr || std::find(only_field_ids->begin(), only_field_ids->end(), column->id) ==
                                      only_field_ids->end())) {
          continue;  // an equality delete file's other columns are not compared
        }
        bool top_level = false;
        for (const iceberg::NestedField& top : schema.fields) top_level = top_level || column == &top;
        if (column == nullptr || !top_level) {
          return Error(ErrorCode::kInvalidArgument,
                       path + ": column " + field->name() + " is not a column of the table");
        }
        if (!column->type.is_primitive()) {
          return Error(ErrorCode::kInvalidArgument, path + ": column " + field->name() + " is a " +
                                                        column->type.Name() + ", not a primitive key");
        }
        keys.key_schema_.fields.push_back(*column);
      }
      if (keys.key_schema_.fields.empty())
        return Error(ErrorCode::kInvalidArgument, path + ": no key columns");
      if (only_field_ids != nullptr) {
        // Comparing fewer columns than the file's equality ids would delete more rows than it does.
        for (int32_t id : *only_field_ids) {
          const bool found = std::any_of(keys.key_schema_.fields.begin(), keys.key_schema_.fields.end(),
                                         [&](const iceberg::NestedField& key) { return key.id == id; });
          if (!found) {
            return Error(ErrorCode::kInvalidArgument,
                         path + ": equality field id " + std::to_string(id) +
                             " is not a column of both the file and the table's current schema");
          }
        }
      }
      SERAC_ASSIGN_OR_RETURN(key_arrow, ToArrowSchema(keys.key_schema_));
    }
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> conformed,
                           by_field_id ? ProjectByFieldId(*batch, key_arrow, keys.key_schema_, path, rows + 1)
                                       : ConformBatch(*batch, key_arrow, keys.key_schema_, input, rows + 1));
    std::string key;
    for (int64_t row = 0; row < conformed->num_rows(); ++row) {
      key.clear();
      for (int c = 0; c < conformed->num_columns(); ++c) {
        SERAC_RETURN_IF_ERROR(AppendKeyValue(*conformed->column(c), row,
                                             keys.key_schema_.fields[static_cast<size_t>(c)].type, key));
      }
      keys.keys_.insert(key);
    }
    rows += batch->num_rows();
  }
  if (keys.key_schema_.fields.empty()) return Error(ErrorCode::kInvalidArgument, path + ": no key rows");
  return keys;  // not indexable (indexable()): no canonical keys
}

Result<RowKeys> RowKeys::FromRows(iceberg::Schema key_schema, const std::vector<Row>& rows) {
  if (key_schema.fields.empty()) return Error(ErrorCode::kInvalidArgument, "no key columns");
  for (const iceberg::NestedField& field : key_schema.fields) {
    if (!field.type.is_primitive()) {
      return Error(ErrorCode::kInvalidArgument,
                   "column " + field.name + " is a " + field.type.Name() + ", not a primitive key");
    }
  }
  RowKeys keys;
  keys.key_schema_ = std::move(key_schema);
  const iceberg::Type& first_type = keys.key_schema_.fields[0].type;
  std::string key;
  for (const Row& row : rows) {
    if (row.size() != keys.key_schema_.fields.size()) {
      return Error(ErrorCode::kInvalidArgument, "a key of " + std::to_string(row.size()) + " values for " +
                                                    std::to_string(keys.key_schema_.fields.size()) +
                                                    " columns");
    }
    if (keys.IntegerKey()) {
      // A null key matches no row of a single-column key (a key column is never null).
      if (const auto* value = std::get_if<int64_t>(&row[0].datum)) keys.integer_keys_.push_back(*value);
      if (const auto* value = std::get_if<int32_t>(&row[0].datum)) keys.integer_keys_.push_back(*value);
    } else if (keys.BytesKey()) {
      if (const auto* value = std::get_if<std::string>(&row[0].datum)) keys.bytes_keys_.insert(*value);
    } else {
      key.clear();
      for (const RowValue& value : row) AppendKeyDatum(value.datum, key);
      keys.keys_.insert(key);
    }
    if (!iceberg::IsNull(row[0].datum)) keys.first_values_.push_back(row[0].datum);
  }
  std::sort(keys.integer_keys_.begin(), keys.integer_keys_.end());
  std::sort(keys.first_values_.begin(), keys.first_values_.end(),
            [&](const iceberg::Datum& a, const iceberg::Datum& b) {
              return iceberg::CompareDatums(first_type, a, b) < 0;
            });
  keys.MakeCanonicalKeys();
  keys.indexable_ = true;
  return keys;
}

void RowKeys::MakeCanonicalKeys() {
  canonical_keys_.clear();
  for (int64_t value : integer_keys_) canonical_keys_.push_back(CanonicalInteger(value));
  for (const std::string& value : bytes_keys_) canonical_keys_.push_back(value);
  for (const std::string& value : keys_) canonical_keys_.push_back(value);
  std::sort(canonical_keys_.begin(), canonical_keys_.end());
}

std::span<const std::string> RowKeys::CanonicalKeysFor(const iceberg::DataFile& data_file) const {
  if (integer_keys_.empty() || key_schema_.fields.empty()) return canonical_keys_;
  // integer_keys_ and canonical_keys_ are in the same order: the file's range of values is a
  // range of both.
  const iceberg::NestedField& first = key_schema_.fields[0];
  auto bound = [&](const iceberg::ColumnBounds& bounds) -> std::optional<int64_t> {
    for (const auto& [id, bytes] : bounds) {
      if (id != first.id) continue;
      Result<iceberg::Datum> value = iceberg::FromSingleValue(first.type, bytes);
      if (!value.ok()) return std::nullopt;
      if (const auto* wide = std::get_if<int64_t>(&*value)) return *wide;
      if (const auto* narrow = std::get_if<int32_t>(&*value)) return *narrow;
    }
    return std::nullopt;
  };
  const std::optional<int64_t> lower = bound(data_file.lower_bounds);
  const std::optional<int64_t> upper = bound(data_file.upper_bounds);
  const auto begin =
      lower ? std::lower_bound(integer_keys_.begin(), integer_keys_.end(), *lower) : integer_keys_.begin();
  const auto end = upper ? std::upper_bound(begin, integer_keys_.end(), *upper) : integer_keys_.end();
  return std::span<const std::string>(canonical_keys_)
      .subspan(static_cast<size_t>(begin - integer_keys_.begin()), static_cast<size_t>(end - begin));
}

namespace {

bool IsIntegerKey(const iceberg::Schema& key_schema) {
  if (key_schema.fields.size() != 1) return false;
  switch (key_schema.fields[0].type.id) {
    case iceberg::TypeId::kInt:
    case iceberg::TypeId::kLong:
    case iceberg::TypeId::kDate:
    case iceberg::TypeId::kTime:
    case iceberg::TypeId::kTimestamp:
    case iceberg::TypeId::kTimestampTz:
      return true;
    default:
      return false;
  }
}

bool IsBytesKey(const iceberg::Schema& key_schema) {
  if (key_schema.fields.size() != 1) return false;
  switch (key_schema.fields[0].type.id) {
    case iceberg::TypeId::kString:
    case iceberg::TypeId::kBinary:
    case iceberg::TypeId::kUuid:
    case iceberg::TypeId::kFixed:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool RowKeys::IntegerKey() const { return IsIntegerKey(key_schema_); }
bool RowKeys::BytesKey() const { return IsBytesKey(key_schema_); }

Result<bool> AppendIndexKey(const std::vector<const arrow::Array*>& columns, int64_t row,
                            const iceberg::Schema& key_schema, std::string& key) {
  if (IsIntegerKey(key_schema)) {
    const arrow::Array& column = *columns[0];
    if (column.IsNull(row)) return false;
    const bool narrow = column.type_id() == arrow::Type::INT32 || column.type_id() == arrow::Type::DATE32;
    const int64_t value =
        narrow ? column.data()->GetValues<int32_t>(1)[row] : column.data()->GetValues<int64_t>(1)[row];
    key += CanonicalInteger(value);
    return true;
  }
  if (IsBytesKey(key_schema)) {
    const arrow::Array& column = *columns[0];
    if (column.IsNull(row)) return false;
    if (column.type_id() == arrow::Type::DICTIONARY) {
      SERAC_ASSIGN_OR_RETURN(iceberg::Datum value, DatumAt(column, row, key_schema.fields[0].type));
      key += std::get<std::string>(value);
    } else {
      key += column.type_id() == arrow::Type::FIXED_SIZE_BINARY
                 ? static_cast<const arrow::FixedSizeBinaryArray&>(column).GetView(row)
                 : static_cast<const arrow::BinaryArray&>(column).GetView(row);
    }
    return true;
  }
  for (size_t k = 0; k < columns.size(); ++k) {
    SERAC_RETURN_IF_ERROR(AppendKeyValue(*columns[k], row, key_schema.fields[k].type, key));
  }
  return true;
}

bool RowKeys::MayBeIn(const iceberg::DataFile& data_file) const {
  if (first_values_.empty() || key_schema_.fields.empty()) return true;
  const iceberg::NestedField& first = key_schema_.fields[0];
  auto bound = [&](const iceberg::ColumnBounds& bounds) -> std::optional<iceberg::Datum> {
    for (const auto& [id, bytes] : bounds) {
      if (id != first.id) continue;
      Result<iceberg::Datum> value = iceberg::FromSingleValue(first.type, bytes);
      if (value.ok()) return std::move(value).value();
    }
    return std::nullopt;
  };
  const std::optional<iceberg::Datum> lower = bound(data_file.lower_bounds);
  const std::optional<iceberg::Datum> upper = bound(data_file.upper_bounds);
  auto less = [&](const iceberg::Datum& a, const iceberg::Datum& b) {
    return iceberg::CompareDatums(first.type, a, b) < 0;
  };
  // The first key value not below the file's lower bound must not lie above its upper bound.
  auto candidate = lower ? std::lower_bound(first_values_.begin(), first_values_.end(), *lower, less)
                         : first_values_.begin();
  if (candidate == first_values_.end()) return false;
  return !upper || !less(*upper, *candidate);
}

std::vector<int32_t> RowKeys::field_ids() const {
  std::vector<int32_t> ids;
  for (const iceberg::NestedField& field : key_schema_.fields) ids.push_back(field.id);
  return ids;
}

Result<std::vector<int64_t>> RowKeys::FindIn(iceberg::FileIO& io, const iceberg::DataFile& data_file,
                                             KeyPositions* every_key) const {
  // Arrow's metadata accessors throw on a malformed file; its readers return errors.
  try {
    return FindInFile(io, data_file, every_key);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument,
                 data_file.file_path + ": not a readable Parquet file (" + e.what() + ")");
  }
}

Result<std::vector<int64_t>> RowKeys::FindInFile(iceberg::FileIO& io, const iceberg::DataFile& data_file,
                                                 KeyPositions* every_key) const {
  const std::string& path = data_file.file_path;
  auto input = std::make_shared<FileIOInput>(io, path, data_file.file_size_in_bytes);
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<::parquet::arrow::FileReader> reader,
                         OpenParquetReader(input, path));
  std::shared_ptr<arrow::Schema> file_schema;
  SERAC_RETURN_IF_ERROR(FromArrow(reader->GetSchema(&file_schema), path));

  // The file's column of each key field: by field id, or by name in a file written without ids.
  bool has_ids = false;
  for (const auto& field : file_schema->fields()) has_ids = has_ids || FieldIdOf(*field).has_value();
  const auto& schema_fields = reader->manifest().schema_fields;
  std::vector<int> leaves;
  std::vector<std::string> names;  // the file's names of the key columns, in key order
  for (const iceberg::NestedField& key : key_schema_.fields) {
    int found = -1;
    for (int i = 0; i < file_schema->num_fields(); ++i) {
      const auto& field = *file_schema->field(i);
      if (has_ids ? FieldIdOf(field) == key.id : field.name() == key.name) found = i;
    }
    if (found < 0 || !schema_fields[static_cast<size_t>(found)].is_leaf()) {
      return Error(ErrorCode::kInvalidArgument, path + ": the data file has no column " + key.name);
    }
    leaves.push_back(schema_fields[static_cast<size_t>(found)].column_index);
    names.push_back(file_schema->field(found)->name());
  }
  std::vector<int> row_groups(static_cast<size_t>(reader->num_row_groups()));
  for (size_t i = 0; i < row_groups.size(); ++i) row_groups[i] = static_cast<int>(i);
  auto batches = reader->GetRecordBatchReader(row_groups, leaves);
  if (!batches.ok()) return FromArrow(batches.status(), path);
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Schema> key_arrow, ToArrowSchema(key_schema_));

  std::vector<int64_t> positions;
  int64_t position = 0;
  std::string key;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    SERAC_RETURN_IF_ERROR(FromArrow((*batches)->ReadNext(&batch), path));
    if (batch == nullptr) break;
    std::vector<std::shared_ptr<arrow::Array>> columns;
    for (size_t k = 0; k < names.size(); ++k) {
      std::shared_ptr<arrow::Array> column = batch->GetColumnByName(names[k]);
      if (column == nullptr) return Error(ErrorCode::kInvalidArgument, path + ": no column " + names[k]);
      const auto& type = key_arrow->field(static_cast<int>(k))->type();
      if (!column->type()->Equals(*type, false)) {
        auto cast = arrow::compute::Cast(*column, type, arrow::compute::CastOptions::Safe());
        if (!cast.ok()) return FromArrow(cast.status(), path + ": column " + names[k]);
        column = *cast;
      }
      columns.push_back(std::move(column));
    }
    if (!integer_keys_.empty() || (keys_.empty() && IntegerKey())) {
      // One integer column: its values looked up in the sorted keys, without building a key each.
      const arrow::Array& column = *columns[0];
      const bool narrow = column.type_id() == arrow::Type::INT32 || column.type_id() == arrow::Type::DATE32;
      const int32_t* narrow_values = narrow ? column.data()->GetValues<int32_t>(1) : nullptr;
      const int64_t* wide_values = narrow ? nullptr : column.data()->GetValues<int64_t>(1);
      for (int64_t row = 0; row < batch->num_rows(); ++row) {
        if (column.IsNull(row)) continue;
        const int64_t value = narrow ? narrow_values[row] : wide_values[row];
        if (std::binary_search(integer_keys_.begin(), integer_keys_.end(), value))
          positions.push_back(position + row);
        if (every_key != nullptr) every_key->Add(CanonicalInteger(value), position + row);
      }
      position += batch->num_rows();
      continue;
    }
    if (!bytes_keys_.empty() || (keys_.empty() && BytesKey())) {
      // One string, binary or uuid column: its values looked up as they lie in the column.
      const arrow::Array& column = *columns[0];
      const bool fixed = column.type_id() == arrow::Type::FIXED_SIZE_BINARY;
      for (int64_t row = 0; row < batch->num_rows(); ++row) {
        if (column.IsNull(row)) continue;
        const std::string_view value =
            fixed ? static_cast<const arrow::FixedSizeBinaryArray&>(column).GetView(row)
                  : static_cast<const arrow::BinaryArray&>(column).GetView(row);
        if (bytes_keys_.find(value) != bytes_keys_.end()) positions.push_back(position + row);
        if (every_key != nullptr) every_key->Add(value, position + row);
      }
      position += batch->num_rows();
      continue;
    }
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      key.clear();
      for (size_t k = 0; k < columns.size(); ++k) {
        SERAC_RETURN_IF_ERROR(AppendKeyValue(*columns[k], row, key_schema_.fields[k].type, key));
      }
      if (keys_.count(key)) positions.push_back(position + row);
      if (every_key != nullptr) every_key->Add(key, position + row);
    }
    position += batch->num_rows();
  }
  return positions;
}

Result<std::vector<int64_t>> DeletedRows::Of(const iceberg::DataFile& data,
                                             const std::vector<const iceberg::DataFile*>& deletes) {
  std::vector<int64_t> positions;
  for (const iceberg::DataFile* file : deletes) {
    if (iceberg::IsDeletionVector(*file)) {
      SERAC_ASSIGN_OR_RETURN(iceberg::DeletionVector vector, iceberg::ReadDeletionVector(io_, *file));
      std::vector<int64_t> dv = vector.Positions();
      positions.insert(positions.end(), dv.begin(), dv.end());
    } else if (file->content == iceberg::FileContent::kPositionDeletes) {
      auto cached = position_files_.find(file->file_path);
      if (cached == position_files_.end()) {
        SERAC_ASSIGN_OR_RETURN(auto read, ReadPositionDeletes(io_, *file));
        cached = position_files_.emplace(file->file_path, std::move(read)).first;
      }
      if (auto it = cached->second.find(data.file_path); it != cached->second.end()) {
        positions.insert(positions.end(), it->second.begin(), it->second.end());
      }
    } else {
      auto cached = equality_files_.find(file->file_path);
      if (cached == equality_files_.end()) {
        SERAC_ASSIGN_OR_RETURN(RowKeys keys, RowKeys::ReadEqualityDeletes(io_, *file, schema_));
        cached = equality_files_.emplace(file->file_path, std::move(keys)).first;
      }
      SERAC_ASSIGN_OR_RETURN(std::vector<int64_t> found, cached->second.FindIn(io_, data));
      positions.insert(positions.end(), found.begin(), found.end());
    }
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

const std::map<std::string, std::vector<int64_t>>* DeletedRows::PositionsOf(const std::string& path) const {
  auto it = position_files_.find(path);
  return it == position_files_.end() ? nullptr : &it->second;
}

Result<std::map<std::string, std::vector<int64_t>>> ReadPositionDeletes(
    iceberg::FileIO& io, const iceberg::DataFile& delete_file) {
  iceberg::Schema schema;
  schema.fields.push_back(iceberg::NestedField{kDeleteFilePathFieldId, "file_path", true,
                                               iceberg::Type{iceberg::TypeId::kString}, "", "", ""});
  schema.fields.push_back(iceberg::NestedField{kDeletePositionFieldId, "pos", true,
                                               iceberg::Type{iceberg::TypeId::kLong}, "", "", ""});
  const std::string& path = delete_file.file_path;
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Schema> arrow_schema, ToArrowSchema(schema));
  SERAC_ASSIGN_OR_RETURN(
      std::shared_ptr<arrow::RecordBatchReader> batches,
      OpenInputBatches(InputFile{path, InputFormat::kParquet, &io}, *arrow_schema, nullptr));
  std::map<std::string, std::vector<int64_t>> positions;
  int64_t rows = 0;
  while (true) {
    const InputFile input{path, InputFormat::kParquet, &io};
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> batch,
                           NextInputBatch(*batches, input, *arrow_schema, rows));
    if (batch == nullptr) break;
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> conformed,
                           ConformBatch(*batch, arrow_schema, schema, input, rows + 1));
    const auto& paths = static_cast<const arrow::StringArray&>(*conformed->column(0));
    const auto& rows_deleted = static_cast<const arrow::Int64Array&>(*conformed->column(1));
    std::vector<int64_t>* current = nullptr;
    std::string_view current_path;
    for (int64_t row = 0; row < conformed->num_rows(); ++row) {
      if (paths.IsNull(row) || rows_deleted.IsNull(row)) {
        return Error(ErrorCode::kInvalidArgument, path + ": row " + std::to_string(rows + row + 1) +
                                                      ": a position delete without file_path or pos");
      }
      const std::string_view data_path = paths.GetView(row);
      if (current == nullptr || data_path != current_path) {
        current = &positions[std::string(data_path)];
        current_path = data_path;
      }
      current->push_back(rows_deleted.Value(row));
    }
    rows += batch->num_rows();
  }
  for (auto& [data_path, list] : positions) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return positions;
}

Result<iceberg::DataFile> WritePositionDeletes(iceberg::FileIO& io, const std::string& location,
                                               const iceberg::DataFile& data_file,
                                               const std::vector<int64_t>& positions,
                                               const WriteOptions& options) {
  iceberg::Schema schema;
  schema.fields.push_back(iceberg::NestedField{kDeleteFilePathFieldId, "file_path", true,
                                               iceberg::Type{iceberg::TypeId::kString}, "", "", ""});
  schema.fields.push_back(iceberg::NestedField{kDeletePositionFieldId, "pos", true,
                                               iceberg::Type{iceberg::TypeId::kLong}, "", "", ""});
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::Schema> arrow_schema, ToArrowSchema(schema));
  arrow::StringBuilder paths;
  arrow::Int64Builder rows;
  for (int64_t position : positions) {
    SERAC_RETURN_IF_ERROR(FromArrow(paths.Append(data_file.file_path), location));
    SERAC_RETURN_IF_ERROR(FromArrow(rows.Append(position), location));
  }
  std::shared_ptr<arrow::Array> path_array;
  std::shared_ptr<arrow::Array> position_array;
  SERAC_RETURN_IF_ERROR(FromArrow(paths.Finish(&path_array), location));
  SERAC_RETURN_IF_ERROR(FromArrow(rows.Finish(&position_array), location));
  auto batch = arrow::RecordBatch::Make(arrow_schema, static_cast<int64_t>(positions.size()),
                                        {path_array, position_array});

  auto sink = arrow::io::BufferOutputStream::Create();
  if (!sink.ok()) return FromArrow(sink.status(), location);
  ::parquet::WriterProperties::Builder builder;
  builder.compression(CodecOf(options.compression_codec))->created_by("serac")->enable_statistics();
  auto writer =
      ::parquet::arrow::FileWriter::Open(*arrow_schema, arrow::default_memory_pool(), *sink, builder.build(),
                                         ::parquet::ArrowWriterProperties::Builder().build());
  if (!writer.ok()) return FromArrow(writer.status(), location);
  SERAC_RETURN_IF_ERROR(FromArrow((*writer)->AddKeyValueMetadata(arrow_schema->metadata()), location));
  SERAC_RETURN_IF_ERROR(FromArrow((*writer)->WriteRecordBatch(*batch), location));
  SERAC_RETURN_IF_ERROR(FromArrow((*writer)->Close(), location));
  const std::shared_ptr<::parquet::FileMetaData> footer = (*writer)->metadata();
  auto buffer = (*sink)->Finish();
  if (!buffer.ok()) return FromArrow(buffer.status(), location);

  SERAC_ASSIGN_OR_RETURN(uint64_t size, iceberg::WriteFile(io, location, (*buffer)->ToString()));

  // Full bounds of file_path and pos, as Java keeps them for position deletes (readers use them to
  // skip the file for other data files).
  WriteOptions metrics = options;
  metrics.default_metrics = MetricsMode{MetricsMode::Kind::kFull, 0};
  metrics.default_metrics_explicit = true;
  metrics.column_metrics.clear();
  iceberg::DataFile deletes = MetricsFromFooter(*footer, schema, metrics, {});
  deletes.content = iceberg::FileContent::kPositionDeletes;
  deletes.file_path = location;
  deletes.file_format = "PARQUET";
  deletes.file_size_in_bytes = static_cast<int64_t>(size);
  deletes.partition = data_file.partition;
  deletes.spec_id = data_file.spec_id;
  deletes.referenced_data_file = data_file.file_path;
  return deletes;
}

Result<std::vector<iceberg::DataFile>> WriteEqualityDeletes(iceberg::FileIO& io, const std::string& key_path,
                                                            InputFormat format, const RowKeys& keys,
                                                            const iceberg::PartitionSpec& spec,
                                                            const WriteOptions& options,
                                                            const std::string& data_location) {
  for (const iceberg::PartitionField& field : spec.fields) {
    for (int32_t source : field.source_ids) {
      if (keys.key_schema().FindField(source) == nullptr) {
        return Error(
            ErrorCode::kInvalidArgument,
            "equality deletes of a partitioned table need the partition's source columns in the key: "
            "partition field " +
                field.name + " is not computed from a key column");
      }
    }
  }
  SERAC_ASSIGN_OR_RETURN(DataFileWriter writer,
                         DataFileWriter::Make(keys.key_schema(), spec, options, io, data_location));
  Status appended = writer.AppendFile(key_path, format);
  if (!appended.ok()) {
    writer.AbortAndDelete();
    return appended;
  }
  Result<std::vector<iceberg::DataFile>> files = writer.Finish();
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  for (iceberg::DataFile& file : *files) {
    file.content = iceberg::FileContent::kEqualityDeletes;
    file.equality_ids = keys.field_ids();
    file.spec_id = spec.spec_id;
    file.sort_order_id.reset();
  }
  return files;
}

Result<RowDeletes> DeleteRowsByKey(iceberg::FileIO& io, const RowKeys& keys, const iceberg::TableFiles& files,
                                   PositionDeletes kind, const WriteOptions& options,
                                   const std::string& data_location, DataFileKeyIndex* index) {
  RowDeletes deletes;
  auto give_up = [&](const Status& status) {
    for (const std::string& location : deletes.written) (void)io.Delete(location);
    return status;
  };
  std::vector<iceberg::DataFileDeletes> vectors;
  for (const iceberg::LiveFile& data : files.data) {
    if (!keys.MayBeIn(data.file)) continue;
    Result<std::vector<int64_t>> positions = std::vector<int64_t>();
    Result<std::optional<std::vector<int64_t>>> indexed = std::optional<std::vector<int64_t>>();
    if (index != nullptr && keys.indexable())
      indexed = index->Find(data.file, keys.CanonicalKeysFor(data.file));
    if (!indexed.ok()) return give_up(indexed.status());
    if (indexed->has_value()) {
      positions = std::move(**indexed);
    } else {
      KeyPositions every_key;
      const bool index_it = index != nullptr && keys.indexable();
      positions = keys.FindIn(io, data.file, index_it ? &every_key : nullptr);
      if (positions.ok() && index_it) {
        Status added = index->Add(data.file, every_key);
        if (!added.ok()) return give_up(added);
      }
    }
    if (!positions.ok()) return give_up(positions.status());
    if (positions->empty()) continue;
    if (kind == PositionDeletes::kFiles) {
      const std::string location = data_location + "/" + RandomUuid() + "-deletes.parquet";
      Result<iceberg::DataFile> written = WritePositionDeletes(io, location, data.file, *positions, options);
      if (!written.ok()) return give_up(written.status());
      deletes.written.push_back(location);
      deletes.rows += positions->size();
      deletes.added.push_back(std::move(written).value());
      continue;
    }
    iceberg::DataFileDeletes one{data.file, iceberg::DeletionVector()};
    for (int64_t position : *positions) {
      Status added = one.positions.Add(position);
      if (!added.ok()) return give_up(added);
    }
    if (auto previous = files.dv_of_data_file.find(data.file.file_path);
        previous != files.dv_of_data_file.end()) {
      const iceberg::DataFile& old = files.deletes[previous->second].file;
      Result<iceberg::DeletionVector> before = iceberg::ReadDeletionVector(io, old);
      if (!before.ok()) return give_up(before.status());
      const uint64_t had = before->cardinality();
      one.positions.Merge(*before);
      if (one.positions.cardinality() == had) continue;  // every row was deleted already
      deletes.rows += one.positions.cardinality() - had;
      deletes.replaced.push_back(old);
    } else {
      deletes.rows += one.positions.cardinality();
    }
    vectors.push_back(std::move(one));
  }
  if (!vectors.empty()) {
    const std::string location = data_location + "/" + RandomUuid() + "-deletes.puffin";
    Result<std::vector<iceberg::DataFile>> dvs = iceberg::WriteDeletionVectors(io, location, vectors);
    if (!dvs.ok()) return give_up(dvs.status());
    deletes.written.push_back(location);
    for (iceberg::DataFile& dv : *dvs) deletes.added.push_back(std::move(dv));
  }
  return deletes;
}

}  // namespace serac::parquet
