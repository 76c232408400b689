// The snapshot producers against a table kept in memory (commits applied by CommitTable, as the
// catalog applies them) with its files in a temporary directory: appends, overwrites, row deltas
// with position deletes, equality deletes and merged DVs, replace-files commits, manifest merging,
// retries, and every conflict check.
#include "iceberg/write/snapshot_producer.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "iceberg/iceberg.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/snapshot_producer_internal.h"
#include "iceberg/write/table_catalog.h"

namespace serac::iceberg {
namespace {

using Json = nlohmann::json;

using MemoryCatalog = MemoryTableCatalog;

class SnapshotProducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "snapshot_producer_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    io_ = MakeLocalFileIO();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A table of (id long, category string), partitioned by identity(category) when asked.
  std::unique_ptr<MemoryCatalog> NewTable(int format_version, bool partitioned = false,
                                          std::map<std::string, std::string> properties = {}) {
    Json body = {{"name", "t"}, {"schema", Json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
                    {"id": 1, "name": "id", "required": true, "type": "long"},
                    {"id": 2, "name": "category", "required": false, "type": "string"}]})")}};
    if (partitioned) {
      body["partition-spec"] = Json::parse(R"({"spec-id": 0, "fields": [
          {"source-id": 2, "field-id": 1000, "name": "category", "transform": "identity"}]})");
    }
    properties["format-version"] = std::to_string(format_version);
    body["properties"] = properties;
    auto creation = TableCreation::FromJson(body);
    EXPECT_TRUE(creation.ok()) << creation.status().ToString();
    auto metadata = creation->NewMetadata("file://" + dir_ + "/t", "6f0b6c8c-0000-4000-8000-000000000001",
                                          1'700'000'000'000);
    EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
    return std::make_unique<MemoryCatalog>(std::move(metadata).value());
  }

  DataFile Data(const std::string& name, int64_t rows, std::optional<std::string> category = std::nullopt) {
    DataFile file;
    file.file_path = "file://" + dir_ + "/t/data/" + name + ".parquet";
    file.record_count = rows;
    file.file_size_in_bytes = 1000 + rows;
    if (category) file.partition = {Datum(*category)};
    return file;
  }

  DataFile PositionDeletes(const LiveFile& data, int64_t rows) {
    DataFile file;
    file.content = FileContent::kPositionDeletes;
    file.file_path = data.file.file_path + ".deletes.parquet";
    file.record_count = rows;
    file.file_size_in_bytes = 100;
    file.partition = data.file.partition;
    file.spec_id = data.file.spec_id;
    file.referenced_data_file = data.file.file_path;
    return file;
  }

  DataFile EqualityDeletes(const std::string& name, int64_t rows) {
    DataFile file;
    file.content = FileContent::kEqualityDeletes;
    file.file_path = "file://" + dir_ + "/t/data/" + name + ".parquet";
    file.record_count = rows;
    file.file_size_in_bytes = 100;
    file.equality_ids = {1};
    return file;
  }

  // A DV with `positions` for a live data file, merged with its current DV when it has one (which
  // the producer then removes).
  DataFile AddDv(SnapshotProducer& producer, const TableFiles& files, const LiveFile& data,
                 std::vector<int64_t> positions) {
    DataFileDeletes deletes{data.file, DeletionVector()};
    for (int64_t position : positions) EXPECT_TRUE(deletes.positions.Add(position).ok());
    if (auto it = files.dv_of_data_file.find(data.file.file_path); it != files.dv_of_data_file.end()) {
      auto previous = ReadDeletionVector(*io_, files.deletes[it->second].file);
      EXPECT_TRUE(previous.ok()) << previous.status().ToString();
      deletes.positions.Merge(*previous);
      producer.RemoveDeleteFile(files.deletes[it->second].file);
    }
    std::vector<DataFileDeletes> all;
    all.push_back(std::move(deletes));
    auto written = WriteDeletionVectors(
        *io_, "file://" + dir_ + "/t/data/dv-" + std::to_string(++dvs_) + ".puffin", all);
    EXPECT_TRUE(written.ok()) << written.status().ToString();
    producer.AddDeleteFile(written->at(0));
    return written->at(0);
  }

  Result<int64_t> Commit(MemoryCatalog& catalog, SnapshotProducer& producer) {
    return CommitSnapshot(catalog, TableRef{{"ns"}, "t"}, producer);
  }

  void Append(MemoryCatalog& catalog, std::vector<DataFile> files) {
    SnapshotProducer producer(*io_, ProducerKind::kAppend);
    for (DataFile& file : files) producer.AddDataFile(std::move(file));
    auto committed = Commit(catalog, producer);
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  }

  TableFiles Files(const MemoryCatalog& catalog) {
    auto files = ReadTableFiles(*io_, catalog.metadata().CurrentSnapshot());
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? std::move(files).value() : TableFiles{};
  }

  std::map<std::string, std::string> Summary(const MemoryCatalog& catalog) {
    return catalog.metadata().CurrentSnapshot()->summary;
  }

  static std::vector<std::string> Paths(const std::vector<LiveFile>& files) {
    std::vector<std::string> paths;
    for (const LiveFile& file : files)
      paths.push_back(file.file.file_path.substr(file.file.file_path.rfind('/') + 1));
    std::sort(paths.begin(), paths.end());
    return paths;
  }

  std::vector<std::string> ManifestPaths(const MemoryCatalog& catalog) {
    auto manifests = ReadSnapshotManifests(*io_, *catalog.metadata().CurrentSnapshot());
    EXPECT_TRUE(manifests.ok()) << manifests.status().ToString();
    std::vector<std::string> paths;
    if (manifests.ok())
      for (const ManifestFile& manifest : *manifests) paths.push_back(manifest.manifest_path);
    return paths;
  }
  size_t ReadSnapshotManifestsForTest(const MemoryCatalog& catalog) { return ManifestPaths(catalog).size(); }

  size_t FilesOnDisk() {
    size_t count = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_))
      count += entry.is_regular_file();
    return count;
  }

  std::string dir_;
  std::unique_ptr<FileIO> io_;
  int dvs_ = 0;
};

