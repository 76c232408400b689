#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/api.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/file_reader.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "iceberg/io/file_io.h"
#include "iceberg/schema/partition.h"
#include "parquet/key_index.h"
#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"

namespace serac::parquet {
namespace {

#define ASSERT_OK(expr)                             \
  do {                                              \
    const Status status_ = (expr);                  \
    ASSERT_TRUE(status_.ok()) << status_.message(); \
  } while (0)

iceberg::Schema TableSchema() {
  auto schema = iceberg::ParseSchema(R"json({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "name", "required": false, "type": "string"},
      {"id": 3, "name": "score", "required": false, "type": "double"},
      {"id": 4, "name": "price", "required": false, "type": "decimal(9, 2)"},
      {"id": 5, "name": "big", "required": false, "type": "decimal(30, 4)"},
      {"id": 6, "name": "day", "required": false, "type": "date"},
      {"id": 7, "name": "ts", "required": false, "type": "timestamptz"},
      {"id": 8, "name": "flag", "required": false, "type": "boolean"},
      {"id": 9, "name": "small", "required": false, "type": "int"},
      {"id": 10, "name": "tags", "required": false, "type": {"type": "list", "element-id": 11,
                                                              "element": "string", "element-required": false}},
      {"id": 12, "name": "point", "required": false, "type": {"type": "struct", "fields": [
          {"id": 13, "name": "x", "required": true, "type": "float"}]}},
      {"id": 14, "name": "attrs", "required": false, "type": {"type": "map", "key-id": 15, "key": "string",
                                                               "value-id": 16, "value": "long",
                                                               "value-required": false}},
      {"id": 17, "name": "raw", "required": false, "type": "binary"},
      {"id": 18, "name": "uid", "required": false, "type": "uuid"},
      {"id": 19, "name": "nanos", "required": false, "type": "timestamp_ns"},
      {"id": 20, "name": "t", "required": false, "type": "time"},
      {"id": 21, "name": "f3", "required": false, "type": "fixed[3]"}]})json");
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  return *schema;
}

class ParquetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("parquet-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    io_ = iceberg::MakeLocalFileIO();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `table` as an input Parquet file (as a user's pyarrow would: no field ids).
  std::string WriteInput(const std::shared_ptr<arrow::Table>& table, const std::string& name) {
    const std::string path = (dir_ / name).string();
    auto out = arrow::io::FileOutputStream::Open(path);
    EXPECT_TRUE(out.ok());
    EXPECT_TRUE(::parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, 1 << 20).ok());
    EXPECT_TRUE((*out)->Close().ok());
    return path;
  }

  std::string WriteText(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::shared_ptr<arrow::Table> ReadOutput(const std::string& path) {
    auto file = arrow::io::ReadableFile::Open(path);
    EXPECT_TRUE(file.ok());
    auto reader = ::parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
    EXPECT_TRUE(reader.ok());
    auto table = (*reader)->ReadTable();
    EXPECT_TRUE(table.ok());
    return table.ok() ? *table : nullptr;
  }

  std::filesystem::path dir_;
  std::unique_ptr<iceberg::FileIO> io_;
};

std::shared_ptr<arrow::Table> SimpleRows(int64_t count, int64_t first = 0) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  arrow::DoubleBuilder scores;
  for (int64_t i = first; i < first + count; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    if (i % 10 == 3) {
      EXPECT_TRUE(names.AppendNull().ok());
    } else {
      EXPECT_TRUE(names.Append("name-" + std::to_string(i % 7)).ok());
    }
    EXPECT_TRUE(scores.Append(i % 5 == 0 ? std::nan("") : static_cast<double>(i) / 2).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                               arrow::field("score", arrow::float64())});
  return arrow::Table::Make(schema, {*ids.Finish(), *names.Finish(), *scores.Finish()});
}

const std::pair<int32_t, std::string>* Find(const iceberg::ColumnBounds& bounds, int32_t id) {
  for (const auto& entry : bounds) {
    if (entry.first == id) return &entry;
  }
  return nullptr;
}

int64_t Count(const iceberg::ColumnCounts& counts, int32_t id) {
  for (const auto& [key, value] : counts) {
    if (key == id) return value;
  }
  return -1;
}

TEST_F(ParquetTest, WritesFieldIdsSchemaAndTheMetricsAManifestNeeds) {
  const std::string input = WriteInput(SimpleRows(100), "in.parquet");
  auto writer = DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                     (dir_ / "table/data").string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_OK(writer->AppendFile(input, InputFormat::kParquet));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 1u);
  const iceberg::DataFile& file = (*files)[0];
  EXPECT_EQ(file.record_count, 100);
  EXPECT_EQ(file.file_format, "PARQUET");
  EXPECT_EQ(static_cast<uint64_t>(file.file_size_in_bytes), std::filesystem::file_size(file.file_path));
  EXPECT_EQ(Count(file.value_counts, 1), 100);
  EXPECT_EQ(Count(file.null_value_counts, 2), 10);
  EXPECT_EQ(Count(file.null_value_counts, 4), 100);  // a column the input lacks: all null
  EXPECT_EQ(Count(file.nan_value_counts, 3), 20);
  EXPECT_GT(Count(file.column_sizes, 1), 0);
  EXPECT_EQ(Find(file.lower_bounds, 1)->second, std::string("\0\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(Find(file.upper_bounds, 1)->second, std::string("\x63\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(Find(file.lower_bounds, 2)->second, "name-0");
  EXPECT_EQ(Find(file.upper_bounds, 2)->second, "name-6");
  EXPECT_EQ(Find(file.lower_bounds, 4), nullptr);  // no values, no bounds
  ASSERT_FALSE(file.split_offsets.empty());
  EXPECT_EQ(file.split_offsets[0], 4);

  // The Parquet file carries every column's field id and the table schema.
  auto reader = ::parquet::ParquetFileReader::OpenFile(file.file_path);
  const ::parquet::SchemaDescriptor& schema = *reader->metadata()->schema();
  std::vector<int32_t> ids;
  for (int i = 0; i < schema.num_columns(); ++i) ids.push_back(schema.Column(i)->schema_node()->field_id());
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16, 17, 18, 19, 20, 21}));
  auto metadata = reader->metadata()->key_value_metadata();
  ASSERT_NE(metadata, nullptr);
  EXPECT_TRUE(metadata->Contains("iceberg.schema"));
  EXPECT_EQ(ReadOutput(file.file_path)->num_rows(), 100);
}

