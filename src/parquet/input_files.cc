// Reading what users load: local Parquet, CSV and JSON-lines files as Arrow batches, and each
// batch conformed to a table's columns (by name, widened to the table's types, uuids from text),
// with messages that name the file, the row and the column.
#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/json/api.h>
#include <parquet/arrow/reader.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <mutex>

#include "common/encoding.h"
#include "common/limits.h"
#include "parquet/parquet_internal.h"

namespace serac::parquet {

// An all-null column whose type has required fields inside (a struct's required child): Arrow's
// null array has nulls at every level, which the Parquet writer refuses for a required field even
// under a null parent. The required levels are made valid (zeros, empty strings and lists, which no
// reader sees under the null parent).
void ClearRequiredNulls(arrow::ArrayData& data) {
  const arrow::DataType& type = *data.type;
  for (int i = 0; i < type.num_fields() && i < static_cast<int>(data.child_data.size()); ++i) {
    auto child = std::make_shared<arrow::ArrayData>(*data.child_data[static_cast<size_t>(i)]);
    if (!type.field(i)->nullable()) {
      child->buffers[0] = nullptr;
      child->null_count = 0;
    }
    ClearRequiredNulls(*child);
    data.child_data[static_cast<size_t>(i)] = std::move(child);
  }
}

namespace {

// The index in schema.fields of the c-th Arrow column (unknown columns have none).
int SchemaIndex(const arrow::Schema& arrow_schema, const iceberg::Schema& schema, int c) {
  const std::string& name = arrow_schema.field(c)->name();
  for (size_t i = 0; i < schema.fields.size(); ++i) {
    if (schema.fields[i].name == name) return static_cast<int>(i);
  }
  return 0;
}

// "f79c3e09-677c-4bbd-a479-3f349cb785e7" as the uuid's 16 bytes.
Result<std::shared_ptr<arrow::Array>> UuidsFromText(const arrow::StringArray& text, const InputFile& file,
                                                    int64_t first_row, const std::string& column) {
  const std::string& path = file.path;
  arrow::FixedSizeBinaryBuilder builder(arrow::fixed_size_binary(16));
  for (int64_t row = 0; row < text.length(); ++row) {
    if (text.IsNull(row)) {
      SERAC_RETURN_IF_ERROR(FromArrow(builder.AppendNull(), path));
      continue;
    }
    std::string hex(text.GetView(row));
    std::erase(hex, '-');
    std::optional<std::string> bytes = hex.size() == 32 ? HexDecode(hex) : std::nullopt;
    if (!bytes) {
      return Error(ErrorCode::kInvalidArgument, file.Where(first_row + row) + ", column " + column + ": \"" +
                                                    std::string(text.GetView(row)) + "\" is not a uuid");
    }
    SERAC_RETURN_IF_ERROR(FromArrow(builder.Append(*bytes), path));
  }
  std::shared_ptr<arrow::Array> out;
  SERAC_RETURN_IF_ERROR(FromArrow(builder.Finish(&out), path));
  return out;
}

// kInvalidArgument naming the row and column of the first index of `column` that is not one of its
// dictionary's entries.
Status CheckDictionaryIndices(const arrow::DictionaryArray& column, const InputFile& file, int64_t first_row,
                              const std::string& name) {
  const int64_t entries = column.dictionary()->length();
  const arrow::Array& indices = *column.indices();
  auto check = [&](auto values) -> Status {
    for (int64_t row = 0; row < indices.length(); ++row) {
      if (indices.IsNull(row)) continue;
      const auto index = static_cast<int64_t>(values[row]);
      if (index < 0 || index >= entries) {
        return Error(ErrorCode::kInvalidArgument, file.Where(first_row + row) + ", column " + name +
                                                      ": the page refers to dictionary entry " +
                                                      std::to_string(index) + " of " +
                                                      std::to_string(entries));
      }
    }
    return Status::Ok();
  };
  switch (indices.type_id()) {
    case arrow::Type::INT8:
      return check(indices.data()->GetValues<int8_t>(1));
    case arrow::Type::INT16:
      return check(indices.data()->GetValues<int16_t>(1));
    case arrow::Type::INT32:
      return check(indices.data()->GetValues<int32_t>(1));
    case arrow::Type::INT64:
      return check(indices.data()->GetValues<int64_t>(1));
    default:
      return Error(
          ErrorCode::kInvalidArgument,
          file.path + ", column " + name + ": dictionary indices of type " + indices.type()->ToString());
  }
}

// The value at `row` for a message: text quoted as it is in the file, other values as Arrow prints
// them, cut at a length a terminal line holds.
std::string ValueText(const arrow::Array& column, int64_t row) {
  constexpr size_t kShownBytesMax = 200;
  auto scalar = column.GetScalar(row);
  if (!scalar.ok()) return "the value";
  std::string text = (*scalar)->ToString();
  if (column.type_id() == arrow::Type::STRING || column.type_id() == arrow::Type::LARGE_STRING) {
    text = "'" + text + "'";
  }
  if (text.size() > kShownBytesMax) text = text.substr(0, kShownBytesMax) + "...";
  return text;
}

// The 1-based line a record of a CSV or JSON-lines file starts on, as an editor numbers lines:
// empty lines are skipped as Arrow's readers skip them, and line breaks inside a CSV value's quotes
// are lines too. Records count from 1, a CSV file's header included: the first record from
// `first_record` on that `matches` (its text, the first kRecordTextBytes of it), or any record
// without `matches`; nullopt past the end.
Result<std::optional<int64_t>> FindRecordLine(const InputFile& file, int64_t first_record,
                                              const std::function<bool(std::string_view)>& matches = {}) {
  constexpr size_t kRecordTextBytes = 64 * 1024;
  constexpr int64_t kChunkBytes = 1 << 20;
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::io::RandomAccessFile> input, OpenInput(file.path, file.io));
  const bool csv = file.format == InputFormat::kCsv;
  int64_t line = 1;
  int64_t records = 0;
  int64_t record_start = 0;  // the line the record being read started on; 0 before its first byte
  std::string text;          // the record's first bytes
  bool in_quotes = false;
  const auto record_ends = [&] {
    ++records;
    const bool found = records >= first_record && (!matches || matches(text));
    record_start = 0;
    text.clear();
    return found;
  };
  while (true) {
    auto chunk = input->Read(kChunkBytes);
    if (!chunk.ok()) return FromArrow(chunk.status(), file.path);
    const std::string_view bytes(reinterpret_cast<const char*>((*chunk)->data()),
                                 static_cast<size_t>((*chunk)->size()));
    for (const char c : bytes) {
      if (c == '\n' && !in_quotes && record_start != 0) {
        const int64_t started = record_start;
        if (record_ends()) return std::optional<int64_t>(started);
      }
      if (c == '\n') {
        ++line;
        continue;
      }
      if (c == '\r' || (!csv && (c == ' ' || c == '\t') && record_start == 0)) continue;
      if (record_start == 0) record_start = line;
      if (matches && text.size() < kRecordTextBytes) text.push_back(c);
      if (csv && c == '"') in_quotes = !in_quotes;
    }
    if (bytes.empty()) break;
  }
  const int64_t started = record_start;
  if (record_start != 0 && record_ends()) return std::optional<int64_t>(started);
  return std::optional<int64_t>();
}

}  // namespace

