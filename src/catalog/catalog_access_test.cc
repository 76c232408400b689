// Identity and access on the catalog: the route -> action table, OAuth2 bearer tokens, policies
// of IAM users (read-only, one namespace, none at all) and vended credentials.
#include <map>

#include "auth/sigv4.h"
#include "auth/tokens.h"
#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_test_fixture_internal.h"
#include "common/json_reads.h"

namespace serac::catalog {
namespace {

constexpr char kReaderKey[] = "READERKEY";
constexpr char kReaderSecret[] = "reader-secret-0123456789";
constexpr char kSalesKey[] = "SALESKEY";
constexpr char kSalesSecret[] = "sales-secret-0123456789";
constexpr char kNobodyKey[] = "NOBODYKEY";
constexpr char kNobodySecret[] = "nobody-secret-0123456789";
constexpr char kVended[] = "vended-credentials";

// Everything in namespace "sales" (and its files), plus what a client needs to start.
constexpr char kSalesPolicy[] = R"({"Version":"2012-10-17","Statement":[
  {"Effect":"Allow","Action":["s3tables:GetConfig","s3tables:GetWarehouse"],
   "Resource":"arn:aws:s3tables:::bucket/lake"},
  {"Effect":"Allow","Action":"s3tables:*",
   "Resource":["arn:aws:s3tables:::bucket/lake","arn:aws:s3tables:::bucket/lake/*"],
   "Condition":{"StringEquals":{"s3tables:namespace":"sales"}}},
  {"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::lake/sales/*"}]})";

CallOptions As(const char* key, const char* secret, std::vector<http::Header> headers = {}) {
  CallOptions options;
  options.access_key = key;
  options.secret = secret;
  options.headers = std::move(headers);
  return options;
}

CallOptions WithBearer(std::string token) {
  CallOptions options;
  options.bearer = std::move(token);
  return options;
}

class CatalogAccessTest : public CatalogServiceTest {
 protected:
  void SetUp() override {
    CatalogServiceTest::SetUp();
    if (HasFatalFailure()) return;
    AddUser("reader", {"readonly"}, kReaderKey, kReaderSecret);
    ASSERT_TRUE(stores_.identity->PutPolicy("sales-only", kSalesPolicy).ok());
    AddUser("sales", {"sales-only"}, kSalesKey, kSalesSecret);
    AddUser("nobody", {}, kNobodyKey, kNobodySecret);
  }

  void AddUser(const std::string& name, const std::vector<std::string>& policies, const char* key,
               const char* secret) {
    Status created = stores_.identity->CreateUser(name, policies);
    ASSERT_TRUE(created.ok()) << created.ToString();
    auto access_key = stores_.identity->CreateAccessKey(name, "", std::string(key), std::string(secret));
    ASSERT_TRUE(access_key.ok()) << access_key.status().ToString();
  }

  std::string Table(const std::string& ns, const std::string& name) {
    return std::string(kBase) + "/namespaces/" + ns + "/tables/" + name;
  }

  RecordingResponse RequestToken(const std::string& body) {
    CallOptions options;
    options.sign = false;
    options.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
    return Call("POST", "/_iceberg/v1/oauth/tokens", "", body, options);
  }
};

