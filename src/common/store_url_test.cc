#include "common/store_url.h"

#include <gtest/gtest.h>

namespace serac {
namespace {

TEST(StoreUrl, TakesThePathAfterTheScheme) {
  EXPECT_EQ(StoreUrlLocation("file:/srv/blobs", "file:"), "/srv/blobs");
  EXPECT_EQ(StoreUrlLocation("file:relative/dir", "file:"), "relative/dir");
}

TEST(StoreUrl, AnEmptyAuthorityLeavesTheAbsolutePath) {
  EXPECT_EQ(StoreUrlLocation("sqlite:///var/lib/meta.db", "sqlite:"), "/var/lib/meta.db");
}

TEST(StoreUrl, AnotherSchemeOrNoLocationIsNotThisBackEnd) {
  EXPECT_EQ(StoreUrlLocation("postgres://db/serac", "sqlite:"), std::nullopt);
  EXPECT_EQ(StoreUrlLocation("sqlite:", "sqlite:"), std::nullopt);
  EXPECT_EQ(StoreUrlLocation("/srv/blobs", "file:"), std::nullopt);
}

TEST(StoreUrl, TheRefusalNamesTheStoreTheUrlAndTheAcceptedForms) {
  Status status = UnknownStoreUrl("blob store", "s3://bucket", "file:DIR");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("blob store \"s3://bucket\""), std::string::npos);
  EXPECT_NE(status.message().find("file:DIR"), std::string::npos);
}

}  // namespace
}  // namespace serac
