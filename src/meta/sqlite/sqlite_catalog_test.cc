// SQLite-specific properties of the catalog tables the contract suite cannot see: namespace paths
// round-trip through their encoding, listings are index range scans without a sort, and a database
// written before the maintenance tables existed gains them when opened.
#include <gtest/gtest.h>

#include <string>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/sqlite_catalog_internal.h"
#include "meta/sqlite/sqlite_meta_store.h"
#include "meta/sqlite/sqlite_schema_internal.h"

namespace serac::meta::sqlite {
namespace {

TEST(NamespacePathTest, RoundTripsLevels) {
  for (const NamespaceLevels& levels :
       {NamespaceLevels{"a"}, NamespaceLevels{"a", "b"}, NamespaceLevels{"a.b", "c/d e", "日本"}}) {
    EXPECT_EQ(DecodeNamespacePath(EncodeNamespacePath(levels)), levels);
  }
  EXPECT_EQ(EncodeNamespacePath({"a", "b"}),
            "a\x1F"
            "b");
  EXPECT_EQ(EncodeNamespacePath({}), "");
  EXPECT_TRUE(DecodeNamespacePath("").empty());
}

TEST(NamespacePathTest, ChildrenOfOneParentSortTogether) {
  // "a" < "a\x1F..." < "a.b": every child path of "a" sorts before a sibling with a longer name.
  EXPECT_LT(EncodeNamespacePath({"a"}), EncodeNamespacePath({"a", "z"}));
  EXPECT_LT(EncodeNamespacePath({"a", "z"}), EncodeNamespacePath({"a!"}));
}

TEST(NamespacePropertiesTest, RoundTripAndRejectGarbage) {
  std::map<std::string, std::string> properties{{"k", "v"}, {"ü", "\"quoted\""}};
  auto decoded = DecodeNamespaceProperties(EncodeNamespaceProperties(properties));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, properties);
  EXPECT_EQ(DecodeNamespaceProperties("[1]").status().code(), ErrorCode::kIoError);
  EXPECT_EQ(DecodeNamespaceProperties("{\"k\":1}").status().code(), ErrorCode::kIoError);
  EXPECT_EQ(DecodeNamespaceProperties("{").status().code(), ErrorCode::kIoError);
}

std::string QueryPlan(Connection& db, const std::string& sql) {
  auto stmt = db.Prepare("EXPLAIN QUERY PLAN " + sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status().ToString();
  if (!stmt.ok()) return {};
  std::string plan;
  for (;;) {
    auto row = (*stmt)->Step();
    if (!row.ok() || !*row) return plan;
    plan += (*stmt)->Text(3) + "\n";
  }
}

class CatalogPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Connection::Open({(dir_.path() / "meta.db").string(), true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    SERAC_ASSERT_OK(MigrateSchema(*db_));
  }

  testing::TempDir dir_;
  std::unique_ptr<Connection> db_;
};

TEST_F(CatalogPlanTest, ListingChildNamespacesIsAnIndexRangeScan) {
  std::string plan = QueryPlan(*db_, ListNamespacesSql());
  EXPECT_NE(plan.find("SEARCH namespaces USING INDEX namespaces_by_parent (warehouse=? AND parent=? AND "
                      "last_level>?)"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
}

TEST_F(CatalogPlanTest, ListingEntitiesOfOneKindIsAnIndexRangeScan) {
  std::string plan = QueryPlan(*db_, ListEntitiesSql());
  EXPECT_NE(plan.find("SEARCH entities USING INDEX entities_by_kind (warehouse=? AND namespace=? AND kind=? "
                      "AND name>?)"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
}

TEST_F(CatalogPlanTest, ListingATablesJobsOfOneTypeReadsItsIndexRangeBackwards) {
  std::string plan = QueryPlan(*db_, ListMaintenanceJobsSql(false));
  EXPECT_NE(plan.find("SEARCH maintenance_jobs USING INDEX maintenance_jobs_by_table (warehouse=? AND "
                      "table_uuid=? AND type=?)"),
            std::string::npos)
      << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;
  plan = QueryPlan(*db_, ListMaintenanceJobsSql(true));
  EXPECT_NE(plan.find("USING INDEX maintenance_jobs_by_table (warehouse=? AND table_uuid=?)"),
            std::string::npos)
      << plan;
}

// The schema of a serac from before table maintenance: the first four migrations.
constexpr size_t kSchemaVersionBeforeMaintenance = 4;

TEST(SchemaUpgradeTest, ADatabaseFromBeforeMaintenanceGainsItsTablesOnOpen) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "meta.db").string();
  {
    auto db = Connection::Open({path, true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_GT(Migrations().size(), kSchemaVersionBeforeMaintenance);
    for (size_t i = 0; i < kSchemaVersionBeforeMaintenance; ++i) {
      std::string sql(Migrations()[i]);
      sql += "\nPRAGMA user_version = " + std::to_string(i + 1) + ";";
      SERAC_ASSERT_OK((*db)->Exec(sql.c_str()));
    }
    SERAC_ASSERT_OK(
        (*db)->Exec("INSERT INTO buckets(name, created_ms) VALUES ('lake', 1);"
                    "INSERT INTO warehouses(name, created_ms) VALUES ('lake', 1);"));
  }
  auto store = OpenSqliteMetaStore({path, true});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CatalogStore& catalog = (*store)->catalog();
  SERAC_EXPECT_OK(catalog.GetWarehouse("lake").status());
  SERAC_ASSERT_OK(catalog.PutMaintenanceSetting({"lake", "", "icebergCompaction", "{}", 2}));
  auto settings = catalog.ListMaintenanceSettings("lake", "");
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  EXPECT_EQ(settings->size(), 1u);
  auto id = catalog.SaveMaintenanceJob({0, "lake", "uuid-t", "icebergCompaction", 3, 0, "running", "{}"});
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_GT(*id, 0);
}

// The schema of a serac from before table locations were confined: the first five migrations.
constexpr size_t kSchemaVersionBeforeLocations = 5;

TEST(SchemaUpgradeTest, EntitiesFromBeforeConfinedLocationsOwnWhatTheirLocationNames) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "meta.db").string();
  {
    auto db = Connection::Open({path, true});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    for (size_t i = 0; i < kSchemaVersionBeforeLocations; ++i) {
      std::string sql(Migrations()[i]);
      sql += "\nPRAGMA user_version = " + std::to_string(i + 1) + ";";
      SERAC_ASSERT_OK((*db)->Exec(sql.c_str()));
    }
    // A table at s3a://lake/a/t/ (a client's scheme and slash), and one registered from before,
    // whose location is in another bucket (it owns nothing here).
    SERAC_ASSERT_OK(
        (*db)->Exec("INSERT INTO buckets(name, created_ms) VALUES ('lake', 1);"
                    "INSERT INTO warehouses(name, created_ms) VALUES ('lake', 1);"
                    "INSERT INTO namespaces(warehouse, path, parent, last_level, properties, created_ms) "
                    "VALUES ('lake', CAST('a' AS BLOB), CAST('' AS BLOB), CAST('a' AS BLOB), '{}', 1);"
                    "INSERT INTO entities VALUES ('lake', CAST('a' AS BLOB), CAST('t' AS BLOB), 0, 'u1', "
                    "'s3a://lake/a/t/', "
                    "'s3a://lake/a/t/metadata/1.metadata.json', 1, 1);"
                    "INSERT INTO entities VALUES ('lake', CAST('a' AS BLOB), CAST('old' AS BLOB), 0, 'u2', "
                    "'s3://other/x', "
                    "'s3://lake/a/old.metadata.json', 1, 1);"));
  }
  auto store = OpenSqliteMetaStore({path, true});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  CatalogStore& catalog = (*store)->catalog();
  EntityRecord attacker;
  attacker.warehouse = "lake";
  attacker.levels = {"a"};
  attacker.name = "attacker";
  attacker.uuid = "u3";
  attacker.location = "s3://lake/a/t/data";
  attacker.metadata_location = "s3://lake/a/t/data/metadata/1.metadata.json";
  EXPECT_EQ(catalog.CreateEntity(attacker).code(), ErrorCode::kValidationFailed);
  attacker.location = "s3://lake/a/x";
  attacker.uuid = "u1";
  EXPECT_EQ(catalog.CreateEntity(attacker).code(), ErrorCode::kValidationFailed);  // t's uuid
  attacker.uuid = "u3";
  SERAC_EXPECT_OK(catalog.CreateEntity(attacker));
  EXPECT_EQ(catalog.CreateNamespace({"lake", {"a", "t"}, {}, 2}).code(), ErrorCode::kValidationFailed);
  // The current metadata file is found whatever scheme its location was written with.
  WriteCondition s3_write;
  s3_write.keep_catalog_metadata = true;
  SERAC_ASSERT_OK((*store)->PutObject(testing::MakeObject("lake", "a/t/metadata/1.metadata.json", "v1"), {}));
  EXPECT_EQ((*store)->DeleteObject("lake", "a/t/metadata/1.metadata.json", s3_write).code(),
            ErrorCode::kAccessDenied);
  // The old entity still renames (it keeps what it had: nothing).
  SERAC_EXPECT_OK(catalog.RenameEntity({"lake", {"a"}, "old", EntityKind::kTable}, {"a"}, "older"));
}

}  // namespace
}  // namespace serac::meta::sqlite
