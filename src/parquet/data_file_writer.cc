// DataFileWriter: input files read by Arrow (Parquet, CSV, JSON lines) in batches, each batch
// conformed to the table's schema by column name, split by partition, and appended to that
// partition's open Parquet file, which rolls at the target size. Row groups are cut by the
// uncompressed bytes buffered; a file's size is estimated from what was flushed and the compression
// seen so far. A Parquet input's text columns arrive as dictionaries and are written as the file's
// dictionary pages (each file's schema is its first rows'; MatchSchema fits later rows to it).
#include <arrow/compute/api.h>
#include <arrow/csv/api.h>
#include <arrow/io/api.h>
#include <arrow/json/api.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/compression.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/encoding.h"
#include "common/random.h"
#include "parquet/key_index.h"
#include "parquet/parquet_internal.h"

namespace serac::parquet {

namespace {

// Arrow's output stream over a FileIO file. Closing it does not close the file: the writer does,
// after the footer, to learn whether the file is durable.
class FileSink final : public arrow::io::OutputStream {
 public:
  explicit FileSink(iceberg::OutputFile& file) : file_(file) {}
  arrow::Status Close() override {
    closed_ = true;
    return arrow::Status::OK();
  }
  bool closed() const override { return closed_; }
  arrow::Result<int64_t> Tell() const override { return static_cast<int64_t>(file_.bytes_written()); }
  arrow::Status Write(const void* data, int64_t nbytes) override {
    Status written =
        file_.Write(std::string_view(static_cast<const char*>(data), static_cast<size_t>(nbytes)));
    if (!written.ok()) return arrow::Status::IOError(written.message());
    return arrow::Status::OK();
  }
  using arrow::io::OutputStream::Write;

 private:
  iceberg::OutputFile& file_;
  bool closed_ = false;
};

// Counts the NaNs of float and double columns (struct children included) per field id.
void CountNaNs(const arrow::Array& array, const arrow::Field& field, iceberg::ColumnCounts& counts) {
  auto id_text =
      field.metadata() != nullptr ? field.metadata()->Get("PARQUET:field_id") : arrow::Result<std::string>();
  if (!id_text.ok()) return;
  const int32_t id = std::stoi(*id_text);
  int64_t nans = 0;
  if (array.type_id() == arrow::Type::DOUBLE) {
    const auto& values = static_cast<const arrow::DoubleArray&>(array);
    for (int64_t i = 0; i < values.length(); ++i) nans += !values.IsNull(i) && std::isnan(values.Value(i));
  } else if (array.type_id() == arrow::Type::FLOAT) {
    const auto& values = static_cast<const arrow::FloatArray&>(array);
    for (int64_t i = 0; i < values.length(); ++i) nans += !values.IsNull(i) && std::isnan(values.Value(i));
  } else if (array.type_id() == arrow::Type::STRUCT) {
    const auto& record = static_cast<const arrow::StructArray&>(array);
    const auto& type = static_cast<const arrow::StructType&>(*field.type());
    for (int i = 0; i < record.num_fields(); ++i) CountNaNs(*record.field(i), *type.field(i), counts);
    return;
  } else {
    return;
  }
  for (auto& [counted_id, count] : counts) {
    if (counted_id == id) {
      count += nans;
      return;
    }
  }
  counts.emplace_back(id, nans);
}

// One Parquet file being written for one partition.
struct OpenFile {
  iceberg::PartitionTuple partition;
  std::string location;
  std::unique_ptr<iceberg::OutputFile> output;
  std::shared_ptr<FileSink> sink;
  std::unique_ptr<::parquet::arrow::FileWriter> writer;
  // The writer's schema: the table's columns, a text column as a dictionary when the first rows
  // written came so (SchemaOfColumns); later rows are made to match (MatchSchema).
  std::shared_ptr<arrow::Schema> schema;
  iceberg::ColumnCounts nan_counts;
  KeyPositions keys;  // every row's key, when the writer indexes keys
  int64_t rows = 0;
  int64_t group_bytes = 0;    // uncompressed Arrow bytes in the open row group
  int64_t flushed_input = 0;  // uncompressed bytes of the row groups already flushed

  // Bytes the file would have if it were closed now.
  int64_t EstimatedSize() const {
    const auto flushed = static_cast<int64_t>(output->bytes_written());
    const double ratio =
        flushed_input > 0 ? static_cast<double>(flushed) / static_cast<double>(flushed_input) : 1.0;
    return flushed + static_cast<int64_t>(static_cast<double>(group_bytes) * ratio);
  }
};

// A byte string that identifies a partition tuple (the key of the open files).
std::string PartitionKey(const iceberg::PartitionTuple& tuple) {
  std::string key;
  for (const iceberg::Datum& value : tuple) {
    key.push_back(static_cast<char>('a' + value.index()));
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            key += std::to_string(v.size()) + ":" + v;
          } else if constexpr (!std::is_same_v<T, std::monostate>) {
            key.append(reinterpret_cast<const char*>(&v), sizeof(v));
          }
        },
        value);
  }
  return key;
}

}  // namespace

arrow::Compression::type CodecOf(const std::string& name) {
  if (name == "snappy") return arrow::Compression::SNAPPY;
  if (name == "gzip") return arrow::Compression::GZIP;
  if (name == "lz4") return arrow::Compression::LZ4;
  if (name == "brotli") return arrow::Compression::BROTLI;
  if (name == "uncompressed") return arrow::Compression::UNCOMPRESSED;
  return arrow::Compression::ZSTD;
}

