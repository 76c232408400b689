// A snapshot's rows as display text: the scan planner's tasks, one data manifest at a time, each
// data file read in small batches by field id in the snapshot's schema, its deleted rows left out,
// until enough rows are found.
#include "parquet/table_rows.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <string_view>

#include "common/encoding.h"
#include "common/json_reads.h"
#include "iceberg/scan/scan_planning.h"
#include "parquet/parquet_internal.h"
#include "parquet/row_deletes.h"

namespace serac::parquet {
namespace {

using iceberg::TypeId;

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026
// Column chunks are read this much at a time (OpenParquetReader's buffered stream).
constexpr int64_t kReadBufferBytes = 1 << 20;
constexpr int64_t kBatchRowsMin = 64;
constexpr int64_t kBatchRowsMax = 8192;

// `text` cut after `bytes_max` bytes, before the character that would not fit whole.
std::string CutText(std::string_view text, uint64_t bytes_max) {
  if (text.size() <= bytes_max) return std::string(text);
  size_t cut = static_cast<size_t>(bytes_max);
  while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out(text.substr(0, cut));
  out += kEllipsis;
  return out;
}

std::string HexText(std::string_view bytes, uint64_t bytes_shown) {
  if (bytes.size() <= bytes_shown) return HexEncode(bytes);
  return HexEncode(bytes.substr(0, static_cast<size_t>(bytes_shown))) + std::string(kEllipsis);
}

template <typename Float>
std::string FloatText(Float value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char text[64];
  const auto written = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, written.ptr);
}

std::string Padded(int64_t value, size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t quotient = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --quotient;
  return quotient;
}

// HH:MM:SS.fff... of a second of the day and its fraction (in units of 10^-digits seconds).
std::string TimeOfDayText(int64_t second_of_day, int64_t fraction, size_t digits) {
  return Padded(second_of_day / 3600, 2) + ":" + Padded(second_of_day / 60 % 60, 2) + ":" +
         Padded(second_of_day % 60, 2) + "." + Padded(fraction, digits);
}

// A time of day in microseconds; a value outside a day (not one a writer makes) as its number.
std::string TimeText(int64_t micros) {
  constexpr int64_t kMicrosPerDay = 86'400'000'000;
  if (micros < 0 || micros >= kMicrosPerDay) return std::to_string(micros);
  return TimeOfDayText(micros / 1'000'000, micros % 1'000'000, 6);
}

// A timestamp counted in units of 10^-digits seconds from 1970-01-01T00:00:00.
std::string TimestampText(int64_t value, size_t digits, bool with_zone) {
  const int64_t per_second = digits == 9 ? 1'000'000'000 : 1'000'000;
  int64_t fraction = value % per_second;
  if (fraction < 0) fraction += per_second;
  const int64_t seconds = FloorDiv(value, per_second);
  const int64_t days = FloorDiv(seconds, 86'400);
  const iceberg::Type date{TypeId::kDate};
  return iceberg::DatumToText(date, iceberg::Datum(static_cast<int32_t>(days))) + "T" +
         TimeOfDayText(seconds - days * 86'400, fraction, digits) + (with_zone ? "+00:00" : "");
}

// Whether `value` holds what a value of `type` holds (iceberg/schema/partition.h's Datum).
bool Fits(const iceberg::Type& type, const iceberg::Datum& value) {
  switch (type.id) {
    case TypeId::kBoolean:
      return std::holds_alternative<bool>(value);
    case TypeId::kInt:
    case TypeId::kDate:
      return std::holds_alternative<int32_t>(value);
    case TypeId::kLong:
    case TypeId::kTime:
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return std::holds_alternative<int64_t>(value);
    case TypeId::kDecimal: {
      const auto* bytes = std::get_if<std::string>(&value);
      return bytes != nullptr && !bytes->empty() && bytes->size() <= 16;
    }
    case TypeId::kString:
    case TypeId::kBinary:
    case TypeId::kFixed:
    case TypeId::kUuid:
      return std::holds_alternative<std::string>(value);
    default:
      return false;
  }
}

// A value whose kind does not match its type (a damaged manifest): shown by its kind.
std::string TextByKind(const iceberg::Datum& value, const CellLimits& limits) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int32_t>(&value)) return std::to_string(*i);
  if (const auto* l = std::get_if<int64_t>(&value)) return std::to_string(*l);
  if (const auto* bytes = std::get_if<std::string>(&value)) return HexText(*bytes, limits.binary_bytes_shown);
  return "";
}

}  // namespace

