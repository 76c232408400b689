// Inside parquet/: the Arrow side of the module (Arrow's headers are included here and in the
// module's .cc files only).
#pragma once

#include <arrow/api.h>
#include <arrow/io/interfaces.h>
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/schema/partition.h"
#include "iceberg/schema/schema.h"
#include "parquet/parquet_files.h"

namespace serac::parquet {

// An Arrow status as serac's (kInvalidArgument unless Arrow says it is I/O or memory).
Status FromArrow(const arrow::Status& status, std::string_view context);

// The Arrow type of an Iceberg type, with `PARQUET:field_id` on every field (nested ones too).
// Iceberg's `unknown` has no Arrow column (Java writes none); kNotImplemented for variant and the
// geospatial types.
Result<std::shared_ptr<arrow::DataType>> ToArrowType(const iceberg::Type& type);
Result<std::shared_ptr<arrow::Field>> ToArrowField(const iceberg::NestedField& field);
// The table's columns as an Arrow schema (unknown columns left out), with the table schema's JSON
// as the "iceberg.schema" metadata Java writes into the footer.
Result<std::shared_ptr<arrow::Schema>> ToArrowSchema(const iceberg::Schema& schema);

// Makes an all-null column writable when its type has required fields inside (a struct's required
// child): Arrow's null array has nulls at every level, which the Parquet writer refuses for a
// required field even under a null parent, so the required levels are made valid (zeros, empty
// strings and lists, which no reader sees under the null parent).
void ClearRequiredNulls(arrow::ArrayData& data);

// The `PARQUET:field_id` of a column (nullopt for a file written without ids), and whether any
// top-level column of a file has one.
std::optional<int32_t> FieldIdOf(const arrow::Field& field);
bool HasFieldIds(const arrow::Schema& schema);

// A batch of the table's own data file, written under any of its schemas (its columns carry field
// ids), in the current `schema` (`arrow_schema` from ToArrowSchema(schema)): fields found by id at
// every depth, promoted to their current types, absent ones filled with their initial-default or
// null, dropped ones left out; kInvalidArgument naming the file and column that cannot be read so
// (a required column the file lacks and has no default for, values of another kind).
Result<std::shared_ptr<arrow::RecordBatch>> ProjectByFieldId(
    const arrow::RecordBatch& input, const std::shared_ptr<arrow::Schema>& arrow_schema,
    const iceberg::Schema& schema, const std::string& path, int64_t first_row);

// The value at `row` of a primitive column as a Datum of `type` (partition source values).
Result<iceberg::Datum> DatumAt(const arrow::Array& array, int64_t row, const iceberg::Type& type);

// Appends the key of `row` as an index file keeps it (RowKeys::CanonicalKeysFor), from the key
// columns `columns` (of the types the table has, in `key_schema`'s order): one integer-like column as
// 8 big-endian bytes with the sign bit flipped, one string, binary, uuid or fixed column as its
// bytes, several as their values one after another. False for a row whose one key column is null
// (no key finds it, and it is not indexed).
Result<bool> AppendIndexKey(const std::vector<const arrow::Array*>& columns, int64_t row,
                            const iceberg::Schema& key_schema, std::string& key);

// The manifest metrics of a written file from its footer. `nan_counts` (per field id) come from
// the writer, which saw the values.
iceberg::DataFile MetricsFromFooter(const ::parquet::FileMetaData& footer, const iceberg::Schema& schema,
                                    const WriteOptions& options, const iceberg::ColumnCounts& nan_counts);

// Arrow's random-access file over a FileIO location of a known size (a manifest's, or the
// store's), read with ranged reads: a footer, then only the column chunks asked for.
class FileIOInput final : public arrow::io::RandomAccessFile {
 public:
  FileIOInput(iceberg::FileIO& io, std::string location, int64_t size)
      : io_(io), location_(std::move(location)), size_(size) {}

  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return position_; }
  arrow::Status Seek(int64_t position) override {
    position_ = position;
    return arrow::Status::OK();
  }
  arrow::Result<int64_t> GetSize() override { return size_; }
  arrow::Result<int64_t> Read(int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(int64_t read, ReadAt(position_, nbytes, out));
    position_ += read;
    return read;
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t nbytes) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position_, nbytes));
    position_ += buffer->size();
    return buffer;
  }
  arrow::Result<int64_t> ReadAt(int64_t position, int64_t nbytes, void* out) override {
    ARROW_ASSIGN_OR_RAISE(auto buffer, ReadAt(position, nbytes));
    std::memcpy(out, buffer->data(), static_cast<size_t>(buffer->size()));
    return buffer->size();
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t nbytes) override {
    if (position < 0 || nbytes < 0) return arrow::Status::Invalid("negative read of ", location_);
    nbytes = std::max<int64_t>(0, std::min(nbytes, size_ - position));
    Result<std::string> bytes =
        io_.ReadRange(location_, static_cast<uint64_t>(position), static_cast<uint64_t>(nbytes));
    if (!bytes.ok()) return arrow::Status::IOError(bytes.status().message());
    return arrow::Buffer::FromString(std::move(bytes).value());
  }

 private:
  iceberg::FileIO& io_;
  std::string location_;
  int64_t size_;
  int64_t position_ = 0;
  bool closed_ = false;
};