TEST_F(SnapshotProducerTest, AppendThenOverwriteByFilesKeepsTotalsAndSequenceNumbers) {
  auto catalog = NewTable(2);
  Append(*catalog, {Data("a", 10), Data("b", 20)});
  Append(*catalog, {Data("c", 30)});
  EXPECT_EQ(Summary(*catalog).at("total-records"), "60");

  const TableFiles before = Files(*catalog);
  SnapshotProducer overwrite(*io_, ProducerKind::kOverwrite);
  for (const LiveFile& file : before.data)
    if (file.file.file_path.find("/b.parquet") != std::string::npos) overwrite.RemoveDataFile(file.file);
  overwrite.AddDataFile(Data("d", 5));
  ASSERT_TRUE(Commit(*catalog, overwrite).ok());

  const TableFiles after = Files(*catalog);
  EXPECT_EQ(Paths(after.data), (std::vector<std::string>{"a.parquet", "c.parquet", "d.parquet"}));
  auto summary = Summary(*catalog);
  EXPECT_EQ(summary.at("operation"), "overwrite");
  EXPECT_EQ(summary.at("added-data-files"), "1");
  EXPECT_EQ(summary.at("deleted-data-files"), "1");
  EXPECT_EQ(summary.at("deleted-records"), "20");
  EXPECT_EQ(summary.at("total-records"), "45");
  EXPECT_EQ(summary.at("total-data-files"), "3");
  EXPECT_EQ(summary.at("removed-files-size"), "1020");
  std::map<std::string, int64_t> sequence_numbers;
  for (const LiveFile& file : after.data) {
    sequence_numbers[file.file.file_path.substr(file.file.file_path.rfind('/') + 1)] = file.sequence_number;
  }
  EXPECT_EQ(sequence_numbers,
            (std::map<std::string, int64_t>{{"a.parquet", 1}, {"c.parquet", 2}, {"d.parquet", 3}}));
}