TEST_F(ParquetTest, PartitionsRowsAndNamesDirectoriesAsJava) {
  iceberg::PartitionSpec spec;
  spec.spec_id = 1;
  spec.fields = {{{2}, 1000, "name", "identity"}, {{1}, 1001, "id_bucket", "bucket[2]"}};
  auto writer = DataFileWriter::Make(TableSchema(), spec, WriteOptions{}, *io_, (dir_ / "t/data").string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_OK(writer->AppendFile(WriteInput(SimpleRows(70), "in.parquet"), InputFormat::kParquet));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok()) << files.status().message();
  int64_t rows = 0;
  std::set<std::string> partitions;
  for (const iceberg::DataFile& file : *files) {
    rows += file.record_count;
    ASSERT_EQ(file.partition.size(), 2u);
    const std::string name =
        iceberg::IsNull(file.partition[0]) ? "null" : std::get<std::string>(file.partition[0]);
    const int32_t bucket = std::get<int32_t>(file.partition[1]);
    partitions.insert(name + "/" + std::to_string(bucket));
    EXPECT_NE(file.file_path.find("/t/data/name=" + name + "/id_bucket=" + std::to_string(bucket) + "/"),
              std::string::npos)
        << file.file_path;
    // Every row of the file has the file's partition.
    auto table = ReadOutput(file.file_path);
    auto ids = std::static_pointer_cast<arrow::Int64Array>(table->GetColumnByName("id")->chunk(0));
    iceberg::Type long_type;
    long_type.id = iceberg::TypeId::kLong;
    for (int64_t i = 0; i < ids->length(); ++i) {
      auto b = iceberg::Transform::Parse("bucket[2]")->Apply(long_type, iceberg::Datum(ids->Value(i)));
      EXPECT_EQ(std::get<int32_t>(*b), bucket);
    }
  }
  EXPECT_EQ(rows, 70);
  EXPECT_EQ(partitions.size(), files->size());  // one file per partition
  EXPECT_EQ(files->size(), 16u);                // 7 names + null, 2 buckets
}

// Rows given value by value land in the partitions' files, and each row's placement names the file
// and the position a reader finds it at.
TEST_F(ParquetTest, RowsGivenByValueAreWrittenWhereThePlacementsSay) {
  iceberg::PartitionSpec spec;
  spec.spec_id = 1;
  spec.fields = {{{2}, 1000, "name", "identity"}};
  auto writer = DataFileWriter::Make(TableSchema(), spec, WriteOptions{}, *io_, (dir_ / "r/data").string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const size_t columns = TableSchema().fields.size();
  std::vector<Row> rows;
  for (int64_t i = 0; i < 50; ++i) {
    Row row(columns);
    row[0].datum = iceberg::Datum(i);
    if (i % 5 != 0) row[1].datum = iceberg::Datum(std::string(i % 2 ? "odd" : "even"));
    row[2].datum = iceberg::Datum(static_cast<double>(i) / 4);
    row[3].datum = iceberg::Datum(std::string("\xff\x38"));  // -200 unscaled: -2.00
    row[9].elements = std::vector<iceberg::Datum>{iceberg::Datum(std::string("t")), iceberg::Datum()};
    rows.push_back(std::move(row));
  }
  std::vector<RowPlacement> placements;
  ASSERT_OK(writer->AppendRows(rows, "rows", 1, &placements));
  ASSERT_EQ(placements.size(), rows.size());
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(files->size(), 3u);  // odd, even, null
  std::map<std::string, std::shared_ptr<arrow::Table>> tables;
  for (const iceberg::DataFile& file : *files) tables[file.file_path] = ReadOutput(file.file_path);
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(tables.count(placements[i].location), 1u) << placements[i].location;
    auto ids = std::static_pointer_cast<arrow::Int64Array>(
        tables[placements[i].location]->GetColumnByName("id")->chunk(0));
    ASSERT_LT(placements[i].position, ids->length());
    EXPECT_EQ(ids->Value(placements[i].position), static_cast<int64_t>(i));
  }
  auto prices = tables.begin()->second->GetColumnByName("price")->chunk(0);
  EXPECT_EQ(prices->GetScalar(0).ValueOrDie()->ToString(), "-2.00");
  auto tags = tables.begin()->second->GetColumnByName("tags")->chunk(0);
  EXPECT_EQ(tags->GetScalar(0).ValueOrDie()->ToString(), "list<element: string>[t, null]");
  // A value of the wrong kind names the row and the column.
  auto again = DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                    (dir_ / "w/data").string());
  ASSERT_TRUE(again.ok());
  Row wrong(columns);
  wrong[0].datum = iceberg::Datum(std::string("x"));
  Status refused = again->AppendRows({wrong}, "changes", 7);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("changes: row 7: column id"), std::string::npos) << refused.message();
  again->AbortAndDelete();
}

