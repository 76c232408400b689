// Bin-pack compaction against a table in memory with real Parquet files in a temporary directory:
// small files of a partition become one, files some delete may apply to stay, the data sequence
// number is kept, and a file removed meanwhile makes the commit fail with nothing changed.
#include "maintenance/rewrite_data_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "iceberg/scan/table_files.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/snapshot_producer.h"
#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"

namespace serac::maintenance {
namespace {

using Json = nlohmann::json;

class RewriteDataFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "rewrite_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    io_ = iceberg::MakeLocalFileIO();
    Json body = {{"name", "t"},
                 {"schema", Json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
                     {"id": 1, "name": "id", "required": true, "type": "long"},
                     {"id": 2, "name": "category", "required": false, "type": "string"}]})")},
                 {"partition-spec", Json::parse(R"({"spec-id": 0, "fields": [
                     {"source-id": 2, "field-id": 1000, "name": "category", "transform": "identity"}]})")},
                 {"write-order", Json::parse(R"({"order-id": 1, "fields": [
                     {"source-id": 1, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]})")},
                 {"properties", {{"format-version", "2"}}}};
    auto creation = iceberg::TableCreation::FromJson(body);
    ASSERT_TRUE(creation.ok()) << creation.status().ToString();
    auto metadata = creation->NewMetadata("file://" + dir_ + "/t", "6f0b6c8c-0000-4000-8000-000000000002",
                                          1'700'000'000'000);
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    catalog_ = std::make_unique<iceberg::MemoryTableCatalog>(std::move(metadata).value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // One append of rows [first, first + count), categories alternating a and b: one file each.
  void Load(int64_t first, int64_t count) {
    const std::string csv = dir_ + "/in-" + std::to_string(first) + ".csv";
    std::ofstream out(csv);
    out << "id,category\n";
    for (int64_t id = first; id < first + count; ++id) out << id << "," << (id % 2 ? "b" : "a") << "\n";
    out.close();
    const iceberg::TableMetadata& table = catalog_->metadata();
    auto options = parquet::WriteOptions::FromTableProperties(table.properties());
    ASSERT_TRUE(options.ok());
    auto writer = parquet::DataFileWriter::Make(table.CurrentSchema(), table.DefaultSpec(), *options, *io_,
                                                dir_ + "/t/data");
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE(writer->AppendFile(csv, parquet::InputFormat::kCsv).ok());
    auto files = writer->Finish();
    ASSERT_TRUE(files.ok());
    iceberg::SnapshotProducer append(*io_, iceberg::ProducerKind::kAppend);
    for (iceberg::DataFile& file : *files) append.AddDataFile(std::move(file));
    ASSERT_TRUE(iceberg::CommitSnapshot(*catalog_, kTable, append).ok());
  }

  iceberg::TableFiles Files() {
    auto files = iceberg::ReadTableFiles(*io_, catalog_->metadata().CurrentSnapshot());
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? std::move(files).value() : iceberg::TableFiles{};
  }

  std::map<std::string, int> FilesPerCategory() {
    std::map<std::string, int> count;
    for (const iceberg::LiveFile& live : Files().data) ++count[std::get<std::string>(live.file.partition[0])];
    return count;
  }

  const iceberg::TableRef kTable{{"db"}, "t"};
  std::string dir_;
  std::unique_ptr<iceberg::FileIO> io_;
  std::unique_ptr<iceberg::MemoryTableCatalog> catalog_;
};

