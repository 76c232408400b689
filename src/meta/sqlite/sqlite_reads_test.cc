// SQLite-specific properties the contract suite cannot see: listings must be index range scans
// (fast on millions of keys), the prefix successor must be exact at the byte edges, and the
// inline bytes of objects in pieces are stored compressed while rows of the plain form still read.
#include <gtest/gtest.h>

#include "meta/meta_store_test_util.h"
#include "meta/sqlite/sqlite_meta_store.h"
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

std::string QueryText(Connection& db, const std::string& sql) {
  auto stmt = db.Prepare(sql);
  EXPECT_TRUE(stmt.ok()) << stmt.status().ToString();
  if (!stmt.ok()) return {};
  auto row = (*stmt)->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  return row.ok() && *row ? (*stmt)->Text(0) : std::string();
}

TEST(InlinePiecesTest, AreStoredCompressedAndRowsOfThePlainFormStillRead) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "meta.db").string();
  auto store = OpenSqliteMetaStore({path, false});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  SERAC_ASSERT_OK((*store)->CreateBucket({"bucket", 1000}));
  std::string head = R"({"format-version":2,"metadata-log":[)";
  for (int i = 0; i < 100; ++i) {
    head += R"({"metadata-file":"s3://bucket/t/metadata/)" + std::to_string(i) +
            R"(.metadata.json","timestamp-ms":1},)";
  }
  ObjectRecord object = testing::MakeObject("bucket", "t/metadata/100.metadata.json", "etag");
  object.inline_data = head;
  object.size = head.size();
  object.pieces.push_back(Piece{head.size(), "", nullptr});
  SERAC_ASSERT_OK((*store)->PutObject(object, {}));

  auto db = Connection::Open({path, true});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  const int64_t stored = std::stoll(QueryText(**db, "SELECT length(data) FROM inline_data;"));
  EXPECT_LT(stored * 4, static_cast<int64_t>(head.size()));
  EXPECT_EQ(QueryText(**db, "SELECT pieces FROM objects;"),
            R"({"inline":"zstd","pieces":[[)" + std::to_string(head.size()) + "]]}");
  EXPECT_EQ((*store)->GetObject("bucket", object.key)->inline_data, head);

  // The same object as an earlier version stored it: plain bytes and a bare list of pieces.
  auto plain = (*db)->Prepare("UPDATE inline_data SET data = ?1;");
  ASSERT_TRUE(plain.ok());
  SERAC_ASSERT_OK((*plain)->BindBlob(1, head).Run());
  SERAC_ASSERT_OK(
      (*db)->Exec(("UPDATE objects SET pieces = '[[" + std::to_string(head.size()) + "]]';").c_str()));
  EXPECT_EQ((*store)->GetObject("bucket", object.key)->inline_data, head);
  // A damaged compressed row is reported, not returned.
  SERAC_ASSERT_OK((*db)->Exec(("UPDATE objects SET pieces = '{\"inline\":\"zstd\",\"pieces\":[[" +
                               std::to_string(head.size()) + "]]}';")
                                  .c_str()));
  EXPECT_EQ((*store)->GetObject("bucket", object.key).status().code(), ErrorCode::kInternal);
}

}  // namespace
}  // namespace serac::meta::sqlite