TEST_F(SnapshotProducerTest, OverwriteOfEverythingRemovesDataAndDeleteFiles) {
  auto catalog = NewTable(2);
  Append(*catalog, {Data("a", 10)});
  SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
  delta.AddDeleteFile(PositionDeletes(Files(*catalog).data[0], 2));
  delta.AddDeleteFile(EqualityDeletes("eq", 3));
  ASSERT_TRUE(Commit(*catalog, delta).ok());
  EXPECT_EQ(Summary(*catalog).at("operation"), "delete");
  EXPECT_EQ(Summary(*catalog).at("total-delete-files"), "2");
  EXPECT_EQ(Summary(*catalog).at("added-position-delete-files"), "1");
  EXPECT_EQ(Summary(*catalog).at("added-equality-deletes"), "3");

  SnapshotProducer overwrite(*io_, ProducerKind::kOverwrite);
  overwrite.RemoveAllFiles();
  overwrite.AddDataFile(Data("fresh", 7));
  ASSERT_TRUE(Commit(*catalog, overwrite).ok());
  const TableFiles files = Files(*catalog);
  EXPECT_EQ(Paths(files.data), (std::vector<std::string>{"fresh.parquet"}));
  EXPECT_TRUE(files.deletes.empty());
  auto summary = Summary(*catalog);
  EXPECT_EQ(summary.at("total-records"), "7");
  EXPECT_EQ(summary.at("total-delete-files"), "0");
  EXPECT_EQ(summary.at("total-position-deletes"), "0");
  EXPECT_EQ(summary.at("removed-delete-files"), "2");
}

TEST_F(SnapshotProducerTest, OverwriteByRowFilterRemovesWhatMatchesAndRefusesPartialFiles) {
  auto catalog = NewTable(3, true);
  Append(*catalog, {Data("x1", 10, "x"), Data("y1", 20, "y"), Data("y2", 30, "y")});
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    const TableFiles files = Files(*catalog);
    for (const LiveFile& data : files.data)
      if (data.file.file_path.find("/y1.") != std::string::npos) AddDv(delta, files, data, {1, 2});
    ASSERT_TRUE(Commit(*catalog, delta).ok());
  }
  auto filter = ParseFilterText("category = 'y'");
  ASSERT_TRUE(filter.ok());

  // An added file that cannot be shown to match: refused when asked, before anything is removed.
  {
    SnapshotProducer overwrite(*io_, ProducerKind::kOverwrite);
    overwrite.RemoveRowsMatching(*filter, true);
    overwrite.AddDataFile(Data("x2", 5, "x"));
    auto committed = Commit(*catalog, overwrite);
    EXPECT_EQ(committed.status().code(), ErrorCode::kValidationFailed);
    EXPECT_NE(committed.status().message().find("do not match filter: category = 'y'"), std::string::npos)
        << committed.status().message();
  }
  SnapshotProducer overwrite(*io_, ProducerKind::kOverwrite);
  overwrite.RemoveRowsMatching(*filter, true);
  overwrite.AddDataFile(Data("y3", 7, "y"));
  ASSERT_TRUE(Commit(*catalog, overwrite).ok());
  const TableFiles files = Files(*catalog);
  EXPECT_EQ(Paths(files.data), (std::vector<std::string>{"x1.parquet", "y3.parquet"}));
  EXPECT_TRUE(files.deletes.empty());  // the DV of y1 went with it
  auto summary = Summary(*catalog);
  EXPECT_EQ(summary.at("operation"), "overwrite");
  EXPECT_EQ(summary.at("deleted-data-files"), "2");
  EXPECT_EQ(summary.at("removed-dvs"), "1");
  EXPECT_EQ(summary.at("total-records"), "17");

  // Partition values cannot tell which rows of x1 have id < 5 (no metrics): the file is refused.
  SnapshotProducer partial(*io_, ProducerKind::kOverwrite);
  partial.RemoveRowsMatching(*ParseFilterText("category = 'x' and id < 5"), false);
  auto refused = Commit(*catalog, partial);
  EXPECT_EQ(refused.status().code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.status().message().find("Cannot delete file where some, but not all, rows match filter "
                                            "(category = 'x' AND id < 5): "),
            std::string::npos)
      << refused.status().message();
  // A filter nothing matches is a delete of nothing; one naming no column of the table is refused.
  SnapshotProducer nothing(*io_, ProducerKind::kOverwrite);
  nothing.RemoveRowsMatching(*ParseFilterText("category = 'z'"), false);
  ASSERT_TRUE(Commit(*catalog, nothing).ok());
  EXPECT_EQ(Paths(Files(*catalog).data), (std::vector<std::string>{"x1.parquet", "y3.parquet"}));
  SnapshotProducer unknown(*io_, ProducerKind::kOverwrite);
  unknown.RemoveRowsMatching(*ParseFilterText("colour = 'z'"), false);
  EXPECT_EQ(Commit(*catalog, unknown).status().code(), ErrorCode::kInvalidArgument);
  // Only overwrites take a filter.
  SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
  delta.RemoveRowsMatching(*filter, false);
  EXPECT_EQ(Commit(*catalog, delta).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(SnapshotProducerTest, DeletionVectorsAreMergedOnePerDataFile) {
  auto catalog = NewTable(3);
  Append(*catalog, {Data("a", 100), Data("b", 100)});
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    const TableFiles files = Files(*catalog);
    AddDv(delta, files, files.data[0], {1, 2, 3});
    ASSERT_TRUE(Commit(*catalog, delta).ok());
  }
  const TableFiles once = Files(*catalog);
  ASSERT_EQ(once.deletes.size(), 1u);
  const std::string data_path = *once.deletes[0].file.referenced_data_file;
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    for (const LiveFile& data : once.data)
      if (data.file.file_path == data_path) AddDv(delta, once, data, {3, 50});
    ASSERT_TRUE(Commit(*catalog, delta).ok());
  }
  const TableFiles twice = Files(*catalog);
  ASSERT_EQ(twice.deletes.size(), 1u);
  EXPECT_EQ(twice.deletes[0].file.record_count, 4);
  auto positions = ReadDeletionVector(*io_, twice.deletes[0].file);
  ASSERT_TRUE(positions.ok()) << positions.status().ToString();
  EXPECT_EQ(positions->Positions(), (std::vector<int64_t>{1, 2, 3, 50}));
  auto summary = Summary(*catalog);
  EXPECT_EQ(summary.at("added-dvs"), "1");
  EXPECT_EQ(summary.at("removed-dvs"), "1");
  EXPECT_EQ(summary.at("total-position-deletes"), "4");
  EXPECT_EQ(summary.at("total-delete-files"), "1");
  // v3 row lineage: ids were given to the 200 appended rows only.
  EXPECT_EQ(catalog->metadata().next_row_id(), 200);
}