std::string InputFile::Where(int64_t row) const {
  if (format == InputFormat::kCsv || format == InputFormat::kJsonLines) {
    auto line = FindRecordLine(*this, format == InputFormat::kCsv ? row + 1 : row);
    if (line.ok() && line->has_value()) return path + ": line " + std::to_string(**line);
  }
  return path + ": row " + std::to_string(row);
}

Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const arrow::RecordBatch& input,
                                                         const std::shared_ptr<arrow::Schema>& arrow_schema,
                                                         const iceberg::Schema& schema, const InputFile& file,
                                                         int64_t first_row) {
  const std::string& path = file.path;
  for (const auto& field : input.schema()->fields()) {
    if (arrow_schema->GetFieldIndex(field->name()) < 0 && !schema.FindFieldByName(field->name())) {
      return Error(ErrorCode::kInvalidArgument,
                   path + ": column " + field->name() + " is not a column of the table");
    }
  }
  arrow::ArrayVector columns;
  for (int c = 0; c < arrow_schema->num_fields(); ++c) {
    const auto& target = arrow_schema->field(c);
    const int index = input.schema()->GetFieldIndex(target->name());
    std::shared_ptr<arrow::Array> column;
    if (index < 0) {
      if (!target->nullable()) {
        return Error(ErrorCode::kInvalidArgument,
                     path + ": the table's required column " + target->name() + " is not in the file");
      }
      auto nulls = arrow::MakeArrayOfNull(target->type(), input.num_rows());
      if (!nulls.ok()) return FromArrow(nulls.status(), path);
      auto data = std::make_shared<arrow::ArrayData>(*(*nulls)->data());
      ClearRequiredNulls(*data);
      column = arrow::MakeArray(data);
    } else {
      column = input.column(index);
      if (column->type_id() == arrow::Type::DICTIONARY) {
        // A damaged file's pages can hold indices past its dictionary, which Arrow's reader passes
        // on as they are: refused here, before anything looks a value up.
        SERAC_RETURN_IF_ERROR(CheckDictionaryIndices(static_cast<const arrow::DictionaryArray&>(*column),
                                                     file, first_row, target->name()));
        // A dictionary of the column's own type is kept as it is (the writer writes it as the
        // file's dictionary); any other is expanded, for the conversions below.
        const auto& dictionary_type = static_cast<const arrow::DictionaryType&>(*column->type());
        if (dictionary_type.value_type()->Equals(*target->type(), /*check_metadata=*/false)) {
          if (!target->nullable() && column->null_count() > 0) {
            auto dense = arrow::compute::Cast(*column, target->type());
            if (!dense.ok()) return FromArrow(dense.status(), path + ": column " + target->name());
            column = *dense;  // for the message below, which finds the row
          } else {
            columns.push_back(std::move(column));
            continue;
          }
        } else {
          auto dense = arrow::compute::Cast(*column, dictionary_type.value_type());
          if (!dense.ok()) return FromArrow(dense.status(), path + ": column " + target->name());
          column = *dense;
        }
      }
      if (target->type()->id() == arrow::Type::FIXED_SIZE_BINARY &&
          column->type_id() == arrow::Type::STRING &&
          schema.fields[static_cast<size_t>(SchemaIndex(*arrow_schema, schema, c))].type.id ==
              iceberg::TypeId::kUuid) {
        SERAC_ASSIGN_OR_RETURN(column, UuidsFromText(static_cast<const arrow::StringArray&>(*column), file,
                                                     first_row, target->name()));
      }
      if (!column->type()->Equals(*target->type(), /*check_metadata=*/false)) {
        auto cast = arrow::compute::Cast(*column, target->type(), arrow::compute::CastOptions::Safe());
        if (!cast.ok()) {
          // Find the row that does not fit, for the message.
          for (int64_t row = 0; row < column->length(); ++row) {
            auto one = arrow::compute::Cast(*column->Slice(row, 1), target->type(),
                                            arrow::compute::CastOptions::Safe());
            if (!one.ok()) {
              return Error(ErrorCode::kInvalidArgument, file.Where(first_row + row) + ", column " +
                                                            target->name() + ": " + ValueText(*column, row) +
                                                            " does not fit " + target->type()->ToString() +
                                                            " (" + one.status().message() + ")");
            }
          }
          return FromArrow(cast.status(), path + ": column " + target->name());
        }
        column = *cast;
      }
      if (!target->nullable() && column->null_count() > 0) {
        for (int64_t row = 0; row < column->length(); ++row) {
          if (column->IsNull(row)) {
            return Error(ErrorCode::kInvalidArgument, file.Where(first_row + row) + ", column " +
                                                          target->name() + ": null in a required column");
          }
        }
      }
    }
    columns.push_back(std::move(column));
  }
  std::shared_ptr<arrow::Schema> conformed = SchemaOfColumns(arrow_schema, columns);
  return arrow::RecordBatch::Make(std::move(conformed), input.num_rows(), std::move(columns));
}

