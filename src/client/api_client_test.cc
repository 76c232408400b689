#include "client/api_client.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "auth/sigv4.h"
#include "common/hash.h"
#include "http/server.h"

namespace serac::client {
namespace {

const auth::Credentials kKeys{"AKCLITEST", "cli-test-secret-key", ""};

Connection TestConnection(std::string endpoint = "http://127.0.0.1:9000") {
  Connection connection;
  connection.endpoint = std::move(endpoint);
  connection.access_key = kKeys.access_key;
  connection.secret_key = kKeys.secret_key;
  connection.region = "eu-west-1";
  return connection;
}

auth::CredentialLookup Lookup(auth::Credentials credentials) {
  return [credentials](std::string_view key) -> Result<auth::Credentials> {
    if (key == credentials.access_key) return credentials;
    return Error(ErrorCode::kUnknownAccessKey, "unknown");
  };
}

// Verifies a request the way the catalog does (SigV4, s3tables, generic URI encoding).
Result<auth::VerifiedRequest> VerifyAsCatalog(const http::Request& request, const auth::Credentials& keys) {
  auth::VerifyOptions options;
  options.services = {"s3tables"};
  options.uri_encoding = auth::UriEncoding::kGeneric;
  options.now = Now();
  return auth::Verify(request, options, Lookup(keys));
}

http::Request AsServerRequest(const http::ClientRequest& sent) {
  Result<http::Url> url = http::ParseUrl(sent.url);
  http::Request request;
  request.method = sent.method;
  request.path = url->path;
  request.query = url->query;
  request.target = url->Target();
  request.headers = sent.headers;
  return request;
}

TEST(BuildSignedRequestTest, CatalogVerifiesTheSignature) {
  ApiRequest api = CreateNamespaceRequest("wh", {"a", "b c"}, {});
  api.path = LoadNamespaceRequest("wh", {"a", "b c"}).path + "/properties";
  Result<http::ClientRequest> sent = BuildSignedRequest(TestConnection("http://127.0.0.1:9000/"), api, Now());
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(sent->url, "http://127.0.0.1:9000/_iceberg/v1/wh/namespaces/a%1Fb%20c/properties");
  http::Request request = AsServerRequest(*sent);
  EXPECT_EQ(request.HeaderOr("Host"), "127.0.0.1:9000");
  EXPECT_NE(request.HeaderOr("Authorization").find("/eu-west-1/s3tables/aws4_request"),
            std::string_view::npos);

  Result<auth::VerifiedRequest> verified = VerifyAsCatalog(request, kKeys);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(verified->access_key, kKeys.access_key);
  EXPECT_EQ(verified->payload_mode, auth::PayloadMode::kSignedHex);
  EXPECT_EQ(verified->payload_sha256_hex, Sha256Hex(api.body));

  auth::Credentials other = kKeys;
  other.secret_key = "a-different-secret";
  EXPECT_EQ(VerifyAsCatalog(request, other).status().code(), ErrorCode::kSignatureMismatch);
}

TEST(BuildSignedRequestTest, QueryIsSigned) {
  ApiRequest api = ListNamespacesRequest("wh", {"p", "q"}, "tok=");
  Result<http::ClientRequest> sent = BuildSignedRequest(TestConnection(), api, Now());
  ASSERT_TRUE(sent.ok());
  http::Request request = AsServerRequest(*sent);
  EXPECT_EQ(request.query, "parent=p%1Fq&pageToken=tok%3D");
  ASSERT_TRUE(VerifyAsCatalog(request, kKeys).ok());
  request.query = "parent=p";
  EXPECT_FALSE(VerifyAsCatalog(request, kKeys).ok());
}

TEST(BuildSignedRequestTest, BadEndpoint) {
  Result<http::ClientRequest> sent =
      BuildSignedRequest(TestConnection("127.0.0.1:9000"), ListWarehousesRequest(""), Now());
  ASSERT_FALSE(sent.ok());
  EXPECT_NE(sent.status().message().find("127.0.0.1:9000"), std::string::npos);
}

TEST(ResolveConnectionTest, FlagsBeatEnvironmentBeatsDefaults) {
  std::map<std::string, std::string> environment = {{"SERAC_ENDPOINT", "http://env:1"},
                                                    {"SERAC_ACCESS_KEY", "ENVKEY"},
                                                    {"SERAC_SECRET_KEY", "env-secret"},
                                                    {"SERAC_REGION", ""}};
  auto lookup = [&environment](const char* name) -> const char* {
    auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  };
  ConnectionFlags flags;
  flags.endpoint = "http://flag:2";
  flags.insecure = true;
  Connection connection = ResolveConnection(flags, lookup);
  EXPECT_EQ(connection.endpoint, "http://flag:2");
  EXPECT_EQ(connection.access_key, "ENVKEY");
  EXPECT_EQ(connection.secret_key, "env-secret");
  EXPECT_EQ(connection.region, "us-east-1");  // empty variable = unset
  EXPECT_TRUE(connection.insecure);

  Connection defaults =
      ResolveConnection(ConnectionFlags{}, [](const char*) -> const char* { return nullptr; });
  EXPECT_EQ(defaults.endpoint, kDefaultEndpoint);
  EXPECT_EQ(defaults.access_key, "");
  EXPECT_EQ(defaults.secret_key, "");
}

TEST(ResolveConnectionTest, TheAwsVariablesServeWhenSeracsAreUnset) {
  std::map<std::string, std::string> environment = {{"AWS_ENDPOINT_URL", "http://aws:9"},
                                                    {"AWS_ACCESS_KEY_ID", "AWSKEY"},
                                                    {"AWS_SECRET_ACCESS_KEY", "aws-secret"},
                                                    {"AWS_DEFAULT_REGION", "eu-west-1"}};
  auto lookup = [&environment](const char* name) -> const char* {
    auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  };
  Connection connection = ResolveConnection(ConnectionFlags{}, lookup);
  EXPECT_EQ(connection.endpoint, "http://aws:9");
  EXPECT_EQ(connection.access_key, "AWSKEY");
  EXPECT_EQ(connection.secret_key, "aws-secret");
  EXPECT_EQ(connection.region, "eu-west-1");

  // serac's own variables win, and a key pair is never half one and half the other.
  environment["SERAC_ENDPOINT"] = "http://serac:1";
  environment["AWS_ENDPOINT_URL_S3"] = "http://s3-only:2";
  environment["AWS_REGION"] = "ap-south-1";
  environment["SERAC_ACCESS_KEY"] = "SERACKEY";
  connection = ResolveConnection(ConnectionFlags{}, lookup);
  EXPECT_EQ(connection.endpoint, "http://serac:1");
  EXPECT_EQ(connection.access_key, "SERACKEY");
  EXPECT_EQ(connection.secret_key, "");
  EXPECT_EQ(connection.region, "ap-south-1");
  environment.erase("SERAC_ENDPOINT");
  EXPECT_EQ(ResolveConnection(ConnectionFlags{}, lookup).endpoint, "http://s3-only:2");
}

TEST(ErrorMessageTest, UsesIcebergErrorResponse) {
  std::string body =
      R"({"error":{"message":"Namespace does not exist: a","type":"NoSuchNamespaceException","code":404}})";
  EXPECT_EQ(ErrorMessageFromResponse(404, body), "Namespace does not exist: a (NoSuchNamespaceException)");
  EXPECT_EQ(ErrorMessageFromResponse(500, "<html>oops</html>"), "HTTP 500: <html>oops</html>");
  EXPECT_EQ(ErrorMessageFromResponse(502, ""), "HTTP 502");
  // A malformed error object still gives a message instead of throwing.
  EXPECT_EQ(ErrorMessageFromResponse(400, R"({"error":{"message":7,"type":null}})"), "HTTP 400");
  EXPECT_EQ(ErrorMessageFromResponse(409, std::string(1000, 'x')).size(),
            std::string("HTTP 409: ").size() + 300);
}

// A server that checks the signature like the catalog and answers with an Iceberg error.
class CatalogClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http::ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.access_log = false;
    server_ = std::make_unique<http::Server>(
        options,
        [](const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
           http::RequestOutcome&) {
          (void)body.Drain();
          Result<auth::VerifiedRequest> verified = VerifyAsCatalog(request, kKeys);
          if (!verified.ok()) {
            response.SetStatus(401);
            (void)response.Send(
                R"({"error":{"message":"bad signature","type":"NotAuthorizedException","code":401}})");
            return;
          }
          if (request.method == "GET") {
            response.SetStatus(200);
            (void)response.Send(R"({"warehouses":["w1"],"next-page-token":null})");
            return;
          }
          response.SetStatus(409);
          (void)response.Send(
              R"({"error":{"message":"Warehouse or bucket already exists: w1","type":"AlreadyExistsException","code":409}})");
        },
        nullptr);
    ASSERT_TRUE(server_->Start().ok());
    endpoint_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }
  void TearDown() override { server_->Shutdown(); }