TEST_F(SnapshotProducerTest, FormatVersionsRefuseTheWrongDeleteKind) {
  auto v1 = NewTable(1);
  Append(*v1, {Data("a", 1)});
  SnapshotProducer v1_delta(*io_, ProducerKind::kRowDelta);
  v1_delta.AddDeleteFile(EqualityDeletes("eq", 1));
  EXPECT_EQ(Commit(*v1, v1_delta).status().code(), ErrorCode::kInvalidArgument);

  auto v3 = NewTable(3);
  Append(*v3, {Data("a", 1)});
  SnapshotProducer v3_delta(*io_, ProducerKind::kRowDelta);
  v3_delta.AddDeleteFile(PositionDeletes(Files(*v3).data[0], 1));
  auto refused = Commit(*v3, v3_delta);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("deletion vectors"), std::string::npos);
}

TEST_F(SnapshotProducerTest, RowDeltaFailsWhenItsDataFileWasReplacedMeanwhile) {
  auto catalog = NewTable(3);
  Append(*catalog, {Data("a", 100)});
  const TableFiles base = Files(*catalog);
  const int64_t base_snapshot = catalog->metadata().CurrentSnapshot()->snapshot_id;

  SnapshotProducer compaction(*io_, ProducerKind::kReplaceFiles);
  compaction.RemoveDataFile(base.data[0].file);
  compaction.AddDataFile(Data("a-compacted", 100));
  ASSERT_TRUE(Commit(*catalog, compaction).ok());
  EXPECT_EQ(Summary(*catalog).at("operation"), "replace");

  SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
  delta.ValidateFromSnapshot(base_snapshot);
  AddDv(delta, base, base.data[0], {7});
  auto refused = Commit(*catalog, delta);
  EXPECT_EQ(refused.status().code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.status().message().find("missing data files"), std::string::npos)
      << refused.status().message();
}