// Rows found by key through the index files: the data files are read once (and indexed), then
// not again, for a long key, a uuid key and a composite key; the positions are the same either way;
// index files of files no longer live go, and a damaged one is read around.
class KeyIndexTest : public ParquetTest, public ::testing::WithParamInterface<std::vector<int32_t>> {};

TEST_P(KeyIndexTest, FindsRowsWithoutReadingTheDataFilesAgain) {
  const iceberg::Schema schema = TableSchema();
  const size_t columns = schema.fields.size();
  auto row_of = [&](int64_t i) {
    Row row(columns);
    row[0].datum = iceberg::Datum(i);
    row[1].datum = iceberg::Datum("name-" + std::to_string(i % 3));
    std::string uid(16, '\0');
    for (int b = 0; b < 8; ++b) uid[static_cast<size_t>(15 - b)] = static_cast<char>((i * 7919) >> (8 * b));
    row[13].datum = iceberg::Datum(uid);
    return row;
  };
  iceberg::TableFiles live;
  for (int64_t first : {0, 1000}) {
    auto writer = DataFileWriter::Make(schema, iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                       (dir_ / "t/data").string());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    std::vector<Row> rows;
    for (int64_t i = first; i < first + 1000; ++i) rows.push_back(row_of(i));
    ASSERT_OK(writer->AppendRows(rows, "rows", 1));
    auto files = writer->Finish();
    ASSERT_TRUE(files.ok() && files->size() == 1u);
    live.data.push_back(iceberg::LiveFile{files->at(0)});
  }
  iceberg::Schema key_schema;
  for (int32_t index : GetParam()) key_schema.fields.push_back(schema.fields[static_cast<size_t>(index)]);
  auto keys_of = [&](std::vector<int64_t> ids) {
    std::vector<Row> keys;
    for (int64_t id : ids) {
      Row full = row_of(id);
      Row key;
      for (int32_t index : GetParam()) key.push_back(full[static_cast<size_t>(index)]);
      keys.push_back(std::move(key));
    }
    auto built = RowKeys::FromRows(key_schema, keys);
    EXPECT_TRUE(built.ok()) << built.status().message();
    return std::move(built).value();
  };
  auto deleted_positions = [&](const RowDeletes& deletes) {
    std::map<std::string, std::vector<int64_t>> found;
    for (const iceberg::DataFile& file : deletes.added) {
      auto table = ReadOutput(file.file_path);
      auto positions = std::static_pointer_cast<arrow::Int64Array>(table->GetColumnByName("pos")->chunk(0));
      for (int64_t i = 0; i < positions->length(); ++i)
        found[*file.referenced_data_file].push_back(positions->Value(i));
    }
    return found;
  };
  auto index = DataFileKeyIndex::Open((dir_ / "index").string());
  ASSERT_TRUE(index.ok()) << index.status().message();
  const std::string location = (dir_ / "t/data").string();
  const std::string a = live.data[0].file.file_path;
  const std::string b = live.data[1].file.file_path;

  // Read and indexed.
  auto first = DeleteRowsByKey(*io_, keys_of({5, 1500, 99999}), live, PositionDeletes::kFiles, WriteOptions{},
                               location, index->get());
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(deleted_positions(*first), (std::map<std::string, std::vector<int64_t>>{{a, {5}}, {b, {500}}}));
  EXPECT_EQ((*index)->indexed_files(), 2u);

  // The data files gone: found in the index alone.
  std::filesystem::rename(a, a + ".away");
  std::filesystem::rename(b, b + ".away");
  auto second = DeleteRowsByKey(*io_, keys_of({6, 7, 1999, 5000}), live, PositionDeletes::kFiles,
                                WriteOptions{}, location, index->get());
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(deleted_positions(*second),
            (std::map<std::string, std::vector<int64_t>>{{a, {6, 7}}, {b, {999}}}));

  // Kept across opening again; a damaged index file is read around (its data file read instead).
  index = DataFileKeyIndex::Open((dir_ / "index").string());
  ASSERT_TRUE(index.ok());
  EXPECT_EQ((*index)->indexed_files(), 2u);
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "index")) {
    std::filesystem::resize_file(entry.path(), 40);
    break;
  }
  std::filesystem::rename(a + ".away", a);
  std::filesystem::rename(b + ".away", b);
  auto third = DeleteRowsByKey(*io_, keys_of({8, 1001}), live, PositionDeletes::kFiles, WriteOptions{},
                               location, index->get());
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_EQ(deleted_positions(*third), (std::map<std::string, std::vector<int64_t>>{{a, {8}}, {b, {1}}}));
  EXPECT_EQ((*index)->indexed_files(), 2u);

  // Only the live files keep theirs.
  (*index)->Retain({a});
  EXPECT_EQ((*index)->indexed_files(), 1u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_ / "index"), {}), 1);

  // A writer that indexes its files as it writes them (rows in no order, some without a key value
  // in a one-column key, several files per partition) makes the very index files reading them would.
  auto written_index = DataFileKeyIndex::Open((dir_ / "written").string());
  auto read_index = DataFileKeyIndex::Open((dir_ / "read").string());
  ASSERT_TRUE(written_index.ok() && read_index.ok());
  WriteOptions small_files;
  small_files.target_file_size_bytes = 20000;
  iceberg::PartitionSpec spec;
  spec.fields = {{{1}, 1000, "id_bucket", "bucket[3]"}};
  auto indexing = DataFileWriter::Make(schema, spec, small_files, *io_, (dir_ / "w/data").string());
  ASSERT_TRUE(indexing.ok()) << indexing.status().message();
  ASSERT_OK(indexing->IndexKeys(key_schema, [&](const iceberg::DataFile& file, const KeyPositions& keys) {
    return (*written_index)->Add(file, keys);
  }));
  std::vector<Row> rows;
  for (int64_t i = 0; i < 3000; ++i) {
    rows.push_back(row_of((i * 7) % 3000));
    if (i % 10 == 3) {
      for (int32_t index : GetParam()) rows.back()[static_cast<size_t>(index)].datum = iceberg::Datum();
      rows.back()[0].datum = iceberg::Datum(-i);  // the id is required
    }
  }
  ASSERT_OK(indexing->AppendRows(rows, "rows", 1));
  auto written = indexing->Finish();
  ASSERT_TRUE(written.ok()) << written.status().message();
  ASSERT_GT(written->size(), 3u);
  iceberg::TableFiles written_live;
  for (const iceberg::DataFile& file : *written) written_live.data.push_back(iceberg::LiveFile{file});
  EXPECT_EQ((*written_index)->indexed_files(), written->size());
  // Read and indexed the other way: every file holds some of the keys asked for.
  std::vector<int64_t> every_id;
  for (int64_t i = 0; i < 3000; ++i) every_id.push_back(i);
  auto by_reading = DeleteRowsByKey(*io_, keys_of(every_id), written_live, PositionDeletes::kFiles,
                                    WriteOptions{}, (dir_ / "w/data").string(), read_index->get());
  ASSERT_TRUE(by_reading.ok()) << by_reading.status().message();
  EXPECT_EQ((*read_index)->indexed_files(), written->size());
  for (const auto& entry : std::filesystem::directory_iterator(dir_ / "written")) {
    auto bytes_of = [](const std::filesystem::path& path) {
      std::ifstream in(path, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::filesystem::path twin = dir_ / "read" / entry.path().filename();
    ASSERT_TRUE(std::filesystem::exists(twin)) << twin;
    EXPECT_EQ(bytes_of(entry.path()), bytes_of(twin)) << entry.path();
  }
}

INSTANTIATE_TEST_SUITE_P(Keys, KeyIndexTest,
                         ::testing::Values(std::vector<int32_t>{0}, std::vector<int32_t>{13},
                                           std::vector<int32_t>{0, 1}));

// An index file made from keys in any order, repeated keys, an empty key and 16-byte keys (longer
// than a string keeps inline) finds every row of each key asked for, and none of others.
TEST_F(ParquetTest, KeyIndexFilesHoldEveryRowOfEveryKey) {
  auto index = DataFileKeyIndex::Open((dir_ / "index").string());
  ASSERT_TRUE(index.ok()) << index.status().message();
  iceberg::DataFile data;
  data.file_path = "s3://bucket/t/data/one.parquet";
  data.record_count = 20003;
  KeyPositions keys;
  auto uuid_of = [](int i) {
    return "uuid-key-" + std::string(7 - std::to_string(i).size(), '0') + std::to_string(i);
  };
  for (int i = 9999; i >= 0; --i) keys.Add(uuid_of(i), 9999 - i);      // descending keys
  for (int i = 0; i < 10000; i += 1) keys.Add(uuid_of(i), 10000 + i);  // each key a second time
  keys.Add("", 20000);
  keys.Add("", 20001);
  keys.Add(uuid_of(77), 20002);  // a third time
  EXPECT_EQ(keys.size(), 20003u);
  EXPECT_EQ(keys.key(2), uuid_of(9997));
  EXPECT_EQ(keys.position(2), 2u);
  ASSERT_OK((*index)->Add(data, keys));

  std::vector<std::string> asked = {"", uuid_of(0), uuid_of(77), uuid_of(9999), "uuid-key-absent"};
  std::sort(asked.begin(), asked.end());
  auto found = (*index)->Find(data, asked);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, (std::vector<int64_t>{0, 9922, 9999, 10000, 10077, 19999, 20000, 20001, 20002}));
}

