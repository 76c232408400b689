#include "meta/meta_migration.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/hash.h"
#include "meta/fault_injection_meta_store.h"
#include "meta/meta_store_test_util.h"
#include "meta/open_meta_store.h"
#include "meta/postgres/pg_test_cluster.h"

namespace serac::meta {
namespace {

using testing::MakeObject;
using testing::TempDir;

const std::vector<std::string> kBuiltinPolicies = {"readonly", "readwrite"};
constexpr char kMetadataKey[] = "sales/orders/metadata/00001-6a1b.metadata.json";

Piece SharedPiece(const std::string& text) {
  Piece piece;
  piece.size = text.size();
  const Sha256Digest digest = Sha256(text);
  piece.sha256.assign(reinterpret_cast<const char*>(digest.data()), digest.size());
  piece.shared = std::make_shared<const std::string>(text);
  return piece;
}

Piece InlinePiece(ObjectRecord& object, const std::string& text) {
  object.inline_data += text;
  return Piece{text.size(), "", nullptr};
}

// A single node's state with one of everything the migration moves.
void Populate(MetaStore& store) {
  store.iam().SetBuiltinPolicyNames(kBuiltinPolicies);
  SERAC_ASSERT_OK(store.CreateBucket({"photos", 1000}));
  SERAC_ASSERT_OK(store.CreateBucket({"empty-bucket", 1001}));

  ObjectRecord small = MakeObject("photos", "notes/small.txt", "5d41402abc4b2a76b9719d911017c592");
  small.inline_data = "hello";
  small.size = 5;
  small.headers.content_type = "text/plain";
  small.headers.user_metadata = {{"owner", "ann"}};
  small.headers.tags = {{"team", "blue"}};
  small.checksum = ChecksumRecord{"CRC64NVME", "AAAAAAAAAAA=", "FULL_OBJECT"};
  SERAC_ASSERT_OK(store.PutObject(small, {}));
  ObjectRecord large =
      MakeObject("photos", "raw/large.bin", "0123456789abcdef0123456789abcdef-2",
                 {{"aaaa0000000000000000000000000001", 5 << 20}, {"aaaa0000000000000000000000000002", 77}});
  large.part_count = 2;
  large.mtime_ms = 1700000000123;
  SERAC_ASSERT_OK(store.PutObject(large, {}));
  ObjectRecord blob = MakeObject("photos", "raw/one-blob.bin", "fedcba9876543210fedcba9876543210",
                                 {{"aaaa0000000000000000000000000003", 200000}});
  SERAC_ASSERT_OK(store.PutObject(blob, {}));
  ObjectRecord nothing = MakeObject("photos", "zero", "d41d8cd98f00b204e9800998ecf8427e");
  SERAC_ASSERT_OK(store.PutObject(nothing, {}));

  UploadRecord upload{"upload-1", "photos", "video.mp4", 1700000000500, {}, "CRC32", "COMPOSITE"};
  upload.headers.content_type = "video/mp4";
  SERAC_ASSERT_OK(store.CreateUpload(upload));
  SERAC_ASSERT_OK(store.PutPart(
      "upload-1", {1, 5 << 20, "e1", 1700000000600, "bbbb0000000000000000000000000001", "c1=="}));
  SERAC_ASSERT_OK(
      store.PutPart("upload-1", {2, 100, "e2", 1700000000700, "bbbb0000000000000000000000000002", "c2=="}));

  CatalogStore& catalog = store.catalog();
  SERAC_ASSERT_OK(catalog.CreateWarehouse({"lake", 2000}, false));
  // The table's current metadata file, written in pieces as the catalog writes it.
  ObjectRecord metadata = MakeObject("lake", kMetadataKey, "99999999999999999999999999999999-3");
  metadata.pieces.push_back(InlinePiece(metadata, "{\"format-version\":2,"));
  metadata.pieces.push_back(SharedPiece("\"snapshots\":[{\"snapshot-id\":1}],"));
  metadata.pieces.push_back(InlinePiece(metadata, "\"x\":1}"));
  for (const Piece& piece : metadata.pieces) metadata.size += piece.size;
  SERAC_ASSERT_OK(store.PutObject(metadata, {}));
  ObjectRecord data =
      MakeObject("lake", "sales/orders/data/part-0.parquet", "abababababababababababababababab",
                 {{"aaaa0000000000000000000000000004", 4096}});
  SERAC_ASSERT_OK(store.PutObject(data, {}));

  SERAC_ASSERT_OK(catalog.CreateNamespace({"lake", {"sales"}, {{"owner", "ann"}}, 2100}));
  SERAC_ASSERT_OK(
      catalog.CreateNamespace({"lake", {"sales", "eu"}, {{"comment", "Europe"}, {"a", "b"}}, 2200}));
  SERAC_ASSERT_OK(catalog.CreateNamespace({"lake", {"empty"}, {}, 2300}));
  EntityRecord table{"lake",
                     {"sales"},
                     "orders",
                     EntityKind::kTable,
                     "uuid-orders",
                     "s3://lake/sales/orders",
                     std::string("s3://lake/") + kMetadataKey,
                     2400,
                     2500};
  SERAC_ASSERT_OK(catalog.CreateEntity(table));
  EntityRecord view{"lake",
                    {"sales", "eu"},
                    "recent",
                    EntityKind::kView,
                    "uuid-recent",
                    "s3://lake/sales/eu/recent",
                    "s3://lake/sales/eu/recent/metadata/00000-1.metadata.json",
                    2600,
                    2700};
  SERAC_ASSERT_OK(catalog.CreateEntity(view));
  SERAC_ASSERT_OK(
      catalog.PutMaintenanceSetting({"lake", "", "icebergCompaction",
                                     R"({"status":"enabled","settings":{"targetFileSizeMB":256}})", 2800}));
  SERAC_ASSERT_OK(catalog.PutMaintenanceSetting(
      {"lake", "uuid-orders", "icebergSnapshotManagement", R"({"status":"disabled"})", 2900}));
  for (int i = 0; i < 3; ++i) {
    MaintenanceJobRecord job{0,        "lake",   "uuid-orders", "icebergCompaction",
                             3000 + i, 3100 + i, "succeeded",   R"({"files":)" + std::to_string(i) + "}"};
    ASSERT_TRUE(catalog.SaveMaintenanceJob(job).ok());
  }

  IamStore& iam = store.iam();
  SERAC_ASSERT_OK(iam.PutPolicy({"read-photos", R"({"Version":"2012-10-17","Statement":[]})", 4000, 4100}));
  SERAC_ASSERT_OK(iam.CreateUser({"ann", true, 4200, {"read-photos", "readonly"}}));
  SERAC_ASSERT_OK(iam.CreateUser({"bob", false, 4300, {}}));
  SERAC_ASSERT_OK(
      iam.CreateAccessKey({"AKIAANN", "ann", std::string("\x01sealed\x00\xff", 9), true, 4400, "laptop"}));
  SERAC_ASSERT_OK(iam.CreateAccessKey({"AKIABOB", "bob", "sealed-bob", false, 4500, ""}));
}

class MetaMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = OpenMetaStore("sqlite:" + (dir_.path() / "meta.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    source_ = std::move(opened).value();
    Populate(*source_);
  }

  // A fresh, empty PostgreSQL store (a schema of its own per name).
  std::unique_ptr<MetaStore> OpenTarget(const std::string& name) {
    auto url = meta::testing::TestPostgresUrl(dir_.path().string() + "/" + name);
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    if (!url.ok()) return nullptr;
    auto opened = OpenMetaStore(*url);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  std::unique_ptr<FaultInjectionMetaStore> OpenFaultyTarget(const std::string& name) {
    auto url = meta::testing::TestPostgresUrl(dir_.path().string() + "/" + name);
    EXPECT_TRUE(url.ok()) << url.status().ToString();
    if (!url.ok()) return nullptr;
    auto opened = FaultInjectionMetaStore::Open([url = *url] { return OpenMetaStore(url); });
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  Result<MigrationReport> Migrate(MetaStore& target) {
    MigrationOptions options;
    options.builtin_policy_names = kBuiltinPolicies;
    return MigrateMetaStore(*source_, target, options);
  }

  void ExpectSame(MetaStore& target) {
    auto compared = CompareMetaStores(*source_, target, 10);
    ASSERT_TRUE(compared.ok()) << compared.status().ToString();
    EXPECT_EQ(compared->difference_count, 0u);
    for (const std::string& difference : compared->differences) ADD_FAILURE() << difference;
    EXPECT_EQ(compared->objects, 6u);
    EXPECT_EQ(compared->tables, 1u);
    EXPECT_EQ(compared->maintenance_jobs, 3u);
    EXPECT_EQ(compared->access_keys, 2u);
  }

  TempDir dir_;
  std::unique_ptr<MetaStore> source_;
};

TEST_F(MetaMigrationTest, MovesEveryRecordIntoPostgres) {
  std::unique_ptr<MetaStore> target = OpenTarget("whole");
  ASSERT_NE(target, nullptr);
  auto report = Migrate(*target);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->buckets.copied, 3u);  // photos, empty-bucket and the warehouse's
  EXPECT_EQ(report->objects.copied, 6u);
  EXPECT_EQ(report->uploads.copied, 1u);
  EXPECT_EQ(report->parts.copied, 2u);
  EXPECT_EQ(report->warehouses.copied, 1u);
  EXPECT_EQ(report->namespaces.copied, 3u);
  EXPECT_EQ(report->tables.copied, 1u);
  EXPECT_EQ(report->views.copied, 1u);
  EXPECT_EQ(report->maintenance_settings.copied, 2u);
  EXPECT_EQ(report->maintenance_jobs.copied, 3u);
  EXPECT_EQ(report->policies.copied, 1u);
  EXPECT_EQ(report->users.copied, 2u);
  EXPECT_EQ(report->access_keys.copied, 2u);
  ExpectSame(*target);

  // Bytes kept in the row arrive whole, pieces joined; blob segments name the same blobs.
  auto metadata = target->GetObject("lake", kMetadataKey);
  ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
  EXPECT_EQ(metadata->inline_data, "{\"format-version\":2,\"snapshots\":[{\"snapshot-id\":1}],\"x\":1}");
  EXPECT_EQ(metadata->etag, "99999999999999999999999999999999-3");
  auto small = target->GetObject("photos", "notes/small.txt");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->inline_data, "hello");
  EXPECT_EQ(small->headers.tags, (std::vector<std::pair<std::string, std::string>>{{"team", "blue"}}));
  auto large = target->GetObject("photos", "raw/large.bin");
  ASSERT_TRUE(large.ok());
  ASSERT_EQ(large->segments.size(), 2u);
  EXPECT_EQ(large->segments[1].blob_id, "aaaa0000000000000000000000000002");
  // The table keeps its uuid, locations and both times.
  auto table = target->catalog().GetEntity({"lake", {"sales"}, "orders", EntityKind::kTable});
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(table->uuid, "uuid-orders");
  EXPECT_EQ(table->created_ms, 2400);
  EXPECT_EQ(table->updated_ms, 2500);
  // The sealed secret as it was, and an attachment of a built-in policy.
  auto key = target->iam().GetAccessKey("AKIAANN");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->sealed_secret, std::string("\x01sealed\x00\xff", 9));
  auto ann = target->iam().GetUser("ann");
  ASSERT_TRUE(ann.ok());
  EXPECT_EQ(ann->policies, (std::vector<std::string>{"read-photos", "readonly"}));
  // Nothing was replaced, so nothing was queued for collection.
  auto garbage = target->PeekGarbage(10);
  ASSERT_TRUE(garbage.ok());
  EXPECT_TRUE(garbage->empty());

