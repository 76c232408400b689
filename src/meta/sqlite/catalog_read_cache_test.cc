#include <gtest/gtest.h>

#include "meta/sqlite/catalog_read_cache_internal.h"

namespace serac::meta::sqlite {
namespace {

EntityId TableId(const std::string& name) { return EntityId{"lake", {"db"}, name, EntityKind::kTable}; }

EntityRecord Row(const std::string& name, const std::string& metadata_location) {
  EntityRecord row;
  row.warehouse = "lake";
  row.levels = {"db"};
  row.name = name;
  row.metadata_location = metadata_location;
  return row;
}

// Reads `name` through the cache; `database` is what the read finds, and `during_read` runs while
// the read is in progress (a write landing meanwhile).
std::string Read(CatalogReadCache& cache, const std::string& name, int& database_reads,
                 const std::string& database, const std::function<void()>& during_read = {}) {
  auto row = cache.Entity(TableId(name), [&]() -> Result<EntityRecord> {
    ++database_reads;
    if (during_read) during_read();
    return Row(name, database);
  });
  return row.ok() ? row->metadata_location : row.status().ToString();
}

TEST(CatalogReadCacheTest, ACommitChangesItsRowInPlaceAndKeepsTheOthers) {
  CatalogReadCache cache;
  int reads = 0;
  EXPECT_EQ(Read(cache, "a", reads, "a0"), "a0");
  EXPECT_EQ(Read(cache, "b", reads, "b0"), "b0");
  cache.EntityWritten(TableId("a"), [](EntityRecord& row) {
    row.metadata_location = "a1";
    return true;
  });
  EXPECT_EQ(Read(cache, "a", reads, "not read"), "a1");
  EXPECT_EQ(Read(cache, "b", reads, "not read"), "b0");
  EXPECT_EQ(reads, 2);
  // A row a write removes is read again.
  cache.EntityWritten(TableId("b"), [](EntityRecord&) { return false; });
  EXPECT_EQ(Read(cache, "b", reads, "b-again"), "b-again");
  EXPECT_EQ(reads, 3);
  // Any other catalog write drops every cached table row.
  cache.WriteCommitted();
  EXPECT_EQ(Read(cache, "a", reads, "a-db"), "a-db");
  EXPECT_EQ(reads, 4);
}

TEST(CatalogReadCacheTest, ARowReadBeforeACommitIsNotKeptAfterIt) {
  CatalogReadCache cache;
  int reads = 0;
  // The read finds the old row, and the commit of "t" lands before the read returns: what it read
  // must not be cached, or the next read would serve the row the commit replaced.
  auto commit_t = [&] {
    cache.EntityWritten(TableId("t"), [](EntityRecord& row) {
      row.metadata_location = "m1";
      return true;
    });
  };
  EXPECT_EQ(Read(cache, "t", reads, "m0", commit_t), "m0");
  EXPECT_EQ(Read(cache, "t", reads, "m1"), "m1");
  EXPECT_EQ(reads, 2);
  // A commit of another row meanwhile does not stop this one being cached.
  auto commit_other = [&] { cache.EntityWritten(TableId("other"), [](EntityRecord&) { return true; }); };
  EXPECT_EQ(Read(cache, "u", reads, "u0", commit_other), "u0");
  EXPECT_EQ(Read(cache, "u", reads, "not read"), "u0");
  EXPECT_EQ(reads, 3);
  // Nor is a row read while any other catalog write lands.
  EXPECT_EQ(Read(cache, "v", reads, "v0", [&] { cache.WriteCommitted(); }), "v0");
  EXPECT_EQ(Read(cache, "v", reads, "v1"), "v1");
  EXPECT_EQ(reads, 5);
}

}  // namespace
}  // namespace serac::meta::sqlite