// Not a test: how long an index file of 2,000,000 random 16-byte keys (uuids) takes to make, from
// keys gathered as a writer gathers them (bench/README.md, sync benchmark).
TEST_F(ParquetTest, DISABLED_KeyIndexBenchmark) {
  auto index = DataFileKeyIndex::Open((dir_ / "index").string());
  ASSERT_TRUE(index.ok());
  constexpr int kRows = 2'000'000;
  std::vector<std::string> uuids;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < kRows; ++i) {
    std::string uuid(16, '\0');
    for (char& byte : uuid) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      byte = static_cast<char>(state >> 56);
    }
    uuids.push_back(std::move(uuid));
  }
  iceberg::DataFile data;
  data.file_path = "s3://bucket/t/data/big.parquet";
  data.record_count = kRows;
  const auto gathered_at = std::chrono::steady_clock::now();
  KeyPositions keys;
  for (int i = 0; i < kRows; ++i) keys.Add(uuids[static_cast<size_t>(i)], i);
  const auto made_at = std::chrono::steady_clock::now();
  ASSERT_OK((*index)->Add(data, keys));
  const auto done_at = std::chrono::steady_clock::now();
  std::printf("key index of %d uuid keys: gathered in %.3f s, index file made in %.3f s\n", kRows,
              std::chrono::duration<double>(made_at - gathered_at).count(),
              std::chrono::duration<double>(done_at - made_at).count());
}