TEST_F(CatalogAccessTest, EveryRouteHasAnActionAndTheTableSaysWhich) {
  std::map<std::string, std::string> actions;
  for (const RouteAccess& route : RouteAccessTable()) {
    const std::string key = std::string(route.method) + " " + std::string(route.path);
    if (route.scope == AccessScope::kPublic) {
      EXPECT_EQ(key, "POST /v1/oauth/tokens");
      EXPECT_TRUE(route.action.empty());
      continue;
    }
    EXPECT_EQ(route.action.substr(0, 9), "s3tables:") << key;
    actions[key] = route.action;
  }
  EXPECT_EQ(actions["GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"], "s3tables:GetTable");
  EXPECT_EQ(actions["HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}"], "s3tables:GetTable");
  EXPECT_EQ(actions["POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"], "s3tables:UpdateTable");
  EXPECT_EQ(actions["DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}"], "s3tables:DeleteTable");
  EXPECT_EQ(actions["POST /v1/{prefix}/namespaces/{namespace}/tables"], "s3tables:CreateTable");
  EXPECT_EQ(actions["GET /v1/{prefix}/namespaces/{namespace}/tables"], "s3tables:ListTables");
  EXPECT_EQ(actions["GET /v1/{prefix}/namespaces"], "s3tables:ListNamespaces");
  EXPECT_EQ(actions["POST /v1/{prefix}/namespaces/{namespace}/properties"],
            "s3tables:UpdateNamespaceProperties");
  EXPECT_EQ(actions["POST /v1/{prefix}/transactions/commit"], "s3tables:UpdateTable");
  EXPECT_EQ(actions["POST /v1/{prefix}/views/rename"], "s3tables:RenameView");
  EXPECT_EQ(actions["GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"],
            "s3tables:GetTable");
  for (const char* insight : {"preview", "files", "health"}) {
    EXPECT_EQ(actions[std::string("GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/") + insight],
              "s3tables:GetTable");
  }
  EXPECT_EQ(actions["DELETE /v1/warehouses/{name}"], "s3tables:DeleteWarehouse");
  EXPECT_EQ(actions["GET /v1/warehouses"], "s3tables:ListWarehouses");
}

