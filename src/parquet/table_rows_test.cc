// A snapshot's rows as display text (parquet/table_rows.h): every type at its limits, nulls at
// every depth, and tables with position deletes, equality deletes and deletion vectors read with
// Iceberg's sequence-number rules, in tables in memory with real Parquet files on local disk.
#include "parquet/table_rows.h"

#include <arrow/api.h>
#include <arrow/io/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>
#include <parquet/arrow/writer.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "iceberg/scan/table_files.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/snapshot_producer.h"
#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"

namespace serac::parquet {
namespace {

using iceberg::Datum;
using iceberg::Type;
using iceberg::TypeId;

Type Of(TypeId id) { return Type{id}; }

Type Decimal(int32_t precision, int32_t scale) {
  Type type{TypeId::kDecimal};
  type.precision = precision;
  type.scale = scale;
  return type;
}

// A decimal's unscaled value as a Datum holds it (big-endian two's complement).
Datum Unscaled(__int128 value) {
  std::string bytes;
  for (int i = 15; i >= 0; --i) {
    bytes.push_back(static_cast<char>((static_cast<unsigned __int128>(value) >> (8 * i)) & 0xFF));
  }
  return Datum(bytes);
}

std::string Text(const Type& type, const Datum& value, const CellLimits& limits = {}) {
  std::optional<std::string> text = CellText(type, value, limits);
  return text.value_or("<null>");
}

const std::string kEllipsis = "\xE2\x80\xA6";

TEST(CellText, NumbersAtTheirLimits) {
  EXPECT_EQ(Text(Of(TypeId::kInt), Datum(std::numeric_limits<int32_t>::min())), "-2147483648");
  EXPECT_EQ(Text(Of(TypeId::kLong), Datum(std::numeric_limits<int64_t>::max())), "9223372036854775807");
  EXPECT_EQ(Text(Of(TypeId::kLong), Datum(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(Text(Of(TypeId::kBoolean), Datum(true)), "true");
  EXPECT_EQ(Text(Of(TypeId::kBoolean), Datum(false)), "false");
  // Floats: the shortest text that reads back the same value.
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(0.1)), "0.1");
  EXPECT_EQ(Text(Of(TypeId::kFloat), Datum(0.1F)), "0.1");
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(1.5)), "1.5");
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(-0.0)), "-0");
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(std::numeric_limits<double>::max())), "1.7976931348623157e+308");
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(std::numeric_limits<double>::denorm_min())), "5e-324");
  EXPECT_EQ(Text(Of(TypeId::kFloat), Datum(std::numeric_limits<float>::max())), "3.4028235e+38");
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(std::nan(""))), "NaN");
  EXPECT_EQ(Text(Of(TypeId::kFloat), Datum(std::numeric_limits<float>::quiet_NaN())), "NaN");
  EXPECT_EQ(Text(Of(TypeId::kDouble), Datum(std::numeric_limits<double>::infinity())), "Infinity");
  EXPECT_EQ(Text(Of(TypeId::kFloat), Datum(-std::numeric_limits<float>::infinity())), "-Infinity");
}

TEST(CellText, DecimalsAreExactWithTheirScale) {
  __int128 nines = 0;
  for (int i = 0; i < 38; ++i) nines = nines * 10 + 9;
  EXPECT_EQ(Text(Decimal(38, 10), Unscaled(nines)), "9999999999999999999999999999.9999999999");
  EXPECT_EQ(Text(Decimal(38, 10), Unscaled(-nines)), "-9999999999999999999999999999.9999999999");
  EXPECT_EQ(Text(Decimal(38, 0), Unscaled(nines)), "99999999999999999999999999999999999999");
  EXPECT_EQ(Text(Decimal(38, 38), Unscaled(-nines)), "-0.99999999999999999999999999999999999999");
  EXPECT_EQ(Text(Decimal(38, 38), Unscaled(1)), "0.00000000000000000000000000000000000001");
  EXPECT_EQ(Text(Decimal(9, 2), Unscaled(5)), "0.05");
  EXPECT_EQ(Text(Decimal(9, 2), Unscaled(-5)), "-0.05");
  EXPECT_EQ(Text(Decimal(9, 2), Unscaled(0)), "0.00");
  EXPECT_EQ(Text(Decimal(9, 2), Datum(std::string("\x30\x39", 2))), "123.45");  // fewest bytes
}