TEST_F(ParquetTest, RollsFilesAtTheTargetSize) {
  WriteOptions options;
  options.target_file_size_bytes = 64 * 1024;
  options.row_group_size_bytes = 32 * 1024;
  auto writer =
      DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, options, *io_, (dir_ / "d").string());
  ASSERT_TRUE(writer.ok());
  auto rows = SimpleRows(200000);
  // Several batches: the input is read in row groups.
  auto out = arrow::io::FileOutputStream::Open((dir_ / "big.parquet").string());
  ASSERT_TRUE(::parquet::arrow::WriteTable(*rows, arrow::default_memory_pool(), *out, 5000).ok());
  ASSERT_TRUE((*out)->Close().ok());
  ASSERT_OK(writer->AppendFile((dir_ / "big.parquet").string(), InputFormat::kParquet));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok());
  EXPECT_GT(files->size(), 3u);
  int64_t total = 0;
  for (const iceberg::DataFile& file : *files) {
    total += file.record_count;
    EXPECT_LT(file.file_size_in_bytes, 3 * options.target_file_size_bytes) << file.file_path;
  }
  EXPECT_EQ(total, 200000);
}

TEST_F(ParquetTest, SortedTablesGetSortedFilesWithinTheBufferBudget) {
  WriteOptions options;
  options.sort_order.order_id = 3;
  // name descending with nulls last, then id ascending.
  options.sort_order.fields = {
      {{2}, "identity", iceberg::SortDirection::kDescending, iceberg::NullOrder::kNullsLast},
      {{1}, "identity", iceberg::SortDirection::kAscending, iceberg::NullOrder::kNullsFirst}};
  options.sort_buffer_bytes = 256 * 1024;  // several runs for 100,000 rows
  iceberg::PartitionSpec spec;
  spec.fields = {{{1}, 1000, "id_bucket", "bucket[2]"}};
  auto writer = DataFileWriter::Make(TableSchema(), spec, options, *io_, (dir_ / "d").string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  // Rows in an order far from sorted, read in several batches.
  auto rows = SimpleRows(100000);
  arrow::Int64Builder shuffle;
  for (int64_t i = 0; i < rows->num_rows(); ++i)
    ASSERT_TRUE(shuffle.Append((i * 7919) % rows->num_rows()).ok());
  auto shuffled = arrow::compute::Take(rows, *shuffle.Finish());
  ASSERT_TRUE(shuffled.ok());
  auto out = arrow::io::FileOutputStream::Open((dir_ / "in.parquet").string());
  ASSERT_TRUE(
      ::parquet::arrow::WriteTable(*shuffled->table(), arrow::default_memory_pool(), *out, 4000).ok());
  ASSERT_TRUE((*out)->Close().ok());
  ASSERT_OK(writer->AppendFile((dir_ / "in.parquet").string(), InputFormat::kParquet));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_GT(files->size(), 2u);  // more than one run per partition
  std::set<int64_t> ids;
  for (const iceberg::DataFile& file : *files) {
    EXPECT_EQ(file.sort_order_id, 3);
    auto table = ReadOutput(file.file_path);
    ASSERT_TRUE(table);
    auto combined = table->CombineChunksToBatch();
    ASSERT_TRUE(combined.ok());
    auto id = std::static_pointer_cast<arrow::Int64Array>((*combined)->GetColumnByName("id"));
    auto name = std::static_pointer_cast<arrow::StringArray>((*combined)->GetColumnByName("name"));
    for (int64_t i = 0; i < id->length(); ++i) {
      ids.insert(id->Value(i));
      if (i == 0) continue;
      const bool previous_null = name->IsNull(i - 1);
      const bool this_null = name->IsNull(i);
      ASSERT_FALSE(previous_null && !this_null) << file.file_path << " row " << i;  // nulls last
      if (previous_null || this_null) continue;
      const int c = name->GetView(i - 1).compare(name->GetView(i));
      ASSERT_GE(c, 0) << file.file_path << " row " << i;  // descending
      if (c == 0) {
        ASSERT_LT(id->Value(i - 1), id->Value(i)) << file.file_path << " row " << i;
      }
    }
  }
  EXPECT_EQ(ids.size(), 100000u);

  // Sorting by a nested column is refused by name.
  WriteOptions nested;
  nested.sort_order.order_id = 1;
  nested.sort_order.fields = {
      {{13}, "identity", iceberg::SortDirection::kAscending, iceberg::NullOrder::kNullsFirst}};
  auto refused =
      DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, nested, *io_, (dir_ / "n").string());
  EXPECT_EQ(refused.status().code(), ErrorCode::kNotImplemented);
}