// A user without policies is refused on every route, before anything changes.
TEST_F(CatalogAccessTest, AUserWithoutPoliciesIsRefusedEverywhere) {
  CreateNamespace({"db"});
  Json table = CreateTable("db", "t");
  const std::string file = table["metadata-location"];
  ASSERT_EQ(Post(std::string(kBase) + "/namespaces/db/views",
                 Json{{"name", "v"},
                      {"schema", Schema()},
                      {"view-version",
                       {{"version-id", 1},
                        {"schema-id", 0},
                        {"timestamp-ms", 1700000000000},
                        {"summary", Json::object()},
                        {"representations",
                         Json::array({Json{{"type", "sql"}, {"sql", "select 1"}, {"dialect", "x"}}})},
                        {"default-namespace", {"db"}}}}})
                .status(),
            200);
  const Json identifier = {{"namespace", {"db"}}, {"name", "t"}};
  Json view_body =
      Json{{"name", "v2"},
           {"schema", Schema()},
           {"view-version",
            {{"version-id", 1},
             {"schema-id", 0},
             {"timestamp-ms", 1700000000000},
             {"summary", Json::object()},
             {"representations", Json::array({Json{{"type", "sql"}, {"sql", "select 1"}, {"dialect", "x"}}})},
             {"default-namespace", {"db"}}}}};
  const std::string t = Table("db", "t");
  const std::string v = std::string(kBase) + "/namespaces/db/views/v";
  const std::string kMaintenance = "/_iceberg/v1/warehouses/lake/namespaces/db/tables/t/maintenance";
  struct Probe {
    std::string method, path, query;
    Json body;
  };
  const std::vector<Probe> probes = {
      {"GET", "/_iceberg/v1/config", "warehouse=lake", nullptr},
      {"GET", "/_iceberg/v1/warehouses", "", nullptr},
      {"POST", "/_iceberg/v1/warehouses", "", Json{{"name", "other"}}},
      {"GET", "/_iceberg/v1/warehouses/lake", "", nullptr},
      {"DELETE", "/_iceberg/v1/warehouses/lake", "force=true", nullptr},
      {"GET", std::string(kBase) + "/namespaces", "", nullptr},
      {"POST", std::string(kBase) + "/namespaces", "", Json{{"namespace", {"x"}}}},
      {"GET", std::string(kBase) + "/namespaces/db", "", nullptr},
      {"HEAD", std::string(kBase) + "/namespaces/db", "", nullptr},
      {"DELETE", std::string(kBase) + "/namespaces/db", "", nullptr},
      {"POST", std::string(kBase) + "/namespaces/db/properties", "", Json{{"updates", {{"a", "b"}}}}},
      {"GET", std::string(kBase) + "/namespaces/db/tables", "", nullptr},
      {"POST", std::string(kBase) + "/namespaces/db/tables", "", Json{{"name", "t2"}, {"schema", Schema()}}},
      {"GET", t, "", nullptr},
      {"HEAD", t, "", nullptr},
      {"POST", t, "", Json{{"requirements", Json::array()}, {"updates", AddSnapshotToMain(1, 1)}}},
      {"DELETE", t, "purgeRequested=true", nullptr},
      {"GET", t + "/credentials", "", nullptr},
      {"POST", std::string(kBase) + "/namespaces/db/register", "",
       Json{{"name", "r"}, {"metadata-location", file}}},
      {"POST", t + "/metrics", "", Json{{"report-type", "scan-report"}}},
      {"GET", t + "/preview", "limit=5", nullptr},
      {"GET", t + "/files", "", nullptr},
      {"GET", t + "/health", "", nullptr},
      {"POST", std::string(kBase) + "/tables/rename", "",
       Json{{"source", identifier}, {"destination", {{"namespace", {"db"}}, {"name", "t3"}}}}},
      {"POST", std::string(kBase) + "/transactions/commit", "",
       Json{{"table-changes", Json::array({Json{{"identifier", identifier},
                                                {"requirements", Json::array()},
                                                {"updates", AddSnapshotToMain(2, 1)}}})}}},
      {"GET", std::string(kBase) + "/namespaces/db/views", "", nullptr},
      {"POST", std::string(kBase) + "/namespaces/db/views", "", view_body},
      {"GET", v, "", nullptr},
      {"HEAD", v, "", nullptr},
      {"POST", v, "", Json{{"requirements", Json::array()}, {"updates", Json::array()}}},
      {"DELETE", v, "", nullptr},
      {"POST", std::string(kBase) + "/views/rename", "",
       Json{{"source", {{"namespace", {"db"}}, {"name", "v"}}},
            {"destination", {{"namespace", {"db"}}, {"name", "w"}}}}},
      {"POST", std::string(kBase) + "/namespaces/db/register-view", "",
       Json{{"name", "rv"}, {"metadata-location", file}}},
      {"POST", t + "/plan", "", Json::object()},
      {"GET", t + "/plan/p1", "", nullptr},
      {"DELETE", t + "/plan/p1", "", nullptr},
      {"POST", t + "/tasks", "", Json{{"plan-task", "x"}}},
      {"GET", "/_iceberg/v1/warehouses/lake/scan-planning", "", nullptr},
      {"PUT", "/_iceberg/v1/warehouses/lake/scan-planning", "", Json{{"mode", "server"}}},
      {"DELETE", "/_iceberg/v1/warehouses/lake/scan-planning", "", nullptr},
      {"GET", "/_iceberg/v1/warehouses/lake/maintenance", "", nullptr},
      {"PUT", "/_iceberg/v1/warehouses/lake/maintenance/icebergSnapshotManagement", "",
       Json{{"status", "enabled"}}},
      {"DELETE", "/_iceberg/v1/warehouses/lake/maintenance/icebergSnapshotManagement", "", nullptr},
      {"GET", kMaintenance, "", nullptr},
      {"GET", kMaintenance + "/icebergCompaction", "", nullptr},
      {"PUT", kMaintenance + "/icebergCompaction", "", Json{{"status", "disabled"}}},
      {"DELETE", kMaintenance + "/icebergCompaction", "", nullptr},
      {"GET", kMaintenance + "/icebergCompaction/status", "", nullptr},
      {"POST", kMaintenance + "/icebergCompaction/run", "", Json::object()},
  };
  // Every route but the token endpoint is probed.
  EXPECT_EQ(probes.size() + 1, RouteAccessTable().size());
  for (const Probe& probe : probes) {
    auto response = Call(probe.method, probe.path, probe.query, probe.body.is_null() ? "" : probe.body.dump(),
                         As(kNobodyKey, kNobodySecret));
    if (probe.method == "GET" && probe.path == "/_iceberg/v1/warehouses") {
      // An account-level listing is filtered, not refused: it names nothing this user may see.
      EXPECT_EQ(response.status(), 200) << response.body;
      EXPECT_EQ(BodyJson(response)["warehouses"], Json::array()) << response.body;
      continue;
    }
    EXPECT_EQ(response.status(), 403) << probe.method << " " << probe.path << ": " << response.body;
    if (probe.method != "HEAD") {
      EXPECT_EQ(ErrorType(response), "ForbiddenException") << probe.path;
    }
  }
  // Nothing changed.
  EXPECT_EQ(LoadTable("db", "t")["metadata-location"], file);
  EXPECT_EQ(Call("HEAD", v).status(), 204);
  EXPECT_EQ(Call("GET", "/_iceberg/v1/warehouses/other").status(), 404);
  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces/x").status(), 404);
}