// One field of the sort order: a top-level column, its transform, direction and null order.
struct SortKey {
  int column = 0;
  const iceberg::Type* source_type = nullptr;
  iceberg::Transform transform = *iceberg::Transform::Parse("identity");
  iceberg::Type result_type;
  bool descending = false;
  bool nulls_first = true;
};

// A partition's rows waiting to be sorted.
struct SortBuffer {
  iceberg::PartitionTuple partition;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  int64_t bytes = 0;
};

// The uncompressed bytes of a batch's values, as row groups and files are cut by. A dictionary
// column counts its indices and the part of its dictionary as large as the share of the
// dictionary's entries its rows could use: about what the column would take expanded when few rows
// share a large dictionary, and never the whole dictionary once per batch of a long column.
int64_t BatchBytes(const arrow::RecordBatch& batch) {
  int64_t bytes = 0;
  for (const auto& column : batch.columns()) {
    if (column->type_id() != arrow::Type::DICTIONARY) {
      bytes += arrow::util::TotalBufferSize(*column->data());
      continue;
    }
    const auto& dictionary_array = static_cast<const arrow::DictionaryArray&>(*column);
    const arrow::Array& dictionary = *dictionary_array.dictionary();
    const int64_t dictionary_bytes = arrow::util::TotalBufferSize(*dictionary.data());
    const int64_t entries = std::max<int64_t>(1, dictionary.length());
    bytes += arrow::util::TotalBufferSize(*dictionary_array.indices()->data()) +
             dictionary_bytes * std::min(entries, column->length()) / entries;
  }
  return bytes;
}