TEST_F(ParquetTest, CsvAndJsonLinesAreConvertedToTheTableTypes) {
  const std::string csv =
      WriteText("in.csv",
                "id,name,price,day,flag,uid\n1,a,12.50,2024-05-01,true,f79c3e09-677c-4bbd-a479-3f349cb785e7\n"
                "2,,0.01,,false,\n");
  const std::string jsonl = WriteText("in.jsonl", R"({"id": 3, "name": "c", "small": 7}
{"id": 4, "ts": "2024-05-01T10:00:00Z"}
)");
  auto writer = DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                     (dir_ / "d").string());
  ASSERT_TRUE(writer.ok());
  ASSERT_OK(writer->AppendFile(csv, InputFormat::kCsv));
  Status json = writer->AppendFile(jsonl, InputFormat::kJsonLines);
  ASSERT_TRUE(json.ok()) << json.message();
  EXPECT_EQ(writer->progress().rows, 4u);
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  const iceberg::DataFile& file = (*files)[0];
  EXPECT_EQ(file.record_count, 4);
  // decimal(9, 2) is stored as INT32: the bounds are the unscaled values, big-endian.
  EXPECT_EQ(Find(file.lower_bounds, 4)->second, std::string("\x01", 1));
  EXPECT_EQ(Find(file.upper_bounds, 4)->second, std::string("\x04\xe2", 2));  // 1250
  EXPECT_EQ(Count(file.null_value_counts, 2), 2);  // an empty CSV field, a missing JSON member
  ASSERT_NE(Find(file.lower_bounds, 18), nullptr);
  EXPECT_EQ(Find(file.lower_bounds, 18)->second,
            std::string("\xf7\x9c\x3e\x09\x67\x7c\x4b\xbd\xa4\x79\x3f\x34\x9c\xb7\x85\xe7", 16));
  auto table = ReadOutput(file.file_path);
  EXPECT_EQ(table->GetColumnByName("price")->type()->ToString(), "decimal128(9, 2)");
}

// A Parquet input's text columns are read as their dictionaries and written as such: the values
// come back unchanged whether the file's next rows come with another dictionary (a new row group),
// without one (a CSV file into the same open file), or need converting (text into a uuid column);
// the file's text column is dictionary-encoded, its bounds and null counts are the values'; a
// required text column with a null is refused by row. With the columns encoded in parallel.
TEST_F(ParquetTest, TextColumnsKeepTheirDictionariesAndTheirValues) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names, uids;
  std::vector<std::optional<std::string>> expected_names;
  for (int64_t i = 0; i < 30000; ++i) {
    ASSERT_TRUE(ids.Append(i).ok());
    std::optional<std::string> name;
    if (i % 11 != 4) name = (i < 15000 ? "first-" : "second-") + std::to_string(i % 97) + "-é";
    expected_names.push_back(name);
    ASSERT_TRUE((name ? names.Append(*name) : names.AppendNull()).ok());
    ASSERT_TRUE(uids.Append("f79c3e09-677c-4bbd-a479-3f349cb785" + std::to_string(10 + i % 90)).ok());
  }
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8()),
                     arrow::field("uid", arrow::utf8())}),
      {*ids.Finish(), *names.Finish(), *uids.Finish()});
  // Row groups of 4,000 rows: each with a dictionary of its own.
  const std::string path = (dir_ / "in.parquet").string();
  auto out = arrow::io::FileOutputStream::Open(path);
  ASSERT_TRUE(::parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, 4000).ok());
  ASSERT_TRUE((*out)->Close().ok());
  const std::string csv = WriteText("more.csv", "id,name\n30000,from csv\n30001,\n");

  WriteOptions options;
  options.parallel_columns = true;
  auto writer =
      DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, options, *io_, (dir_ / "d").string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_OK(writer->AppendFile(path, InputFormat::kParquet));
  ASSERT_OK(writer->AppendFile(csv, InputFormat::kCsv));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 1u);
  const iceberg::DataFile& file = (*files)[0];
  EXPECT_EQ(file.record_count, 30002);
  EXPECT_EQ(Count(file.null_value_counts, 2), 2727 + 1);
  EXPECT_EQ(Find(file.lower_bounds, 2)->second, "first-0-é");
  EXPECT_EQ(Find(file.upper_bounds, 2)->second, "second-96-é");

  auto read = ReadOutput(file.file_path)->CombineChunksToBatch();
  ASSERT_TRUE(read.ok());
  auto name = std::static_pointer_cast<arrow::StringArray>((*read)->GetColumnByName("name"));
  auto uid = std::static_pointer_cast<arrow::FixedSizeBinaryArray>((*read)->GetColumnByName("uid"));
  ASSERT_EQ(name->length(), 30002);
  for (int64_t i = 0; i < 30000; ++i) {
    ASSERT_EQ(name->IsNull(i), !expected_names[static_cast<size_t>(i)].has_value()) << i;
    if (!name->IsNull(i)) {
      ASSERT_EQ(name->GetString(i), *expected_names[static_cast<size_t>(i)]) << i;
    }
    const std::string_view bytes = uid->GetView(i);
    ASSERT_EQ(bytes.size(), 16u);
    const int64_t last_two_digits = 10 + i % 90;  // the text's last two hex digits
    ASSERT_EQ(static_cast<uint8_t>(bytes[15]), last_two_digits / 10 * 16 + last_two_digits % 10) << i;
  }
  EXPECT_EQ(name->GetString(30000), "from csv");
  EXPECT_TRUE(name->IsNull(30001));

  // The text column's pages are dictionary pages.
  auto reader = ::parquet::ParquetFileReader::OpenFile(file.file_path);
  auto column = reader->metadata()->RowGroup(0)->ColumnChunk(1);
  EXPECT_TRUE(column->has_dictionary_page());

  // A null in a required text column, read as a dictionary, is refused by its row.
  auto required = iceberg::ParseSchema(R"json({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "name", "required": true, "type": "string"}]})json");
  ASSERT_TRUE(required.ok());
  auto strict =
      DataFileWriter::Make(*required, iceberg::PartitionSpec{}, options, *io_, (dir_ / "s").string());
  ASSERT_TRUE(strict.ok());
  const std::string ids_and_names =
      WriteInput(arrow::Table::Make(arrow::schema({table->schema()->field(0), table->schema()->field(1)}),
                                    {table->column(0), table->column(1)}),
                 "names.parquet");
  const Status refused = strict->AppendFile(ids_and_names, InputFormat::kParquet);
  EXPECT_NE(refused.message().find("names.parquet: row 5, column name: null in a required column"),
            std::string::npos)
      << refused.message();
  strict->AbortAndDelete();
}