TEST_F(CatalogAccessTest, BearerTokensFromTheTokenEndpoint) {
  auto issued = RequestToken("grant_type=client_credentials&client_id=READERKEY&client_secret=" +
                             std::string(kReaderSecret) + "&scope=catalog");
  ASSERT_EQ(issued.status(), 200) << issued.body;
  EXPECT_EQ(last_operation_, "OAuthTokens");
  EXPECT_EQ(issued.Header("Cache-Control"), "no-store");
  const std::string token = BodyJson(issued)["access_token"];
  EXPECT_EQ(issued.body.find(kReaderSecret), std::string::npos);

  CreateNamespace({"db"});
  CreateTable("db", "t");
  auto config = Call("GET", "/_iceberg/v1/config", "warehouse=lake", "", WithBearer(token));
  EXPECT_EQ(config.status(), 200) << config.body;
  EXPECT_EQ(Call("GET", Table("db", "t"), "", "", WithBearer(token)).status(), 200);
  // The token acts as the reader: reading yes, creating no.
  auto create =
      Call("POST", std::string(kBase) + "/namespaces", "", R"({"namespace":["new"]})", WithBearer(token));
  EXPECT_EQ(create.status(), 403);

  auto wrong = RequestToken("grant_type=client_credentials&client_id=READERKEY&client_secret=wrong-secret");
  EXPECT_EQ(wrong.status(), 401);
  EXPECT_EQ(BodyJson(wrong)["error"], "invalid_client");

  std::string forged = token;
  forged[forged.size() / 2] = forged[forged.size() / 2] == 'A' ? 'B' : 'A';
  auto refused = Call("GET", Table("db", "t"), "", "", WithBearer(forged));
  EXPECT_EQ(refused.status(), 401);
  EXPECT_EQ(ErrorType(refused), "NotAuthorizedException");

  const std::string expired =
      stores_.identity
          ->IssueBearerToken(kReaderKey, Now() - std::chrono::hours(2), Now() - std::chrono::hours(1))
          .value();
  refused = Call("GET", Table("db", "t"), "", "", WithBearer(expired));
  EXPECT_EQ(refused.status(), 401);
  EXPECT_EQ(ErrorType(refused), "NotAuthorizedException");

  // Disabling the key revokes its tokens at once.
  ASSERT_TRUE(stores_.identity->SetAccessKeyEnabled(kReaderKey, false).ok());
  EXPECT_EQ(Call("GET", Table("db", "t"), "", "", WithBearer(token)).status(), 401);
}

TEST_F(CatalogAccessTest, ReadOnlyUserLoadsButCannotChangeAnything) {
  CreateNamespace({"db"});
  const std::string file = CreateTable("db", "t")["metadata-location"];
  const CallOptions reader = As(kReaderKey, kReaderSecret);
  auto loaded = Call("GET", Table("db", "t"), "", "", reader);
  ASSERT_EQ(loaded.status(), 200) << loaded.body;
  EXPECT_EQ(Call("HEAD", Table("db", "t"), "", "", reader).status(), 204);
  EXPECT_EQ(Call("GET", Table("db", "missing"), "", "", reader).status(), 404);

  auto commit =
      Call("POST", Table("db", "t"), "",
           Json{{"requirements", Json::array()}, {"updates", AddSnapshotToMain(1, 1)}}.dump(), reader);
  EXPECT_EQ(commit.status(), 403) << commit.body;
  EXPECT_EQ(ErrorType(commit), "ForbiddenException");
  EXPECT_NE(BodyJson(commit)["error"]["message"].get<std::string>().find("s3tables:UpdateTable"),
            std::string::npos);
  EXPECT_EQ(LoadTable("db", "t")["metadata-location"], file);
  EXPECT_EQ(Call("DELETE", Table("db", "t"), "", "", reader).status(), 403);
  EXPECT_EQ(Call("HEAD", Table("db", "t")).status(), 204);
  // A staged create finished by a commit is a create.
  auto staged =
      Call("POST", Table("db", "n"), "",
           Json{{"requirements", Json::array({Json{{"type", "assert-create"}}})}, {"updates", Json::array()}}
               .dump(),
           reader);
  EXPECT_EQ(staged.status(), 403);
  EXPECT_NE(BodyJson(staged)["error"]["message"].get<std::string>().find("s3tables:CreateTable"),
            std::string::npos);
}