// The Parquet codec of a write.parquet.compression-codec value (checked by WriteOptions; zstd
// for anything else).
arrow::Compression::type CodecOf(const std::string& name);

// The pool every Parquet read allocates from: capped at limits::kParquetReadMemoryBytesMax (or what
// SetReadMemoryLimit says), so a file whose headers lie about sizes fails with an error instead of
// taking the memory it claims.
arrow::MemoryPool* ReadMemoryPool();
// A Parquet reader over `input` on that pool; kInvalidArgument naming `path` when it is not Parquet.
// INT96 timestamps are read in microseconds; with `arrow_extensions`, UUID and JSON columns as
// Arrow's arrow.uuid and arrow.json. With `buffered_stream_bytes`, column chunks are read a buffer
// of that size at a time instead of whole, so that reading a file's first rows reads only their
// pages.
// With `strings_as_dictionaries`, top-level text and binary columns come as Arrow dictionary arrays
// (the pages' own dictionaries kept, not expanded into every value), which a writer writes back as
// dictionary pages without hashing each value again; with `parallel_columns`, a batch's columns
// are decoded in parallel on Arrow's CPU pool.
Result<std::unique_ptr<::parquet::arrow::FileReader>> OpenParquetReader(
    std::shared_ptr<arrow::io::RandomAccessFile> input, const std::string& path,
    bool arrow_extensions = false, int64_t buffered_stream_bytes = 0, bool strings_as_dictionaries = false,
    bool parallel_columns = false);

// A local file, or with `io` a location read through it.
Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInput(const std::string& path, iceberg::FileIO* io);

// An input file, for reading it and for messages that say where a row of it is.
struct InputFile {
  std::string path;
  InputFormat format = InputFormat::kParquet;
  iceberg::FileIO* io = nullptr;  // where `path` is read from; a local file without one

  // "PATH: line L" for CSV and JSON lines, the line an editor shows the 1-based `row` on (found by
  // reading the file again, so for messages only); "PATH: row R" otherwise.
  std::string Where(int64_t row) const;
};

// An input file's batches (OpenInput's), as Arrow reads it: Parquet as written, CSV and JSON lines
// with the columns `arrow_schema` has read as its types. `input_bytes` (optional) grows by the
// file's size. `strings_as_dictionaries` and `parallel_columns` are OpenParquetReader's, for a
// Parquet file (CSV is parsed on Arrow's CPU pool in any case).
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInputBatches(const InputFile& file,
                                                                   const arrow::Schema& arrow_schema,
                                                                   uint64_t* input_bytes,
                                                                   bool strings_as_dictionaries = false,
                                                                   bool parallel_columns = false);

// The next batch of an input file (nullptr at its end). A read error says where: for a value CSV
// cannot convert to its column's type in `arrow_schema`, the line, the column's name and the value;
// for JSON lines, the line; otherwise how many rows were read before it.
Result<std::shared_ptr<arrow::RecordBatch>> NextInputBatch(arrow::RecordBatchReader& batches,
                                                           const InputFile& file,
                                                           const arrow::Schema& arrow_schema,
                                                           int64_t rows_read);

// The batch with `arrow_schema`'s columns (the table's, from ToArrowSchema(schema)), in its order
// and types; kInvalidArgument naming the file, row (`first_row` is the batch's first, 1-based),
// column and value that does not fit, or a column the table lacks. A dictionary column whose values
// are of the table column's type stays a dictionary (the batch's schema says so).
Result<std::shared_ptr<arrow::RecordBatch>> ConformBatch(const arrow::RecordBatch& input,
                                                         const std::shared_ptr<arrow::Schema>& arrow_schema,
                                                         const iceberg::Schema& schema, const InputFile& file,
                                                         int64_t first_row);

// `arrow_schema` with the type of each of `columns` (one per field) that is a dictionary where the
// field's is not: a text column kept as a dictionary. `arrow_schema` itself when there is none.
std::shared_ptr<arrow::Schema> SchemaOfColumns(const std::shared_ptr<arrow::Schema>& arrow_schema,
                                               const arrow::ArrayVector& columns);

// The builder's rows as a batch (the builder emptied for the next); its kept error, if any, with
// `context` in front.
Result<std::shared_ptr<arrow::RecordBatch>> TakeBatch(RowBatchBuilder::State& state,
                                                      const std::string& context, int64_t first_row);

}  // namespace serac::parquet