TEST_F(ParquetTest, RowsThatDoNotFitNameTheFileRowAndColumn) {
  auto writer = DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                     (dir_ / "d").string());
  ASSERT_TRUE(writer.ok());
  // A required column with a null.
  const std::string nulls = WriteText("nulls.csv", "id,name\n1,a\n,b\n");
  Status status = writer->AppendFile(nulls, InputFormat::kCsv);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("nulls.csv: line 3, column id"), std::string::npos) << status.message();
  // A value too large for an int column.
  arrow::Int64Builder ids, small;
  ASSERT_TRUE(ids.AppendValues({1, 2, 3}).ok());
  ASSERT_TRUE(small.AppendValues({1, 5000000000, 3}).ok());
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("small", arrow::int64())}),
      {*ids.Finish(), *small.Finish()});
  status = writer->AppendFile(WriteInput(table, "wide.parquet"), InputFormat::kParquet);
  EXPECT_NE(status.message().find("wide.parquet: row 2, column small"), std::string::npos)
      << status.message();
  // A column the table does not have.
  status = writer->AppendFile(WriteText("extra.csv", "id,color\n1,red\n"), InputFormat::kCsv);
  EXPECT_NE(status.message().find("extra.csv: column color is not a column of the table"), std::string::npos)
      << status.message();
  // Text that is not a uuid.
  status = writer->AppendFile(WriteText("uuid.csv", "id,uid\n1,not-a-uuid\n"), InputFormat::kCsv);
  EXPECT_NE(status.message().find("uuid.csv: line 2, column uid: \"not-a-uuid\" is not a uuid"),
            std::string::npos)
      << status.message();
  // Not Parquet at all.
  status = writer->AppendFile(WriteText("text.parquet", "hello"), InputFormat::kParquet);
  EXPECT_NE(status.message().find("not a Parquet file"), std::string::npos) << status.message();
  writer->AbortAndDelete();
}

TEST_F(ParquetTest, LongStringBoundsAreTruncatedAndTheUpperOneIncremented) {
  arrow::Int64Builder ids;
  arrow::StringBuilder names;
  ASSERT_TRUE(ids.AppendValues({1, 2}).ok());
  ASSERT_TRUE(names.Append("aaaaaaaaaaaaaaaaaaaaaaaaa").ok());
  ASSERT_TRUE(names.Append("zzzzzzzzzzzzzzzzzzzzzzzzzzz").ok());
  auto table = arrow::Table::Make(
      arrow::schema({arrow::field("id", arrow::int64()), arrow::field("name", arrow::utf8())}),
      {*ids.Finish(), *names.Finish()});
  auto options = WriteOptions::FromTableProperties({{"write.metadata.metrics.column.id", "counts"}});
  ASSERT_TRUE(options.ok());
  auto writer =
      DataFileWriter::Make(TableSchema(), iceberg::PartitionSpec{}, *options, *io_, (dir_ / "d").string());
  ASSERT_TRUE(writer.ok());
  ASSERT_OK(writer->AppendFile(WriteInput(table, "in.parquet"), InputFormat::kParquet));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok());
  const iceberg::DataFile& file = (*files)[0];
  EXPECT_EQ(Find(file.lower_bounds, 2)->second, std::string(16, 'a'));
  EXPECT_EQ(Find(file.upper_bounds, 2)->second, std::string(15, 'z') + "{");
  EXPECT_EQ(Find(file.lower_bounds, 1), nullptr);  // counts only
  EXPECT_EQ(Count(file.value_counts, 1), 2);
}

TEST(ParquetOptions, TablePropertiesAreReadOrRefusedByName) {
  auto options = WriteOptions::FromTableProperties({{"write.target-file-size-bytes", "1048576"},
                                                    {"write.parquet.compression-codec", "SNAPPY"},
                                                    {"write.metadata.metrics.default", "truncate(8)"}});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->target_file_size_bytes, 1048576);
  EXPECT_EQ(options->compression_codec, "snappy");
  EXPECT_EQ(options->default_metrics.length, 8);
  auto bad = WriteOptions::FromTableProperties({{"write.parquet.compression-codec", "lzo"}});
  EXPECT_NE(bad.status().message().find("write.parquet.compression-codec"), std::string::npos);
  bad = WriteOptions::FromTableProperties({{"write.target-file-size-bytes", "-1"}});
  EXPECT_NE(bad.status().message().find("write.target-file-size-bytes"), std::string::npos);
  EXPECT_FALSE(MetricsMode::Parse("truncate(0)").ok());
  EXPECT_EQ(MetricsMode::Parse("Full")->kind, MetricsMode::Kind::kFull);
  EXPECT_NE(InputFormatOfPath("x/y.txt").status().message().find("give --format"), std::string::npos);
  EXPECT_EQ(*InputFormatOfPath("x/y.jsonl"), InputFormat::kJsonLines);
}