  // A second run finds everything there and writes nothing.
  auto again = Migrate(*target);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(
      again->objects.copied + again->tables.copied + again->maintenance_jobs.copied + again->users.copied,
      0u);
  EXPECT_EQ(again->objects.present, 6u);
  EXPECT_EQ(again->maintenance_jobs.present, 3u);
  EXPECT_EQ(again->access_keys.present, 2u);
  ExpectSame(*target);
}

// A run that stops at any write — one that never happened, or one that happened but whose answer
// was lost — is finished by the next run, with nothing duplicated or lost.
TEST_F(MetaMigrationTest, ResumesAfterAnInterruptionAtAnyWrite) {
  std::unique_ptr<FaultInjectionMetaStore> counter = OpenFaultyTarget("count");
  ASSERT_NE(counter, nullptr);
  ASSERT_TRUE(Migrate(*counter).ok());
  const uint64_t writes = counter->mutation_count();
  ASSERT_GT(writes, 20u);
  for (FaultTiming timing : {FaultTiming::kBeforeDelegating, FaultTiming::kAfterDelegating}) {
    for (uint64_t n = 1; n <= writes; ++n) {
      const bool after = timing == FaultTiming::kAfterDelegating;
      SCOPED_TRACE("write " + std::to_string(n) + (after ? ", answer lost" : ", not made"));
      std::unique_ptr<FaultInjectionMetaStore> target =
          OpenFaultyTarget(std::string(after ? "after-" : "before-") + std::to_string(n));
      ASSERT_NE(target, nullptr);
      target->FailNthMutation(n, timing);
      auto stopped = Migrate(*target);
      ASSERT_FALSE(stopped.ok());
      EXPECT_EQ(stopped.status().code(), ErrorCode::kIoError);
      target->DisarmFault();
      auto resumed = Migrate(*target);
      ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
      ExpectSame(*target);
      auto garbage = target->PeekGarbage(10);
      ASSERT_TRUE(garbage.ok());
      EXPECT_TRUE(garbage->empty());
    }
  }
}

TEST_F(MetaMigrationTest, TheCheckNamesEveryDifference) {
  std::unique_ptr<MetaStore> target = OpenTarget("differences");
  ASSERT_NE(target, nullptr);
  ASSERT_TRUE(Migrate(*target).ok());
  ObjectRecord changed = MakeObject("photos", "notes/small.txt", "00000000000000000000000000000000");
  changed.inline_data = "HELLO";
  changed.size = 5;
  SERAC_ASSERT_OK(target->PutObject(changed, {}));
  SERAC_ASSERT_OK(target->PutObject(MakeObject("photos", "notes/extra", "e"), {}));
  SERAC_ASSERT_OK(target->DeleteObject("photos", "zero", {}));
  SERAC_ASSERT_OK(target->catalog().UpdateNamespaceProperties("lake", {"sales", "eu"}, {{}, {"a"}}).status());
  SERAC_ASSERT_OK(target->iam().SetUserEnabled("ann", false));
  SERAC_ASSERT_OK(
      target->catalog().SwapMetadataLocations({{{"lake", {"sales"}, "orders", EntityKind::kTable},
                                                std::string("s3://lake/") + kMetadataKey,
                                                "s3://lake/sales/orders/metadata/00002-7c2d.metadata.json",
                                                ""}}));

  auto compared = CompareMetaStores(*source_, *target, 3);
  ASSERT_TRUE(compared.ok()) << compared.status().ToString();
  EXPECT_EQ(compared->difference_count, 6u);
  ASSERT_EQ(compared->differences.size(), 3u);  // only as many as asked for
  EXPECT_EQ(compared->differences[0], "object photos/notes/extra: only in the target");
  EXPECT_NE(compared->differences[1].find("object photos/notes/small.txt differs: source size 5, etag "
                                          "5d41402abc4b2a76b9719d911017c592"),
            std::string::npos)
      << compared->differences[1];
  EXPECT_EQ(compared->differences[2], "object photos/zero: missing in the target");

  auto all = CompareMetaStores(*source_, *target, 100);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->differences.size(), 6u);
  EXPECT_NE(all->differences[3].find("namespace lake/sales.eu differs"), std::string::npos)
      << all->differences[3];
  EXPECT_NE(all->differences[4].find("table lake/sales.orders differs"), std::string::npos)
      << all->differences[4];
  EXPECT_NE(all->differences[4].find("00002-7c2d"), std::string::npos) << all->differences[4];
  EXPECT_NE(all->differences[5].find("user ann differs: source enabled"), std::string::npos)
      << all->differences[5];

  // Migrating again mends what it can: the changed object, the namespace, the table and the user
  // are made as in the source, the deleted object comes back; what only the target has stays.
  ASSERT_TRUE(Migrate(*target).ok());
  auto mended = CompareMetaStores(*source_, *target, 100);
  ASSERT_TRUE(mended.ok());
  ASSERT_EQ(mended->differences.size(), 1u);
  EXPECT_EQ(mended->differences[0], "object photos/notes/extra: only in the target");
}

}  // namespace
}  // namespace serac::meta