TEST_F(SnapshotProducerTest, ConcurrentDeletionVectorsForOneFileConflict) {
  auto catalog = NewTable(3);
  Append(*catalog, {Data("a", 100)});
  const TableFiles base = Files(*catalog);
  const int64_t base_snapshot = catalog->metadata().CurrentSnapshot()->snapshot_id;
  SnapshotProducer first(*io_, ProducerKind::kRowDelta);
  AddDv(first, base, base.data[0], {1});
  ASSERT_TRUE(Commit(*catalog, first).ok());

  SnapshotProducer second(*io_, ProducerKind::kRowDelta);
  second.ValidateFromSnapshot(base_snapshot);
  AddDv(second, base, base.data[0], {2});
  auto refused = Commit(*catalog, second);
  EXPECT_EQ(refused.status().code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.status().message().find("Found concurrently added DV"), std::string::npos);
}

TEST_F(SnapshotProducerTest, ReplaceFailsOnNewPositionDeletesButKeepsSequenceForEqualityDeletes) {
  auto catalog = NewTable(2);
  Append(*catalog, {Data("a", 100)});
  const TableFiles base = Files(*catalog);
  const int64_t base_snapshot = catalog->metadata().CurrentSnapshot()->snapshot_id;

  // An equality delete lands while a compaction that keeps data sequence numbers runs: both win,
  // and the delete still applies to the rewritten rows.
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    delta.AddDeleteFile(EqualityDeletes("eq", 1));
    ASSERT_TRUE(Commit(*catalog, delta).ok());
  }
  SnapshotProducer compaction(*io_, ProducerKind::kReplaceFiles);
  compaction.ValidateFromSnapshot(base_snapshot);
  compaction.RemoveDataFile(base.data[0].file);
  compaction.AddDataFile(Data("a-compacted", 100));
  compaction.KeepDataSequenceNumber(base.data[0].sequence_number);
  auto replaced = Commit(*catalog, compaction);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  const TableFiles after = Files(*catalog);
  ASSERT_EQ(after.data.size(), 1u);
  EXPECT_EQ(after.data[0].sequence_number, 1);       // kept: the equality delete (2) applies
  EXPECT_EQ(after.data[0].file_sequence_number, 3);  // the commit's
  ASSERT_EQ(after.deletes.size(), 1u);

  // A position delete for the file being rewritten lands first: the compaction must give up.
  const TableFiles base2 = Files(*catalog);
  const int64_t base2_snapshot = catalog->metadata().CurrentSnapshot()->snapshot_id;
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    delta.AddDeleteFile(PositionDeletes(base2.data[0], 1));
    ASSERT_TRUE(Commit(*catalog, delta).ok());
  }
  SnapshotProducer second(*io_, ProducerKind::kReplaceFiles);
  second.ValidateFromSnapshot(base2_snapshot);
  second.RemoveDataFile(base2.data[0].file);
  second.AddDataFile(Data("a-again", 100));
  auto refused = Commit(*catalog, second);
  EXPECT_EQ(refused.status().code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.status().message().find("found new delete for replaced data file"), std::string::npos);
}

TEST_F(SnapshotProducerTest, RemovingAFileThatIsGoneFailsAndLeavesNoFiles) {
  auto catalog = NewTable(2);
  Append(*catalog, {Data("a", 1)});
  const size_t files_before = FilesOnDisk();
  SnapshotProducer overwrite(*io_, ProducerKind::kOverwrite);
  overwrite.RemoveDataFile(Data("never-there", 1));
  overwrite.AddDataFile(Data("b", 1));
  auto refused = Commit(*catalog, overwrite);
  EXPECT_EQ(refused.status().code(), ErrorCode::kValidationFailed);
  EXPECT_NE(refused.status().message().find("Missing required files to delete"), std::string::npos);
  EXPECT_EQ(FilesOnDisk(), files_before);  // its manifests were cleaned up
  EXPECT_EQ(catalog->commits(), 1);
}

