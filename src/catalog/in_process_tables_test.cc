// The writers' seams inside the server: files on the object path (MakeObjectFileIO) and commits on
// the catalog's commit path (CatalogService::InProcessTables), driven by the same snapshot
// producers and commit loop as the REST client, and seen by REST loads and S3 reads afterwards.
#include "catalog/in_process_tables.h"

#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_test_fixture_internal.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/iceberg.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/write/table_catalog.h"
#include "objects/object_io.h"

namespace serac::catalog {
namespace {

template <typename T, typename U>
T ValueOr(Result<T> result, U fallback) {
  return result.ok() ? std::move(result).value() : T(fallback);
}

class InProcessTablesTest : public CatalogServiceTest {
 protected:
  void SetUp() override {
    CatalogServiceTest::SetUp();
    if (HasFatalFailure()) return;
    io_ = MakeObjectFileIO(*stores_.meta, *stores_.blobs);
    tables_ = service_->InProcessTables(kWarehouse);
  }
  void TearDown() override {
    tables_.reset();
    io_.reset();
    CatalogServiceTest::TearDown();
  }

  // A v3 table db.t; its location.
  std::string NewTable() {
    CreateNamespace(Json::array({"db"}));
    Json created = CreateTable("db", "t", Json{{"properties", {{"format-version", "3"}}}});
    return created["metadata"]["location"].get<std::string>();
  }

  // A data file of `rows` rows whose bytes are an object at its path (the producers never read
  // data files, only the metadata they write).
  iceberg::DataFile Data(const std::string& location, const std::string& name, int64_t rows) {
    iceberg::DataFile file;
    file.file_path = location + "/data/" + name + ".parquet";
    file.record_count = rows;
    auto size = iceberg::WriteFile(*io_, file.file_path, std::string(100 + rows, 'x'));
    EXPECT_TRUE(size.ok()) << size.status().ToString();
    file.file_size_in_bytes = size.ok() ? *size : 0;
    return file;
  }

  Result<int64_t> Append(std::vector<iceberg::DataFile> files) {
    iceberg::SnapshotProducer producer(*io_, iceberg::ProducerKind::kAppend);
    for (iceberg::DataFile& file : files) producer.AddDataFile(std::move(file));
    return iceberg::CommitSnapshot(*tables_, kTable, producer);
  }

  Result<meta::ObjectRecord> Object(const std::string& location) {
    auto parsed = ParseS3Location(location);
    if (!parsed) return Error(ErrorCode::kInvalidArgument, location);
    return stores_.meta->GetObject(parsed->bucket, parsed->key);
  }

  const iceberg::TableRef kTable{{"db"}, "t"};
  std::unique_ptr<iceberg::FileIO> io_;
  std::unique_ptr<iceberg::TableCatalog> tables_;
};

TEST_F(InProcessTablesTest, FilesAreObjectsVisibleOnlyOnceClosed) {
  const std::string small = "s3://lake/files/small.bin";
  const std::string large = "s3://lake/files/large.bin";
  std::string large_bytes(3 * limits::kInlineObjectBytesMax + 17, '\0');
  for (size_t i = 0; i < large_bytes.size(); ++i) large_bytes[i] = static_cast<char>(i * 7 + i / 251);

  auto file = io_->Create(large);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Write(std::string_view(large_bytes).substr(0, 1000)).ok());
  ASSERT_TRUE((*file)->Write(std::string_view(large_bytes).substr(1000)).ok());
  EXPECT_EQ((*file)->bytes_written(), large_bytes.size());
  EXPECT_EQ(io_->Size(large).status().code(), ErrorCode::kNotFound);  // not before Close
  auto closed = (*file)->Close();
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(*closed, large_bytes.size());
  ASSERT_TRUE(iceberg::WriteFile(*io_, small, "tiny").ok());

  // As a PUT stores them: an MD5 ETag and a full-object CRC64NVME, readable by S3 GET's path.
  auto record = Object(large);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_FALSE(record->segments.empty());  // past the inline size: a blob
  const Md5Digest md5 = Md5(large_bytes);
  EXPECT_EQ(record->etag, HexEncode(std::string_view(reinterpret_cast<const char*>(md5.data()), md5.size())));
  ASSERT_TRUE(record->checksum.has_value());
  EXPECT_EQ(record->checksum->algorithm, "CRC64NVME");
  const uint64_t crc = Crc64NvmeUpdate(0, large_bytes.data(), large_bytes.size());
  std::string crc_bytes;
  for (int shift = 56; shift >= 0; shift -= 8) crc_bytes.push_back(static_cast<char>(crc >> shift));
  EXPECT_EQ(record->checksum->value, Base64Encode(crc_bytes));
  EXPECT_EQ(ValueOr(objects::ReadObjectBytes(*stores_.blobs, *record), ""), large_bytes);
  auto small_record = Object(small);
  ASSERT_TRUE(small_record.ok());
  EXPECT_TRUE(small_record->segments.empty());  // inline in the index row
  EXPECT_EQ(small_record->inline_data, "tiny");