// Each column of `batch` of the type `schema` gives it: a dictionary expanded, or a plain text
// column encoded as a dictionary (when a file began with dictionaries and later rows come plain).
Result<std::shared_ptr<arrow::RecordBatch>> MatchSchema(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                        const std::shared_ptr<arrow::Schema>& schema,
                                                        const std::string& context) {
  if (batch->schema() == schema || batch->schema()->Equals(*schema, /*check_metadata=*/false)) return batch;
  arrow::ArrayVector columns;
  for (int c = 0; c < schema->num_fields(); ++c) {
    const std::shared_ptr<arrow::DataType>& type = schema->field(c)->type();
    std::shared_ptr<arrow::Array> column = batch->column(c);
    if (!column->type()->Equals(*type, /*check_metadata=*/false)) {
      arrow::Result<arrow::Datum> matched = type->id() == arrow::Type::DICTIONARY
                                                ? arrow::compute::DictionaryEncode(column)
                                                : arrow::compute::Cast(column, type);
      if (!matched.ok()) return FromArrow(matched.status(), context + ": column " + schema->field(c)->name());
      column = matched->make_array();
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(schema, batch->num_rows(), std::move(columns));
}

struct DataFileWriter::State {
  iceberg::Schema schema;
  iceberg::PartitionSpec spec;
  iceberg::Type partition_type;
  std::vector<iceberg::Transform> transforms;
  std::vector<int> source_columns;  // per partition field: its source's index in the Arrow schema
  std::vector<const iceberg::Type*> source_types;
  WriteOptions options;
  iceberg::FileIO* io = nullptr;
  std::string data_location;
  std::string writer_id = RandomUuid();
  uint64_t file_number = 0;
  std::shared_ptr<arrow::Schema> arrow_schema;
  std::shared_ptr<::parquet::WriterProperties> properties;
  std::map<std::string, OpenFile> open;
  std::vector<iceberg::DataFile> written;
  std::vector<std::string> written_locations;
  LoadProgress progress;
  std::function<void(const LoadProgress&)> on_progress;
  std::vector<SortKey> sort_keys;  // empty: files are written as rows come
  std::map<std::string, SortBuffer> sort_buffers;
  int64_t sort_buffered_bytes = 0;
  // IndexKeys: the key columns (their indices in arrow_schema) and who is handed each file's keys.
  iceberg::Schema index_key_schema;
  std::vector<int> index_key_columns;
  KeysOfFile on_indexed_file;

  // The partition's open file, opened for rows of `rows_schema` when there is none.
  Result<OpenFile*> FileFor(const iceberg::PartitionTuple& partition,
                            const std::shared_ptr<arrow::Schema>& rows_schema) {
    const std::string key = PartitionKey(partition);
    auto it = open.find(key);
    if (it != open.end()) return &it->second;
    OpenFile file;
    file.partition = partition;
    file.schema = rows_schema;
    const std::string partition_path = iceberg::PartitionPath(spec, partition_type, partition);
    char number[16];
    std::snprintf(number, sizeof(number), "%05llu", static_cast<unsigned long long>(++file_number));
    file.location = data_location + "/" + (partition_path.empty() ? "" : partition_path + "/") + writer_id +
                    "-" + number + ".parquet";
    SERAC_ASSIGN_OR_RETURN(file.output, io->Create(file.location));
    file.sink = std::make_shared<FileSink>(*file.output);
    // Columns encoded in parallel on Arrow's CPU pool when asked: the thread writing waits for
    // them and is never one of the pool's, so the pool cannot wait on itself.
    auto arrow_properties =
        ::parquet::ArrowWriterProperties::Builder().set_use_threads(options.parallel_columns)->build();
    auto writer = ::parquet::arrow::FileWriter::Open(*file.schema, arrow::default_memory_pool(), file.sink,
                                                     properties, arrow_properties);
    if (!writer.ok()) {
      file.output->Abort();
      return FromArrow(writer.status(), "opening " + file.location);
    }
    file.writer = std::move(writer).ValueUnsafe();
    // The table schema in the footer, as Java writes it (readers without the catalog use it).
    SERAC_RETURN_IF_ERROR(
        FromArrow(file.writer->AddKeyValueMetadata(arrow_schema->metadata()), file.location));
    return &open.emplace(key, std::move(file)).first->second;
  }

  Status Close(OpenFile& file) {
    SERAC_RETURN_IF_ERROR(FromArrow(file.writer->Close(), "writing " + file.location));
    const std::shared_ptr<::parquet::FileMetaData> footer = file.writer->metadata();
    SERAC_ASSIGN_OR_RETURN(uint64_t size, file.output->Close());
    iceberg::DataFile data = MetricsFromFooter(*footer, schema, options, file.nan_counts);
    data.file_path = file.location;
    data.file_format = "PARQUET";
    data.partition = file.partition;
    data.file_size_in_bytes = static_cast<int64_t>(size);
    data.sort_order_id = sort_keys.empty() ? 0 : options.sort_order.order_id;
    if (on_indexed_file) SERAC_RETURN_IF_ERROR(on_indexed_file(data, file.keys));
    written.push_back(std::move(data));
    written_locations.push_back(file.location);
    ++progress.files_written;
    progress.bytes_written += size;
    return Status::Ok();
  }

  // Where AppendRows asked to be told its rows went (unsorted writers only), and for the batch being
  // written, each of its rows' index among the rows given (nullptr: the same).
  std::vector<RowPlacement>* placements = nullptr;
  const std::vector<int64_t>* placement_rows = nullptr;

  // A partition's rows: written now, or buffered to be sorted first.
  Status Write(const iceberg::PartitionTuple& partition, const std::shared_ptr<arrow::RecordBatch>& batch) {
    if (sort_keys.empty()) return WriteRows(partition, batch);
    if (placements != nullptr) {
      return Error(ErrorCode::kInternal, "row placements are not known before sorted rows are written");
    }
    const std::string key = PartitionKey(partition);
    SortBuffer& buffer = sort_buffers[key];
    buffer.partition = partition;
    // Buffered in the table's plain types: a run's batches become one sorted table.
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> plain,
                           MatchSchema(batch, arrow_schema, "sorting rows"));
    buffer.batches.push_back(plain);
    const int64_t bytes = BatchBytes(*plain);
    buffer.bytes += bytes;
    sort_buffered_bytes += bytes;
    while (sort_buffered_bytes >= options.sort_buffer_bytes && !sort_buffers.empty()) {
      auto largest =
          std::max_element(sort_buffers.begin(), sort_buffers.end(),
                           [](const auto& a, const auto& b) { return a.second.bytes < b.second.bytes; });
      SERAC_RETURN_IF_ERROR(FlushSorted(largest->first));
    }
    return Status::Ok();
  }

  // Sorts a partition's buffered rows by the sort order and writes them as files of their own (a
  // later run of the same partition starts a new file, so every file stays sorted).
  Status FlushSorted(std::string key) {  // a copy: the buffer named by it goes
    auto found = sort_buffers.find(key);
    if (found == sort_buffers.end()) return Status::Ok();
    SortBuffer buffer = std::move(found->second);
    sort_buffers.erase(found);
    sort_buffered_bytes -= buffer.bytes;
    auto table = arrow::Table::FromRecordBatches(arrow_schema, buffer.batches);
    if (!table.ok()) return FromArrow(table.status(), "sorting rows");
    buffer.batches.clear();
    auto combined = (*table)->CombineChunksToBatch();
    if (!combined.ok()) return FromArrow(combined.status(), "sorting rows");
    const std::shared_ptr<arrow::RecordBatch>& rows = *combined;
    const int64_t count = rows->num_rows();
    std::vector<std::vector<iceberg::Datum>> keys(sort_keys.size());
    for (size_t k = 0; k < sort_keys.size(); ++k) {
      const SortKey& sort = sort_keys[k];
      keys[k].reserve(static_cast<size_t>(count));
      for (int64_t row = 0; row < count; ++row) {
        SERAC_ASSIGN_OR_RETURN(iceberg::Datum value,
                               DatumAt(*rows->column(sort.column), row, *sort.source_type));
        auto transformed = sort.transform.Apply(*sort.source_type, value);
        keys[k].push_back(transformed.ok() ? std::move(transformed).value() : iceberg::Datum());
      }
    }
    std::vector<int64_t> order(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (size_t k = 0; k < sort_keys.size(); ++k) {
        const iceberg::Datum& x = keys[k][static_cast<size_t>(a)];
        const iceberg::Datum& y = keys[k][static_cast<size_t>(b)];
        const bool x_null = iceberg::IsNull(x);
        const bool y_null = iceberg::IsNull(y);
        if (x_null || y_null) {
          if (x_null == y_null) continue;
          return x_null == sort_keys[k].nulls_first;
        }
        int c = iceberg::CompareDatums(sort_keys[k].result_type, x, y);
        if (sort_keys[k].descending) c = -c;
        if (c != 0) return c < 0;
      }
      return false;
    });
    keys.clear();
    arrow::Int64Builder indices_builder;
    SERAC_RETURN_IF_ERROR(FromArrow(indices_builder.AppendValues(order), "sorting rows"));
    order.clear();
    std::shared_ptr<arrow::Array> indices;
    SERAC_RETURN_IF_ERROR(FromArrow(indices_builder.Finish(&indices), "sorting rows"));
    auto sorted = arrow::compute::Take(rows, indices);
    if (!sorted.ok()) return FromArrow(sorted.status(), "sorting rows");
    SERAC_RETURN_IF_ERROR(WriteRows(buffer.partition, sorted->record_batch()));
    auto open_file = open.find(key);
    if (open_file != open.end()) {
      SERAC_RETURN_IF_ERROR(Close(open_file->second));
      open.erase(open_file);
    }
    return Status::Ok();
  }

  Status FlushAllSorted() {
    while (!sort_buffers.empty()) SERAC_RETURN_IF_ERROR(FlushSorted(sort_buffers.begin()->first));
    return Status::Ok();
  }

  // Writes a batch in slices small enough that row groups and files end near their sizes.
  Status WriteRows(const iceberg::PartitionTuple& partition,
                   const std::shared_ptr<arrow::RecordBatch>& batch) {
    const int64_t batch_bytes = BatchBytes(*batch);
    const int64_t row_bytes = std::max<int64_t>(1, batch_bytes / std::max<int64_t>(1, batch->num_rows()));
    const int64_t step_bytes = std::min(options.row_group_size_bytes, options.target_file_size_bytes) / 4;
    const int64_t step_rows = std::max<int64_t>(1, step_bytes / row_bytes);
    for (int64_t offset = 0; offset < batch->num_rows(); offset += step_rows) {
      SERAC_ASSIGN_OR_RETURN(OpenFile * file, FileFor(partition, batch->schema()));
      const std::shared_ptr<arrow::RecordBatch> slice =
          offset == 0 && step_rows >= batch->num_rows() ? batch : batch->Slice(offset, step_rows);
      if (placements != nullptr) {
        for (int64_t k = 0; k < slice->num_rows(); ++k) {
          const int64_t row = offset + k;
          const size_t given = static_cast<size_t>(
              placement_rows != nullptr ? (*placement_rows)[static_cast<size_t>(row)] : row);
          (*placements)[given] = RowPlacement{file->location, file->rows + k};
        }
      }
      SERAC_RETURN_IF_ERROR(WriteSlice(*file, slice));
    }
    return Status::Ok();
  }

  Status WriteSlice(OpenFile& file, const std::shared_ptr<arrow::RecordBatch>& rows) {
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> batch,
                           MatchSchema(rows, file.schema, "writing " + file.location));
    SERAC_RETURN_IF_ERROR(FromArrow(file.writer->WriteRecordBatch(*batch), "writing " + file.location));
    if (on_indexed_file) {
      std::vector<const arrow::Array*> columns;
      for (const int c : index_key_columns) columns.push_back(batch->column(c).get());
      std::string key;
      for (int64_t row = 0; row < batch->num_rows(); ++row) {
        key.clear();
        SERAC_ASSIGN_OR_RETURN(const bool has_key, AppendIndexKey(columns, row, index_key_schema, key));
        if (has_key) file.keys.Add(key, file.rows + row);
      }
    }
    for (int i = 0; i < batch->num_columns(); ++i) {
      CountNaNs(*batch->column(i), *arrow_schema->field(i), file.nan_counts);
    }
    const int64_t batch_bytes = BatchBytes(*batch);
    file.rows += batch->num_rows();
    file.group_bytes += batch_bytes;
    if (file.group_bytes >= options.row_group_size_bytes) {
      SERAC_RETURN_IF_ERROR(FromArrow(file.writer->NewBufferedRowGroup(), "writing " + file.location));
      file.flushed_input += file.group_bytes;
      file.group_bytes = 0;
    }
    if (file.EstimatedSize() >= options.target_file_size_bytes) {
      SERAC_RETURN_IF_ERROR(Close(file));
      open.erase(PartitionKey(file.partition));
    }
    return Status::Ok();
  }

  // `origin` names the rows in messages (a file, or a context such as the table's name).
  Status Append(const std::shared_ptr<arrow::RecordBatch>& batch, const InputFile& origin,
                int64_t first_row) {
    const std::string& path = origin.path;
    if (batch->num_rows() == 0) return Status::Ok();
    if (spec.fields.empty()) return Write({}, batch);
    // Rows by partition, in the order partitions first appear.
    std::map<std::string, std::pair<iceberg::PartitionTuple, arrow::Int64Builder>> groups;
    std::vector<std::string> order;
    iceberg::PartitionTuple tuple(spec.fields.size());
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      for (size_t f = 0; f < spec.fields.size(); ++f) {
        SERAC_ASSIGN_OR_RETURN(iceberg::Datum source,
                               DatumAt(*batch->column(source_columns[f]), row, *source_types[f]));
        auto value = transforms[f].Apply(*source_types[f], source);
        if (!value.ok()) {
          return Error(ErrorCode::kInvalidArgument, origin.Where(first_row + row) + ": partition " +
                                                        spec.fields[f].name + ": " +
                                                        value.status().message());
        }
        tuple[f] = std::move(value).value();
      }
      const std::string key = PartitionKey(tuple);
      auto it = groups.find(key);
      if (it == groups.end()) {
        it = groups.emplace(key, std::make_pair(tuple, arrow::Int64Builder())).first;
        order.push_back(key);
      }
      SERAC_RETURN_IF_ERROR(FromArrow(it->second.second.Append(row), path));
    }
    for (const std::string& key : order) {
      auto& [partition, indices_builder] = groups.at(key);
      std::shared_ptr<arrow::Array> indices;
      SERAC_RETURN_IF_ERROR(FromArrow(indices_builder.Finish(&indices), path));
      std::shared_ptr<arrow::RecordBatch> part = batch;
      std::vector<int64_t> part_rows;
      if (indices->length() != batch->num_rows()) {
        auto taken = arrow::compute::Take(batch, indices);
        if (!taken.ok()) return FromArrow(taken.status(), path);
        part = taken->record_batch();
        const auto& index_values = static_cast<const arrow::Int64Array&>(*indices);
        part_rows.assign(index_values.raw_values(), index_values.raw_values() + index_values.length());
      }
      placement_rows = part_rows.empty() ? nullptr : &part_rows;
      Status written = Write(partition, part);
      placement_rows = nullptr;
      SERAC_RETURN_IF_ERROR(written);
    }
    return Status::Ok();
  }
};

