// Parquet data files for Iceberg tables, through Apache Arrow C++ (every Parquet byte serac reads
// or writes goes through it). A DataFileWriter turns rows into the table's own data files: Parquet
// with `PARQUET:field_id` on every column and the table schema in the footer ("iceberg.schema"),
// split by the table's partition spec, rolled at the target file size, compressed as the table's
// properties say, and described by the iceberg::DataFile a manifest needs (partition, counts,
// column sizes, value, null and NaN counts, lower and upper bounds truncated per the metrics
// properties) taken from what the Parquet writer measured.
//
// Arrow's headers stay inside this module: callers see serac's types only.
// Thread-safety: a DataFileWriter is used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/schema/partition.h"
#include "iceberg/schema/schema.h"

namespace serac::parquet {

// How much of a column's statistics a manifest keeps (write.metadata.metrics.*).
struct MetricsMode {
  enum class Kind : uint8_t { kNone, kCounts, kTruncate, kFull };
  Kind kind = Kind::kTruncate;
  int32_t length = 16;  // kTruncate: bounds of strings and binary cut to this many characters/bytes
  static Result<MetricsMode> Parse(std::string_view text);  // "none", "counts", "truncate(16)", "full"
};

// What the table's properties say about writing data files, with Java Iceberg's defaults.
struct WriteOptions {
  int64_t target_file_size_bytes = 512LL * 1024 * 1024;  // write.target-file-size-bytes
  std::string compression_codec = "zstd";                // write.parquet.compression-codec
  std::optional<int32_t> compression_level;              // write.parquet.compression-level
  int64_t row_group_size_bytes = 128LL * 1024 * 1024;    // write.parquet.row-group-size-bytes
  int64_t page_size_bytes = 1024 * 1024;                 // write.parquet.page-size-bytes
  MetricsMode default_metrics;                           // write.metadata.metrics.default
  std::map<std::string, MetricsMode> column_metrics;     // write.metadata.metrics.column.<name>
  // Without an explicit default, columns past this many get no metrics
  // (write.metadata.metrics.max-inferred-column-defaults).
  int32_t max_inferred_column_defaults = 100;
  bool default_metrics_explicit = false;
  // The table's sort order (order id 0 or no fields: unsorted). Each data file's rows are sorted
  // by it, as Java's writers sort within a task: rows are buffered per partition, and when all
  // buffers together hold sort_buffer_bytes (uncompressed Arrow bytes) the largest is sorted and
  // written as files of its own, so memory stays bounded whatever the input's size. The files name
  // the order (sort_order_id).
  iceberg::SortOrder sort_order;
  int64_t sort_buffer_bytes = 128LL * 1024 * 1024;
  // Not a table property but the writer's caller's choice: input files' columns decoded, and each
  // row group's columns encoded, in parallel on Arrow's CPU pool (one thread per core), so one load
  // uses every core. The calling thread must not be one of that pool's.
  bool parallel_columns = false;

  // kInvalidArgument naming the property and its value when one cannot be read.
  static Result<WriteOptions> FromTableProperties(const std::map<std::string, std::string>& properties);
};

class KeyPositions;  // parquet/key_index.h

enum class InputFormat : uint8_t { kParquet, kCsv, kJsonLines };
Result<InputFormat> ParseInputFormat(std::string_view name);  // "parquet", "csv", "jsonl"
// From a file name's extension (.parquet, .csv, .jsonl/.json/.ndjson); kInvalidArgument otherwise.
Result<InputFormat> InputFormatOfPath(std::string_view path);

// One value of a row given to DataFileWriter::AppendRows, of its column's Iceberg type: a Datum as
// iceberg/schema/partition.h holds one (null as monostate), or for a list column its elements (each a
// Datum of the element type; a null list is a null `datum` without elements).
struct RowValue {
  iceberg::Datum datum;
  std::optional<std::vector<iceberg::Datum>> elements;
};
// A row: one value per top-level column of the writer's schema, in the schema's order.
using Row = std::vector<RowValue>;

// Rows built column by column, each value appended straight into the writer's Arrow builders
// (serac sync's full load: no value passes through a Datum). Columns are the schema's top-level
// ones, by index; each row gets one value per column, then EndRow. A value of the wrong kind for
// its column is kept as an error that AppendBatch reports (naming the column), never written.
class RowBatchBuilder {
 public:
  static Result<RowBatchBuilder> Make(const iceberg::Schema& schema);
  RowBatchBuilder(RowBatchBuilder&&) noexcept;
  RowBatchBuilder& operator=(RowBatchBuilder&&) noexcept;
  ~RowBatchBuilder();

  void AppendNull(size_t column);
  void AppendBool(size_t column, bool value);
  void AppendInt(size_t column, int32_t value);   // int, date (days since 1970-01-01)
  void AppendLong(size_t column, int64_t value);  // long, time, timestamps (microseconds)
  void AppendFloat(size_t column, float value);
  void AppendDouble(size_t column, double value);
  void AppendBytes(size_t column, std::string_view value);  // string, binary, uuid and fixed
  void AppendDecimal(size_t column, __int128 unscaled);     // at the column's scale
  void AppendValue(size_t column, const RowValue& value);   // any type, lists included
  void EndRow();
  int64_t rows() const;

  struct State;