  EXPECT_EQ(ValueOr(io_->ReadAll(large, large_bytes.size(), "test"), ""), large_bytes);
  auto too_large = io_->ReadAll(large, large_bytes.size() - 1, "limits::kTest");
  EXPECT_EQ(too_large.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(too_large.status().message().find("limits::kTest"), std::string::npos);
  EXPECT_EQ(ValueOr(io_->Size(large), 0), large_bytes.size());
  // Ranges inside the inline head, across blob reads and at the very end.
  for (auto [offset, length] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 10}, {65530, 70000}, {large_bytes.size() - 5, 5}, {large_bytes.size(), 0}}) {
    EXPECT_EQ(ValueOr(io_->ReadRange(large, offset, length), "?"), large_bytes.substr(offset, length))
        << offset << "+" << length;
  }
  EXPECT_EQ(io_->ReadRange(large, large_bytes.size() - 5, 6).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ValueOr(io_->ReadRange(small, 1, 2), ""), "in");

  // Never replaces an object; an aborted or dropped file leaves nothing.
  auto again = iceberg::WriteFile(*io_, small, "other");
  EXPECT_EQ(again.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(ValueOr(io_->ReadAll(small, 100, "test"), ""), "tiny");
  for (bool abort : {true, false}) {
    auto dropped = io_->Create("s3://lake/files/dropped.bin");
    ASSERT_TRUE(dropped.ok());
    ASSERT_TRUE((*dropped)->Write(large_bytes).ok());
    if (abort) (*dropped)->Abort();
    dropped->reset();
    EXPECT_EQ(io_->Size("s3://lake/files/dropped.bin").status().code(), ErrorCode::kNotFound);
  }

  EXPECT_EQ(iceberg::WriteFile(*io_, "s3://no-such-bucket/x", "x").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(io_->Create("file:///tmp/x").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(io_->Create("s3://lake").status().code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(io_->Delete(large).ok());
  EXPECT_EQ(io_->Size(large).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(io_->Delete(large).ok());  // already gone is fine, as S3's DELETE
}

TEST_F(InProcessTablesTest, ProducersCommitThroughTheCatalogsOwnPath) {
  const std::string location = NewTable();
  auto first = Append({Data(location, "a", 10), Data(location, "b", 20)});
  ASSERT_TRUE(first.ok()) << first.status().ToString();

  // A REST load sees the commit, and its manifests are objects S3 clients can read.
  Json loaded = LoadTable("db", "t");
  EXPECT_EQ(loaded["metadata"]["current-snapshot-id"].get<int64_t>(), *first);
  const Json& snapshot = loaded["metadata"]["snapshots"].back();
  EXPECT_EQ(snapshot["summary"]["total-records"], "30");
  EXPECT_EQ(snapshot["first-row-id"].get<int64_t>(), 0);
  EXPECT_TRUE(Object(snapshot["manifest-list"].get<std::string>()).ok());

  // A row delta with a DV, written and read back through the object path (ranged reads).
  auto metadata = tables_->LoadTable(kTable);
  ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
  auto files = iceberg::ReadTableFiles(*io_, metadata->CurrentSnapshot());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->data.size(), 2u);
  iceberg::DataFileDeletes deletes{files->data[0].file, iceberg::DeletionVector()};
  for (int64_t position : {1, 3, 5}) ASSERT_TRUE(deletes.positions.Add(position).ok());
  std::vector<iceberg::DataFileDeletes> all;
  all.push_back(std::move(deletes));
  auto dvs = iceberg::WriteDeletionVectors(*io_, location + "/data/dv-1.puffin", all);
  ASSERT_TRUE(dvs.ok()) << dvs.status().ToString();
  iceberg::SnapshotProducer delta(*io_, iceberg::ProducerKind::kRowDelta);
  delta.AddDeleteFile(dvs->at(0));
  delta.ValidateFromSnapshot(*first);
  auto second = iceberg::CommitSnapshot(*tables_, kTable, delta);
  ASSERT_TRUE(second.ok()) << second.status().ToString();

  metadata = tables_->LoadTable(kTable);
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->CurrentSnapshot()->snapshot_id, *second);
  files = iceberg::ReadTableFiles(*io_, metadata->CurrentSnapshot());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->deletes.size(), 1u);
  auto positions = iceberg::ReadDeletionVector(*io_, files->deletes[0].file);
  ASSERT_TRUE(positions.ok()) << positions.status().ToString();
  EXPECT_TRUE(positions->Contains(3));
  EXPECT_FALSE(positions->Contains(2));
  EXPECT_EQ(metadata->CurrentSnapshot()->summary.at("total-position-deletes"), "3");
}

// Commits to a table another writer changes meanwhile: the in-process commit loses the race, is
// prepared again on the winner's metadata and lands; nothing is lost.
class RacingCatalog final : public iceberg::TableCatalog {
 public:
  RacingCatalog(iceberg::TableCatalog& inner, std::function<void()> before_first_commit)
      : inner_(inner), before_first_commit_(std::move(before_first_commit)) {}
  Result<iceberg::TableMetadata> LoadTable(const iceberg::TableRef& table) override {
    return inner_.LoadTable(table);
  }
  Status CommitTable(const iceberg::TableRef& table, const iceberg::TableChanges& changes) override {
    if (before_first_commit_) std::exchange(before_first_commit_, nullptr)();
    Status status = inner_.CommitTable(table, changes);
    codes.push_back(status.code());
    return status;
  }
  std::vector<ErrorCode> codes;

 private:
  iceberg::TableCatalog& inner_;
  std::function<void()> before_first_commit_;
};

TEST_F(InProcessTablesTest, LostRaceIsPreparedAgainAndLands) {
  const std::string location = NewTable();
  ASSERT_TRUE(Append({Data(location, "a", 1)}).ok());
  iceberg::DataFile racing = Data(location, "racing", 2);
  RacingCatalog catalog(*tables_, [&] {
    iceberg::SnapshotProducer other(*io_, iceberg::ProducerKind::kAppend);
    other.AddDataFile(racing);
    ASSERT_TRUE(iceberg::CommitSnapshot(*tables_, kTable, other).ok());
  });
  iceberg::SnapshotProducer producer(*io_, iceberg::ProducerKind::kAppend);
  producer.AddDataFile(Data(location, "mine", 3));
  auto committed = iceberg::CommitSnapshot(catalog, kTable, producer);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_EQ(catalog.codes, (std::vector<ErrorCode>{ErrorCode::kConflict, ErrorCode::kOk}));
  auto metadata = tables_->LoadTable(kTable);
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->CurrentSnapshot()->summary.at("total-records"), "6");
  EXPECT_EQ(metadata->CurrentSnapshot()->summary.at("total-data-files"), "3");
}

// A commit given as the REST protocol's JSON arrays, read as the catalog's route reads them.
Status CommitJson(iceberg::TableCatalog& catalog, const iceberg::TableRef& table,
                  std::string_view requirements, std::string_view updates) {
  SERAC_ASSIGN_OR_RETURN(iceberg::TableChanges changes, iceberg::TableChanges::Parse(requirements, updates));
  return catalog.CommitTable(table, changes);
}

TEST_F(InProcessTablesTest, ErrorsAreTheCatalogsOwn) {
  EXPECT_EQ(tables_->LoadTable(kTable).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(CommitJson(*tables_, kTable, "[]", "[]").code(), ErrorCode::kNotFound);
  NewTable();
  auto stale =
      CommitJson(*tables_, kTable,
                 R"([{"type": "assert-table-uuid", "uuid": "00000000-0000-4000-8000-000000000000"}])", "[]");
  EXPECT_EQ(stale.code(), ErrorCode::kConflict) << stale.ToString();
  auto unknown = CommitJson(*tables_, kTable, "[]", R"([{"action": "no-such-action"}])");
  EXPECT_EQ(unknown.code(), ErrorCode::kNotImplemented) << unknown.ToString();
  EXPECT_NE(unknown.message().find("no-such-action"), std::string::npos);
  auto malformed = CommitJson(*tables_, kTable, "[]", "{not json");
  EXPECT_NE(malformed.code(), ErrorCode::kOk);
  EXPECT_NE(malformed.code(), ErrorCode::kInternal) << malformed.ToString();
  auto other_warehouse = service_->InProcessTables("elsewhere")->LoadTable(kTable);
  EXPECT_EQ(other_warehouse.status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace serac::catalog