DataFileWriter::DataFileWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
DataFileWriter::DataFileWriter(DataFileWriter&&) noexcept = default;
DataFileWriter& DataFileWriter::operator=(DataFileWriter&&) noexcept = default;
DataFileWriter::~DataFileWriter() {
  if (state_ != nullptr) {
    for (auto& [key, file] : state_->open) file.output->Abort();
  }
}

const LoadProgress& DataFileWriter::progress() const { return state_->progress; }
void DataFileWriter::OnProgress(std::function<void(const LoadProgress&)> callback) {
  state_->on_progress = std::move(callback);
}

Result<DataFileWriter> DataFileWriter::Make(iceberg::Schema schema, iceberg::PartitionSpec spec,
                                            WriteOptions options, iceberg::FileIO& io,
                                            std::string data_location) {
  auto state = std::make_unique<State>();
  SERAC_ASSIGN_OR_RETURN(state->arrow_schema, ToArrowSchema(schema));
  SERAC_ASSIGN_OR_RETURN(state->partition_type, iceberg::PartitionType(spec, schema));
  for (const iceberg::PartitionField& field : spec.fields) {
    SERAC_ASSIGN_OR_RETURN(iceberg::Transform transform, iceberg::Transform::Parse(field.transform));
    const iceberg::NestedField* source =
        field.source_ids.size() == 1 ? schema.FindField(field.source_ids[0]) : nullptr;
    const int index = source != nullptr ? state->arrow_schema->GetFieldIndex(source->name) : -1;
    if (index < 0 || schema.fields[static_cast<size_t>(index)].id != source->id) {
      return Error(ErrorCode::kNotImplemented,
                   "partition field " + field.name + ": only top-level source columns are supported");
    }
    state->transforms.push_back(transform);
    state->source_columns.push_back(index);
    state->source_types.push_back(&source->type);
  }
  ::parquet::WriterProperties::Builder builder;
  builder.compression(CodecOf(options.compression_codec))
      ->data_pagesize(options.page_size_bytes)
      ->max_row_group_length(std::numeric_limits<int64_t>::max())
      ->version(::parquet::ParquetVersion::PARQUET_2_6)
      ->created_by("serac")
      ->enable_store_decimal_as_integer()
      ->enable_statistics();
  if (options.compression_level) builder.compression_level(*options.compression_level);
  state->properties = builder.build();
  state->schema = std::move(schema);
  state->spec = std::move(spec);
  state->options = std::move(options);
  state->io = &io;
  while (!data_location.empty() && data_location.back() == '/') data_location.pop_back();
  state->data_location = std::move(data_location);
  // The transforms' source types point into the schema the state now owns.
  for (size_t f = 0; f < state->spec.fields.size(); ++f) {
    state->source_types[f] = &state->schema.FindField(state->spec.fields[f].source_ids[0])->type;
  }
  if (state->options.sort_order.order_id != 0) {
    if (state->options.sort_buffer_bytes <= 0) {
      return Error(ErrorCode::kInvalidArgument, "the sort buffer must hold at least one byte");
    }
    for (const iceberg::SortField& field : state->options.sort_order.fields) {
      SERAC_ASSIGN_OR_RETURN(iceberg::Transform transform, iceberg::Transform::Parse(field.transform));
      const iceberg::NestedField* source =
          field.source_ids.size() == 1 ? state->schema.FindField(field.source_ids[0]) : nullptr;
      const int index = source != nullptr ? state->arrow_schema->GetFieldIndex(source->name) : -1;
      if (index < 0 || state->schema.fields[static_cast<size_t>(index)].id != source->id) {
        return Error(ErrorCode::kNotImplemented, "sort order " +
                                                     std::to_string(state->options.sort_order.order_id) +
                                                     ": only top-level source columns are supported");
      }
      SortKey key;
      key.column = index;
      key.source_type = &source->type;
      key.transform = transform;
      SERAC_ASSIGN_OR_RETURN(key.result_type, transform.ResultType(source->type));
      key.descending = field.direction == iceberg::SortDirection::kDescending;
      key.nulls_first = field.null_order == iceberg::NullOrder::kNullsFirst;
      state->sort_keys.push_back(std::move(key));
    }
  }
  return DataFileWriter(std::move(state));
}