TEST(CellText, DatesTimesAndTimestampsAtTheirLimits) {
  EXPECT_EQ(Text(Of(TypeId::kDate), Datum(int32_t{0})), "1970-01-01");
  EXPECT_EQ(Text(Of(TypeId::kDate), Datum(int32_t{-1})), "1969-12-31");
  EXPECT_EQ(Text(Of(TypeId::kDate), Datum(int32_t{2932896})), "9999-12-31");
  EXPECT_EQ(Text(Of(TypeId::kDate), Datum(int32_t{2932897})), "+10000-01-01");
  EXPECT_EQ(Text(Of(TypeId::kDate), Datum(int32_t{-719528})), "0000-01-01");
  EXPECT_EQ(Text(Of(TypeId::kTime), Datum(int64_t{0})), "00:00:00.000000");
  EXPECT_EQ(Text(Of(TypeId::kTime), Datum(int64_t{86'399'999'999})), "23:59:59.999999");
  EXPECT_EQ(Text(Of(TypeId::kTimestamp), Datum(int64_t{0})), "1970-01-01T00:00:00.000000");
  EXPECT_EQ(Text(Of(TypeId::kTimestamp), Datum(int64_t{-1})), "1969-12-31T23:59:59.999999");
  EXPECT_EQ(Text(Of(TypeId::kTimestampTz), Datum(int64_t{1'700'000'000'123'456})),
            "2023-11-14T22:13:20.123456+00:00");
  EXPECT_EQ(Text(Of(TypeId::kTimestamp), Datum(std::numeric_limits<int64_t>::max())),
            "+294247-01-10T04:00:54.775807");
  EXPECT_EQ(Text(Of(TypeId::kTimestampTz), Datum(std::numeric_limits<int64_t>::min())),
            "-290308-12-21T19:59:05.224192+00:00");
  EXPECT_EQ(Text(Of(TypeId::kTimestampNs), Datum(std::numeric_limits<int64_t>::max())),
            "2262-04-11T23:47:16.854775807");
  EXPECT_EQ(Text(Of(TypeId::kTimestampTzNs), Datum(std::numeric_limits<int64_t>::min())),
            "1677-09-21T00:12:43.145224192+00:00");
  EXPECT_EQ(Text(Of(TypeId::kTimestampNs), Datum(int64_t{1})), "1970-01-01T00:00:00.000000001");
}

TEST(CellText, StringsAreCutOnACharacterAndBytesShownAsHex) {
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(std::string())), "");  // empty, not null
  EXPECT_EQ(Text(Of(TypeId::kString), Datum()), "<null>");
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(std::string("caf\xC3\xA9 \xF0\x9F\x98\x80"))),
            "caf\xC3\xA9 \xF0\x9F\x98\x80");
  const std::string exact(1024, 'x');
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(exact)), exact);
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(exact + "y")), exact + kEllipsis);
  // A four-byte character across the cut is left out whole.
  const std::string across = std::string(1022, 'x') + "\xF0\x9F\x98\x80" + "tail";
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(across)), std::string(1022, 'x') + kEllipsis);
  const std::string huge(10 << 20, 'z');
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(huge)).size(), 1024 + kEllipsis.size());
  EXPECT_EQ(Text(Of(TypeId::kString), Datum(std::string("ab")), CellLimits{.text_bytes_max = 1}),
            "a" + kEllipsis);

  EXPECT_EQ(Text(Of(TypeId::kBinary), Datum(std::string("\x00\xff\x10", 3))), "00ff10");
  EXPECT_EQ(Text(Of(TypeId::kBinary), Datum(std::string())), "");
  Type fixed{TypeId::kFixed};
  fixed.length = 65;
  std::string shown;
  for (int i = 0; i < 64; ++i) shown += "ab";
  EXPECT_EQ(Text(Of(TypeId::kBinary), Datum(std::string(64, '\xab'))), shown);
  EXPECT_EQ(Text(fixed, Datum(std::string(65, '\xab'))), shown + kEllipsis);
  EXPECT_EQ(
      Text(Of(TypeId::kUuid), Datum(std::string("\x12\x34\x56\x78\x9a\xbc\xde\xf0\x01\x23\x45\x67\x89\xab"
                                                "\xcd\xef",
                                                16))),
      "12345678-9abc-def0-0123-456789abcdef");
}

