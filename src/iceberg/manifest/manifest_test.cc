#include "iceberg/manifest/manifest.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/encoding.h"

namespace serac::iceberg {
namespace {

Schema TestSchema() {
  auto schema = ParseSchema(R"json({"type": "struct", "schema-id": 3, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "ts", "required": false, "type": "timestamptz"},
      {"id": 3, "name": "name", "required": false, "type": "string"},
      {"id": 4, "name": "price", "required": false, "type": "decimal(20, 2)"},
      {"id": 5, "name": "key", "required": false, "type": "uuid"},
      {"id": 6, "name": "score", "required": false, "type": "double"}]})json");
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  return *schema;
}

PartitionSpec TestSpec() {
  PartitionSpec spec;
  spec.spec_id = 2;
  spec.fields = {{{2}, 1000, "ts_day", "day"},     {{3}, 1001, "name_bucket", "bucket[8]"},
                 {{4}, 1002, "price", "identity"}, {{5}, 1003, "key", "identity"},
                 {{6}, 1004, "score", "identity"}, {{3}, 1005, "name-trunc", "truncate[2]"}};
  return spec;
}

DataFile TestFile(std::string path, int64_t records, int32_t day, std::string price_unscaled) {
  DataFile file;
  file.file_path = std::move(path);
  file.partition = {Datum(day),
                    Datum(int32_t{3}),
                    Datum(std::move(price_unscaled)),
                    Datum(*HexDecode("f79c3e09677c4bbda4793f349cb785e7")),
                    Datum(records == 10 ? std::nan("") : 1.5),
                    Datum{}};
  file.record_count = records;
  file.file_size_in_bytes = records * 100;
  file.column_sizes = {{1, 40}, {2, 80}};
  file.value_counts = {{1, records}, {2, records}};
  file.null_value_counts = {{1, 0}, {2, 1}};
  file.nan_value_counts = {{6, 0}};
  file.lower_bounds = {{1, std::string("\x01\0\0\0\0\0\0\0", 8)}};
  file.upper_bounds = {{1, std::string("\x09\0\0\0\0\0\0\0", 8)}};
  file.split_offsets = {4};
  file.sort_order_id = 0;
  return file;
}

ManifestWriter::Written WriteTestManifest(int version, int64_t snapshot_id) {
  ManifestWriterOptions options;
  options.format_version = version;
  options.snapshot_id = snapshot_id;
  auto writer = ManifestWriter::Make(TestSchema(), TestSpec(), options);
  EXPECT_TRUE(writer.ok()) << writer.status().message();
  ManifestEntry added;
  added.file = TestFile("s3://wh/t/data/a.parquet", 10, 17486, *HexDecode("0100"));
  EXPECT_TRUE(writer->Add(added).ok());
  ManifestEntry existing;
  existing.status = EntryStatus::kExisting;
  existing.snapshot_id = 5;
  existing.sequence_number = 2;
  existing.file_sequence_number = 3;
  existing.file = TestFile("s3://wh/t/data/b.parquet", 20, 17480, *HexDecode("ff"));
  EXPECT_TRUE(writer->Add(existing).ok());
  ManifestEntry deleted = existing;
  deleted.status = EntryStatus::kDeleted;
  deleted.file = TestFile("s3://wh/t/data/c.parquet", 30, 17490, *HexDecode("7f"));
  EXPECT_TRUE(writer->Add(deleted).ok());
  auto written = writer->Finish("s3://wh/t/metadata/m0.avro");
  EXPECT_TRUE(written.ok()) << written.status().message();
  return *written;
}

