// Tests of the pure request rules.
#include <gtest/gtest.h>

#include <algorithm>

#include "catalog/catalog_rules_internal.h"
#include "meta/catalog_locations.h"

namespace serac::catalog {
namespace {

TEST(CatalogRulesTest, QueryParamsDecodeValues) {
  QueryParams params = QueryParams::Parse("warehouse=wh&parent=a%1Fb&pageToken=&flag");
  EXPECT_EQ(params.Get("warehouse"), "wh");
  EXPECT_EQ(params.Get("parent"),
            "a\x1F"
            "b");
  ASSERT_TRUE(params.Has("pageToken"));
  EXPECT_EQ(params.Get("pageToken", "x"), "");
  EXPECT_TRUE(params.Has("flag"));
  EXPECT_FALSE(params.Has("missing"));
}

TEST(CatalogRulesTest, BooleansAreCaseInsensitive) {
  EXPECT_EQ(ParseBoolean("False"), false);
  EXPECT_EQ(ParseBoolean("TRUE"), true);
  EXPECT_EQ(ParseBoolean("yes"), std::nullopt);
}

TEST(CatalogRulesTest, NamespaceSplitsOnUnitSeparator) {
  auto levels = SplitNamespace(
      "a\x1F"
      "b\x1F"
      "c");
  ASSERT_TRUE(levels);
  EXPECT_EQ(*levels, (meta::NamespaceLevels{"a", "b", "c"}));
  EXPECT_FALSE(SplitNamespace("a\x1F"));
  EXPECT_FALSE(SplitNamespace(""));
  EXPECT_EQ(NamespaceDisplayName({"a", "b"}), "a.b");
}

TEST(CatalogRulesTest, WarehouseNamesFollowBucketRulesAndAvoidRouteWords) {
  EXPECT_FALSE(WarehouseNameProblem("analytics"));
  EXPECT_TRUE(WarehouseNameProblem("Analytics"));
  EXPECT_TRUE(WarehouseNameProblem("ab"));
  EXPECT_TRUE(WarehouseNameProblem("namespaces"));
  EXPECT_TRUE(WarehouseNameProblem("192.168.0.1"));
}

TEST(CatalogRulesTest, LocationsStayInsideTheWarehouse) {
  auto parsed = ParseS3Location("s3://wh/a/b");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->bucket, "wh");
  EXPECT_EQ(parsed->key, "a/b");
  EXPECT_FALSE(ParseS3Location("file:///tmp/x"));
  EXPECT_EQ(ClientLocationInWarehouse("s3://wh/db/t/", "wh"), "s3://wh/db/t");
  EXPECT_FALSE(ClientLocationInWarehouse("s3://other/db/t", "wh"));
  EXPECT_FALSE(ClientLocationInWarehouse("s3://wh/", "wh"));  // the root would purge everything
  std::string first = DefaultEntityLocation("wh", {"a", "b"}, "t");
  std::string second = DefaultEntityLocation("wh", {"a", "b"}, "t");
  EXPECT_EQ(first.rfind("s3://wh/a/b/t-", 0), 0u);
  EXPECT_EQ(first.size(), std::string("s3://wh/a/b/t-").size() + 32);
  EXPECT_NE(first, second);
}

TEST(CatalogRulesTest, NamesWithSlashesAreAllowedButNeverSplitALocation) {
  EXPECT_FALSE(EntityNameProblem("tab/le"));
  EXPECT_TRUE(EntityNameProblem(""));
  EXPECT_EQ(meta::LocationSegment("a/b/c"), "a_b_c");
  std::string location = DefaultEntityLocation("wh", {"n/s"}, "tab/le");
  EXPECT_EQ(location.rfind("s3://wh/n_s/tab_le-", 0), 0u) << location;
  EXPECT_EQ(std::count(location.begin(), location.end(), '/'), 4);  // s3:// + wh/n_s/<name>
}

TEST(CatalogRulesTest, PageTokensRoundTrip) {
  EXPECT_EQ(DecodePageToken(EncodePageToken("name\x1F")), "name\x1F");
  EXPECT_FALSE(DecodePageToken("!!!"));
}

TEST(CatalogRulesTest, IfNoneMatchListsAndWeakTags) {
  EXPECT_TRUE(IfNoneMatchMatches("\"a\", W/\"b\"", "\"b\""));
  EXPECT_TRUE(IfNoneMatchMatches("*", "\"b\""));
  EXPECT_FALSE(IfNoneMatchMatches("\"a\"", "\"b\""));
}

}  // namespace
}  // namespace serac::catalog