std::optional<std::string> CellText(const iceberg::Type& type, const iceberg::Datum& value,
                                    const CellLimits& limits) {
  if (iceberg::IsNull(value)) return std::nullopt;
  if (const auto* f = std::get_if<float>(&value)) return FloatText(*f);
  if (const auto* d = std::get_if<double>(&value)) return FloatText(*d);
  if (!Fits(type, value)) return TextByKind(value, limits);
  switch (type.id) {
    case TypeId::kTime:
      return TimeText(std::get<int64_t>(value));
    case TypeId::kTimestamp:
    case TypeId::kTimestampTz:
      return TimestampText(std::get<int64_t>(value), 6, type.id == TypeId::kTimestampTz);
    case TypeId::kTimestampNs:
    case TypeId::kTimestampTzNs:
      return TimestampText(std::get<int64_t>(value), 9, type.id == TypeId::kTimestampTzNs);
    case TypeId::kString:
      return CutText(std::get<std::string>(value), limits.text_bytes_max);
    case TypeId::kBinary:
    case TypeId::kFixed:
      return HexText(std::get<std::string>(value), limits.binary_bytes_shown);
    case TypeId::kUuid:
      if (std::get<std::string>(value).size() != 16) {
        return HexText(std::get<std::string>(value), limits.binary_bytes_shown);
      }
      break;
    default:
      break;
  }
  // Booleans, integers, dates, decimals (plain, with their scale) and uuids as Java's human
  // strings write them, which are the forms above.
  return iceberg::DatumToText(type, value);
}