TEST(Manifest, WrittenAsJavaWritesThemAndReadBack) {
  for (int version : {1, 2, 3}) {
    SCOPED_TRACE("format v" + std::to_string(version));
    const ManifestWriter::Written written = WriteTestManifest(version, 77);
    const ManifestFile& m = written.manifest;
    EXPECT_EQ(m.manifest_length, static_cast<int64_t>(written.bytes.size()));
    EXPECT_EQ(m.partition_spec_id, 2);
    EXPECT_EQ(m.added_snapshot_id, 77);
    EXPECT_EQ(m.added_files_count, 1);
    EXPECT_EQ(m.existing_files_count, 1);
    EXPECT_EQ(m.deleted_files_count, 1);
    EXPECT_EQ(m.added_rows_count, 10);
    EXPECT_EQ(m.existing_rows_count, 20);
    EXPECT_EQ(m.deleted_rows_count, 30);
    EXPECT_EQ(m.sequence_number, kUnassignedSequenceNumber);
    EXPECT_EQ(m.min_sequence_number, 2);  // the existing entry's; the added one is unassigned
    ASSERT_EQ(m.partitions.size(), 6u);
    // day: 17480 .. 17490 (deleted entries count, as Java's writer counts them)
    EXPECT_EQ(m.partitions[0].lower_bound, std::string("\x48\x44\0\0", 4));
    EXPECT_EQ(m.partitions[0].upper_bound, std::string("\x52\x44\0\0", 4));
    EXPECT_FALSE(m.partitions[0].contains_null);
    EXPECT_EQ(m.partitions[2].lower_bound, *HexDecode("ff"));  // -1 < 127 < 256
    EXPECT_EQ(m.partitions[2].upper_bound, *HexDecode("0100"));
    EXPECT_EQ(m.partitions[4].contains_nan, true);
    EXPECT_EQ(m.partitions[4].lower_bound, m.partitions[4].upper_bound);  // 1.5 only
    EXPECT_TRUE(m.partitions[5].contains_null);
    EXPECT_FALSE(m.partitions[5].lower_bound.has_value());

    // The header says what Java's does.
    auto file = avro::FileReader::Open(written.bytes);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(*file->FindMetadata("format-version"), std::to_string(version));
    EXPECT_EQ(*file->FindMetadata("partition-spec-id"), "2");
    EXPECT_EQ(*file->FindMetadata("schema-id"), "3");
    EXPECT_EQ(file->FindMetadata("content") != nullptr, version >= 2);
    EXPECT_EQ(file->codec(), avro::Codec::kDeflate);
    const std::string schema = avro::SchemaToJson(*file->schema());
    EXPECT_NE(schema.find(R"("name":"r102")"), std::string::npos) << schema;
    EXPECT_NE(schema.find(R"("name":"k117_v118")"), std::string::npos) << schema;
    EXPECT_NE(schema.find(R"("name":"name_x2Dtrunc")"), std::string::npos) << schema;
    EXPECT_NE(schema.find(R"("iceberg-field-name":"name-trunc")"), std::string::npos) << schema;
    EXPECT_NE(
        schema.find(R"("name":"decimal_20_2","size":9,"logicalType":"decimal","precision":20,"scale":2)"),
        std::string::npos)
        << schema;

    ManifestFile listed = m;
    listed.sequence_number = 9;
    listed.min_sequence_number = 2;
    if (version == 1) listed.sequence_number = listed.min_sequence_number = 0;
    if (version == 3) listed.first_row_id = 1000;
    auto read = ReadManifest(written.bytes, listed);
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_EQ(read->format_version, version);
    EXPECT_EQ(read->partition_spec_id, 2);
    EXPECT_NE(read->partition_spec_json.find(R"("transform":"bucket[8]")"), std::string::npos);
    ASSERT_EQ(read->entries.size(), 3u);
    const ManifestEntry& a = read->entries[0];
    EXPECT_EQ(a.status, EntryStatus::kAdded);
    EXPECT_EQ(a.snapshot_id, 77);  // inherited (or written, in v1)
    EXPECT_EQ(a.sequence_number, version == 1 ? 0 : 9);
    EXPECT_EQ(a.file_sequence_number, version == 1 ? 0 : 9);
    EXPECT_EQ(a.file.file_path, "s3://wh/t/data/a.parquet");
    EXPECT_EQ(a.file.file_format, "PARQUET");
    EXPECT_EQ(a.file.record_count, 10);
    EXPECT_EQ(a.file.column_sizes, (ColumnCounts{{1, 40}, {2, 80}}));
    EXPECT_EQ(a.file.lower_bounds, (ColumnBounds{{1, std::string("\x01\0\0\0\0\0\0\0", 8)}}));
    EXPECT_EQ(a.file.split_offsets, std::vector<int64_t>{4});
    EXPECT_EQ(a.file.sort_order_id, 0);
    ASSERT_EQ(a.file.partition.size(), 6u);
    EXPECT_EQ(a.file.partition[0], Datum(int32_t{17486}));
    EXPECT_EQ(a.file.partition[2], Datum(*HexDecode("0100")));  // minimal again after the 9-byte fixed
    EXPECT_EQ(a.file.partition[3], Datum(*HexDecode("f79c3e09677c4bbda4793f349cb785e7")));
    EXPECT_TRUE(IsNaN(a.file.partition[4]));
    EXPECT_TRUE(IsNull(a.file.partition[5]));
    const ManifestEntry& b = read->entries[1];
    EXPECT_EQ(b.status, EntryStatus::kExisting);
    EXPECT_EQ(b.snapshot_id, 5);
    if (version >= 2) {
      EXPECT_EQ(b.sequence_number, 2);
      EXPECT_EQ(b.file_sequence_number, 3);
    }
    EXPECT_EQ(b.file.partition[2], Datum(*HexDecode("ff")));
    if (version == 3) {
      // Row ids: the added file first (1000..1009), then the existing one; deleted entries get none.
      EXPECT_EQ(a.file.first_row_id, 1000);
      EXPECT_EQ(b.file.first_row_id, 1010);
      EXPECT_FALSE(read->entries[2].file.first_row_id.has_value());
    } else {
      EXPECT_FALSE(a.file.first_row_id.has_value());
    }
  }
}