Status DataFileWriter::AppendFile(const std::string& path, InputFormat format, iceberg::FileIO* io,
                                  const std::vector<int64_t>* deleted_positions) {
  // Arrow's readers return errors, but the Parquet metadata they decode on the way can throw.
  try {
    return AppendFileUnguarded(path, format, io, deleted_positions, /*table_file=*/false);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, path + ": " + e.what());
  }
}

Status DataFileWriter::AppendTableFile(const std::string& location, iceberg::FileIO& io,
                                       const std::vector<int64_t>* deleted_positions) {
  try {
    return AppendFileUnguarded(location, InputFormat::kParquet, &io, deleted_positions, /*table_file=*/true);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, location + ": " + e.what());
  }
}

Status DataFileWriter::AppendFileUnguarded(const std::string& path, InputFormat format, iceberg::FileIO* io,
                                           const std::vector<int64_t>* deleted_positions, bool table_file) {
  State& s = *state_;
  const InputFile input{path, format, io};
  // A user's Parquet file keeps its text columns' dictionaries (ConformBatch keeps those of the
  // table column's type, and the file writer writes them as its dictionary pages).
  SERAC_ASSIGN_OR_RETURN(
      std::shared_ptr<arrow::RecordBatchReader> batches,
      OpenInputBatches(input, *s.arrow_schema, &s.progress.input_bytes,
                       /*strings_as_dictionaries=*/!table_file, s.options.parallel_columns));
  // A table's own file is read by field id; one written without ids (a file added as it was) by
  // the current names, as a user's file is.
  const bool by_field_id = table_file && HasFieldIds(*batches->schema());
  int64_t rows = 0;
  size_t next_deleted = 0;  // into deleted_positions: the first at or after `rows`
  while (true) {
    SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> batch,
                           NextInputBatch(*batches, input, *s.arrow_schema, rows));
    if (batch == nullptr) break;
    SERAC_ASSIGN_OR_RETURN(auto conformed,
                           by_field_id ? ProjectByFieldId(*batch, s.arrow_schema, s.schema, path, rows + 1)
                                       : ConformBatch(*batch, s.arrow_schema, s.schema, input, rows + 1));
    const int64_t batch_end = rows + batch->num_rows();
    if (deleted_positions != nullptr && next_deleted < deleted_positions->size() &&
        (*deleted_positions)[next_deleted] < batch_end) {
      // The batch without its deleted rows: a mask of the rows kept, applied by Arrow's filter.
      arrow::BooleanBuilder keep;
      SERAC_RETURN_IF_ERROR(FromArrow(keep.Reserve(batch->num_rows()), path));
      for (int64_t row = rows; row < batch_end; ++row) {
        const bool deleted =
            next_deleted < deleted_positions->size() && (*deleted_positions)[next_deleted] == row;
        if (deleted) ++next_deleted;
        keep.UnsafeAppend(!deleted);
      }
      std::shared_ptr<arrow::BooleanArray> mask;
      SERAC_RETURN_IF_ERROR(FromArrow(keep.Finish(&mask), path));
      auto filtered = arrow::compute::Filter(arrow::Datum(conformed), arrow::Datum(mask));
      if (!filtered.ok()) return FromArrow(filtered.status(), path);
      conformed = filtered->record_batch();
    }
    SERAC_RETURN_IF_ERROR(s.Append(conformed, input, rows + 1));
    rows += batch->num_rows();
    s.progress.rows += static_cast<uint64_t>(batch->num_rows());
    if (s.on_progress) s.on_progress(s.progress);
  }
  return Status::Ok();
}

