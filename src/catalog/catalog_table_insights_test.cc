// serac's preview, files and health of a table (catalog_table_insights.cc), through the service
// with real stores: Parquet files written on the object path and committed by the in-process
// catalog, deletes applied, snapshots and tags chosen, errors as IcebergErrorResponse, and the
// s3:GetObject a preview needs besides s3tables:GetTable.
#include "catalog/catalog_test_fixture_internal.h"
#include "catalog/in_process_tables.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/write/snapshot_producer.h"
#include "iceberg/write/table_catalog.h"
#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"

namespace serac::catalog {
namespace {

constexpr char kTable[] = "/_iceberg/v1/lake/namespaces/db/tables/t";

class TableInsightsTest : public CatalogServiceTest {
 protected:
  void SetUp() override {
    CatalogServiceTest::SetUp();
    if (HasFatalFailure()) return;
    io_ = MakeObjectFileIO(*stores_.meta, *stores_.blobs);
    tables_ = service_->InProcessTables(kWarehouse);
    CreateNamespace(Json::array({"db"}));
    CreateTable("db", "t", Json{{"properties", {{"format-version", "2"}}}});
  }
  void TearDown() override {
    tables_.reset();
    io_.reset();
    CatalogServiceTest::TearDown();
  }

  iceberg::TableMetadata Metadata() {
    auto metadata = tables_->LoadTable(kRef);
    EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
    return std::move(metadata).value();
  }

  // One data file of rows (id, "row <id>") for ids [first, last]; its snapshot's id.
  std::pair<iceberg::DataFile, int64_t> Append(int64_t first, int64_t last) {
    const iceberg::TableMetadata table = Metadata();
    auto options = parquet::WriteOptions::FromTableProperties(table.properties());
    EXPECT_TRUE(options.ok());
    auto writer = parquet::DataFileWriter::Make(table.CurrentSchema(), table.DefaultSpec(), *options, *io_,
                                                table.location() + "/data");
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    std::vector<parquet::Row> rows;
    for (int64_t id = first; id <= last; ++id) {
      rows.push_back({parquet::RowValue{iceberg::Datum(id)},
                      parquet::RowValue{iceberg::Datum("row " + std::to_string(id))}});
    }
    EXPECT_TRUE(writer->AppendRows(rows, "test rows", 1).ok());
    auto files = writer->Finish();
    EXPECT_TRUE(files.ok() && files->size() == 1);
    iceberg::SnapshotProducer append(*io_, iceberg::ProducerKind::kAppend);
    append.AddDataFile((*files)[0]);
    auto committed = iceberg::CommitSnapshot(*tables_, kRef, append);
    EXPECT_TRUE(committed.ok()) << committed.status().ToString();
    return {(*files)[0], committed.ok() ? *committed : 0};
  }

  RecordingResponse Get(const std::string& route, const std::string& query = "", CallOptions options = {}) {
    return Call("GET", std::string(kTable) + "/" + route, query, "", std::move(options));
  }

  static std::vector<std::string> FirstCells(const Json& preview) {
    std::vector<std::string> ids;
    for (const Json& row : preview["rows"]) ids.push_back(row[0].get<std::string>());
    return ids;
  }

