// Manifest rewriting against a table in memory: many small manifests (one per append, merging off)
// become one per spec and content, the live files, their sequence numbers and their deletes stay
// exactly as they were, and a commit that landed meanwhile is planned again.
#include "maintenance/rewrite_manifests.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "iceberg/scan/table_files.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/snapshot_producer.h"

namespace serac::maintenance {
namespace {

using Json = nlohmann::json;

const iceberg::TableRef kTable{{"db"}, "t"};

class RewriteManifestsTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "manifests_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    io_ = iceberg::MakeLocalFileIO();
    Json body = {
        {"name", "t"},
        {"schema", Json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
                     {"id": 1, "name": "id", "required": true, "type": "long"},
                     {"id": 2, "name": "category", "required": false, "type": "string"}]})")},
        {"partition-spec", Json::parse(R"({"spec-id": 0, "fields": [
                     {"source-id": 2, "field-id": 1000, "name": "category", "transform": "identity"}]})")},
        {"properties",
         {{"format-version", std::to_string(GetParam())}, {"commit.manifest-merge.enabled", "false"}}}};
    auto creation = iceberg::TableCreation::FromJson(body);
    ASSERT_TRUE(creation.ok()) << creation.status().ToString();
    auto metadata = creation->NewMetadata("file://" + dir_ + "/t", "6f0b6c8c-0000-4000-8000-000000000003",
                                          1'700'000'000'000);
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    catalog_ = std::make_unique<iceberg::MemoryTableCatalog>(std::move(metadata).value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  iceberg::DataFile File(const std::string& name, const std::string& category) {
    iceberg::DataFile file;
    file.file_path = "file://" + dir_ + "/t/data/" + name + ".parquet";
    file.partition = {iceberg::Datum(category)};
    file.record_count = 10;
    file.file_size_in_bytes = 1000;
    return file;
  }

  void Append(const std::string& name, const std::string& category) {
    iceberg::SnapshotProducer append(*io_, iceberg::ProducerKind::kAppend);
    append.AddDataFile(File(name, category));
    ASSERT_TRUE(iceberg::CommitSnapshot(*catalog_, kTable, append).ok());
  }

  void DeleteFrom(const std::string& name, const std::string& category) {
    iceberg::DataFile deletes = File(name + "-deletes", category);
    deletes.content = iceberg::FileContent::kEqualityDeletes;  // v2 and v3 alike
    deletes.equality_ids = {1};
    deletes.record_count = 1;
    iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
    delta.AddDeleteFile(deletes);
    ASSERT_TRUE(iceberg::CommitSnapshot(*catalog_, kTable, delta).ok());
  }

  std::vector<iceberg::ManifestFile> Manifests() {
    auto manifests = iceberg::ReadSnapshotManifests(*io_, *catalog_->metadata().CurrentSnapshot());
    EXPECT_TRUE(manifests.ok());
    return manifests.ok() ? *manifests : std::vector<iceberg::ManifestFile>{};
  }

  // Every live file with its sequence numbers (and v3 first row id), in a stable order.
  std::vector<std::string> Files() {
    auto files = iceberg::ReadTableFiles(*io_, catalog_->metadata().CurrentSnapshot());
    EXPECT_TRUE(files.ok());
    std::vector<std::string> out;
    for (const auto* group : {&files->data, &files->deletes}) {
      for (const iceberg::LiveFile& live : *group) {
        out.push_back(live.file.file_path + " seq=" + std::to_string(live.sequence_number) + "/" +
                      std::to_string(live.file_sequence_number) +
                      " row=" + std::to_string(live.file.first_row_id.value_or(-1)));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string dir_;
  std::unique_ptr<iceberg::FileIO> io_;
  std::unique_ptr<iceberg::MemoryTableCatalog> catalog_;
};

TEST_P(RewriteManifestsTest, SmallManifestsBecomeOnePerContentWithTheSameFiles) {
  for (int i = 0; i < 6; ++i) Append("f" + std::to_string(i), i % 2 ? "b" : "a");
  DeleteFrom("f0", "a");
  DeleteFrom("f3", "b");
  ASSERT_EQ(Manifests().size(), 8u);
  const std::vector<std::string> before = Files();
  const int64_t parent = catalog_->metadata().current_snapshot_id();

  auto rewritten = RewriteManifests(*catalog_, *io_, kTable);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().ToString();
  EXPECT_EQ(rewritten->manifests_rewritten, 8);
  EXPECT_EQ(rewritten->manifests_written, 2);
  EXPECT_EQ(rewritten->entries, 8);
  const std::vector<iceberg::ManifestFile> after = Manifests();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].existing_files_count + after[1].existing_files_count, 8);
  EXPECT_EQ(after[0].added_files_count + after[1].added_files_count, 0);
  EXPECT_EQ(Files(), before);

  const iceberg::Snapshot snapshot = *catalog_->metadata().CurrentSnapshot();
  EXPECT_EQ(snapshot.snapshot_id, rewritten->snapshot_id);
  EXPECT_EQ(snapshot.parent_snapshot_id, parent);
  EXPECT_EQ(snapshot.operation(), "replace");
  EXPECT_EQ(snapshot.summary.at("manifests-replaced"), "8");
  EXPECT_EQ(snapshot.summary.at("total-data-files"), "6");

  // Nothing small enough to pack is left: a second run commits nothing.
  auto again = RewriteManifests(*catalog_, *io_, kTable);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->snapshot_id, 0);
  EXPECT_EQ(catalog_->metadata().current_snapshot_id(), rewritten->snapshot_id);
}

TEST_P(RewriteManifestsTest, LargeManifestsAndLoneSmallOnesStay) {
  for (int i = 0; i < 3; ++i) Append("f" + std::to_string(i), "a");
  RewriteManifestsOptions options;
  options.target_manifest_bytes = 1;  // every manifest counts as large
  auto none = RewriteManifests(*catalog_, *io_, kTable, options);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->snapshot_id, 0);
  options = {};
  options.min_manifests = 4;
  none = RewriteManifests(*catalog_, *io_, kTable, options);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->snapshot_id, 0);
  EXPECT_EQ(Manifests().size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(FormatVersions, RewriteManifestsTest, ::testing::Values(2, 3));

}  // namespace
}  // namespace serac::maintenance
