#include "client/catalog_requests.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace serac::client {
namespace {

using Json = nlohmann::json;

TEST(ParseNamespaceTest, SplitsDottedLevels) {
  Result<NamespaceLevels> levels = ParseNamespace("sales.eu.2024");
  ASSERT_TRUE(levels.ok());
  EXPECT_EQ(*levels, (NamespaceLevels{"sales", "eu", "2024"}));
  EXPECT_EQ(*ParseNamespace("one"), NamespaceLevels{"one"});
}

TEST(ParseNamespaceTest, RejectsEmptyLevels) {
  for (const char* bad : {"", ".", "a..b", ".a", "a."}) {
    Result<NamespaceLevels> levels = ParseNamespace(bad);
    ASSERT_FALSE(levels.ok()) << bad;
    EXPECT_EQ(levels.status().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(EncodeNamespaceTest, JoinsEncodedLevelsWithUnitSeparator) {
  EXPECT_EQ(EncodeNamespace({"a"}), "a");
  EXPECT_EQ(EncodeNamespace({"a", "b c", "d/e"}), "a%1Fb%20c%1Fd%2Fe");
  EXPECT_EQ(EncodeNamespace({"x%y"}), "x%25y");
}

TEST(ParseQualifiedNameTest, SplitsAtLastDot) {
  Result<QualifiedName> name = ParseQualifiedName("a.b.events");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(name->levels, (NamespaceLevels{"a", "b"}));
  EXPECT_EQ(name->name, "events");
  EXPECT_FALSE(ParseQualifiedName("events").ok());
  EXPECT_FALSE(ParseQualifiedName("a.").ok());
  EXPECT_FALSE(ParseQualifiedName(".t").ok());
}

TEST(ParsePropertyTest, SplitsAtFirstEquals) {
  auto property = ParseProperty("owner=alice=bob");
  ASSERT_TRUE(property.ok());
  EXPECT_EQ(property->first, "owner");
  EXPECT_EQ(property->second, "alice=bob");
  property = ParseProperty("empty=");
  ASSERT_TRUE(property.ok());
  EXPECT_EQ(property->second, "");
  EXPECT_FALSE(ParseProperty("novalue").ok());
  EXPECT_FALSE(ParseProperty("=v").ok());
}

TEST(ParsePropertiesTest, RejectsDuplicates) {
  auto properties = ParseProperties({"a=1", "b=2"});
  ASSERT_TRUE(properties.ok());
  EXPECT_EQ(*properties, (Properties{{"a", "1"}, {"b", "2"}}));
  auto duplicate = ParseProperties({"a=1", "a=2"});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.status().message().find("a"), std::string::npos);
}

TEST(WarehouseRequestTest, MapsToAdminRoutes) {
  ApiRequest create = CreateWarehouseRequest("wh", true);
  EXPECT_EQ(create.method, "POST");
  EXPECT_EQ(create.path, "/_iceberg/v1/warehouses");
  EXPECT_EQ(Json::parse(create.body), (Json{{"name", "wh"}, {"upgrade-existing", true}}));
  EXPECT_EQ(Json::parse(CreateWarehouseRequest("wh", false).body), (Json{{"name", "wh"}}));

  ApiRequest list = ListWarehousesRequest("tok+/=");
  EXPECT_EQ(list.method, "GET");
  EXPECT_EQ(list.query, "pageToken=tok%2B%2F%3D");
  EXPECT_EQ(ListWarehousesRequest("").query, "");

  ApiRequest remove = RemoveWarehouseRequest("wh", true, false);
  EXPECT_EQ(remove.method, "DELETE");
  EXPECT_EQ(remove.path, "/_iceberg/v1/warehouses/wh");
  EXPECT_EQ(remove.query, "force=true&preserve-bucket=false");
}

TEST(NamespaceRequestTest, EncodesLevelsInPathAndBody) {
  ApiRequest create = CreateNamespaceRequest("wh", {"a", "b"}, {{"owner", "me"}});
  EXPECT_EQ(create.path, "/_iceberg/v1/wh/namespaces");
  EXPECT_EQ(Json::parse(create.body), (Json{{"namespace", {"a", "b"}}, {"properties", {{"owner", "me"}}}}));

  ApiRequest list = ListNamespacesRequest("wh", {"a", "b"}, "t");
  EXPECT_EQ(list.query, "parent=a%1Fb&pageToken=t");
  EXPECT_EQ(ListNamespacesRequest("wh", {}, "").query, "");

  EXPECT_EQ(LoadNamespaceRequest("wh", {"a", "b"}).path, "/_iceberg/v1/wh/namespaces/a%1Fb");
  EXPECT_EQ(DropNamespaceRequest("wh", {"a"}).method, "DELETE");

  ApiRequest update = UpdateNamespaceRequest("wh", {"a"}, {{"k", "v"}}, {"old"});
  EXPECT_EQ(update.method, "POST");
  EXPECT_EQ(update.path, "/_iceberg/v1/wh/namespaces/a/properties");
  EXPECT_EQ(Json::parse(update.body), (Json{{"updates", {{"k", "v"}}}, {"removals", {"old"}}}));
}

TEST(NamespaceRequestTest, NonUtf8ArgumentsDoNotThrow) {
  ApiRequest create = CreateNamespaceRequest("wh", {"a"}, {{"k", "bad\xff"}});
  Json body = Json::parse(create.body);
  EXPECT_EQ(body["properties"]["k"], "bad\xEF\xBF\xBD");  // U+FFFD replacement
}

TEST(EntityRequestTest, TablesAndViews) {
  EXPECT_EQ(ListEntitiesRequest(EntityKind::kTable, "wh", {"a", "b"}, "").path,
            "/_iceberg/v1/wh/namespaces/a%1Fb/tables");
  EXPECT_EQ(ListEntitiesRequest(EntityKind::kView, "wh", {"a"}, "").path,
            "/_iceberg/v1/wh/namespaces/a/views");
  EXPECT_EQ(LoadEntityRequest(EntityKind::kTable, "wh", {"a"}, "t 1").path,
            "/_iceberg/v1/wh/namespaces/a/tables/t%201");

  ApiRequest purge = DropEntityRequest(EntityKind::kTable, "wh", {"a"}, "t", true);
  EXPECT_EQ(purge.method, "DELETE");
  EXPECT_EQ(purge.query, "purgeRequested=true");
  EXPECT_EQ(DropEntityRequest(EntityKind::kTable, "wh", {"a"}, "t", false).query, "");
  EXPECT_EQ(DropEntityRequest(EntityKind::kView, "wh", {"a"}, "v", true).query, "");

  ApiRequest rename = RenameEntityRequest(EntityKind::kView, "wh", {{"a"}, "v"}, {{"b", "c"}, "w"});
  EXPECT_EQ(rename.path, "/_iceberg/v1/wh/views/rename");
  EXPECT_EQ(Json::parse(rename.body), (Json{{"source", {{"namespace", {"a"}}, {"name", "v"}}},
                                            {"destination", {{"namespace", {"b", "c"}}, {"name", "w"}}}}));
}

TEST(CreateTableRequestTest, EmbedsSchemaSpecAndProperties) {
  const std::string schema =
      R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]})";
  const std::string spec = R"({"spec-id":0,"fields":[]})";
  Result<ApiRequest> request = CreateTableRequest("wh", {"a"}, "t", schema, spec, {{"format-version", "2"}});
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->method, "POST");
  EXPECT_EQ(request->path, "/_iceberg/v1/wh/namespaces/a/tables");
  Json body = Json::parse(request->body);
  EXPECT_EQ(body["name"], "t");
  EXPECT_EQ(body["schema"], Json::parse(schema));
  EXPECT_EQ(body["partition-spec"], Json::parse(spec));
  EXPECT_EQ(body["properties"], (Json{{"format-version", "2"}}));

  Result<ApiRequest> minimal = CreateTableRequest("wh", {"a"}, "t", schema, "", {});
  ASSERT_TRUE(minimal.ok());
  EXPECT_FALSE(Json::parse(minimal->body).contains("partition-spec"));
  EXPECT_FALSE(Json::parse(minimal->body).contains("properties"));
}

TEST(CreateTableRequestTest, RejectsBadJson) {
  Result<ApiRequest> bad = CreateTableRequest("wh", {"a"}, "t", "{not json", "", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--schema"), std::string::npos);
  EXPECT_FALSE(CreateTableRequest("wh", {"a"}, "t", "[1]", "", {}).ok());
  bad = CreateTableRequest("wh", {"a"}, "t", "{}", "nope", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--partition-spec"), std::string::npos);
}

}  // namespace
}  // namespace serac::client