  const iceberg::TableRef kRef{{"db"}, "t"};
  std::unique_ptr<iceberg::FileIO> io_;
  std::unique_ptr<iceberg::TableCatalog> tables_;
};

TEST_F(TableInsightsTest, AnEmptyTableHasNoRowsFilesOrFindings) {
  auto preview = Get("preview");
  ASSERT_EQ(preview.status(), 200) << preview.body;
  EXPECT_EQ(BodyJson(preview), Json::parse(R"({"snapshot-id": null, "columns": [
      {"name": "id", "type": "long"}, {"name": "data", "type": "string"}],
      "rows": [], "truncated": false, "delete-files-applied": 0})"));
  auto files = Get("files");
  ASSERT_EQ(files.status(), 200) << files.body;
  EXPECT_EQ(BodyJson(files), Json::parse(R"({"snapshot-id": null, "files": [], "truncated": false})"));
  auto health = Get("health");
  ASSERT_EQ(health.status(), 200) << health.body;
  EXPECT_EQ(BodyJson(health)["data-files"], 0);
  EXPECT_EQ(BodyJson(health)["findings"], Json::array());
  // Not advertised.
  auto config = Call("GET", "/_iceberg/v1/config", "warehouse=lake");
  EXPECT_EQ(config.body.find("/preview"), std::string::npos);
}

TEST_F(TableInsightsTest, PreviewAppliesDeletesAndReadsOlderSnapshotsAndTags) {
  auto [first, first_snapshot] = Append(1, 5);
  Append(6, 8);
  // Rows 0 and 4 of the first file (ids 1 and 5) deleted by position.
  auto options = parquet::WriteOptions::FromTableProperties(Metadata().properties());
  ASSERT_TRUE(options.ok());
  auto deletes = parquet::WritePositionDeletes(*io_, Metadata().location() + "/data/pos-deletes.parquet",
                                               first, {0, 4}, *options);
  ASSERT_TRUE(deletes.ok()) << deletes.status().ToString();
  iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
  delta.AddDeleteFile(*deletes);
  ASSERT_TRUE(iceberg::CommitSnapshot(*tables_, kRef, delta).ok());
  ASSERT_EQ(Commit("db", "t", Json::array(),
                   Json::array({Json{{"action", "set-snapshot-ref"},
                                     {"ref-name", "v1"},
                                     {"type", "tag"},
                                     {"snapshot-id", first_snapshot}}}))
                .status(),
            200);

  auto preview = Get("preview");
  ASSERT_EQ(preview.status(), 200) << preview.body;
  Json body = BodyJson(preview);
  std::vector<std::string> ids = FirstCells(body);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"2", "3", "4", "6", "7", "8"}));
  EXPECT_EQ(body["snapshot-id"], Metadata().current_snapshot_id());
  EXPECT_EQ(body["truncated"], false);
  EXPECT_EQ(body["delete-files-applied"], 1);
  EXPECT_EQ(body["columns"][1], (Json{{"name", "data"}, {"type", "string"}}));

  auto limited = Get("preview", "limit=2");
  ASSERT_EQ(limited.status(), 200) << limited.body;
  EXPECT_EQ(BodyJson(limited)["rows"].size(), 2u);
  EXPECT_EQ(BodyJson(limited)["truncated"], true);
  auto exact = Get("preview", "limit=6");
  EXPECT_EQ(BodyJson(exact)["truncated"], false);

  for (const std::string& query : {"snapshot-id=" + std::to_string(first_snapshot), std::string("ref=v1")}) {
    auto old = Get("preview", query);
    ASSERT_EQ(old.status(), 200) << old.body;
    Json old_body = BodyJson(old);
    EXPECT_EQ(FirstCells(old_body), (std::vector<std::string>{"1", "2", "3", "4", "5"})) << query;
    EXPECT_EQ(old_body["snapshot-id"], first_snapshot);
    EXPECT_EQ(old_body["delete-files-applied"], 0);
  }

  auto unknown = Get("preview", "snapshot-id=42");
  EXPECT_EQ(unknown.status(), 404);
  EXPECT_EQ(ErrorType(unknown), "NoSuchSnapshotException");
  EXPECT_EQ(ErrorType(Get("preview", "ref=nope")), "NoSuchSnapshotException");
  EXPECT_EQ(Get("files", "ref=nope").status(), 404);
  EXPECT_EQ(Get("preview", "ref=v1&snapshot-id=1").status(), 400);
  auto too_many = Get("preview", "limit=1001");
  EXPECT_EQ(too_many.status(), 400);
  EXPECT_NE(too_many.body.find("limits::kTablePreviewRowsMax"), std::string::npos) << too_many.body;
  EXPECT_EQ(Get("preview", "limit=ten").status(), 400);
  EXPECT_EQ(Get("preview", "limit=-1").status(), 400);
  EXPECT_EQ(Call("GET", "/_iceberg/v1/lake/namespaces/db/tables/nope/preview").status(), 404);
}