TEST_F(CatalogAccessTest, NamespaceLimitedUserSeesAndTouchesOnlyItsNamespace) {
  CreateNamespace({"sales"});
  CreateNamespace({"hr"});
  CreateTable("sales", "orders");
  const std::string salaries_file = CreateTable("hr", "salaries")["metadata-location"];
  const CallOptions sales = As(kSalesKey, kSalesSecret);

  EXPECT_EQ(Call("GET", "/_iceberg/v1/config", "warehouse=lake", "", sales).status(), 200);
  auto listed = Call("GET", std::string(kBase) + "/namespaces", "", "", sales);
  ASSERT_EQ(listed.status(), 200) << listed.body;
  EXPECT_EQ(BodyJson(listed)["namespaces"], Json::array({Json::array({"sales"})}));
  EXPECT_EQ(BodyJson(Call("GET", std::string(kBase) + "/namespaces"))["namespaces"].size(), 2u);

  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces/sales/tables", "", "", sales).status(), 200);
  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces/hr/tables", "", "", sales).status(), 403);
  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces/hr", "", "", sales).status(), 403);
  EXPECT_EQ(Call("GET", Table("sales", "orders"), "", "", sales).status(), 200);
  EXPECT_EQ(Call("GET", Table("sales", "missing"), "", "", sales).status(), 404);
  // Elsewhere: 403 whether the table exists or not, so nothing leaks.
  EXPECT_EQ(Call("GET", Table("hr", "salaries"), "", "", sales).status(), 403);
  EXPECT_EQ(Call("GET", Table("hr", "missing"), "", "", sales).status(), 403);
  EXPECT_EQ(Call("GET", Table("nowhere", "missing"), "", "", sales).status(), 403);

  auto created = Call("POST", std::string(kBase) + "/namespaces/sales/tables", "",
                      Json{{"name", "returns"}, {"schema", Schema()}}.dump(), sales);
  EXPECT_EQ(created.status(), 200) << created.body;
  EXPECT_EQ(Call("POST", std::string(kBase) + "/namespaces/hr/tables", "",
                 Json{{"name", "bonus"}, {"schema", Schema()}}.dump(), sales)
                .status(),
            403);

  // Moving a table out of (or into) the namespace needs rights on both ends.
  auto moved = Call("POST", std::string(kBase) + "/tables/rename", "",
                    Json{{"source", {{"namespace", {"sales"}}, {"name", "orders"}}},
                         {"destination", {{"namespace", {"hr"}}, {"name", "orders"}}}}
                        .dump(),
                    sales);
  EXPECT_EQ(moved.status(), 403);
  EXPECT_EQ(Call("HEAD", Table("sales", "orders")).status(), 204);

  auto transaction = Call(
      "POST", std::string(kBase) + "/transactions/commit", "",
      Json{{"table-changes", Json::array({Json{{"identifier", {{"namespace", {"sales"}}, {"name", "orders"}}},
                                               {"updates", AddSnapshotToMain(1, 1)}},
                                          Json{{"identifier", {{"namespace", {"hr"}}, {"name", "salaries"}}},
                                               {"updates", AddSnapshotToMain(1, 1)}}})}}
          .dump(),
      sales);
  EXPECT_EQ(transaction.status(), 403);
  EXPECT_EQ(LoadTable("hr", "salaries")["metadata-location"], salaries_file);
  EXPECT_EQ(LoadTable("sales", "orders")["metadata"]["snapshots"].size(), 0u);
}