// ---- Tables in memory, files on local disk ----

class TableRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "table_rows_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    io_ = iceberg::MakeLocalFileIO();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Create(const std::string& schema, const std::string& spec, int format_version) {
    const std::string body = R"({"name": "t", "schema": )" + schema + R"(, "partition-spec": )" + spec +
                             R"(, "properties": {"format-version": ")" + std::to_string(format_version) +
                             R"("}})";
    auto creation = iceberg::TableCreation::Parse(body);
    ASSERT_TRUE(creation.ok()) << creation.status().ToString();
    auto metadata = creation->NewMetadata("file://" + dir_ + "/t", "6f0b6c8c-0000-4000-8000-000000000009",
                                          1'700'000'000'000);
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    catalog_ = std::make_unique<iceberg::MemoryTableCatalog>(std::move(metadata).value());
  }

  const iceberg::TableMetadata& Table() { return catalog_->metadata(); }

  WriteOptions Options() {
    auto options = WriteOptions::FromTableProperties(Table().properties());
    EXPECT_TRUE(options.ok());
    return options.ok() ? *options : WriteOptions{};
  }

  // The rows of a local input file (`kind`: csv or parquet) appended as the table's data files.
  std::vector<iceberg::DataFile> Append(const std::string& path, InputFormat format) {
    auto writer = DataFileWriter::Make(Table().CurrentSchema(), Table().DefaultSpec(), Options(), *io_,
                                       dir_ + "/t/data");
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    if (!writer.ok()) return {};
    Status appended = writer->AppendFile(path, format);
    EXPECT_TRUE(appended.ok()) << appended.ToString();
    auto files = writer->Finish();
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    if (!files.ok()) return {};
    iceberg::SnapshotProducer append(*io_, iceberg::ProducerKind::kAppend);
    for (const iceberg::DataFile& file : *files) append.AddDataFile(file);
    auto committed = iceberg::CommitSnapshot(*catalog_, kTable, append);
    EXPECT_TRUE(committed.ok()) << committed.status().ToString();
    return *files;
  }

  std::vector<iceberg::DataFile> AppendCsv(const std::string& csv) {
    const std::string path = dir_ + "/in-" + std::to_string(inputs_++) + ".csv";
    std::ofstream(path) << csv;
    return Append(path, InputFormat::kCsv);
  }

  void CommitDeletes(const std::vector<iceberg::DataFile>& deletes) {
    iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
    for (const iceberg::DataFile& file : deletes) delta.AddDeleteFile(file);
    auto committed = iceberg::CommitSnapshot(*catalog_, kTable, delta);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  }

  TableRows Read(uint64_t rows_max = 1000) {
    TableRowsOptions options;
    options.rows_max = rows_max;
    auto rows = ReadTableRows(*io_, Table(), Table().current_snapshot_id(), options);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? std::move(rows).value() : TableRows{};
  }

  // The first cell of every row, sorted.
  static std::vector<std::string> Ids(const TableRows& rows) {
    std::vector<std::string> ids;
    for (const CellRow& row : rows.rows) ids.push_back(row.at(0).value_or("null"));
    std::sort(ids.begin(), ids.end(),
              [](const std::string& a, const std::string& b) { return std::stoll(a) < std::stoll(b); });
    return ids;
  }

  const iceberg::TableRef kTable{{"db"}, "t"};
  std::string dir_;
  int inputs_ = 0;
  std::unique_ptr<iceberg::FileIO> io_;
  std::unique_ptr<iceberg::MemoryTableCatalog> catalog_;
};