  std::unique_ptr<http::Server> server_;
  std::string endpoint_;
};

TEST_F(CatalogClientTest, ReturnsBodyOfSuccess) {
  ApiClient client(TestConnection(endpoint_));
  Result<std::string> body = client.Call(ListWarehousesRequest(""));
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_NE(body->find("w1"), std::string::npos);
}

TEST_F(CatalogClientTest, ReportsServerErrorMessage) {
  ApiClient client(TestConnection(endpoint_));
  Result<std::string> body = client.Call(CreateWarehouseRequest("w1", false));
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(body.status().message(), "Warehouse or bucket already exists: w1 (AlreadyExistsException)");
}

TEST_F(CatalogClientTest, WrongSecretIsRefused) {
  Connection connection = TestConnection(endpoint_);
  connection.secret_key = "not-the-secret";
  Result<std::string> body = ApiClient(connection).Call(ListWarehousesRequest(""));
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().code(), ErrorCode::kAccessDenied);
  // The message never contains the secret.
  EXPECT_EQ(body.status().message().find("not-the-secret"), std::string::npos);
}

TEST(CatalogClientErrorTest, NeedsCredentials) {
  Connection connection = TestConnection();
  connection.secret_key.clear();
  Result<std::string> body = ApiClient(connection).Call(ListWarehousesRequest(""));
  ASSERT_FALSE(body.ok());
  EXPECT_NE(body.status().message().find("SERAC_SECRET_KEY"), std::string::npos);
}

}  // namespace
}  // namespace serac::client