TEST_F(CatalogAccessTest, WarehouseListingShowsOnlyTheWarehousesTheCallerMaySee) {
  ASSERT_EQ(Post("/_iceberg/v1/warehouses", Json{{"name", "other"}}).status(), 200);
  ASSERT_EQ(Post("/_iceberg/v1/warehouses", Json{{"name", "third"}}).status(), 200);
  const Json all = Json::array({"lake", "other", "third"});
  EXPECT_EQ(BodyJson(Call("GET", "/_iceberg/v1/warehouses"))["warehouses"], all);
  // readonly allows s3tables:List*: everything.
  auto reader = Call("GET", "/_iceberg/v1/warehouses", "", "", As(kReaderKey, kReaderSecret));
  EXPECT_EQ(BodyJson(reader)["warehouses"], all) << reader.body;

  // Only the warehouse its policy names, also page by page.
  const CallOptions sales = As(kSalesKey, kSalesSecret);
  auto listed = Call("GET", "/_iceberg/v1/warehouses", "", "", sales);
  ASSERT_EQ(listed.status(), 200) << listed.body;
  EXPECT_EQ(BodyJson(listed)["warehouses"], Json::array({"lake"}));
  auto first = Call("GET", "/_iceberg/v1/warehouses", "pageSize=1", "", sales);
  EXPECT_EQ(BodyJson(first)["warehouses"], Json::array({"lake"})) << first.body;
  ASSERT_TRUE(BodyJson(first)["next-page-token"].is_string()) << first.body;
  auto second =
      Call("GET", "/_iceberg/v1/warehouses",
           "pageSize=5&pageToken=" + BodyJson(first)["next-page-token"].get<std::string>(), "", sales);
  EXPECT_EQ(BodyJson(second)["warehouses"], Json::array()) << second.body;

  // An explicit Deny of the listing refuses it, whatever else is allowed.
  ASSERT_TRUE(stores_.identity
                  ->PutPolicy("no-warehouse-list", R"({"Version":"2012-10-17","Statement":[
    {"Effect":"Allow","Action":"s3tables:*","Resource":"*"},
    {"Effect":"Deny","Action":"s3tables:ListWarehouses","Resource":"*"}]})")
                  .ok());
  ASSERT_TRUE(stores_.identity->AttachPolicy("reader", "no-warehouse-list").ok());
  auto refused = Call("GET", "/_iceberg/v1/warehouses", "", "", As(kReaderKey, kReaderSecret));
  EXPECT_EQ(refused.status(), 403) << refused.body;
  EXPECT_EQ(ErrorType(refused), "ForbiddenException");
}