// A file written under a table's first schema, read by field id in the schema it evolved to: a
// renamed column keeps its values, int and float widen, a decimal gains precision, a column added
// with an initial-default reads as it (one without, null), a dropped one goes, a struct gains a field.
TEST_F(ParquetTest, TableFilesAreReadByFieldIdInTheCurrentSchema) {
  auto first = iceberg::ParseSchema(R"json({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "int"},
      {"id": 2, "name": "name", "required": false, "type": "string"},
      {"id": 3, "name": "score", "required": false, "type": "float"},
      {"id": 4, "name": "price", "required": false, "type": "decimal(9, 2)"},
      {"id": 5, "name": "gone", "required": false, "type": "string"},
      {"id": 6, "name": "point", "required": false, "type": {"type": "struct", "fields": [
          {"id": 7, "name": "x", "required": true, "type": "int"}]}}]})json");
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto evolved = iceberg::ParseSchema(R"json({"type": "struct", "schema-id": 3, "fields": [
      {"id": 4, "name": "amount", "required": false, "type": "decimal(20, 2)"},
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "full_name", "required": false, "type": "string"},
      {"id": 3, "name": "score", "required": false, "type": "double"},
      {"id": 8, "name": "region", "required": true, "type": "string", "initial-default": "eu"},
      {"id": 9, "name": "note", "required": false, "type": "string"},
      {"id": 6, "name": "point", "required": false, "type": {"type": "struct", "fields": [
          {"id": 7, "name": "x", "required": true, "type": "long"},
          {"id": 10, "name": "y", "required": false, "type": "int", "initial-default": 7}]}}]})json");
  ASSERT_TRUE(evolved.ok()) << evolved.status().message();

  auto old_writer = DataFileWriter::Make(*first, iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                         (dir_ / "table/data").string());
  ASSERT_TRUE(old_writer.ok()) << old_writer.status().message();
  const std::string rows = WriteText("old.jsonl",
                                     "{\"id\": 1, \"name\": \"ann\", \"score\": 1.5, \"price\": \"12.34\", "
                                     "\"gone\": \"x\", \"point\": {\"x\": 3}}\n"
                                     "{\"id\": 2, \"name\": null, \"score\": null, \"price\": null, "
                                     "\"gone\": null, \"point\": {\"x\": 4}}\n");
  ASSERT_OK(old_writer->AppendFile(rows, InputFormat::kJsonLines));
  auto old_files = old_writer->Finish();
  ASSERT_TRUE(old_files.ok()) << old_files.status().message();
  ASSERT_EQ(old_files->size(), 1u);

  auto writer = DataFileWriter::Make(*evolved, iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                     (dir_ / "table/data").string());
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_OK(writer->AppendTableFile((*old_files)[0].file_path, *io_));
  auto files = writer->Finish();
  ASSERT_TRUE(files.ok()) << files.status().message();
  ASSERT_EQ(files->size(), 1u);
  std::string path = (*files)[0].file_path;
  if (path.rfind("file://", 0) == 0) path = path.substr(7);
  const std::shared_ptr<arrow::Table> table = ReadOutput(path);
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->num_rows(), 2);
  std::vector<std::string> names;
  for (const auto& field : table->schema()->fields()) names.push_back(field->name());
  EXPECT_EQ(names,
            (std::vector<std::string>{"amount", "id", "full_name", "score", "region", "note", "point"}));
  auto combined = table->CombineChunksToBatch();
  ASSERT_TRUE(combined.ok());
  const arrow::RecordBatch& batch = **combined;
  EXPECT_TRUE(batch.column(0)->type()->Equals(*arrow::decimal128(20, 2)));
  EXPECT_EQ(static_cast<const arrow::Decimal128Array&>(*batch.column(0)).FormatValue(0), "12.34");
  EXPECT_TRUE(batch.column(0)->IsNull(1));
  EXPECT_EQ(batch.column(1)->type()->id(), arrow::Type::INT64);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*batch.column(1)).Value(1), 2);
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*batch.column(2)).GetString(0), "ann");
  EXPECT_TRUE(batch.column(2)->IsNull(1));
  EXPECT_EQ(static_cast<const arrow::DoubleArray&>(*batch.column(3)).Value(0), 1.5);
  EXPECT_EQ(static_cast<const arrow::StringArray&>(*batch.column(4)).GetString(1), "eu");
  EXPECT_EQ(batch.column(5)->null_count(), 2);
  const auto& point = static_cast<const arrow::StructArray&>(*batch.column(6));
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*point.field(0)).Value(0), 3);
  EXPECT_EQ(static_cast<const arrow::Int64Array&>(*point.field(0)).Value(1), 4);
  EXPECT_EQ(static_cast<const arrow::Int32Array&>(*point.field(1)).Value(0), 7);
  EXPECT_EQ((*files)[0].record_count, 2);

  // A required column the file lacks, without a default, cannot be read from it.
  auto strict = iceberg::ParseSchema(R"json({"type": "struct", "schema-id": 4, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 11, "name": "must", "required": true, "type": "string"}]})json");
  ASSERT_TRUE(strict.ok());
  auto refusing = DataFileWriter::Make(*strict, iceberg::PartitionSpec{}, WriteOptions{}, *io_,
                                       (dir_ / "table/data").string());
  ASSERT_TRUE(refusing.ok());
  const Status refused = refusing->AppendTableFile((*old_files)[0].file_path, *io_);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("column must"), std::string::npos) << refused.message();
  refusing->AbortAndDelete();
}

}  // namespace
}  // namespace serac::parquet