TEST_F(TableInsightsTest, FilesListTheSnapshotsLiveFiles) {
  auto [first, first_snapshot] = Append(1, 5);
  auto [second, second_snapshot] = Append(6, 8);
  auto files = Get("files");
  ASSERT_EQ(files.status(), 200) << files.body;
  Json body = BodyJson(files);
  EXPECT_EQ(body["snapshot-id"], second_snapshot);
  EXPECT_EQ(body["truncated"], false);
  ASSERT_EQ(body["files"].size(), 2u);
  std::map<std::string, Json> by_path;
  for (const Json& file : body["files"]) by_path[file["path"]] = file;
  EXPECT_EQ(by_path[first.file_path], (Json{{"path", first.file_path},
                                            {"content", "data"},
                                            {"format", "parquet"},
                                            {"partition", ""},
                                            {"records", 5},
                                            {"bytes", first.file_size_in_bytes},
                                            {"spec-id", 0}}));
  auto old = Get("files", "snapshot-id=" + std::to_string(first_snapshot));
  ASSERT_EQ(old.status(), 200) << old.body;
  EXPECT_EQ(BodyJson(old)["files"].size(), 1u);
}

TEST_F(TableInsightsTest, HealthFindsSmallFilesAndDeleteFiles) {
  iceberg::DataFile first;
  for (int64_t i = 0; i < 17; ++i) {
    auto appended = Append(i * 10, i * 10 + 9);
    if (i == 0) first = appended.first;
  }
  auto health = Get("health");
  ASSERT_EQ(health.status(), 200) << health.body;
  Json body = BodyJson(health);
  EXPECT_EQ(body["data-files"], 17);
  EXPECT_EQ(body["small-files"], 17);
  EXPECT_EQ(body["small-file-bytes-threshold"], 512LL * 1024 * 1024 / 4 * 3);
  EXPECT_EQ(body["delete-files"], 0);
  EXPECT_EQ(body["snapshots"], 17);
  EXPECT_EQ(body["snapshots-beyond-expiry"], 0);  // all younger than 120 hours
  ASSERT_EQ(body["findings"].size(), 1u) << body.dump();
  EXPECT_EQ(body["findings"][0]["kind"], "small-files");
  EXPECT_EQ(body["findings"][0]["fix"], "icebergCompaction");
  EXPECT_NE(body["findings"][0]["message"].get<std::string>().find("17 data files"), std::string::npos);

  // Two delete files for seventeen data files: a tenth or more.
  auto options = parquet::WriteOptions::FromTableProperties(Metadata().properties());
  ASSERT_TRUE(options.ok());
  iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
  int64_t delete_bytes = 0;
  for (int n = 0; n < 2; ++n) {
    auto deletes = parquet::WritePositionDeletes(
        *io_, Metadata().location() + "/data/d" + std::to_string(n) + ".parquet", first, {n}, *options);
    ASSERT_TRUE(deletes.ok()) << deletes.status().ToString();
    delete_bytes += deletes->file_size_in_bytes;
    delta.AddDeleteFile(*deletes);
  }
  ASSERT_TRUE(iceberg::CommitSnapshot(*tables_, kRef, delta).ok());
  body = BodyJson(Get("health"));
  EXPECT_EQ(body["delete-files"], 2);
  EXPECT_EQ(body["delete-records"], 2);
  EXPECT_EQ(body["bytes-reclaimable"], delete_bytes);
  ASSERT_EQ(body["findings"].size(), 2u) << body.dump();
  EXPECT_EQ(body["findings"][1]["kind"], "delete-files");

  // A data file replaced, and an age limit of 1 ms (the table's property): every snapshot but the
  // current one is beyond expiry, and the replaced file is reached only by them.
  iceberg::SnapshotProducer overwrite(*io_, iceberg::ProducerKind::kOverwrite);
  overwrite.RemoveDataFile(first);
  ASSERT_TRUE(iceberg::CommitSnapshot(*tables_, kRef, overwrite).ok());
  ASSERT_EQ(Commit("db", "t", Json::array(),
                   Json::array({Json{{"action", "set-properties"},
                                     {"updates", {{"history.expire.max-snapshot-age-ms", "1"}}}}}))
                .status(),
            200);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto again = Get("health");
  ASSERT_EQ(again.status(), 200) << again.body;
  body = BodyJson(again);
  EXPECT_EQ(body["snapshots"], 19);
  EXPECT_EQ(body["snapshots-beyond-expiry"], 18);
  EXPECT_EQ(body["bytes-reclaimable"], first.file_size_in_bytes + delete_bytes);
  ASSERT_EQ(body["findings"].size(), 3u) << body.dump();
  EXPECT_EQ(body["findings"][2]["kind"], "snapshots");
  EXPECT_EQ(body["findings"][2]["fix"], "icebergSnapshotManagement");
  // Nothing was expired or deleted by looking.
  EXPECT_EQ(Metadata().snapshot_count(), 19u);
  EXPECT_TRUE(io_->Size(first.file_path).ok());
}

