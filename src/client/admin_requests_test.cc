#include "client/admin_requests.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "auth/sigv4.h"
#include "client/api_client.h"

namespace serac::client {
namespace {

using Json = nlohmann::json;

TEST(AdminRequestsTest, UsersMapToTheUserCollection) {
  ApiRequest create = CreateUserRequest("alice", {"readonly", "team"});
  EXPECT_EQ(create.method, "POST");
  EXPECT_EQ(create.path, "/_serac/admin/v1/users");
  EXPECT_EQ(Json::parse(create.body), (Json{{"name", "alice"}, {"policies", {"readonly", "team"}}}));
  EXPECT_TRUE(create.s3_signing);
  EXPECT_EQ(Json::parse(CreateUserRequest("bob", {}).body), (Json{{"name", "bob"}}));
  EXPECT_EQ(ListUsersRequest().path, "/_serac/admin/v1/users");
  ApiRequest disable = SetUserEnabledRequest("a@b", false);
  EXPECT_EQ(disable.method, "PATCH");
  EXPECT_EQ(disable.path, "/_serac/admin/v1/users/a%40b");
  EXPECT_EQ(Json::parse(disable.body), (Json{{"enabled", false}}));
  EXPECT_EQ(DeleteUserRequest("x+y").path, "/_serac/admin/v1/users/x%2By");
  EXPECT_EQ(DeleteUserRequest("x").method, "DELETE");
}

TEST(AdminRequestsTest, AccessKeys) {
  ApiRequest generated = CreateAccessKeyRequest("alice", std::nullopt, std::nullopt, "");
  EXPECT_EQ(generated.method, "POST");
  EXPECT_EQ(generated.path, "/_serac/admin/v1/users/alice/access-keys");
  EXPECT_EQ(Json::parse(generated.body), Json::object());
  ApiRequest given = CreateAccessKeyRequest("alice", "AKID", "secret-123", "ci job");
  EXPECT_EQ(Json::parse(given.body),
            (Json{{"access-key", "AKID"}, {"secret-key", "secret-123"}, {"description", "ci job"}}));
  EXPECT_EQ(ListAccessKeysRequest("").path, "/_serac/admin/v1/access-keys");
  EXPECT_EQ(ListAccessKeysRequest("bob").path, "/_serac/admin/v1/users/bob/access-keys");
  ApiRequest enable = SetAccessKeyEnabledRequest("AKID", true);
  EXPECT_EQ(enable.method, "PATCH");
  EXPECT_EQ(enable.path, "/_serac/admin/v1/access-keys/AKID");
  EXPECT_EQ(Json::parse(enable.body), (Json{{"enabled", true}}));
  EXPECT_EQ(DeleteAccessKeyRequest("AKID").method, "DELETE");
}

TEST(AdminRequestsTest, PoliciesAndAttachment) {
  ApiRequest put = PutPolicyRequest("team", R"({"Version":"2012-10-17","Statement":[]})");
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.path, "/_serac/admin/v1/policies/team");
  EXPECT_EQ(put.body, R"({"Version":"2012-10-17","Statement":[]})");  // sent as given
  EXPECT_EQ(ListPoliciesRequest().path, "/_serac/admin/v1/policies");
  EXPECT_EQ(GetPolicyRequest("p").method, "GET");
  EXPECT_EQ(DeletePolicyRequest("p").method, "DELETE");
  ApiRequest attach = AttachPolicyRequest("readonly", "carol");
  EXPECT_EQ(attach.method, "PUT");
  EXPECT_EQ(attach.path, "/_serac/admin/v1/users/carol/policies/readonly");
  ApiRequest detach = DetachPolicyRequest("readonly", "carol");
  EXPECT_EQ(detach.method, "DELETE");
  EXPECT_EQ(detach.path, attach.path);
}

// The admin API verifies S3-style signatures: service "s3" and the S3 URI encoding.
TEST(AdminRequestsTest, SignedForTheS3Service) {
  Connection connection;
  connection.endpoint = "http://127.0.0.1:9000";
  connection.access_key = "AKADMIN";
  connection.secret_key = "admin-secret-key";
  Result<http::ClientRequest> signed_request = BuildSignedRequest(connection, GetUserRequest("a@b"), Now());
  ASSERT_TRUE(signed_request.ok());
  std::string authorization;
  for (const http::Header& header : signed_request->headers) {
    if (header.name == "Authorization") authorization = header.value;
  }
  EXPECT_NE(authorization.find("/us-east-1/s3/aws4_request"), std::string::npos) << authorization;

  http::Request request;
  request.method = "GET";
  request.target = "/_serac/admin/v1/users/a%40b";
  request.path = request.target;
  request.headers = signed_request->headers;
  auth::VerifyOptions options;
  options.services = {"s3"};
  options.uri_encoding = auth::UriEncoding::kS3;
  options.now = Now();
  auth::Credentials keys{"AKADMIN", "admin-secret-key", ""};
  auto lookup = [keys](std::string_view) -> Result<auth::Credentials> { return keys; };
  EXPECT_TRUE(auth::Verify(request, options, lookup).ok());
}

TEST(AdminRequestsTest, AdminErrorBodiesBecomeMessages) {
  EXPECT_EQ(ErrorMessageFromResponse(404, R"({"error":{"code":"NotFound","message":"no user x"}})"),
            "no user x (NotFound)");
}

}  // namespace
}  // namespace serac::client
