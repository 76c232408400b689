// Snapshot expiry against a table in memory whose files are real files in a temporary directory:
// what Java's ExpireSnapshots keeps (the newest snapshots of each branch, tagged snapshots, young
// ones) stays, the rest goes in one commit, and only files no remaining snapshot reaches are
// deleted; a ref moved meanwhile makes the job plan again.
#include "maintenance/expire_snapshots.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/snapshot_producer.h"
#include "maintenance/remove_unreferenced_files.h"

namespace serac::maintenance {
namespace {

using Json = nlohmann::json;
constexpr int64_t kHourMs = 3600 * 1000;

class ExpireSnapshotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "expire_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    io_ = iceberg::MakeLocalFileIO();
    Json body = {{"name", "t"},
                 {"schema", Json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
                     {"id": 1, "name": "id", "required": true, "type": "long"}]})")},
                 {"properties", {{"format-version", "2"}, {"commit.manifest-merge.enabled", "false"}}}};
    auto creation = iceberg::TableCreation::FromJson(body);
    ASSERT_TRUE(creation.ok()) << creation.status().ToString();
    auto metadata = creation->NewMetadata("file://" + dir_ + "/t", "6f0b6c8c-0000-4000-8000-000000000003",
                                          1'700'000'000'000);
    ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
    catalog_ = std::make_unique<iceberg::MemoryTableCatalog>(std::move(metadata).value());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A data file of `bytes` bytes on disk (its content is never read by expiry).
  iceberg::DataFile NewFile(const std::string& name) {
    std::filesystem::create_directories(dir_ + "/t/data");
    iceberg::DataFile file;
    file.file_path = dir_ + "/t/data/" + name + ".parquet";
    std::ofstream(file.file_path) << "rows of " << name;
    file.record_count = 1;
    file.file_size_in_bytes = static_cast<int64_t>(std::filesystem::file_size(file.file_path));
    return file;
  }
  int64_t Append(const std::string& name) {
    iceberg::SnapshotProducer append(*io_, iceberg::ProducerKind::kAppend);
    append.AddDataFile(NewFile(name));
    auto id = iceberg::CommitSnapshot(*catalog_, kTable, append);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  // Replaces the file `old_name` was written as with a new one.
  int64_t Replace(const std::string& old_name, const std::string& new_name) {
    iceberg::DataFile old_file;
    for (const iceberg::LiveFile& live : Files().data) {
      if (live.file.file_path.find("/" + old_name + ".parquet") != std::string::npos) old_file = live.file;
    }
    iceberg::SnapshotProducer replace(*io_, iceberg::ProducerKind::kReplaceFiles);
    replace.RemoveDataFile(old_file);
    replace.AddDataFile(NewFile(new_name));
    auto id = iceberg::CommitSnapshot(*catalog_, kTable, replace);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  iceberg::TableFiles Files() {
    auto files = iceberg::ReadTableFiles(*io_, catalog_->metadata().CurrentSnapshot());
    EXPECT_TRUE(files.ok()) << files.status().ToString();
    return files.ok() ? std::move(files).value() : iceberg::TableFiles{};
  }
  bool Exists(const std::string& name) {
    return std::filesystem::exists(dir_ + "/t/data/" + name + ".parquet");
  }
  void Commit(const Json& updates) {
    auto changes = iceberg::TableChanges::Parse("[]", updates.dump());
    ASSERT_TRUE(changes.ok()) << changes.status().ToString();
    ASSERT_TRUE(catalog_->CommitTable(kTable, *changes).ok());
  }
  std::vector<int64_t> SnapshotIds() {
    std::vector<int64_t> ids;
    for (const iceberg::Snapshot& snapshot : catalog_->metadata().Snapshots())
      ids.push_back(snapshot.snapshot_id);
    return ids;
  }
  // Every file under the table's metadata directory that the table's metadata reaches.
  size_t ManifestListsOnDisk() {
    size_t count = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_ + "/t")) {
      if (entry.path().filename().string().rfind("snap-", 0) == 0) ++count;
    }
    return count;
  }

  const iceberg::TableRef kTable{{"db"}, "t"};
  std::string dir_;
  std::unique_ptr<iceberg::FileIO> io_;
  std::unique_ptr<iceberg::MemoryTableCatalog> catalog_;
};

