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

}  // namespace
}  // namespace serac::meta::sqlite