TEST_F(CatalogAccessTest, VendedCredentialsForTheTableOnly) {
  CreateNamespace({"sales"});
  Json created = CreateTable("sales", "orders");
  const std::string location = created["metadata"]["location"];
  const std::string key_prefix = location.substr(std::string("s3://lake/").size()) + "/";

  // Without the header: no keys.
  Json plain = LoadTable("sales", "orders");
  EXPECT_FALSE(plain["config"].contains("s3.access-key-id"));
  EXPECT_FALSE(plain.contains("storage-credentials"));

  CallOptions root_vended;
  root_vended.headers = {{"X-Iceberg-Access-Delegation", kVended}};
  auto loaded = Call("GET", Table("sales", "orders"), "", "", root_vended);
  ASSERT_EQ(loaded.status(), 200) << loaded.body;
  Json body = BodyJson(loaded);
  const Json& config = body["config"];
  EXPECT_TRUE(auth::IsSessionAccessKey(config["s3.access-key-id"].get<std::string>()));
  EXPECT_FALSE(config["s3.secret-access-key"].get<std::string>().empty());
  EXPECT_EQ(config["s3.endpoint"], "http://localhost:9000/");
  EXPECT_EQ(config["s3.path-style-access"], "true");
  EXPECT_EQ(config["client.region"], "us-east-1");
  EXPECT_EQ(config["client.refresh-credentials-endpoint"],
            "v1/lake/namespaces/sales/tables/orders/credentials");
  const int64_t expires_ms = std::stoll(config["s3.session-token-expires-at-ms"].get<std::string>());
  EXPECT_GT(expires_ms, ToUnixMillis(Now()));
  EXPECT_LE(expires_ms, ToUnixMillis(Now()) + 3600 * 1000 + 1000);
  ASSERT_EQ(body["storage-credentials"].size(), 1u);
  EXPECT_EQ(body["storage-credentials"][0]["prefix"], location);
  EXPECT_EQ(body["storage-credentials"][0]["config"]["s3.access-key-id"], config["s3.access-key-id"]);
  auto grant =
      auth::VerifySessionToken(stores_.identity->server_key(), config["s3.access-key-id"].get<std::string>(),
                               config["s3.session-token"].get<std::string>(), Now());
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  EXPECT_EQ(grant->bucket, "lake");
  EXPECT_EQ(grant->prefix, key_prefix);
  EXPECT_TRUE(grant->write);

  // The read-only user gets read-only credentials; so does the namespace user (it may not s3:PutObject).
  for (auto [key, secret] : {std::pair{kReaderKey, kReaderSecret}, std::pair{kSalesKey, kSalesSecret}}) {
    auto refreshed = Call("GET", Table("sales", "orders") + "/credentials", "", "", As(key, secret));
    ASSERT_EQ(refreshed.status(), 200) << refreshed.body;
    Json refreshed_config = BodyJson(refreshed)["storage-credentials"][0]["config"];
    auto read_only = auth::VerifySessionToken(stores_.identity->server_key(),
                                              refreshed_config["s3.access-key-id"].get<std::string>(),
                                              refreshed_config["s3.session-token"].get<std::string>(), Now());
    ASSERT_TRUE(read_only.ok());
    EXPECT_FALSE(read_only->write) << key;
    EXPECT_EQ(read_only->prefix, key_prefix);
  }
  // The user without any S3 rights gets the table but no keys from a load, and 403 from the route.
  ASSERT_TRUE(stores_.identity
                  ->PutPolicy("sales-catalog-only",
                              R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3tables:*",
                                   "Resource":"arn:aws:s3tables:::bucket/lake/*"}]})")
                  .ok());
  ASSERT_TRUE(stores_.identity->AttachPolicy("nobody", "sales-catalog-only").ok());
  auto no_keys = Call("GET", Table("sales", "orders"), "", "",
                      As(kNobodyKey, kNobodySecret, {{"X-Iceberg-Access-Delegation", kVended}}));
  ASSERT_EQ(no_keys.status(), 200) << no_keys.body;
  EXPECT_FALSE(BodyJson(no_keys)["config"].contains("s3.access-key-id"));
  EXPECT_EQ(
      Call("GET", Table("sales", "orders") + "/credentials", "", "", As(kNobodyKey, kNobodySecret)).status(),
      403);

  // Config advertises the refresh route.
  std::vector<std::string> endpoints =
      BodyJson(Call("GET", "/_iceberg/v1/config", "warehouse=lake"))["endpoints"];
  EXPECT_NE(std::find(endpoints.begin(), endpoints.end(),
                      "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"),
            endpoints.end());
}

TEST_F(CatalogAccessTest, CreateTableVendsWritableCredentialsForTheNewTable) {
  CreateNamespace({"db"});
  CallOptions vended;
  vended.headers = {{"X-Iceberg-Access-Delegation", "remote-signing, vended-credentials"}};
  auto staged = Call("POST", std::string(kBase) + "/namespaces/db/tables", "",
                     Json{{"name", "t"}, {"schema", Schema()}, {"stage-create", true}}.dump(), vended);
  ASSERT_EQ(staged.status(), 200) << staged.body;
  Json body = BodyJson(staged);
  const std::string location = body["metadata"]["location"];
  ASSERT_EQ(body["storage-credentials"].size(), 1u);
  EXPECT_EQ(body["storage-credentials"][0]["prefix"], location);
  auto grant = auth::VerifySessionToken(stores_.identity->server_key(),
                                        body["config"]["s3.access-key-id"].get<std::string>(),
                                        body["config"]["s3.session-token"].get<std::string>(), Now());
  ASSERT_TRUE(grant.ok());
  EXPECT_TRUE(grant->write);
}

}  // namespace
}  // namespace serac::catalog