TEST_F(ExpireSnapshotsTest, KeepsTheNewestAndTaggedSnapshotsAndDeletesOnlyUnreachedFiles) {
  const int64_t first = Append("a");
  Replace("a", "a2");  // a is now reached only by the first snapshot
  const int64_t tagged = Append("b");
  Append("c");
  Replace("b", "b2");  // b only by the three before, one of them tagged
  const int64_t last = Append("d");
  Commit(Json::array(
      {{{"action", "set-snapshot-ref"}, {"ref-name", "audit"}, {"type", "tag"}, {"snapshot-id", tagged}}}));
  ASSERT_EQ(SnapshotIds().size(), 6u);
  ASSERT_EQ(ManifestListsOnDisk(), 6u);

  // Young snapshots stay whatever their count: nothing to do, nothing committed.
  const int commits_before = catalog_->commits();
  auto nothing = ExpireSnapshots(*catalog_, *io_, kTable, {.min_snapshots_to_keep = 1});
  ASSERT_TRUE(nothing.ok()) << nothing.status().ToString();
  EXPECT_EQ(nothing->snapshots_removed, 0);
  EXPECT_EQ(catalog_->commits(), commits_before);

  // A day later, with snapshots older than an hour expiring and the two newest kept.
  ExpireOptions options;
  options.max_snapshot_age_ms = kHourMs;
  options.min_snapshots_to_keep = 2;
  options.now_ms = ToUnixMillis(Now()) + 24 * kHourMs;
  auto result = ExpireSnapshots(*catalog_, *io_, kTable, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  // Kept: the last two of main and the tagged one.
  std::vector<int64_t> kept = SnapshotIds();
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_NE(std::find(kept.begin(), kept.end(), tagged), kept.end());
  EXPECT_NE(std::find(kept.begin(), kept.end(), last), kept.end());
  EXPECT_EQ(std::find(kept.begin(), kept.end(), first), kept.end());
  EXPECT_EQ(result->snapshots_removed, 3);
  EXPECT_EQ(result->refs_removed, 0);
  EXPECT_EQ(result->manifest_lists_deleted, 3);
  EXPECT_EQ(ManifestListsOnDisk(), 3u);
  // a: reached by no remaining snapshot, deleted; b: the tag still reaches it.
  EXPECT_FALSE(Exists("a"));
  EXPECT_TRUE(Exists("b"));
  EXPECT_EQ(result->data_files_deleted, 1);
  for (const char* name : {"c", "a2", "b2", "d"}) EXPECT_TRUE(Exists(name)) << name;
  // The table reads whole: every live file and manifest is there.
  const iceberg::TableFiles files = Files();
  EXPECT_EQ(files.data.size(), 4u);
  for (const iceberg::LiveFile& live : files.data) EXPECT_TRUE(std::filesystem::exists(live.file.file_path));

  // A tag older than its max-ref-age goes, and with it what only it reached.
  const int64_t deleted_before = result->data_files_deleted;
  Commit(Json::array({{{"action", "set-snapshot-ref"},
                       {"ref-name", "audit"},
                       {"type", "tag"},
                       {"snapshot-id", tagged},
                       {"max-ref-age-ms", kHourMs}}}));
  auto again = ExpireSnapshots(*catalog_, *io_, kTable, options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->refs_removed, 1);
  EXPECT_EQ(again->snapshots_removed, 1);
  EXPECT_FALSE(Exists("b"));
  EXPECT_EQ(again->data_files_deleted, deleted_before);  // b, as a was
  EXPECT_EQ(catalog_->metadata().Refs().count("audit"), 0u);
  EXPECT_EQ(SnapshotIds().size(), 2u);
}

TEST_F(ExpireSnapshotsTest, BranchSettingsAndTablePropertiesWin) {
  Append("a");
  Append("b");
  const int64_t head = Append("c");
  // The table's property asks to keep three; the branch's own setting, two.
  Commit(Json::array(
      {{{"action", "set-properties"}, {"updates", {{"history.expire.min-snapshots-to-keep", "3"}}}}}));
  ExpireOptions options;
  options.max_snapshot_age_ms = kHourMs;
  options.now_ms = ToUnixMillis(Now()) + 24 * kHourMs;
  auto kept_by_property = ExpireSnapshots(*catalog_, *io_, kTable, options);
  ASSERT_TRUE(kept_by_property.ok());
  EXPECT_EQ(kept_by_property->snapshots_removed, 0);
  Commit(Json::array({{{"action", "set-snapshot-ref"},
                       {"ref-name", "main"},
                       {"type", "branch"},
                       {"snapshot-id", head},
                       {"min-snapshots-to-keep", 2}}}));
  auto by_branch = ExpireSnapshots(*catalog_, *io_, kTable, options);
  ASSERT_TRUE(by_branch.ok());
  EXPECT_EQ(by_branch->snapshots_removed, 1);
  EXPECT_EQ(SnapshotIds().size(), 2u);
  EXPECT_TRUE(Exists("a"));  // still live in the current snapshot

  // gc.enabled=false: the files may be another table's, so nothing is expired.
  Commit(Json::array({{{"action", "set-properties"}, {"updates", {{"gc.enabled", "false"}}}}}));
  auto refused = ExpireSnapshots(*catalog_, *io_, kTable, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("gc.enabled=false"), std::string::npos);
}

// A catalog where another writer appends between the job's load and its first commit.
class RacingCatalog final : public iceberg::TableCatalog {
 public:
  RacingCatalog(iceberg::MemoryTableCatalog& inner, std::function<void()> race)
      : inner_(inner), race_(std::move(race)) {}
  Result<iceberg::TableMetadata> LoadTable(const iceberg::TableRef& table) override {
    return inner_.LoadTable(table);
  }
  Status CommitTable(const iceberg::TableRef& table, const iceberg::TableChanges& changes) override {
    if (race_) std::exchange(race_, nullptr)();
    ++attempts_;
    return inner_.CommitTable(table, changes);
  }
  int attempts() const { return attempts_; }

 private:
  iceberg::MemoryTableCatalog& inner_;
  std::function<void()> race_;
  int attempts_ = 0;
};

TEST_F(ExpireSnapshotsTest, AWriterCommittingMeanwhileMakesTheJobPlanAgain) {
  Append("a");
  Replace("a", "a2");
  RacingCatalog racing(*catalog_, [&] { Replace("a2", "a3"); });
  ExpireOptions options;
  options.max_snapshot_age_ms = kHourMs;
  options.min_snapshots_to_keep = 1;
  options.now_ms = ToUnixMillis(Now()) + 24 * kHourMs;
  auto result = ExpireSnapshots(racing, *io_, kTable, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(racing.attempts(), 2);  // the first commit asserted main where it was
  EXPECT_EQ(result->snapshots_removed, 2);
  ASSERT_EQ(SnapshotIds().size(), 1u);
  EXPECT_FALSE(Exists("a"));
  EXPECT_FALSE(Exists("a2"));
  EXPECT_TRUE(Exists("a3"));
}

// Unreferenced files under the same table: what its metadata reaches stays whatever its age,
// the rest goes past its limit, and an unreadable manifest stops the job before any delete.
TEST_F(ExpireSnapshotsTest, UnreferencedFilesGoPastTheirAgeAndReachedOnesNever) {
  Append("a");
  Replace("a", "a2");  // a: reached only by the first snapshot, which is kept
  const std::string table_dir = dir_ + "/t";
  const std::string current = table_dir + "/metadata/00003-current.metadata.json";
  std::ofstream(current) << "{}";
  std::ofstream(table_dir + "/data/orphan.parquet") << "never committed";
  std::ofstream(table_dir + "/stray.txt") << "x";
  std::ofstream(table_dir + "/metadata/00001-dropped.metadata.json") << "{}";
  ListFiles list = [](const std::string& prefix) -> Result<std::vector<ListedFile>> {
    std::string root = prefix.rfind("file://", 0) == 0 ? prefix.substr(7) : prefix;
    std::vector<ListedFile> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      const auto modified = std::chrono::file_clock::to_sys(entry.last_write_time());
      files.push_back(
          {entry.path().string(), static_cast<int64_t>(entry.file_size()),
           std::chrono::duration_cast<std::chrono::milliseconds>(modified.time_since_epoch()).count()});
    }
    return files;
  };
  const size_t before = list("file://" + table_dir + "/")->size();
  constexpr int64_t kDayMs = 24 * kHourMs;
  UnreferencedOptions options;
  options.now_ms = ToUnixMillis(Now()) + 2 * kDayMs;
  options.unreferenced_older_than_ms = kDayMs;
  options.non_current_older_than_ms = 3 * kDayMs;
  auto result = RemoveUnreferencedFiles(*catalog_, *io_, kTable, "file://" + current, list, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->files_listed, static_cast<int64_t>(before));
  EXPECT_EQ(result->files_removed, 2);     // the orphan and the stray file
  EXPECT_EQ(result->files_kept_young, 1);  // the dropped metadata file: three days for those
  EXPECT_FALSE(std::filesystem::exists(table_dir + "/data/orphan.parquet"));
  EXPECT_FALSE(std::filesystem::exists(table_dir + "/stray.txt"));
  EXPECT_TRUE(Exists("a"));  // an old snapshot reaches it
  EXPECT_TRUE(Exists("a2"));
  EXPECT_TRUE(std::filesystem::exists(current));
  EXPECT_EQ(Files().data.size(), 1u);

  options.non_current_older_than_ms = kDayMs;
  auto again = RemoveUnreferencedFiles(*catalog_, *io_, kTable, "file://" + current, list, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->files_removed, 1);
  EXPECT_FALSE(std::filesystem::exists(table_dir + "/metadata/00001-dropped.metadata.json"));

  // A manifest that cannot be read: nothing is deleted.
  std::ofstream(table_dir + "/data/orphan2.parquet") << "never committed";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(table_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".avro") && name.rfind("snap-", 0) != 0) {
      std::filesystem::remove(entry.path());
      break;
    }
  }
  auto refused = RemoveUnreferencedFiles(*catalog_, *io_, kTable, "file://" + current, list, options);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(std::filesystem::exists(table_dir + "/data/orphan2.parquet"));
  // gc.enabled=false: the location may hold another table's files.
  Commit(Json::array({{{"action", "set-properties"}, {"updates", {{"gc.enabled", "false"}}}}}));
  auto not_collected = RemoveUnreferencedFiles(*catalog_, *io_, kTable, "file://" + current, list, options);
  ASSERT_FALSE(not_collected.ok());
  EXPECT_NE(not_collected.status().message().find("gc.enabled=false"), std::string::npos);
}

}  // namespace
}  // namespace serac::maintenance
