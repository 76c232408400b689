// SQLite-specific properties of the catalog tables the contract suite cannot see: namespace paths
// round-trip through their encoding, and listings are index range scans without a sort.
#include <gtest/gtest.h>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/sqlite_catalog_internal.h"
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

}  // namespace
}  // namespace serac::meta::sqlite