TEST_F(TableInsightsTest, AMissingDataFileIsAnErrorNamingIt) {
  auto [file, snapshot] = Append(1, 3);
  ASSERT_TRUE(io_->Delete(file.file_path).ok());
  auto preview = Get("preview");
  EXPECT_EQ(preview.status(), 500) << preview.body;
  EXPECT_NE(BodyJson(preview)["error"]["message"].get<std::string>().find(file.file_path), std::string::npos)
      << preview.body;
  EXPECT_EQ(Get("files").status(), 200);  // listing reads only the manifests
}

TEST_F(TableInsightsTest, APreviewAlsoNeedsToReadTheTablesFiles) {
  Append(1, 2);
  constexpr char kCatalogOnly[] = R"({"Version":"2012-10-17","Statement":[
    {"Effect":"Allow","Action":"s3tables:GetTable","Resource":"arn:aws:s3tables:::bucket/lake/*"}]})";
  constexpr char kWithFiles[] = R"({"Version":"2012-10-17","Statement":[
    {"Effect":"Allow","Action":"s3tables:GetTable","Resource":"arn:aws:s3tables:::bucket/lake/*"},
    {"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::lake/db/t/*"}]})";
  ASSERT_TRUE(stores_.identity->PutPolicy("catalog-only", kCatalogOnly).ok());
  ASSERT_TRUE(stores_.identity->PutPolicy("with-files", kWithFiles).ok());
  const std::vector<std::pair<std::string, std::string>> users = {{"cataloger", "catalog-only"},
                                                                  {"reader", "with-files"}};
  for (const auto& [name, policy] : users) {
    ASSERT_TRUE(stores_.identity->CreateUser(name, {policy}).ok());
    ASSERT_TRUE(stores_.identity->CreateAccessKey(name, "", name + "KEY", name + "-secret-0123456789").ok());
  }
  auto as = [](const std::string& name) {
    CallOptions options;
    options.access_key = name + "KEY";
    options.secret = name + "-secret-0123456789";
    return options;
  };
  auto denied = Get("preview", "", as("cataloger"));
  EXPECT_EQ(denied.status(), 403) << denied.body;
  EXPECT_EQ(ErrorType(denied), "ForbiddenException");
  EXPECT_NE(denied.body.find("s3:GetObject"), std::string::npos) << denied.body;
  EXPECT_EQ(Get("files", "", as("cataloger")).status(), 200);
  EXPECT_EQ(Get("health", "", as("cataloger")).status(), 200);
  auto allowed = Get("preview", "", as("reader"));
  EXPECT_EQ(allowed.status(), 200) << allowed.body;
  EXPECT_EQ(BodyJson(allowed)["rows"].size(), 2u);
}

}  // namespace
}  // namespace serac::catalog