TEST(Manifest, DeleteManifestsCarryDeleteFiles) {
  ManifestWriterOptions options;
  options.format_version = 3;
  options.content = ManifestContent::kDeletes;
  options.snapshot_id = 8;
  PartitionSpec unpartitioned;
  auto writer = ManifestWriter::Make(TestSchema(), unpartitioned, options);
  ASSERT_TRUE(writer.ok());
  ManifestEntry dv;
  dv.file.content = FileContent::kPositionDeletes;
  dv.file.file_path = "s3://wh/t/data/dv.puffin";
  dv.file.file_format = "PUFFIN";
  dv.file.record_count = 3;
  dv.file.file_size_in_bytes = 120;
  dv.file.referenced_data_file = "s3://wh/t/data/a.parquet";
  dv.file.content_offset = 4;
  dv.file.content_size_in_bytes = 60;
  ASSERT_TRUE(writer->Add(dv).ok());
  ManifestEntry eq;
  eq.file.content = FileContent::kEqualityDeletes;
  eq.file.file_path = "s3://wh/t/data/eq.parquet";
  eq.file.record_count = 2;
  eq.file.file_size_in_bytes = 300;
  eq.file.equality_ids = {1};
  ASSERT_TRUE(writer->Add(eq).ok());
  ManifestEntry data;
  data.file.file_path = "s3://wh/t/data/x.parquet";
  EXPECT_EQ(writer->Add(data).code(), ErrorCode::kInvalidArgument);  // data in a delete manifest
  auto written = writer->Finish("m-deletes.avro");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->manifest.content, ManifestContent::kDeletes);
  EXPECT_TRUE(written->manifest.partitions.empty());

  ManifestFile listed = written->manifest;
  listed.sequence_number = listed.min_sequence_number = 4;
  auto read = ReadManifest(written->bytes, listed);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->content, ManifestContent::kDeletes);
  ASSERT_EQ(read->entries.size(), 2u);
  EXPECT_EQ(read->entries[0].file.content, FileContent::kPositionDeletes);
  EXPECT_EQ(read->entries[0].file.referenced_data_file, "s3://wh/t/data/a.parquet");
  EXPECT_EQ(read->entries[0].file.content_offset, 4);
  EXPECT_EQ(read->entries[0].file.content_size_in_bytes, 60);
  EXPECT_EQ(read->entries[1].file.equality_ids, std::vector<int32_t>{1});
  EXPECT_EQ(read->entries[1].sequence_number, 4);

  options.format_version = 1;
  EXPECT_EQ(ManifestWriter::Make(TestSchema(), unpartitioned, options).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(ManifestList, AssignsSequenceNumbersAndRowIdsAsJavaDoes) {
  ManifestFile mine = WriteTestManifest(3, 20).manifest;  // unassigned: this commit's
  ManifestFile old;
  old.manifest_path = "s3://wh/t/metadata/old.avro";
  old.manifest_length = 1234;
  old.added_snapshot_id = 10;
  old.sequence_number = 4;
  old.min_sequence_number = 1;
  old.added_rows_count = 5;
  old.existing_rows_count = 7;
  old.first_row_id = 0;
  ManifestFile upgraded = old;  // from before v3: no first row id yet
  upgraded.manifest_path = "s3://wh/t/metadata/upgraded.avro";
  upgraded.first_row_id.reset();
  ManifestFile deletes = old;
  deletes.manifest_path = "s3://wh/t/metadata/deletes.avro";
  deletes.content = ManifestContent::kDeletes;
  deletes.first_row_id.reset();

  for (int version : {1, 2, 3}) {
    SCOPED_TRACE("format v" + std::to_string(version));
    ManifestListWriterOptions options;
    options.format_version = version;
    options.snapshot_id = 20;
    options.parent_snapshot_id = 10;
    options.sequence_number = 5;
    options.first_row_id = 100;
    std::vector<ManifestFile> manifests = {mine, old, upgraded};
    if (version >= 2) manifests.push_back(deletes);
    auto written = WriteManifestList(manifests, options);
    ASSERT_TRUE(written.ok()) << written.status().message();
    auto file = avro::FileReader::Open(written->bytes);
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(*file->FindMetadata("parent-snapshot-id"), "10");
    EXPECT_EQ(file->FindMetadata("first-row-id") != nullptr, version == 3);

    auto read = ReadManifestList(written->bytes, "snap-20.avro");
    ASSERT_TRUE(read.ok()) << read.status().message();
    ASSERT_EQ(read->size(), manifests.size());
    const ManifestFile& first = (*read)[0];
    EXPECT_EQ(first.manifest_path, mine.manifest_path);
    EXPECT_EQ(first.added_files_count, 1);
    EXPECT_EQ(first.deleted_rows_count, 30);
    ASSERT_EQ(first.partitions.size(), 6u);
    EXPECT_EQ(first.partitions[0].lower_bound, mine.partitions[0].lower_bound);
    if (version == 1) {
      EXPECT_EQ(first.sequence_number, 0);
      EXPECT_EQ(written->assigned_rows, 0);
      continue;
    }
    EXPECT_EQ(first.sequence_number, 5);      // this commit's
    EXPECT_EQ(first.min_sequence_number, 2);  // its existing entry's
    EXPECT_EQ((*read)[1].sequence_number, 4);
    EXPECT_EQ((*read)[3].content, ManifestContent::kDeletes);
    if (version == 3) {
      EXPECT_EQ(first.first_row_id, 100);       // 10 added + 20 existing rows
      EXPECT_EQ((*read)[1].first_row_id, 0);    // kept
      EXPECT_EQ((*read)[2].first_row_id, 130);  // assigned after the first
      EXPECT_FALSE((*read)[3].first_row_id.has_value());
      EXPECT_EQ(written->assigned_rows, 30 + 12);
    }
  }

  // A manifest of another snapshot must come with its sequence number.
  ManifestFile foreign = mine;
  foreign.added_snapshot_id = 11;
  ManifestListWriterOptions options;
  options.snapshot_id = 20;
  EXPECT_EQ(WriteManifestList({foreign}, options).status().code(), ErrorCode::kInvalidArgument);
}

TEST(Manifest, DamagedFilesAreErrorsThatNameTheFile) {
  const ManifestWriter::Written written = WriteTestManifest(2, 1);
  ManifestFile listed = written.manifest;
  listed.manifest_path = "s3://wh/t/metadata/broken.avro";
  for (size_t cut : {size_t{10}, written.bytes.size() / 2, written.bytes.size() - 3}) {
    auto read = ReadManifest(std::string_view(written.bytes).substr(0, cut), listed);
    ASSERT_FALSE(read.ok()) << cut;
    EXPECT_EQ(read.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(read.status().message().find("broken.avro"), std::string::npos) << read.status().message();
  }
  // A manifest list is not a manifest.
  auto list = WriteManifestList({}, ManifestListWriterOptions{});
  ASSERT_TRUE(list.ok());
  auto as_manifest = ReadManifest(list->bytes, listed);
  EXPECT_NE(as_manifest.status().message().find("not a manifest"), std::string::npos);
  const ManifestWriter::Written manifest = WriteTestManifest(2, 1);
  EXPECT_NE(ReadManifestList(manifest.bytes, "m.avro").status().message().find("not a manifest list"),
            std::string::npos);
}

// Manifests and manifest lists of every format version for other readers: written to a temporary
// directory and read back here, and to $SERAC_MANIFEST_EXPORT_DIR when it is set, where
// tests/test_manifest_interop.py reads them with PyIceberg and fastavro.
TEST(ManifestExport, WritesEveryVersionForOtherReaders) {
  const char* export_dir = std::getenv("SERAC_MANIFEST_EXPORT_DIR");
  const std::string dir = export_dir != nullptr ? export_dir : ::testing::TempDir();
  auto save = [&](const std::string& name, const std::string& bytes) {
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(out.good()) << dir << "/" << name;
  };
  for (int version : {1, 2, 3}) {
    const std::string prefix = dir + "/v" + std::to_string(version);
    ManifestWriter::Written data = WriteTestManifest(version, 20);
    data.manifest.manifest_path = prefix + "-data.avro";
    save("v" + std::to_string(version) + "-data.avro", data.bytes);
    std::vector<ManifestFile> manifests = {data.manifest};
    if (version >= 2) {
      ManifestWriterOptions options;
      options.format_version = version;
      options.content = ManifestContent::kDeletes;
      options.snapshot_id = 20;
      auto writer = ManifestWriter::Make(TestSchema(), TestSpec(), options);
      ASSERT_TRUE(writer.ok());
      ManifestEntry deletes;
      deletes.file = TestFile("s3://wh/t/data/a-deletes.parquet", 2, 17486, *HexDecode("0100"));
      deletes.file.content = FileContent::kPositionDeletes;
      deletes.file.referenced_data_file = "s3://wh/t/data/a.parquet";
      ASSERT_TRUE(writer->Add(deletes).ok());
      auto written = writer->Finish(prefix + "-deletes.avro");
      ASSERT_TRUE(written.ok());
      save("v" + std::to_string(version) + "-deletes.avro", written->bytes);
      manifests.push_back(written->manifest);
    }
    ManifestListWriterOptions options;
    options.format_version = version;
    options.snapshot_id = 20;
    options.parent_snapshot_id = 10;
    options.sequence_number = 5;
    options.first_row_id = 100;
    auto list = WriteManifestList(manifests, options);
    ASSERT_TRUE(list.ok()) << list.status().message();
    save("v" + std::to_string(version) + "-list.avro", list->bytes);
    auto read = ReadManifestList(list->bytes, "list");
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read->size(), manifests.size());
    auto entries = ReadManifest(data.bytes, (*read)[0]);
    ASSERT_TRUE(entries.ok());
    EXPECT_EQ(entries->entries[0].sequence_number, version == 1 ? 0 : 5);
  }
}

// Decoding speed, for bench/ (disabled in the suite): entries of a 10-column table.
TEST(ManifestBenchmark, DISABLED_DecodeEntriesPerSecond) {
  ManifestWriterOptions options;
  options.snapshot_id = 1;
  auto writer = ManifestWriter::Make(TestSchema(), TestSpec(), options);
  ASSERT_TRUE(writer.ok());
  const int kEntries = 200'000;
  for (int i = 0; i < kEntries; ++i) {
    ManifestEntry entry;
    entry.file =
        TestFile("s3://warehouse/db/table/data/ts_day=2017-11-16/00000-" + std::to_string(i) + ".parquet",
                 1000 + i, 17486 + i % 30, *HexDecode("0100"));
    for (int32_t column = 1; column <= 10; ++column) {
      entry.file.column_sizes.emplace_back(column, 1000 + column);
      entry.file.value_counts.emplace_back(column, 1000);
      entry.file.null_value_counts.emplace_back(column, 0);
      entry.file.lower_bounds.emplace_back(column, std::string(8, 'a'));
      entry.file.upper_bounds.emplace_back(column, std::string(8, 'z'));
    }
    ASSERT_TRUE(writer->Add(entry).ok());
  }
  auto written = writer->Finish("bench.avro");
  ASSERT_TRUE(written.ok());
  ManifestFile listed = written->manifest;
  listed.sequence_number = listed.min_sequence_number = 1;
  // The best of a few runs: the first also pays for the pages the entries land in.
  double seconds = 1e9;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    auto read = ReadManifest(written->bytes, listed);
    seconds =
        std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ASSERT_TRUE(read.ok());
    ASSERT_EQ(read->entries.size(), static_cast<size_t>(kEntries));
  }
  double inflate_seconds = 1e9;
  for (int run = 0; run < 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    auto file = avro::FileReader::Open(written->bytes);
    ASSERT_TRUE(file.ok());
    uint64_t count = 0;
    std::string_view block;
    while (*file->NextBlock(count, block)) {
    }
    inflate_seconds = std::min(
        inflate_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("of which inflating the blocks: %.3f s\n", inflate_seconds);
  double streamed_seconds = 1e9;
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    auto reader = ManifestReader::Open(written->bytes, listed);
    ASSERT_TRUE(reader.ok());
    ManifestEntry entry;
    int64_t rows = 0;
    while (*reader->Next(entry)) rows += entry.file.record_count;
    streamed_seconds = std::min(
        streamed_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ASSERT_GT(rows, 0);
  }
  std::printf(
      "manifest decode, %d entries of 10 columns (%zu bytes, deflate): streamed into one entry %.3f s = "
      "%.0f entries/s; collected into a vector %.3f s = %.0f entries/s\n",
      kEntries, written->bytes.size(), streamed_seconds, kEntries / streamed_seconds, seconds,
      kEntries / seconds);
}

}  // namespace
}  // namespace serac::iceberg