namespace {

// ---- Arrow values as display text ----

// A primitive value of an Arrow array read in the table's types (ToArrowType's).
Result<std::optional<std::string>> ScalarCell(const arrow::Array& array, int64_t row,
                                              const iceberg::Type& type, const CellLimits& limits) {
  if (array.IsNull(row)) return std::optional<std::string>();
  std::string_view bytes;
  switch (array.type_id()) {
    case arrow::Type::STRING:
      bytes = static_cast<const arrow::StringArray&>(array).GetView(row);
      break;
    case arrow::Type::BINARY:
      bytes = static_cast<const arrow::BinaryArray&>(array).GetView(row);
      break;
    case arrow::Type::FIXED_SIZE_BINARY:
      bytes = static_cast<const arrow::FixedSizeBinaryArray&>(array).GetView(row);
      break;
    default: {
      SERAC_ASSIGN_OR_RETURN(iceberg::Datum value, DatumAt(array, row, type));
      return CellText(type, value, limits);
    }
  }
  // Only what is shown is copied: a value longer than both limits is cut anyway.
  const uint64_t shown =
      std::max<uint64_t>(std::max(limits.text_bytes_max, limits.binary_bytes_shown), 16) + 1;
  return CellText(type, iceberg::Datum(std::string(bytes.substr(0, static_cast<size_t>(shown)))), limits);
}

Status AppendJson(const arrow::Array& array, int64_t row, const iceberg::Type& type, const CellLimits& limits,
                  size_t end, std::string& out);

// The elements [begin, finish) of a list's values, or of a map's keys and items, as JSON.
Status AppendElements(const arrow::Array& values, const arrow::Array* items, int64_t begin, int64_t finish,
                      const iceberg::Type& type, const CellLimits& limits, size_t end, std::string& out) {
  const bool map = items != nullptr;
  out += map ? '{' : '[';
  for (int64_t i = begin; i < finish; ++i) {
    if (i > begin) out += ',';
    if (out.size() > end) {
      out += map ? "\"\xE2\x80\xA6\":null" : "\"\xE2\x80\xA6\"";
      break;
    }
    if (!map) {
      SERAC_RETURN_IF_ERROR(AppendJson(values, i, type.fields.at(0).type, limits, end, out));
      continue;
    }
    const iceberg::Type& key_type = type.fields.at(0).type;
    std::string key;
    if (key_type.is_primitive()) {
      SERAC_ASSIGN_OR_RETURN(std::optional<std::string> text, ScalarCell(values, i, key_type, limits));
      key = text.value_or("null");
    } else {
      SERAC_RETURN_IF_ERROR(AppendJson(values, i, key_type, limits, end, key));
    }
    AppendJsonString(out, key);
    out += ':';
    SERAC_RETURN_IF_ERROR(AppendJson(*items, i, type.fields.at(1).type, limits, end, out));
  }
  out += map ? '}' : ']';
  return Status::Ok();
}

// A value as JSON: nested ones as objects and arrays, primitive ones as strings of their text.
Status AppendJson(const arrow::Array& array, int64_t row, const iceberg::Type& type, const CellLimits& limits,
                  size_t end, std::string& out) {
  if (array.IsNull(row)) {
    out += "null";
    return Status::Ok();
  }
  switch (type.id) {
    case TypeId::kStruct: {
      if (array.type_id() != arrow::Type::STRUCT) break;
      const auto& fields = static_cast<const arrow::StructArray&>(array);
      out += '{';
      int child = 0;
      for (size_t f = 0; f < type.fields.size(); ++f) {
        const iceberg::NestedField& field = type.fields[f];
        if (f > 0) out += ',';
        AppendJsonString(out, field.name);
        out += ':';
        if (field.type.id == TypeId::kUnknown || child >= fields.num_fields()) {
          out += "null";  // an unknown field has no column (ToArrowType)
          continue;
        }
        SERAC_RETURN_IF_ERROR(AppendJson(*fields.field(child++), row, field.type, limits, end, out));
      }
      out += '}';
      return Status::Ok();
    }
    case TypeId::kList: {
      if (array.type_id() != arrow::Type::LIST) break;
      const auto& list = static_cast<const arrow::ListArray&>(array);
      return AppendElements(*list.values(), nullptr, list.value_offset(row),
                            list.value_offset(row) + list.value_length(row), type, limits, end, out);
    }
    case TypeId::kMap: {
      if (array.type_id() != arrow::Type::MAP) break;
      const auto& map = static_cast<const arrow::MapArray&>(array);
      return AppendElements(*map.keys(), map.items().get(), map.value_offset(row),
                            map.value_offset(row) + map.value_length(row), type, limits, end, out);
    }
    default: {
      SERAC_ASSIGN_OR_RETURN(std::optional<std::string> text, ScalarCell(array, row, type, limits));
      if (text) {
        AppendJsonString(out, *text);
      } else {
        out += "null";
      }
      return Status::Ok();
    }
  }
  return Error(ErrorCode::kInvalidArgument,
               "a " + array.type()->ToString() + " column cannot hold " + type.Name() + " values");
}

Result<std::optional<std::string>> ArrayCell(const arrow::Array& array, int64_t row,
                                             const iceberg::Type& type, const CellLimits& limits) {
  if (type.is_primitive()) return ScalarCell(array, row, type, limits);
  if (array.IsNull(row)) return std::optional<std::string>();
  std::string json;
  SERAC_RETURN_IF_ERROR(
      AppendJson(array, row, type, limits, static_cast<size_t>(limits.text_bytes_max), json));
  return std::optional<std::string>(std::move(json));
}

// ---- Reading ----

// The columns of a schema that the reader reads: every top-level field of a type Arrow holds.
struct Columns {
  iceberg::Schema schema;                  // those fields only
  std::shared_ptr<arrow::Schema> arrow;    // ToArrowSchema(schema)
  std::vector<int> column_of_field;        // per field of the full schema: its column, or -1
  std::vector<const iceberg::Type*> type;  // per field of the full schema
};

Result<Columns> ReadableColumns(const iceberg::Schema& full) {
  Columns columns;
  columns.schema.schema_id = full.schema_id;
  for (const iceberg::NestedField& field : full.fields) {
    columns.type.push_back(&field.type);
    if (field.type.id == TypeId::kUnknown || !ToArrowField(field).ok()) {
      columns.column_of_field.push_back(-1);
      continue;
    }
    columns.column_of_field.push_back(static_cast<int>(columns.schema.fields.size()));
    columns.schema.fields.push_back(field);
  }
  SERAC_ASSIGN_OR_RETURN(columns.arrow, ToArrowSchema(columns.schema));
  return columns;
}

// Where rows go, and when to stop.
struct RowSink {
  const TableRowsOptions& options;
  TableRows& out;
  uint64_t bytes = 0;