TEST_F(RewriteDataFilesTest, SmallFilesOfAPartitionBecomeOneWithTheirDeletesApplied) {
  for (int64_t load = 0; load < 3; ++load) Load(load * 100, 100);
  EXPECT_EQ(FilesPerCategory(), (std::map<std::string, int>{{"a", 3}, {"b", 3}}));
  // A position delete file for two rows of one of b's files.
  const iceberg::TableFiles before = Files();
  const iceberg::LiveFile* with_deletes = nullptr;
  for (const iceberg::LiveFile& live : before.data)
    if (std::get<std::string>(live.file.partition[0]) == "b") with_deletes = &live;
  ASSERT_NE(with_deletes, nullptr);
  auto write = parquet::WriteOptions::FromTableProperties(catalog_->metadata().properties());
  ASSERT_TRUE(write.ok());
  auto deletes = parquet::WritePositionDeletes(*io_, dir_ + "/t/data/deletes.parquet", with_deletes->file,
                                               {0, 1}, *write);
  ASSERT_TRUE(deletes.ok()) << deletes.status().ToString();
  iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
  delta.AddDeleteFile(*deletes);
  ASSERT_TRUE(iceberg::CommitSnapshot(*catalog_, kTable, delta).ok());
  const int64_t read_sequence = catalog_->metadata().CurrentSnapshot()->sequence_number;

  // Without applying deletes, the file they apply to stays.
  auto kept = RewriteDataFiles(*catalog_, *io_, kTable, {.apply_deletes = false});
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(kept->files_skipped_for_deletes, 1);
  EXPECT_EQ(FilesPerCategory(), (std::map<std::string, int>{{"a", 1}, {"b", 2}}));

  auto result = RewriteDataFiles(*catalog_, *io_, kTable);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->files_rewritten, 2);  // b's: the packed one and the one with deletes
  EXPECT_EQ(result->files_written, 1);
  EXPECT_EQ(result->rows_deleted, 2);
  EXPECT_EQ(result->delete_files_read, 1);
  EXPECT_EQ(result->delete_files_removed, 1);
  EXPECT_EQ(result->rows, 148);
  EXPECT_EQ(FilesPerCategory(), (std::map<std::string, int>{{"a", 1}, {"b", 1}}));
  const auto summary = catalog_->metadata().CurrentSnapshot()->summary;
  EXPECT_EQ(summary.at("operation"), "replace");
  EXPECT_EQ(summary.at("total-records"), "298");
  EXPECT_EQ(summary.at("total-delete-files"), "0");  // applied, and no longer read
  for (const iceberg::LiveFile& live : Files().data) {
    if (std::get<std::string>(live.file.partition[0]) == "b") {
      EXPECT_GE(live.sequence_number, read_sequence) << live.file.file_path;
    }
    EXPECT_EQ(live.file.sort_order_id, 1);
  }
  // Nothing small and no delete is left: a second run commits nothing.
  auto again = RewriteDataFiles(*catalog_, *io_, kTable);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->snapshot_id, 0);
  EXPECT_EQ(again->files_rewritten, 0);
}

TEST_F(RewriteDataFilesTest, EqualityDeletesApplyOnlyToRowsWrittenBeforeThem) {
  Load(0, 20);
  // Equality deletes of ids 4 (a) and 5 (b), then id 4 written again after them.
  const std::string keys_csv = dir_ + "/keys.csv";
  std::ofstream(keys_csv) << "id,category\n4,a\n5,b\n";
  const iceberg::TableMetadata& table = catalog_->metadata();
  auto keys = parquet::RowKeys::Read(keys_csv, parquet::InputFormat::kCsv, table.CurrentSchema());
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  auto write = parquet::WriteOptions::FromTableProperties(table.properties());
  ASSERT_TRUE(write.ok());
  auto deletes = parquet::WriteEqualityDeletes(*io_, keys_csv, parquet::InputFormat::kCsv, *keys,
                                               table.DefaultSpec(), *write, dir_ + "/t/data");
  ASSERT_TRUE(deletes.ok()) << deletes.status().ToString();
  iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
  for (const iceberg::DataFile& file : *deletes) delta.AddDeleteFile(file);
  ASSERT_TRUE(iceberg::CommitSnapshot(*catalog_, kTable, delta).ok());
  Load(4, 1);  // id 4 again, in a later commit: the delete does not apply to it

  auto result = RewriteDataFiles(*catalog_, *io_, kTable);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->rows_deleted, 2);
  EXPECT_EQ(result->delete_files_removed, 2);  // one per partition
  EXPECT_EQ(result->rows, 19);
  const auto summary = catalog_->metadata().CurrentSnapshot()->summary;
  EXPECT_EQ(summary.at("total-records"), "19");
  EXPECT_EQ(summary.at("total-delete-files"), "0");
  // Row 4 is there once (the later write), row 5 is gone.
  int64_t records = 0;
  for (const iceberg::LiveFile& live : Files().data) records += live.file.record_count;
  EXPECT_EQ(records, 19);
}