std::shared_ptr<arrow::Schema> SchemaOfColumns(const std::shared_ptr<arrow::Schema>& arrow_schema,
                                               const arrow::ArrayVector& columns) {
  // Only a dictionary's type replaces the field's: any other column's type equals the field's
  // but for metadata, and the field's carries the field ids of nested fields.
  auto dictionary_in_place = [&](int c) {
    return columns[static_cast<size_t>(c)]->type_id() == arrow::Type::DICTIONARY &&
           arrow_schema->field(c)->type()->id() != arrow::Type::DICTIONARY;
  };
  bool same = true;
  for (int c = 0; c < arrow_schema->num_fields() && same; ++c) same = !dictionary_in_place(c);
  if (same) return arrow_schema;
  arrow::FieldVector fields;
  for (int c = 0; c < arrow_schema->num_fields(); ++c) {
    const std::shared_ptr<arrow::Field>& field = arrow_schema->field(c);
    fields.push_back(dictionary_in_place(c) ? field->WithType(columns[static_cast<size_t>(c)]->type())
                                            : field);
  }
  return arrow::schema(std::move(fields), arrow_schema->metadata());
}

namespace {

std::mutex read_pool_mutex;
std::unique_ptr<arrow::ProxyMemoryPool> read_pool_counter;
std::unique_ptr<arrow::CappedMemoryPool> read_pool;

}  // namespace