  bool Full() const { return out.rows.size() >= options.rows_max || out.stopped_at_bytes; }
};

// The rows of one data file, but those at `deleted` (ascending), until the sink is full.
Status ReadDataFile(iceberg::FileIO& io, const std::string& path, const Columns& columns,
                    const std::vector<int64_t>& deleted, RowSink& sink) {
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::io::RandomAccessFile> input, OpenInput(path, &io));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<::parquet::arrow::FileReader> reader,
                         OpenParquetReader(input, path, /*arrow_extensions=*/false, kReadBufferBytes));
  const int64_t wanted = static_cast<int64_t>(sink.options.rows_max - sink.out.rows.size());
  reader->set_batch_size(std::clamp(wanted, kBatchRowsMin, kBatchRowsMax));
  auto batches = reader->GetRecordBatchReader();
  if (!batches.ok()) return FromArrow(batches.status(), path);
  // A table's own file is read by field id; one written without ids (a file added as it was) by
  // the schema's names, as compaction reads it.
  const bool by_field_id = HasFieldIds(*(*batches)->schema());
  const InputFile input_file{path, InputFormat::kParquet, &io};
  int64_t position = 0;
  size_t next_deleted = 0;
  while (!sink.Full()) {
    std::shared_ptr<arrow::RecordBatch> batch;
    const arrow::Status read = (*batches)->ReadNext(&batch);
    if (!read.ok()) return FromArrow(read, path + ": after row " + std::to_string(position));
    if (batch == nullptr) break;
    const int64_t batch_end = position + batch->num_rows();
    SERAC_ASSIGN_OR_RETURN(
        std::shared_ptr<arrow::RecordBatch> rows,
        by_field_id ? ProjectByFieldId(*batch, columns.arrow, columns.schema, path, position + 1)
                    : ConformBatch(*batch, columns.arrow, columns.schema, input_file, position + 1));
    for (int64_t row = 0; row < rows->num_rows() && !sink.Full(); ++row) {
      while (next_deleted < deleted.size() && deleted[next_deleted] < position + row) ++next_deleted;
      if (next_deleted < deleted.size() && deleted[next_deleted] == position + row) continue;
      CellRow cells;
      cells.reserve(columns.column_of_field.size());
      for (size_t f = 0; f < columns.column_of_field.size(); ++f) {
        const int column = columns.column_of_field[f];
        if (column < 0) {
          cells.emplace_back();
          continue;
        }
        SERAC_ASSIGN_OR_RETURN(std::optional<std::string> cell,
                               ArrayCell(*rows->column(column), row, *columns.type[f], sink.options.cells));
        sink.bytes += cell ? cell->size() : 0;
        cells.push_back(std::move(cell));
      }
      sink.out.rows.push_back(std::move(cells));
      if (sink.bytes >= sink.options.bytes_max && sink.out.rows.size() < sink.options.rows_max) {
        sink.out.stopped_at_bytes = true;
      }
    }
    position = batch_end;
  }
  return Status::Ok();
}

// The key of a delete file in the count of those applied: a DV by its blob.
std::string DeleteFileKey(const iceberg::DataFile& file) {
  return file.file_path + "#" + std::to_string(file.content_offset.value_or(-1));
}

Status WithFile(const Status& status, const std::string& path) {
  if (status.ok() || status.message().find(path) != std::string::npos) return status;
  return Error(status.code(), path + ": " + status.message());
}

}  // namespace

Result<TableRows> ReadTableRows(iceberg::FileIO& io, const iceberg::TableMetadata& metadata,
                                int64_t snapshot_id, const TableRowsOptions& options) {
  iceberg::ScanRequest request;
  request.snapshot_id = snapshot_id;
  request.use_snapshot_schema = true;
  SERAC_ASSIGN_OR_RETURN(iceberg::ScanPlanner planner, iceberg::ScanPlanner::Make(io, metadata, request));
  TableRows out;
  out.schema = planner.schema();
  SERAC_ASSIGN_OR_RETURN(const Columns columns, ReadableColumns(out.schema));
  RowSink sink{options, out};
  DeletedRows deleted(io, out.schema);
  std::set<std::string> applied;
  for (size_t manifest = 0; manifest < planner.data_manifest_count() && !sink.Full(); ++manifest) {
    SERAC_ASSIGN_OR_RETURN(iceberg::ScanPlan plan, planner.Plan(manifest, manifest + 1));
    for (const iceberg::PlannedTask& task : plan.tasks) {
      if (sink.Full()) break;
      std::vector<const iceberg::DataFile*> deletes;
      for (uint32_t index : task.deletes) deletes.push_back(&plan.delete_files.at(index));
      const std::string& path = task.file.file_path;
      Result<std::vector<int64_t>> positions = deleted.Of(task.file, deletes);
      if (!positions.ok()) {
        return Error(positions.status().code(),
                     "applying the deletes of " + path + ": " + positions.status().message());
      }
      for (const iceberg::DataFile* file : deletes) applied.insert(DeleteFileKey(*file));
      const auto rows_deleted =
          std::lower_bound(positions->begin(), positions->end(), task.file.record_count) - positions->begin();
      if (task.file.record_count > 0 && rows_deleted >= task.file.record_count)
        continue;  // every row deleted
      Status read;
      try {
        read = ReadDataFile(io, path, columns, *positions, sink);
      } catch (const std::exception& e) {
        // Arrow's metadata accessors throw on a malformed file; its readers return errors.
        read = Error(ErrorCode::kInvalidArgument, path + ": not a readable Parquet file (" + e.what() + ")");
      }
      SERAC_RETURN_IF_ERROR(WithFile(read, path));
    }
  }
  out.delete_files_applied = static_cast<int64_t>(applied.size());
  return out;
}

}  // namespace serac::parquet