constexpr char kKeyedSchema[] = R"({"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "category", "required": false, "type": "string"}]})";
constexpr char kByCategory[] = R"({"spec-id": 0, "fields": [
    {"source-id": 2, "field-id": 1000, "name": "category", "transform": "identity"}]})";

std::string IdRows(int64_t first, int64_t last) {
  std::string csv = "id,category\n";
  for (int64_t id = first; id <= last; ++id) csv += std::to_string(id) + "," + (id % 2 ? "b" : "a") + "\n";
  return csv;
}

TEST_F(TableRowsTest, PositionAndEqualityDeletesApplyByTheirSequenceNumbers) {
  Create(kKeyedSchema, kByCategory, 2);
  std::vector<iceberg::DataFile> first = AppendCsv(IdRows(0, 9));
  ASSERT_EQ(first.size(), 2u);
  const iceberg::DataFile& a = std::get<std::string>(first[0].partition[0]) == "a" ? first[0] : first[1];
  // Rows 0 and 2 of partition a (ids 0 and 4) by position; id 3 (partition b) by equality.
  auto positions = WritePositionDeletes(*io_, dir_ + "/t/data/pos.parquet", a, {0, 2}, Options());
  ASSERT_TRUE(positions.ok()) << positions.status().ToString();
  const std::string keys_path = dir_ + "/keys.csv";
  std::ofstream(keys_path) << "id,category\n3,b\n";
  auto keys = RowKeys::Read(keys_path, InputFormat::kCsv, Table().CurrentSchema());
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  auto equality = WriteEqualityDeletes(*io_, keys_path, InputFormat::kCsv, *keys, Table().DefaultSpec(),
                                       Options(), dir_ + "/t/data");
  ASSERT_TRUE(equality.ok()) << equality.status().ToString();
  std::vector<iceberg::DataFile> deletes = *equality;
  deletes.push_back(*positions);
  CommitDeletes(deletes);
  // Written again after the deletes: an equality delete of an earlier commit does not remove it.
  AppendCsv(IdRows(3, 3));

  TableRows rows = Read();
  EXPECT_EQ(Ids(rows), (std::vector<std::string>{"1", "2", "3", "5", "6", "7", "8", "9"}));
  EXPECT_EQ(rows.delete_files_applied, 2);
  EXPECT_FALSE(rows.stopped_at_bytes);
  ASSERT_EQ(rows.schema.fields.size(), 2u);

  // Reading stops at rows_max.
  EXPECT_EQ(Read(3).rows.size(), 3u);
  // An older snapshot reads as it was.
  const int64_t first_snapshot = Table().Snapshots().front().snapshot_id;
  auto old = ReadTableRows(*io_, Table(), first_snapshot);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(Ids(*old).size(), 10u);
  EXPECT_EQ(old->delete_files_applied, 0);
  // A snapshot the table does not have.
  EXPECT_EQ(ReadTableRows(*io_, Table(), 42).status().code(), ErrorCode::kNotFound);
}