TEST_F(SnapshotProducerTest, ReplacingADataFileDropsItsDeletionVectorAndStaleDeletes) {
  auto catalog = NewTable(3);
  Append(*catalog, {Data("a", 10), Data("b", 10)});
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    const TableFiles files = Files(*catalog);
    AddDv(delta, files, files.data[0], {0});
    AddDv(delta, files, files.data[1], {1});
    ASSERT_TRUE(Commit(*catalog, delta).ok());
  }
  const TableFiles files = Files(*catalog);
  ASSERT_EQ(files.deletes.size(), 2u);
  SnapshotProducer compaction(*io_, ProducerKind::kReplaceFiles);
  compaction.RemoveDataFile(files.data[0].file);
  compaction.AddDataFile(Data("a-compacted", 9));
  ASSERT_TRUE(Commit(*catalog, compaction).ok());
  const TableFiles after = Files(*catalog);
  ASSERT_EQ(after.deletes.size(), 1u);  // a's DV went with a
  EXPECT_EQ(*after.deletes[0].file.referenced_data_file, files.data[1].file.file_path);
  EXPECT_EQ(Summary(*catalog).at("removed-dvs"), "1");

  // Once every live data file is newer than a delete file, the delete file goes too.
  auto v2 = NewTable(2);
  Append(*v2, {Data("x", 10)});
  {
    SnapshotProducer delta(*io_, ProducerKind::kRowDelta);
    delta.AddDeleteFile(EqualityDeletes("old-eq", 1));
    ASSERT_TRUE(Commit(*v2, delta).ok());
  }
  Append(*v2, {Data("y", 10)});
  SnapshotProducer rewrite(*io_, ProducerKind::kReplaceFiles);
  for (const LiveFile& file : Files(*v2).data)
    if (file.file.file_path.find("/x.parquet") != std::string::npos) rewrite.RemoveDataFile(file.file);
  rewrite.AddDataFile(Data("x-compacted", 9));
  ASSERT_TRUE(Commit(*v2, rewrite).ok());
  EXPECT_TRUE(Files(*v2).deletes.empty());
  EXPECT_EQ(Summary(*v2).at("removed-equality-delete-files"), "1");
}

TEST_F(SnapshotProducerTest, ManifestsAreMergedAtTheMinimumCount) {
  auto catalog = NewTable(2, false, {{"commit.manifest.min-count-to-merge", "4"}});
  for (int i = 0; i < 10; ++i) Append(*catalog, {Data("f" + std::to_string(i), 1)});
  auto manifests = ReadSnapshotManifestsForTest(*catalog);
  EXPECT_LT(manifests, 4u);
  EXPECT_EQ(Files(*catalog).data.size(), 10u);
  EXPECT_EQ(Summary(*catalog).at("total-data-files"), "10");
  for (const LiveFile& file : Files(*catalog).data) {
    const int index = std::stoi(file.file.file_path.substr(file.file.file_path.rfind("/f") + 2));
    EXPECT_EQ(file.sequence_number, index + 1) << file.file.file_path;
  }

  auto unmerged = NewTable(2, false, {{"commit.manifest-merge.enabled", "false"}});
  for (int i = 0; i < 10; ++i) Append(*unmerged, {Data("g" + std::to_string(i), 1)});
  EXPECT_EQ(ReadSnapshotManifestsForTest(*unmerged), 10u);

  auto bad = NewTable(2, false, {{"commit.manifest.min-count-to-merge", "many"}});
  SnapshotProducer producer(*io_, ProducerKind::kAppend);
  producer.AddDataFile(Data("z", 1));
  auto refused = Commit(*bad, producer);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("commit.manifest.min-count-to-merge"), std::string::npos);
}

TEST_F(SnapshotProducerTest, PartitionSummariesSpareManifestsFromRewrites) {
  auto catalog = NewTable(2, true, {{"commit.manifest-merge.enabled", "false"}});
  Append(*catalog, {Data("x1", 1, "x")});
  Append(*catalog, {Data("y1", 1, "y")});
  auto before = ManifestPaths(*catalog);
  LiveFile y;
  for (const LiveFile& file : Files(*catalog).data)
    if (file.file.file_path.find("/y1") != std::string::npos) y = file;
  SnapshotProducer overwrite(*io_, ProducerKind::kOverwrite);
  overwrite.RemoveDataFile(y.file);
  overwrite.AddDataFile(Data("y2", 1, "y"));
  ASSERT_TRUE(Commit(*catalog, overwrite).ok());
  auto after = ManifestPaths(*catalog);
  // x's manifest is kept as it was; y's was rewritten; the new one is first.
  ASSERT_EQ(after.size(), 3u);
  EXPECT_TRUE(std::find(after.begin(), after.end(), before[1]) != after.end());  // oldest: x1
  EXPECT_TRUE(std::find(after.begin(), after.end(), before[0]) == after.end());
  EXPECT_EQ(Summary(*catalog).at("changed-partition-count"), "1");
}