void SetReadMemoryLimit(uint64_t bytes) {
  std::lock_guard lock(read_pool_mutex);
  read_pool_counter = std::make_unique<arrow::ProxyMemoryPool>(arrow::default_memory_pool());
  read_pool = std::make_unique<arrow::CappedMemoryPool>(read_pool_counter.get(), static_cast<int64_t>(bytes));
}

void PreferJemallocForArrow() {
  // Arrow reads the variable once, when its default pool is first asked for.
  ::setenv("ARROW_DEFAULT_MEMORY_POOL", "jemalloc", /*overwrite=*/0);
}

arrow::MemoryPool* ReadMemoryPool() {
  std::lock_guard lock(read_pool_mutex);
  if (read_pool == nullptr) {
    read_pool_counter = std::make_unique<arrow::ProxyMemoryPool>(arrow::default_memory_pool());
    read_pool = std::make_unique<arrow::CappedMemoryPool>(
        read_pool_counter.get(), static_cast<int64_t>(limits::kParquetReadMemoryBytesMax));
  }
  return read_pool.get();
}

Result<std::unique_ptr<::parquet::arrow::FileReader>> OpenParquetReader(
    std::shared_ptr<arrow::io::RandomAccessFile> input, const std::string& path, bool arrow_extensions,
    int64_t buffered_stream_bytes, bool strings_as_dictionaries, bool parallel_columns) {
  arrow::MemoryPool* pool = ReadMemoryPool();
  ::parquet::arrow::FileReaderBuilder builder;
  ::parquet::ReaderProperties reader_properties(pool);
  if (buffered_stream_bytes > 0) {
    reader_properties.enable_buffered_stream();
    reader_properties.set_buffer_size(buffered_stream_bytes);
  }
  try {
    const arrow::Status opened = builder.Open(std::move(input), reader_properties);
    if (!opened.ok()) {
      return Error(ErrorCode::kInvalidArgument, path + ": not a Parquet file (" + opened.message() + ")");
    }
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, path + ": not a Parquet file (" + e.what() + ")");
  }
  std::unique_ptr<::parquet::arrow::FileReader> reader;
  ::parquet::ArrowReaderProperties properties;
  properties.set_arrow_extensions_enabled(arrow_extensions);
  // INT96 (Spark's and Impala's old timestamps) in the microseconds Iceberg keeps.
  properties.set_coerce_int96_timestamp_unit(arrow::TimeUnit::MICRO);
  properties.set_use_threads(parallel_columns);
  if (strings_as_dictionaries) {
    const ::parquet::SchemaDescriptor& columns = *builder.raw_reader()->metadata()->schema();
    for (int i = 0; i < columns.num_columns(); ++i) {
      const ::parquet::ColumnDescriptor& column = *columns.Column(i);
      const bool top_level = column.path()->ToDotVector().size() == 1;
      if (top_level && column.physical_type() == ::parquet::Type::BYTE_ARRAY) {
        properties.set_read_dictionary(i, true);
      }
    }
  }
  const arrow::Status built = builder.memory_pool(pool)->properties(properties)->Build(&reader);
  if (!built.ok())
    return Error(ErrorCode::kInvalidArgument, path + ": not a Parquet file (" + built.message() + ")");
  return reader;
}

Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInput(const std::string& path, iceberg::FileIO* io) {
  if (io != nullptr) {
    SERAC_ASSIGN_OR_RETURN(uint64_t size, io->Size(path));
    return std::shared_ptr<arrow::io::RandomAccessFile>(
        std::make_shared<FileIOInput>(*io, path, static_cast<int64_t>(size)));
  }
  auto opened = arrow::io::ReadableFile::Open(path);
  if (!opened.ok()) return Error(ErrorCode::kNotFound, path + ": " + opened.status().message());
  return std::shared_ptr<arrow::io::RandomAccessFile>(*opened);
}

