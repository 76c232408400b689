// SQLite-specific properties the contract suite cannot see: listings must be index range scans
// (fast on millions of keys), and the prefix successor must be exact at the byte edges.
#include <gtest/gtest.h>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/sqlite_reads_internal.h"
#include "meta/sqlite/sqlite_schema_internal.h"

namespace serac::meta::sqlite {
namespace {

TEST(PrefixSuccessorTest, IncrementsTheLastByteBelow0xFF) {
  EXPECT_EQ(PrefixSuccessor("abc"), "abd");
  EXPECT_EQ(PrefixSuccessor("a/"), "a0");
  EXPECT_EQ(PrefixSuccessor("a\x7F"), "a\x80");
  EXPECT_EQ(PrefixSuccessor("a\xFF\xFF"), "b");
  EXPECT_EQ(PrefixSuccessor(std::string("\0", 1)), std::string("\x01", 1));
  EXPECT_EQ(PrefixSuccessor("\xFF\xFF"), std::nullopt);
  EXPECT_EQ(PrefixSuccessor(""), std::nullopt);
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

TEST(ListObjectsPlanTest, EveryVariantIsAPrimaryKeyRangeSearch) {
  testing::TempDir dir;
  auto db = Connection::Open({(dir.path() / "meta.db").string(), true});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  SERAC_ASSERT_OK(MigrateSchema(**db));
  for (bool details : {false, true}) {
    for (bool inclusive : {false, true}) {
      for (bool upper : {false, true}) {
        std::string plan = QueryPlan(**db, ListObjectsSql(details, inclusive, upper));
        std::string expected = std::string("SEARCH objects USING PRIMARY KEY (bucket=? AND key>") +
                               (upper ? "? AND key<?)" : "?)");
        EXPECT_NE(plan.find(expected), std::string::npos) << plan;
        EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << "listing sorts rows: " << plan;
      }
    }
  }
}

}  // namespace
}  // namespace serac::meta::sqlite