TEST_F(TableRowsTest, DeletionVectorsRemoveTheirRows) {
  Create(kKeyedSchema, R"({"spec-id": 0, "fields": []})", 3);
  std::vector<iceberg::DataFile> files = AppendCsv(IdRows(0, 99));
  ASSERT_EQ(files.size(), 1u);
  std::vector<iceberg::DataFileDeletes> dvs(1);
  dvs[0].data_file = files[0];
  for (int64_t position = 0; position < 100; position += 2) ASSERT_TRUE(dvs[0].positions.Add(position).ok());
  auto written = iceberg::WriteDeletionVectors(*io_, dir_ + "/t/data/dv.puffin", dvs);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  CommitDeletes(*written);
  TableRows rows = Read();
  ASSERT_EQ(rows.rows.size(), 50u);
  EXPECT_EQ(Ids(rows).front(), "1");
  EXPECT_EQ(Ids(rows).back(), "99");
  EXPECT_EQ(rows.delete_files_applied, 1);
}

TEST_F(TableRowsTest, AMissingDataFileIsNamed) {
  Create(kKeyedSchema, R"({"spec-id": 0, "fields": []})", 2);
  std::vector<iceberg::DataFile> files = AppendCsv(IdRows(0, 3));
  ASSERT_EQ(files.size(), 1u);
  const std::string& path = files[0].file_path;
  ASSERT_TRUE(std::filesystem::remove(path));
  auto rows = ReadTableRows(*io_, Table(), Table().current_snapshot_id());
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), ErrorCode::kNotFound) << rows.status().ToString();
  EXPECT_NE(rows.status().message().find(path), std::string::npos) << rows.status().ToString();
}

// A Parquet input file of the table's columns, built from JSON per column.
std::string WriteParquet(const std::string& path, const arrow::FieldVector& fields,
                         const std::vector<std::string>& columns_json) {
  arrow::ArrayVector arrays;
  for (size_t c = 0; c < fields.size(); ++c) {
    auto array = arrow::json::ArrayFromJSONString(fields[c]->type(), columns_json[c]);
    EXPECT_TRUE(array.ok()) << fields[c]->name() << ": " << array.status().ToString();
    arrays.push_back(*array);
  }
  auto table = arrow::Table::Make(arrow::schema(fields), arrays);
  auto out = arrow::io::FileOutputStream::Open(path);
  EXPECT_TRUE(out.ok());
  EXPECT_TRUE(::parquet::arrow::WriteTable(*table, arrow::default_memory_pool(), *out, 1 << 20).ok());
  EXPECT_TRUE((*out)->Close().ok());
  return path;
}