// A catalog that lets another writer remove a file between the compaction's load and its commit.
class RemovingCatalog final : public iceberg::TableCatalog {
 public:
  RemovingCatalog(iceberg::MemoryTableCatalog& inner, iceberg::FileIO& io) : inner_(inner), io_(io) {}
  Result<iceberg::TableMetadata> LoadTable(const iceberg::TableRef& table) override {
    return inner_.LoadTable(table);
  }
  Status CommitTable(const iceberg::TableRef& table, const iceberg::TableChanges& changes) override {
    if (!removed_) {
      removed_ = true;
      auto files = iceberg::ReadTableFiles(io_, inner_.metadata().CurrentSnapshot());
      if (!files.ok()) return files.status();
      iceberg::SnapshotProducer overwrite(io_, iceberg::ProducerKind::kOverwrite);
      overwrite.RemoveDataFile(files->data.front().file);
      SERAC_RETURN_IF_ERROR(iceberg::CommitSnapshot(inner_, table, overwrite).status());
    }
    return inner_.CommitTable(table, changes);
  }

 private:
  iceberg::MemoryTableCatalog& inner_;
  iceberg::FileIO& io_;
  bool removed_ = false;
};

TEST_F(RewriteDataFilesTest, AFileRemovedMeanwhileFailsTheRewriteAndLeavesNoFiles) {
  for (int64_t load = 0; load < 2; ++load) Load(load * 10, 10);
  const size_t files_on_disk = std::distance(std::filesystem::recursive_directory_iterator(dir_ + "/t/data"),
                                             std::filesystem::recursive_directory_iterator());
  RemovingCatalog racing(*catalog_, *io_);
  auto result = RewriteDataFiles(racing, *io_, kTable);
  EXPECT_EQ(result.status().code(), ErrorCode::kValidationFailed) << result.status().ToString();
  EXPECT_EQ(catalog_->metadata().CurrentSnapshot()->summary.at("operation"), "delete");  // the other writer's
  EXPECT_EQ(std::distance(std::filesystem::recursive_directory_iterator(dir_ + "/t/data"),
                          std::filesystem::recursive_directory_iterator()),
            static_cast<std::ptrdiff_t>(files_on_disk));  // the rewritten files were deleted again
}

TEST_F(RewriteDataFilesTest, StrategiesChooseTheOrderAndSortRewritesUnsortedFiles) {
  for (int64_t load = 0; load < 2; ++load) Load(load * 100, 100);  // unsorted files (sort_order_id 0)
  // binpack: the small files packed in the order read, not sorted.
  auto packed = RewriteDataFiles(*catalog_, *io_, kTable, {.strategy = CompactionStrategy::kBinpack});
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  EXPECT_EQ(packed->files_rewritten, 4);
  for (const iceberg::LiveFile& live : Files().data) EXPECT_EQ(live.file.sort_order_id.value_or(0), 0);
  // sort: one file per partition already, but not in the table's order: rewritten, sorted.
  auto sorted = RewriteDataFiles(*catalog_, *io_, kTable, {.strategy = CompactionStrategy::kSort});
  ASSERT_TRUE(sorted.ok()) << sorted.status().ToString();
  EXPECT_EQ(sorted->files_rewritten, 2);
  EXPECT_EQ(FilesPerCategory(), (std::map<std::string, int>{{"a", 1}, {"b", 1}}));
  for (const iceberg::LiveFile& live : Files().data) EXPECT_EQ(live.file.sort_order_id, 1);
  // Sorted and whole: nothing left to do, whichever the strategy.
  for (CompactionStrategy strategy : {CompactionStrategy::kAuto, CompactionStrategy::kSort}) {
    auto again = RewriteDataFiles(*catalog_, *io_, kTable, {.strategy = strategy});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->snapshot_id, 0);
  }
}

TEST_F(RewriteDataFilesTest, FilesOfAnOlderSpecMoveToTheCurrentOne) {
  Load(0, 50);  // spec 0: by category, one file each
  const std::string updates = R"([{"action": "add-spec", "spec": {"spec-id": 1, "fields": []}},
                                  {"action": "set-default-spec", "spec-id": -1}])";
  auto changes = iceberg::TableChanges::Parse("[]", updates);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  ASSERT_TRUE(catalog_->CommitTable(kTable, *changes).ok());
  ASSERT_EQ(catalog_->metadata().default_spec_id(), 1);
  auto result = RewriteDataFiles(*catalog_, *io_, kTable);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->files_rewritten, 2);
  int64_t records = 0;
  for (const iceberg::LiveFile& live : Files().data) {
    EXPECT_EQ(live.file.spec_id, 1) << live.file.file_path;
    EXPECT_TRUE(live.file.partition.empty());
    records += live.file.record_count;
  }
  EXPECT_EQ(records, 50);
}

}  // namespace
}  // namespace serac::maintenance