Status DataFileWriter::AppendRows(const std::vector<Row>& rows, const std::string& context, int64_t first_row,
                                  std::vector<RowPlacement>* placements) {
  State& s = *state_;
  if (rows.empty()) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(RowBatchBuilder builder, RowBatchBuilder::Make(s.schema));
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != s.schema.fields.size()) {
      return Error(ErrorCode::kInvalidArgument, context + ": row " +
                                                    std::to_string(first_row + static_cast<int64_t>(r)) +
                                                    ": " + std::to_string(rows[r].size()) + " values for " +
                                                    std::to_string(s.schema.fields.size()) + " columns");
    }
    for (size_t c = 0; c < rows[r].size(); ++c) builder.AppendValue(c, rows[r][c]);
    builder.EndRow();
  }
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> batch,
                         TakeBatch(*builder.state_, context, first_row));
  if (placements != nullptr) {
    if (!s.sort_keys.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   "where rows go is known only for a writer without a sort order");
    }
    placements->assign(rows.size(), RowPlacement{});
  }
  s.placements = placements;
  Status appended;
  try {
    appended = s.Append(batch, InputFile{context}, first_row);
  } catch (const std::exception& e) {
    appended = Error(ErrorCode::kInvalidArgument, context + ": " + e.what());
  }
  s.placements = nullptr;
  SERAC_RETURN_IF_ERROR(appended);
  s.progress.rows += rows.size();
  if (s.on_progress) s.on_progress(s.progress);
  return Status::Ok();
}

Status DataFileWriter::AppendBatch(RowBatchBuilder& rows, const std::string& context, int64_t first_row) {
  State& s = *state_;
  if (rows.rows() == 0) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::RecordBatch> batch,
                         TakeBatch(*rows.state_, context, first_row));
  if (!batch->schema()->Equals(*s.arrow_schema, false)) {
    return Error(ErrorCode::kInternal, context + ": rows built for another schema");
  }
  try {
    SERAC_RETURN_IF_ERROR(s.Append(batch, InputFile{context}, first_row));
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, context + ": " + e.what());
  }
  s.progress.rows += static_cast<uint64_t>(batch->num_rows());
  if (s.on_progress) s.on_progress(s.progress);
  return Status::Ok();
}

Status DataFileWriter::IndexKeys(iceberg::Schema key_schema, KeysOfFile on_file) {
  State& s = *state_;
  std::vector<int> columns;
  for (const iceberg::NestedField& key : key_schema.fields) {
    const int index = s.arrow_schema->GetFieldIndex(key.name);
    if (index < 0 || s.schema.fields[static_cast<size_t>(index)].id != key.id) {
      return Error(ErrorCode::kInvalidArgument,
                   "key column " + key.name + " is not a top-level column of the table");
    }
    columns.push_back(index);
  }
  s.index_key_schema = std::move(key_schema);
  s.index_key_columns = std::move(columns);
  s.on_indexed_file = std::move(on_file);
  return Status::Ok();
}

Result<std::vector<iceberg::DataFile>> DataFileWriter::Finish() {
  State& s = *state_;
  SERAC_RETURN_IF_ERROR(s.FlushAllSorted());
  for (auto& [key, file] : s.open) SERAC_RETURN_IF_ERROR(s.Close(file));
  s.open.clear();
  return s.written;
}

