// OpenMetaStore: URLs choose the back end; what a URL does not name is refused with the URL in the
// message.
#include "meta/open_meta_store.h"

#include <gtest/gtest.h>

#include <string>

#include "meta/meta_store_test_util.h"

namespace serac::meta {
namespace {

using testing::TempDir;

TEST(OpenMetaStoreTest, SqliteUrlOpensTheDatabaseAtItsPath) {
  TempDir dir;
  const std::string path = (dir.path() / "meta.db").string();
  {
    auto store = OpenMetaStore("sqlite:" + path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    SERAC_ASSERT_OK((*store)->CreateBucket(BucketRecord{"bkt", 1}));
  }
  // sqlite:///abs/path is the same file as sqlite:/abs/path.
  auto reopened = OpenMetaStore("sqlite://" + path, {.fsync = false});
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto bucket = (*reopened)->GetBucket("bkt");
  ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
  EXPECT_EQ(bucket->created_ms, 1);
  EXPECT_EQ(DefaultMetaStoreUrl("/var/lib/serac"), "sqlite:/var/lib/serac/meta.db");
}

TEST(OpenMetaStoreTest, UnknownSchemesAndEmptyLocationsAreRefusedByName) {
  for (const char* url : {"", "sqlite:", "mysql://serac@db/serac", "/tmp/meta.db", "SQLITE:/tmp/x"}) {
    auto refused = OpenMetaStore(url);
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << url;
    EXPECT_NE(refused.status().message().find(std::string("\"") + url + "\""), std::string::npos)
        << refused.status().message();
  }
}

TEST(OpenMetaStoreTest, APostgresServerThatCannotBeReachedIsNamedWithoutThePassword) {
  for (const char* url : {"postgresql://serac:hunter2@127.0.0.1:1/serac?connect_timeout=2",
                          "postgres://serac@127.0.0.1:1/serac?password=hunter2&connect_timeout=2"}) {
    auto refused = OpenMetaStore(url);
    EXPECT_EQ(refused.status().code(), ErrorCode::kUnavailable) << url;
    EXPECT_NE(refused.status().message().find("PostgreSQL"), std::string::npos) << refused.status().message();
    EXPECT_EQ(refused.status().message().find("hunter2"), std::string::npos) << refused.status().message();
  }
  EXPECT_TRUE(IsSharedMetaStoreUrl("postgresql://h/db"));
  EXPECT_TRUE(IsSharedMetaStoreUrl("postgres://h/db"));
  EXPECT_FALSE(IsSharedMetaStoreUrl("sqlite:/var/lib/serac/meta.db"));
}

}  // namespace
}  // namespace serac::meta