TEST_F(TableRowsTest, EveryTypeAndNullsAtEveryDepthAreRendered) {
  Create(R"json({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "dec", "required": false, "type": "decimal(38, 10)"},
      {"id": 3, "name": "ts", "required": false, "type": "timestamptz"},
      {"id": 4, "name": "s", "required": false, "type": "string"},
      {"id": 5, "name": "bin", "required": false, "type": "binary"},
      {"id": 6, "name": "f", "required": false, "type": "double"},
      {"id": 7, "name": "st", "required": false, "type": {"type": "struct", "fields": [
          {"id": 8, "name": "x", "required": false, "type": "int"},
          {"id": 9, "name": "y", "required": false, "type": "string"}]}},
      {"id": 10, "name": "li", "required": false, "type": {"type": "list", "element-id": 11,
          "element": "long", "element-required": false}},
      {"id": 12, "name": "m", "required": false, "type": {"type": "map", "key-id": 13, "key": "string",
          "value-id": 14, "value": "date", "value-required": false}},
      {"id": 15, "name": "day", "required": false, "type": "date"},
      {"id": 16, "name": "b", "required": false, "type": "boolean"}]})json",
         R"({"spec-id": 0, "fields": []})", 2);
  const arrow::FieldVector fields = {
      arrow::field("id", arrow::int64(), false),
      arrow::field("dec", arrow::decimal128(38, 10)),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO, "UTC")),
      arrow::field("s", arrow::utf8()),
      arrow::field("bin", arrow::binary()),
      arrow::field("f", arrow::float64()),
      arrow::field("st",
                   arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("y", arrow::utf8())})),
      arrow::field("li", arrow::list(arrow::int64())),
      arrow::field("m", arrow::map(arrow::utf8(), arrow::date32())),
      arrow::field("day", arrow::date32()),
      arrow::field("b", arrow::boolean()),
  };
  const std::string long_text(2000, 'q');
  const std::string path = WriteParquet(
      dir_ + "/every.parquet", fields,
      {"[1, 2, 3]",
       R"(["9999999999999999999999999999.9999999999", null, "-9999999999999999999999999999.9999999999"])",
       "[0, null, -1]", R"(["caf\u00e9 \"quoted\"", null, ")" + long_text + R"("])", R"(["AB", null, ""])",
       "[NaN, null, -0.5]", R"([{"x": 1, "y": "a\"b"}, null, {"x": null, "y": null}])",
       "[[1, null, 3], null, []]", R"([[["k", 0]], null, [["n", null]]])", "[0, null, -1]",
       "[true, null, false]"});
  Append(path, InputFormat::kParquet);
  TableRows rows = Read();
  ASSERT_EQ(rows.rows.size(), 3u);
  std::sort(rows.rows.begin(), rows.rows.end(),
            [](const CellRow& x, const CellRow& y) { return *x[0] < *y[0]; });
  const CellRow& full = rows.rows[0];
  EXPECT_EQ(full[1], "9999999999999999999999999999.9999999999");
  EXPECT_EQ(full[2], "1970-01-01T00:00:00.000000+00:00");
  EXPECT_EQ(full[3], "caf\xC3\xA9 \"quoted\"");
  EXPECT_EQ(full[4], "4142");
  EXPECT_EQ(full[5], "NaN");
  EXPECT_EQ(full[6], R"({"x":"1","y":"a\"b"})");
  EXPECT_EQ(full[7], R"(["1",null,"3"])");
  EXPECT_EQ(full[8], R"({"k":"1970-01-01"})");
  EXPECT_EQ(full[9], "1970-01-01");
  EXPECT_EQ(full[10], "true");
  const CellRow& nulls = rows.rows[1];
  EXPECT_EQ(nulls[0], "2");
  for (size_t c = 1; c < nulls.size(); ++c) EXPECT_EQ(nulls[c], std::nullopt) << c;
  const CellRow& low = rows.rows[2];
  EXPECT_EQ(low[1], "-9999999999999999999999999999.9999999999");
  EXPECT_EQ(low[2], "1969-12-31T23:59:59.999999+00:00");
  EXPECT_EQ(low[3], std::string(1024, 'q') + kEllipsis);
  EXPECT_EQ(low[4], "");
  EXPECT_EQ(low[5], "-0.5");
  EXPECT_EQ(low[6], R"({"x":null,"y":null})");
  EXPECT_EQ(low[7], "[]");
  EXPECT_EQ(low[8], R"({"n":null})");
  EXPECT_EQ(low[9], "1969-12-31");
  EXPECT_EQ(low[10], "false");
}

TEST_F(TableRowsTest, ALongListEndsWithAnEllipsis) {
  Create(R"({"type": "struct", "schema-id": 0, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "li", "required": false, "type": {"type": "list", "element-id": 3,
          "element": "string", "element-required": false}}]})",
         R"({"spec-id": 0, "fields": []})", 2);
  std::string elements;
  for (int i = 0; i < 1000; ++i) elements += std::string(elements.empty() ? "" : ",") + "\"element\"";
  const std::string path = WriteParquet(
      dir_ + "/list.parquet",
      {arrow::field("id", arrow::int64(), false), arrow::field("li", arrow::list(arrow::utf8()))},
      {"[1]", "[[" + elements + "]]"});
  Append(path, InputFormat::kParquet);
  TableRows rows = Read();
  ASSERT_EQ(rows.rows.size(), 1u);
  const std::string& cell = *rows.rows[0][1];
  EXPECT_LE(cell.size(), 1024u + 32u);
  EXPECT_TRUE(cell.ends_with(",\"" + kEllipsis + "\"]")) << cell;
}

}  // namespace
}  // namespace serac::parquet