 private:
  explicit RowBatchBuilder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  friend class DataFileWriter;
};

// Where AppendRows put a row: the data file (by location) and the row's position in it.
struct RowPlacement {
  std::string location;
  int64_t position = 0;
};

// How far a writer has come (for a progress display).
struct LoadProgress {
  uint64_t rows = 0;
  uint64_t input_bytes = 0;
  uint64_t files_written = 0;
  uint64_t bytes_written = 0;
};

class DataFileWriter {
 public:
  // Data files go under `data_location` ("<table location>/data"), partition directories below it
  // as Java names them, each file "<partition path>/<uuid>.parquet".
  static Result<DataFileWriter> Make(iceberg::Schema schema, iceberg::PartitionSpec spec,
                                     WriteOptions options, iceberg::FileIO& io, std::string data_location);

  // Appends every row of a local file, its columns matched to the table's by name and converted
  // to the table's types (widening only); a value that does not fit stops the load with an error
  // naming the file, the row and the column. Nothing appended is visible until Finish.
  // With `io`, `path` is a location read through it (an object on the server: "s3://bucket/key").
  // With `deleted_positions` (ascending), the rows at those positions of the file are left out (a
  // data file rewritten with its deletes applied).
  Status AppendFile(const std::string& path, InputFormat format, iceberg::FileIO* io = nullptr,
                    const std::vector<int64_t>* deleted_positions = nullptr);

  // Appends every row of one of the table's own data files (read through `io`), written under any
  // of the table's schemas: its columns found by field id and read in this writer's schema, as
  // Java's readers read an evolved table (renamed columns by id, promoted types widened, columns
  // added since filled with their initial-default or null, dropped ones left out). A file written
  // without field ids is matched by name. `deleted_positions` as for AppendFile.
  Status AppendTableFile(const std::string& location, iceberg::FileIO& io,
                         const std::vector<int64_t>* deleted_positions = nullptr);

  // Appends rows given value by value (serac sync). kInvalidArgument naming `context`, the row
  // (`first_row` is the first's number) and the column of a value whose kind does not fit the
  // column's type. With `placements` (only for a writer without a sort order, whose rows are
  // written in the order they come), where each row went, in the order of `rows`.
  Status AppendRows(const std::vector<Row>& rows, const std::string& context, int64_t first_row,
                    std::vector<RowPlacement>* placements = nullptr);

  // Appends the builder's rows (its schema must be the writer's) and empties it for the next batch.
  // `context` and `first_row` name the rows in an error.
  Status AppendBatch(RowBatchBuilder& rows, const std::string& context, int64_t first_row);

  // From now on, every row's key of each data file (the writer's columns `key_schema` names) is
  // kept as the file is written and handed to `on_file` with the file when it is closed, before
  // Finish returns it: a key index made so never reads the file again. (serac sync does not use it
  // yet: making the index files on its load's threads cost a quarter of the load's rate.)
  using KeysOfFile = std::function<Status(const iceberg::DataFile& file, const KeyPositions& keys)>;
  Status IndexKeys(iceberg::Schema key_schema, KeysOfFile on_file);

  // Closes every open file. The data files written, in the order they were closed.
  Result<std::vector<iceberg::DataFile>> Finish();
  // Removes every file written so far (a load that failed or whose commit was refused).
  void AbortAndDelete();

  const LoadProgress& progress() const;
  // Called after every batch appended (a progress display; keep it cheap).
  void OnProgress(std::function<void(const LoadProgress&)> callback);

  struct State;
  explicit DataFileWriter(std::unique_ptr<State> state);
  DataFileWriter(DataFileWriter&&) noexcept;
  DataFileWriter& operator=(DataFileWriter&&) noexcept;
  ~DataFileWriter();

 private:
  Status AppendFileUnguarded(const std::string& path, InputFormat format, iceberg::FileIO* io,
                             const std::vector<int64_t>* deleted_positions, bool table_file);

  std::unique_ptr<State> state_;
};

// The columns of an input file (local, or with `io` read through it) as an Iceberg schema (all optional, ids
// from 1; the catalog assigns its own at create): Arrow's types mapped to Iceberg's, kInvalidArgument naming
// a column whose type has no Iceberg equivalent.
Result<iceberg::Schema> InferSchema(const std::string& path, InputFormat format,
                                    iceberg::FileIO* io = nullptr);

// Reads a Parquet file's footer (the whole file in memory) and returns the iceberg::DataFile fields
// its statistics give for `schema` (record count, column sizes, value and null counts, bounds as
// `options` say). NaN counts are not in Parquet's statistics: the writer counts them itself.
Result<iceberg::DataFile> MetricsOfParquetFile(std::string_view file, const iceberg::Schema& schema,
                                               const WriteOptions& options);

// Lowers (or raises) the memory all Parquet reads together may hold, limits::kParquetReadMemoryBytesMax
// by default: the fuzz targets keep it under libFuzzer's malloc limit. Call before reading.
void SetReadMemoryLimit(uint64_t bytes);

// Makes Arrow allocate from its jemalloc pool, unless the environment names another
// (ARROW_DEFAULT_MEMORY_POOL). Arrow's own default, mimalloc, hands the large buffers of every batch
// and row group back to the kernel and faults them in again, zeroed, for the next: `serac table
// load` spent a third of its CPU there (serac sync's loads, of smaller batches, run faster on
// mimalloc). Call before anything of Arrow's allocates and before other threads start: Arrow reads
// the choice once.
void PreferJemallocForArrow();

}  // namespace serac::parquet
