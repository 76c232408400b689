// Reading what users load: local Parquet, CSV and JSON-lines files as Arrow batches, and each
// batch conformed to a table's columns (by name, widened to the table's types, uuids from text),
// with messages that name the file, the row and the column.
#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/json/api.h>
#include <parquet/arrow/reader.h>

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
Result<std::shared_ptr<arrow::Array>> UuidsFromText(const arrow::StringArray& text, const std::string& path,
                                                    int64_t first_row, const std::string& column) {
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
      return Error(ErrorCode::kInvalidArgument, path + ": row " + std::to_string(first_row + row) +
                                                    ", column " + column + ": \"" +
                                                    std::string(text.GetView(row)) + "\" is not a uuid");
    }
    SERAC_RETURN_IF_ERROR(FromArrow(builder.Append(*bytes), path));
  }
  std::shared_ptr<arrow::Array> out;
  SERAC_RETURN_IF_ERROR(FromArrow(builder.Finish(&out), path));
  return out;
}

// The input batch with the table's columns, in the table's order and types. `first_row` is the
// batch's first row in the file (1-based in messages).
}  // namespace

Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const arrow::RecordBatch& input,
                                                         const std::shared_ptr<arrow::Schema>& arrow_schema,
                                                         const iceberg::Schema& schema,
                                                         const std::string& path, int64_t first_row) {
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
      if (target->type()->id() == arrow::Type::FIXED_SIZE_BINARY &&
          column->type_id() == arrow::Type::STRING &&
          schema.fields[static_cast<size_t>(SchemaIndex(*arrow_schema, schema, c))].type.id ==
              iceberg::TypeId::kUuid) {
        SERAC_ASSIGN_OR_RETURN(column, UuidsFromText(static_cast<const arrow::StringArray&>(*column), path,
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
              return Error(ErrorCode::kInvalidArgument,
                           path + ": row " + std::to_string(first_row + row) + ", column " + target->name() +
                               ": the value does not fit " + target->type()->ToString() + " (" +
                               one.status().message() + ")");
            }
          }
          return FromArrow(cast.status(), path + ": column " + target->name());
        }
        column = *cast;
      }
      if (!target->nullable() && column->null_count() > 0) {
        for (int64_t row = 0; row < column->length(); ++row) {
          if (column->IsNull(row)) {
            return Error(ErrorCode::kInvalidArgument, path + ": row " + std::to_string(first_row + row) +
                                                          ", column " + target->name() +
                                                          ": null in a required column");
          }
        }
      }
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(arrow_schema, input.num_rows(), std::move(columns));
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
    std::shared_ptr<arrow::io::RandomAccessFile> input, const std::string& path, bool arrow_extensions) {
  arrow::MemoryPool* pool = ReadMemoryPool();
  ::parquet::arrow::FileReaderBuilder builder;
  try {
    const arrow::Status opened = builder.Open(std::move(input), ::parquet::ReaderProperties(pool));
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

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputBatches(const std::string& path,
                                                                   InputFormat format,
                                                                   const arrow::Schema& arrow_schema,
                                                                   uint64_t* input_bytes,
                                                                   iceberg::FileIO* io) {
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::io::RandomAccessFile> input, OpenInput(path, io));
  auto size = input->GetSize();
  if (size.ok() && input_bytes != nullptr) *input_bytes += static_cast<uint64_t>(*size);

  std::shared_ptr<arrow::RecordBatchReader> batches;
  if (format == InputFormat::kParquet) {
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<::parquet::arrow::FileReader> reader,
                           OpenParquetReader(input, path));
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
    if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
    batches = *reader;
  } else {
    auto read_options = arrow::json::ReadOptions::Defaults();
    auto parse_options = arrow::json::ParseOptions::Defaults();
    // Columns of the types Arrow's JSON reader converts itself; the others are read as inferred
    // (strings) and converted by Conform. Columns the table lacks are reported by Conform too.
    arrow::FieldVector readable;
    for (const auto& field : arrow_schema.fields()) {
      switch (field->type()->id()) {
        case arrow::Type::BOOL:
        case arrow::Type::INT32:
        case arrow::Type::INT64:
        case arrow::Type::FLOAT:
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
    if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
    batches = *reader;
  }

  return batches;
}

Result<std::shared_ptr<arrow::RecordBatch>> NextInputBatch(arrow::RecordBatchReader& batches,
                                                           const std::string& path, int64_t rows_read) {
  std::shared_ptr<arrow::RecordBatch> batch;
  const arrow::Status read = batches.ReadNext(&batch);
  if (!read.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 path + ": after row " + std::to_string(rows_read) + ": " + read.message());
  }
  return batch;
}

}  // namespace serac::parquet