void DataFileWriter::AbortAndDelete() {
  State& s = *state_;
  s.sort_buffers.clear();
  s.sort_buffered_bytes = 0;
  for (auto& [key, file] : s.open) file.output->Abort();
  s.open.clear();
  for (const std::string& location : s.written_locations) (void)s.io->Delete(location);
  s.written.clear();
  s.written_locations.clear();
}

namespace {

Result<iceberg::Type> FromArrowType(const arrow::DataType& type, int32_t& next_id,
                                    const std::string& column) {
  iceberg::Type out;
  auto nested = [&](const std::shared_ptr<arrow::Field>& field) -> Result<iceberg::NestedField> {
    iceberg::NestedField child;
    child.id = next_id++;
    child.name = field->name();
    child.required = !field->nullable();
    SERAC_ASSIGN_OR_RETURN(child.type, FromArrowType(*field->type(), next_id, column + "." + field->name()));
    return child;
  };
  switch (type.id()) {
    case arrow::Type::BOOL:
      out.id = iceberg::TypeId::kBoolean;
      break;
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
      out.id = iceberg::TypeId::kInt;
      break;
    case arrow::Type::INT64:
    case arrow::Type::UINT32:
      out.id = iceberg::TypeId::kLong;
      break;
    case arrow::Type::UINT64:
      // Every unsigned 64-bit value, exactly: a long would refuse those above 2^63 - 1.
      out.id = iceberg::TypeId::kDecimal;
      out.precision = 20;
      out.scale = 0;
      break;
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT:
      out.id = iceberg::TypeId::kFloat;
      break;
    case arrow::Type::DOUBLE:
      out.id = iceberg::TypeId::kDouble;
      break;
    case arrow::Type::DECIMAL32:
    case arrow::Type::DECIMAL64:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256: {
      const auto& decimal = static_cast<const arrow::DecimalType&>(type);
      if (decimal.precision() > 38) {
        return Error(
            ErrorCode::kInvalidArgument,
            "column " + column + ": " + type.ToString() +
                " has more digits than Iceberg's decimal holds (38); cast it to decimal(38, s) first");
      }
      out.id = iceberg::TypeId::kDecimal;
      out.precision = decimal.precision();
      out.scale = decimal.scale();
      break;
    }
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
      out.id = iceberg::TypeId::kDate;
      break;
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
      out.id = iceberg::TypeId::kTime;
      break;
    case arrow::Type::TIMESTAMP: {
      const auto& timestamp = static_cast<const arrow::TimestampType&>(type);
      const bool nanos = timestamp.unit() == arrow::TimeUnit::NANO;
      const bool zoned = !timestamp.timezone().empty();
      out.id = nanos ? (zoned ? iceberg::TypeId::kTimestampTzNs : iceberg::TypeId::kTimestampNs)
                     : (zoned ? iceberg::TypeId::kTimestampTz : iceberg::TypeId::kTimestamp);
      break;
    }
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      out.id = iceberg::TypeId::kString;
      break;
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::BINARY_VIEW:
      out.id = iceberg::TypeId::kBinary;
      break;
    case arrow::Type::FIXED_SIZE_BINARY:
      out.id = iceberg::TypeId::kFixed;
      out.length = static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width();
      break;
    case arrow::Type::STRUCT:
      out.id = iceberg::TypeId::kStruct;
      for (const auto& field : type.fields()) {
        SERAC_ASSIGN_OR_RETURN(iceberg::NestedField child, nested(field));
        out.fields.push_back(std::move(child));
      }
      break;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::LIST_VIEW:
    case arrow::Type::LARGE_LIST_VIEW:
    case arrow::Type::FIXED_SIZE_LIST: {
      out.id = iceberg::TypeId::kList;
      SERAC_ASSIGN_OR_RETURN(iceberg::NestedField element, nested(type.field(0)));
      element.name = "element";
      out.fields.push_back(std::move(element));
      break;
    }
    case arrow::Type::MAP: {
      const auto& map = static_cast<const arrow::MapType&>(type);
      out.id = iceberg::TypeId::kMap;
      SERAC_ASSIGN_OR_RETURN(iceberg::NestedField key, nested(map.key_field()));
      SERAC_ASSIGN_OR_RETURN(iceberg::NestedField value, nested(map.item_field()));
      key.name = "key";
      key.required = true;
      value.name = "value";
      out.fields.push_back(std::move(key));
      out.fields.push_back(std::move(value));
      break;
    }
    case arrow::Type::DICTIONARY:  // categoricals, enums: their values' type
      return FromArrowType(*static_cast<const arrow::DictionaryType&>(type).value_type(), next_id, column);
    case arrow::Type::RUN_END_ENCODED:
      return FromArrowType(*static_cast<const arrow::RunEndEncodedType&>(type).value_type(), next_id, column);
    case arrow::Type::EXTENSION: {
      const auto& extension = static_cast<const arrow::ExtensionType&>(type);
      if (extension.extension_name() == "arrow.uuid") {
        out.id = iceberg::TypeId::kUuid;
        break;
      }
      if (extension.extension_name() == "arrow.bool8") {
        out.id = iceberg::TypeId::kBoolean;
        break;
      }
      // arrow.json (text), arrow.opaque and the like: the values as their storage holds them.
      return FromArrowType(*extension.storage_type(), next_id, column);
    }
    case arrow::Type::NA:
      return Error(
          ErrorCode::kInvalidArgument,
          "column " + column +
              " holds only nulls and has no type (Arrow's null): give it the type its values will have");
    case arrow::Type::DURATION:
    case arrow::Type::INTERVAL_MONTHS:
    case arrow::Type::INTERVAL_DAY_TIME:
    case arrow::Type::INTERVAL_MONTH_DAY_NANO:
      return Error(ErrorCode::kInvalidArgument,
                   "column " + column + ": " + type.ToString() +
                       " has no Iceberg type (Iceberg has no durations or intervals): cast it to a number, "
                       "e.g. microseconds as int64");
    default:
      return Error(ErrorCode::kInvalidArgument, "column " + column + ": " + type.ToString() +
                                                    " has no Iceberg type to create the table with");
  }
  return out;
}

// The Arrow field of a Parquet column as a table created from it should see it: Spark's INT96
// timestamps are instants (Spark's TIMESTAMP), read as microseconds in UTC. `field` is the
// reader's field for the manifest's `schema_field`, children in the same order.
std::shared_ptr<arrow::Field> AsCreated(const ::parquet::arrow::SchemaField& schema_field,
                                        const ::parquet::SchemaDescriptor& descriptor) {
  const std::shared_ptr<arrow::Field>& field = schema_field.field;
  if (schema_field.is_leaf()) {
    if (descriptor.Column(schema_field.column_index)->physical_type() == ::parquet::Type::INT96) {
      return field->WithType(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"));
    }
    return field;
  }
  if (field->type()->id() != arrow::Type::STRUCT) return field;  // lists and maps: as read
  arrow::FieldVector children;
  for (const ::parquet::arrow::SchemaField& child : schema_field.children) {
    children.push_back(AsCreated(child, descriptor));
  }
  return field->WithType(arrow::struct_(std::move(children)));
}

}  // namespace

namespace {

Result<iceberg::Schema> InferSchemaUnguarded(const std::string& path, InputFormat format,
                                             iceberg::FileIO* io) {
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<arrow::io::RandomAccessFile> opened, OpenInput(path, io));
  std::shared_ptr<arrow::Schema> schema;
  if (format == InputFormat::kParquet) {
    // With Arrow's extension types, Parquet's UUID and JSON columns read as arrow.uuid and
    // arrow.json, whatever wrote them (DuckDB, Spark) and not only pyarrow.
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<::parquet::arrow::FileReader> reader,
                           OpenParquetReader(opened, path, /*arrow_extensions=*/true));
    const ::parquet::arrow::SchemaManifest& manifest = reader->manifest();
    arrow::FieldVector fields;
    for (const ::parquet::arrow::SchemaField& field : manifest.schema_fields) {
      fields.push_back(AsCreated(field, *manifest.descr));
    }
    schema = arrow::schema(std::move(fields));
  } else if (format == InputFormat::kCsv) {
    auto convert = arrow::csv::ConvertOptions::Defaults();
    convert.strings_can_be_null = true;
    auto reader = arrow::csv::StreamingReader::Make(arrow::io::default_io_context(), opened,
                                                    arrow::csv::ReadOptions::Defaults(),
                                                    arrow::csv::ParseOptions::Defaults(), convert);
    if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
    schema = (*reader)->schema();
  } else {
    auto reader = arrow::json::StreamingReader::Make(opened, arrow::json::ReadOptions::Defaults(),
                                                     arrow::json::ParseOptions::Defaults());
    if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
    schema = (*reader)->schema();
  }
  iceberg::Schema out;
  int32_t next_id = 1;
  // Top-level columns take the first ids, as Java numbers a new schema.
  next_id += schema->num_fields();
  for (int i = 0; i < schema->num_fields(); ++i) {
    const auto& field = schema->field(i);
    iceberg::NestedField column;
    column.id = i + 1;
    column.name = field->name();
    column.required = false;
    std::shared_ptr<arrow::DataType> arrow_type = field->type();
    // Text inputs have no declared precision: Arrow infers nanoseconds for any fraction, but a
    // table's timestamps are microseconds unless a file says otherwise (nanoseconds need v3).
    if (format != InputFormat::kParquet && arrow_type->id() == arrow::Type::TIMESTAMP) {
      arrow_type = arrow::timestamp(arrow::TimeUnit::MICRO,
                                    static_cast<const arrow::TimestampType&>(*arrow_type).timezone());
    }
    auto type = FromArrowType(*arrow_type, next_id, field->name());
    if (!type.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + type.status().message());
    column.type = std::move(type).value();
    out.fields.push_back(std::move(column));
  }
  return out;
}

}  // namespace

