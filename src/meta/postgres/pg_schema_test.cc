// The PostgreSQL back end's own rules, beyond the contract suites every back end passes: the schema
// is migrated once however many stores open it at the same moment, and a schema newer than this
// build is refused.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "meta/meta_store_test_util.h"
#include "meta/open_meta_store.h"
#include "meta/postgres/pg_connection_internal.h"
#include "meta/postgres/pg_schema_internal.h"
#include "meta/postgres/pg_test_cluster.h"

namespace serac::meta::postgres {
namespace {

Result<int64_t> VersionAt(const std::string& url) {
  SERAC_ASSIGN_OR_RETURN(auto db, PgConnection::Open(url));
  return SchemaVersion(*db);
}

TEST(PostgresSchemaTest, StoresOpenedTogetherMigrateOnce) {
  auto url = testing::TestPostgresUrl("migrate-together");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  constexpr int kStores = 8;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kStores; ++i) {
    threads.emplace_back([&] {
      auto store = OpenMetaStore(*url);
      if (!store.ok()) {
        ++failures;
        ADD_FAILURE() << store.status().ToString();
        return;
      }
      // Each can write at once: the tables are all there.
      (void)(*store)->CreateBucket(BucketRecord{"shared", 1});
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto version = VersionAt(*url);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, static_cast<int64_t>(Migrations().size()));
}

TEST(PostgresSchemaTest, ASchemaNewerThanThisBuildIsRefused) {
  auto url = testing::TestPostgresUrl("newer-schema");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  ASSERT_TRUE(OpenMetaStore(*url).ok());
  {
    auto db = PgConnection::Open(*url);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    SERAC_ASSERT_OK((*db)->Exec("UPDATE serac_schema SET version = version + 1").status());
  }
  auto refused = OpenMetaStore(*url);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("newer than this serac knows"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace serac::meta::postgres