TEST_F(SnapshotProducerTest, ARetryAfterALostRaceReusesItsManifestsAndCleansUp) {
  auto catalog = NewTable(2);
  Append(*catalog, {Data("a", 1)});
  SnapshotProducer slow(*io_, ProducerKind::kAppend);
  slow.AddDataFile(Data("slow", 1));
  auto first = slow.Prepare(catalog->metadata(), 1);
  ASSERT_TRUE(first.ok());
  Append(*catalog, {Data("fast", 1)});  // lands in between: the first attempt's base is gone
  EXPECT_EQ(catalog->CommitTable(TableRef{}, first->changes).code(), ErrorCode::kConflict);
  auto second = Commit(*catalog, slow);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(Paths(Files(*catalog).data),
            (std::vector<std::string>{"a.parquet", "fast.parquet", "slow.parquet"}));
  // Per snapshot: one manifest list and one manifest; the first attempt's list is gone.
  std::set<std::string> lists;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("snap-", 0) == 0) lists.insert(name);
  }
  EXPECT_EQ(lists.size(), 3u);
}

// Two tables in memory whose commits across both (CommitTables) land all or nothing, with a hook
// that runs before each such commit and the choice to lose its answer.
class TwoTableCatalog final : public TableCatalog {
 public:
  TwoTableCatalog(std::unique_ptr<MemoryCatalog> a, std::unique_ptr<MemoryCatalog> b) {
    tables_["a"] = std::move(a);
    tables_["b"] = std::move(b);
  }
  Result<TableMetadata> LoadTable(const TableRef& table) override {
    return tables_.at(table.name)->metadata();
  }
  Status CommitTable(const TableRef& table, const TableChanges& changes) override {
    return tables_.at(table.name)->CommitTable(table, changes);
  }
  bool CommitsAcrossTables() const override { return true; }
  Status CommitTables(const std::vector<TableChange>& changes) override {
    ++transactions_;
    if (before_commit_) {
      auto hook = std::move(before_commit_);
      before_commit_ = nullptr;
      hook();
    }
    std::map<std::string, MemoryCatalog> before;
    for (const auto& [name, table] : tables_) before.emplace(name, *table);
    for (const TableChange& change : changes) {
      Status applied = CommitTable(change.table, change.changes);
      if (!applied.ok()) {
        for (auto& [name, table] : before) *tables_.at(name) = table;
        return applied;
      }
    }
    if (lose_next_answer_) {
      lose_next_answer_ = false;
      return Error(ErrorCode::kOutcomeUnknown, "the answer was lost");
    }
    return Status::Ok();
  }
  MemoryCatalog& table(const std::string& name) { return *tables_.at(name); }
  int transactions() const { return transactions_; }
  void BeforeNextCommit(std::function<void()> hook) { before_commit_ = std::move(hook); }
  void LoseNextAnswer() { lose_next_answer_ = true; }

 private:
  std::map<std::string, std::unique_ptr<MemoryCatalog>> tables_;
  std::function<void()> before_commit_;
  bool lose_next_answer_ = false;
  int transactions_ = 0;
};