Result<iceberg::Schema> InferSchema(const std::string& path, InputFormat format, iceberg::FileIO* io) {
  try {
    return InferSchemaUnguarded(path, format, io);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInvalidArgument, path + ": " + e.what());
  }
}

Result<InputFormat> ParseInputFormat(std::string_view name) {
  if (name == "parquet") return InputFormat::kParquet;
  if (name == "csv") return InputFormat::kCsv;
  if (name == "jsonl" || name == "json") return InputFormat::kJsonLines;
  return Error(ErrorCode::kInvalidArgument,
               "input format " + std::string(name) + " is not parquet, csv or jsonl");
}

Result<InputFormat> InputFormatOfPath(std::string_view path) {
  for (auto [suffix, format] :
       {std::pair{".parquet", InputFormat::kParquet}, std::pair{".csv", InputFormat::kCsv},
        std::pair{".jsonl", InputFormat::kJsonLines}, std::pair{".ndjson", InputFormat::kJsonLines},
        std::pair{".json", InputFormat::kJsonLines}}) {
    if (path.ends_with(suffix)) return format;
  }
  return Error(
      ErrorCode::kInvalidArgument,
      std::string(path) + ": cannot tell the format from the name (.parquet, .csv, .jsonl); give --format");
}

}  // namespace serac::parquet