namespace {

// The number Arrow's JSON reader ends a parse error with (" in row K", counted from 0 in the block
// that failed), and the message without it.
std::optional<int64_t> TrailingJsonRow(std::string& message) {
  const size_t at = message.rfind(" in row ");
  if (at == std::string::npos) return std::nullopt;
  int64_t row = 0;
  const std::string digits = message.substr(at + 8);
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  for (const char c : digits) row = row * 10 + (c - '0');
  message.resize(at);
  return row;
}

// A JSON-lines read error with its line. Arrow's reader ends a parse error with the row in the block
// that failed (a batch is made of each block, so the block starts after `rows_read` rows), and names
// only the value of one it cannot convert ("Failed to convert JSON to timestamp[us], couldn't
// parse:2024-13-01"), found in the first record from there that holds it.
Status JsonReadError(const InputFile& file, int64_t rows_read, std::string message) {
  if (const std::optional<int64_t> row = TrailingJsonRow(message)) {
    return Error(ErrorCode::kInvalidArgument, file.Where(rows_read + *row + 1) + ": " + message);
  }
  constexpr std::string_view kConvert = "Failed to convert JSON to ";
  constexpr std::string_view kValue = ", couldn't parse:";
  const size_t value_at = message.find(kValue);
  if (message.starts_with(kConvert) && value_at != std::string::npos) {
    const std::string type = message.substr(kConvert.size(), value_at - kConvert.size());
    const std::string value = message.substr(value_at + kValue.size());
    auto line = FindRecordLine(file, rows_read + 1, [&](std::string_view text) {
      return text.find(value) != std::string_view::npos;
    });
    if (line.ok() && line->has_value()) {
      return Error(ErrorCode::kInvalidArgument, file.path + ": line " + std::to_string(**line) + ": '" +
                                                    value + "' does not convert to " + type);
    }
  }
  return Error(ErrorCode::kInvalidArgument,
               file.path + ": after row " + std::to_string(rows_read) + ": " + message);
}

// Arrow's CSV reader gives a record it cannot parse by its text, and names a value it cannot convert
// by the column's index ("In CSV column #1: CSV conversion error to int32: invalid value 'abc'",
// or only "Rescaling Decimal value would cause data loss"). The file is read again with its columns
// as text, from the failed batch on (`rows_read` rows before it), and the first value that is the
// one named (or that does not convert) gives the line, the column's name and the value: that
// error, or Ok when the message is not of this kind or the value is not found.
Status LocateCsvError(const InputFile& file, const arrow::Schema& arrow_schema, int64_t rows_read,
                      const std::string& message) {
  // "CSV parse error: Expected 2 columns, got 3: 3,1.5,x" ends with the record's text.
  constexpr std::string_view kParseError = "CSV parse error: ";
  if (const size_t got = message.find(", got ");
      message.starts_with(kParseError) && got != std::string::npos) {
    const size_t text = message.find(": ", got);
    if (text == std::string::npos) return Status::Ok();
    const std::string_view record = std::string_view(message).substr(text + 2);
    auto line =
        FindRecordLine(file, rows_read + 2, [&](std::string_view t) { return t.starts_with(record); });
    if (!line.ok() || !line->has_value()) return Status::Ok();
    return Error(ErrorCode::kInvalidArgument,
                 file.path + ": line " + std::to_string(**line) + ": " +
                     message.substr(kParseError.size(), text - kParseError.size()));
  }
  constexpr std::string_view kPrefix = "In CSV column #";
  const size_t colon = message.find(": ");
  if (!message.starts_with(kPrefix) || colon == std::string::npos) return Status::Ok();
  int column_index = 0;
  for (size_t i = kPrefix.size(); i < colon; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(message[i])) || column_index > 1'000'000)
      return Status::Ok();
    column_index = column_index * 10 + (message[i] - '0');
  }
  std::string problem = message.substr(colon + 2);
  std::optional<std::string> named_value;
  constexpr std::string_view kInvalid = "invalid value '";
  if (const size_t at = problem.find(kInvalid); at != std::string::npos && problem.ends_with("'")) {
    named_value = problem.substr(at + kInvalid.size(), problem.size() - at - kInvalid.size() - 1);
    problem.resize(at);
    while (!problem.empty() && (problem.back() == ' ' || problem.back() == ':')) problem.pop_back();
  }

  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::io::RandomAccessFile> input, OpenInput(file.path, file.io));
  auto convert_options = arrow::csv::ConvertOptions::Defaults();
  convert_options.strings_can_be_null = true;
  for (const auto& field : arrow_schema.fields()) convert_options.column_types[field->name()] = arrow::utf8();
  auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), input,
                                                  arrow::csv::ReadOptions::Defaults(),
                                                  arrow::csv::ParseOptions::Defaults(), convert_options);
  if (!reader.ok() || column_index >= (*reader)->schema()->num_fields()) return Status::Ok();
  const std::string name = (*reader)->schema()->field(column_index)->name();
  const std::shared_ptr<arrow::Field> target = arrow_schema.GetFieldByName(name);
  if (target == nullptr) return Status::Ok();
  int64_t row = 0;  // rows before the batch
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    if (!(*reader)->ReadNext(&batch).ok() || batch == nullptr) return Status::Ok();
    const auto& text = static_cast<const arrow::StringArray&>(*batch->column(column_index));
    for (int64_t i = 0; i < text.length(); ++i) {
      if (row + i < rows_read || text.IsNull(i)) continue;
      bool found = false;
      if (named_value) {
        found = text.GetView(i) == *named_value;
      } else {
        found = !arrow::compute::Cast(*text.Slice(i, 1), target->type(), arrow::compute::CastOptions::Safe())
                     .ok();
      }
      if (found) {
        return Error(ErrorCode::kInvalidArgument, file.Where(row + i + 1) + ", column " + name + ": " +
                                                      ValueText(text, i) + " does not convert to " +
                                                      target->type()->ToString() + " (" + problem + ")");
      }
    }
    row += batch->num_rows();
  }
}

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputBatches(const InputFile& file,
                                                                   const arrow::Schema& arrow_schema,
                                                                   uint64_t* input_bytes,
                                                                   bool strings_as_dictionaries,
                                                                   bool parallel_columns) {
  const std::string& path = file.path;
  const InputFormat format = file.format;
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::io::RandomAccessFile> input, OpenInput(path, file.io));
  auto size = input->GetSize();
  if (size.ok() && input_bytes != nullptr) *input_bytes += static_cast<uint64_t>(*size);

  std::shared_ptr<arrow::RecordBatchReader> batches;
  if (format == InputFormat::kParquet) {
    SERAC_ASSIGN_OR_RETURN(
        std::unique_ptr<::parquet::arrow::FileReader> reader,
        OpenParquetReader(input, path, /*arrow_extensions=*/false, /*buffered_stream_bytes=*/0,
                          strings_as_dictionaries, parallel_columns));
    auto all = reader->GetRecordBatchReader();
    if (!all.ok()) return FromArrow(all.status(), path);
    // The reader reads through the FileReader, which must live as long: keep both together.
    struct Owning final : arrow::RecordBatchReader {
      std::unique_ptr<::parquet::arrow::FileReader> file;
      std::unique_ptr<arrow::RecordBatchReader> inner;
      std::shared_ptr<arrow::Schema> schema() const override { return inner->schema(); }
      arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
        return inner->ReadNext(batch);
      }
    };
    auto owning = std::make_shared<Owning>();
    owning->file = std::move(reader);
    owning->inner = std::move(all).ValueUnsafe();
    batches = owning;
  } else if (format == InputFormat::kCsv) {
    auto read_options = arrow::csv::ReadOptions::Defaults();
    auto parse_options = arrow::csv::ParseOptions::Defaults();
    auto convert_options = arrow::csv::ConvertOptions::Defaults();
    convert_options.strings_can_be_null = true;
    for (const auto& field : arrow_schema.fields()) {
      // Nested columns and uuids (text in CSV) are read as Arrow infers them and converted by Conform.
      if (field->type()->id() != arrow::Type::STRUCT && field->type()->id() != arrow::Type::LIST &&
          field->type()->id() != arrow::Type::MAP && field->type()->id() != arrow::Type::FIXED_SIZE_BINARY) {
        convert_options.column_types[field->name()] = field->type();
      }
    }
    auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), input, read_options,
                                                    parse_options, convert_options);
    if (!reader.ok()) {
      // Making the reader reads the first block.
      SERAC_RETURN_IF_ERROR(LocateCsvError(file, arrow_schema, 0, reader.status().message()));
      return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
    }
    batches = *reader;
  } else {
    auto read_options = arrow::json::ReadOptions::Defaults();
    auto parse_options = arrow::json::ParseOptions::Defaults();
    // Columns of the types Arrow's JSON reader converts itself; the others are read as inferred
    // (strings) and converted by Conform. Columns the table lacks are reported by Conform too.
    // ints and floats are read wide and narrowed by Conform too, which names the row and column of
    // a value too large (Arrow's reader names neither).
    arrow::FieldVector readable;
    for (const auto& field : arrow_schema.fields()) {
      switch (field->type()->id()) {
        case arrow::Type::INT32:
          readable.push_back(field->WithType(arrow::int64()));
          break;
        case arrow::Type::FLOAT:
          readable.push_back(field->WithType(arrow::float64()));
          break;
        case arrow::Type::BOOL:
        case arrow::Type::INT64:
        case arrow::Type::DOUBLE:
        case arrow::Type::STRING:
        case arrow::Type::TIMESTAMP:
          readable.push_back(field);
          break;
        default:
          break;
      }
    }
    parse_options.explicit_schema = arrow::schema(readable);
    parse_options.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
    auto reader = arrow::json::StreamingReader::Make(input, read_options, parse_options);
    if (!reader.ok()) {
      // Making the reader reads the first block.
      return JsonReadError(file, 0, reader.status().message());
    }
    batches = *reader;
  }

  return batches;
}

Result<std::shared_ptr<arrow::RecordBatch>> NextInputBatch(arrow::RecordBatchReader& batches,
                                                           const InputFile& file,
                                                           const arrow::Schema& arrow_schema,
                                                           int64_t rows_read) {
  std::shared_ptr<arrow::RecordBatch> batch;
  const arrow::Status read = batches.ReadNext(&batch);
  if (!read.ok()) {
    std::string message = read.message();
    if (file.format == InputFormat::kJsonLines) return JsonReadError(file, rows_read, message);
    if (file.format == InputFormat::kCsv) {
      SERAC_RETURN_IF_ERROR(LocateCsvError(file, arrow_schema, rows_read, message));
    }
    return Error(ErrorCode::kInvalidArgument,
                 file.path + ": after row " + std::to_string(rows_read) + ": " + message);
  }
  return batch;
}

}  // namespace serac::parquet