TEST_F(SnapshotProducerTest, ChangesToSeveralTablesLandTogetherOrNotAtAll) {
  TwoTableCatalog catalog(NewTable(2), NewTable(3));
  Append(catalog.table("a"), {Data("a1", 1)});
  Append(catalog.table("b"), {Data("b1", 1)});
  const TableRef a{{"ns"}, "a"};
  const TableRef b{{"ns"}, "b"};

  // Both land in one commit, each with its own summary.
  SnapshotProducer to_a(*io_, ProducerKind::kAppend, {{"position", "7"}});
  to_a.AddDataFile(Data("a2", 1));
  SnapshotProducer to_b(*io_, ProducerKind::kAppend, {{"position", "7"}});
  to_b.AddDataFile(Data("b2", 1));
  size_t failed = 99;
  Status both = CommitSnapshots(catalog, {{a, &to_a}, {b, &to_b}}, &failed);
  ASSERT_TRUE(both.ok()) << both.ToString();
  EXPECT_EQ(catalog.transactions(), 1);
  EXPECT_EQ(Paths(Files(catalog.table("a")).data), (std::vector<std::string>{"a1.parquet", "a2.parquet"}));
  EXPECT_EQ(Paths(Files(catalog.table("b")).data), (std::vector<std::string>{"b1.parquet", "b2.parquet"}));
  EXPECT_EQ(Summary(catalog.table("b")).at("position"), "7");

  // A change to b that no longer validates (a compaction rewrote the file its DV is for): neither
  // table moves, and the failure names b.
  const TableFiles b_before = Files(catalog.table("b"));
  const int64_t b_base = catalog.table("b").metadata().CurrentSnapshot()->snapshot_id;
  SnapshotProducer compaction(*io_, ProducerKind::kReplaceFiles);
  compaction.RemoveDataFile(b_before.data[0].file);
  compaction.AddDataFile(Data("b1-compacted", 1));
  ASSERT_TRUE(Commit(catalog.table("b"), compaction).ok());
  SnapshotProducer to_a_again(*io_, ProducerKind::kAppend);
  to_a_again.AddDataFile(Data("a3", 1));
  SnapshotProducer stale_b(*io_, ProducerKind::kRowDelta);
  stale_b.ValidateFromSnapshot(b_base);
  AddDv(stale_b, b_before, b_before.data[0], {0});
  const size_t snapshots_of_a = catalog.table("a").metadata().Snapshots().size();
  Status refused = CommitSnapshots(catalog, {{a, &to_a_again}, {b, &stale_b}}, &failed);
  EXPECT_EQ(refused.code(), ErrorCode::kValidationFailed) << refused.ToString();
  EXPECT_EQ(failed, 1u);
  EXPECT_EQ(catalog.table("a").metadata().Snapshots().size(), snapshots_of_a);
}

TEST_F(SnapshotProducerTest, ACommitAcrossTablesIsRetriedAfterALostRaceAndNotRepeatedAfterALostAnswer) {
  TwoTableCatalog catalog(NewTable(2), NewTable(2));
  const TableRef a{{"ns"}, "a"};
  const TableRef b{{"ns"}, "b"};
  // Another writer appends to a between the prepare and the commit: prepared again, both land.
  catalog.BeforeNextCommit([&] { Append(catalog.table("a"), {Data("other", 1)}); });
  SnapshotProducer to_a(*io_, ProducerKind::kAppend);
  to_a.AddDataFile(Data("a1", 1));
  SnapshotProducer to_b(*io_, ProducerKind::kAppend);
  to_b.AddDataFile(Data("b1", 1));
  Status raced = CommitSnapshots(catalog, {{a, &to_a}, {b, &to_b}}, nullptr);
  ASSERT_TRUE(raced.ok()) << raced.ToString();
  EXPECT_EQ(catalog.transactions(), 2);
  EXPECT_EQ(Paths(Files(catalog.table("a")).data), (std::vector<std::string>{"a1.parquet", "other.parquet"}));
  EXPECT_EQ(Paths(Files(catalog.table("b")).data), (std::vector<std::string>{"b1.parquet"}));

  // The commit lands but its answer is lost: found in the tables, not applied twice.
  catalog.LoseNextAnswer();
  SnapshotProducer more_a(*io_, ProducerKind::kAppend);
  more_a.AddDataFile(Data("a2", 1));
  SnapshotProducer more_b(*io_, ProducerKind::kAppend);
  more_b.AddDataFile(Data("b2", 1));
  Status lost = CommitSnapshots(catalog, {{a, &more_a}, {b, &more_b}}, nullptr);
  ASSERT_TRUE(lost.ok()) << lost.ToString();
  EXPECT_EQ(catalog.transactions(), 3);
  EXPECT_EQ(catalog.table("a").metadata().Snapshots().size(), 3u);
  EXPECT_EQ(catalog.table("b").metadata().Snapshots().size(), 2u);
  EXPECT_EQ(Paths(Files(catalog.table("b")).data), (std::vector<std::string>{"b1.parquet", "b2.parquet"}));
}

}  // namespace
}  // namespace serac::iceberg
