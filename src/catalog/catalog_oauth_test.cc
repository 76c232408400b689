#include "catalog/catalog_oauth.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "auth/sigv4.h"
#include "auth/tokens.h"
#include "common/encoding.h"
#include "common/limits.h"

namespace serac::catalog {
namespace {

using std::chrono::seconds;

constexpr std::string_view kAccessKey = "AKIDUSER";
// A secret with every character form encoding treats specially.
constexpr std::string_view kSecret = "s3cr3t+/=%&Key:40";
constexpr std::string_view kFormType = "application/x-www-form-urlencoded";
const WallTime kNow = FromUnixMillis(1'760'000'000'000);
constexpr seconds kTtl{3600};
const auth::KeyIdentity kKey{"user", 1};

// A token for `access_key` issued at `issued`, living kTtl.
std::string TokenAt(const auth::ServerKey& key, std::string_view access_key, WallTime issued) {
  return auth::IssueBearerToken(key, access_key, kKey, issued, issued + kTtl);
}

std::string FormEncode(std::string_view value) { return UriEncode(value, true); }

class OAuthTokenTest : public ::testing::Test {
 protected:
  OAuthTokenTest() : key_(std::move(auth::ServerKey::FromBytes(std::string(32, 'k'))).value()) {}

  OAuthTokenResponse Send(OAuthTokenRequest request) {
    OAuthKeyCheck check_key = [this](std::string_view access_key, std::string_view secret) -> Status {
      key_checks_.emplace_back(access_key);
      if (key_check_error_.has_value()) return Error(*key_check_error_, "store failed");
      if (access_key == kAccessKey && secret == kSecret) return Status::Ok();
      return Error(ErrorCode::kAccessDenied, "bad credentials");
    };
    OAuthTokenCheck check_token = [this](std::string_view token) -> Result<auth::BearerClaims> {
      if (key_check_error_.has_value()) return Error(*key_check_error_, "store failed");
      Result<auth::BearerClaims> claims = auth::VerifyBearerToken(key_, token, kNow);
      if (!claims.ok()) return claims.status();
      if (claims->access_key != kAccessKey) return Error(ErrorCode::kAccessDenied, "key disabled");
      return claims;
    };
    OAuthIssue issue = [this](std::string_view access_key, WallTime expires_at) -> Result<std::string> {
      return auth::IssueBearerToken(key_, access_key, kKey, kNow, expires_at);
    };
    OAuthTokenResponse response = HandleOAuthTokenRequest(request, check_key, check_token, issue, kNow, kTtl);
    // Whatever happened, the secret never comes back, raw or encoded.
    EXPECT_EQ(response.json_body.find(kSecret), std::string::npos) << response.json_body;
    EXPECT_EQ(response.json_body.find(FormEncode(kSecret)), std::string::npos) << response.json_body;
    EXPECT_EQ(response.json_body.find("s3cr3t"), std::string::npos) << response.json_body;
    EXPECT_TRUE(nlohmann::json::accept(response.json_body)) << response.json_body;
    return response;
  }

  static OAuthTokenRequest Form(std::string body) {
    return OAuthTokenRequest{std::string(kFormType), std::move(body), "", ""};
  }

  static std::string Basic(std::string_view id, std::string_view secret) {
    return "Basic " + Base64Encode(std::string(id) + ":" + std::string(secret));
  }

  // The issued token verifies for kAccessKey and lives `lifetime`; returns the parsed body.
  nlohmann::json ExpectToken(const OAuthTokenResponse& response, seconds lifetime = kTtl) {
    EXPECT_EQ(response.status, 200) << response.json_body;
    nlohmann::json body = nlohmann::json::parse(response.json_body, nullptr, false);
    EXPECT_TRUE(body.is_object());
    if (!body.is_object() || !body.contains("access_token")) return body;
    EXPECT_EQ(body["token_type"], "bearer");
    EXPECT_EQ(body["expires_in"], lifetime.count());
    EXPECT_EQ(body["issued_token_type"], "urn:ietf:params:oauth:token-type:access_token");
    Result<auth::BearerClaims> claims =
        auth::VerifyBearerToken(key_, body["access_token"].get<std::string>(), kNow);
    EXPECT_TRUE(claims.ok()) << claims.status().ToString();
    if (claims.ok()) {
      EXPECT_EQ(claims->access_key, kAccessKey);
      EXPECT_EQ(claims->expires_at, kNow + lifetime);
    }
    EXPECT_TRUE(response.www_authenticate.empty());
    return body;
  }

  static void ExpectError(const OAuthTokenResponse& response, int status, std::string_view error) {
    EXPECT_EQ(response.status, status) << response.json_body;
    nlohmann::json body = nlohmann::json::parse(response.json_body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << response.json_body;
    EXPECT_EQ(body.value("error", ""), error) << response.json_body;
    EXPECT_TRUE(body.contains("error_description")) << response.json_body;
    EXPECT_FALSE(body.contains("access_token"));
  }

  std::string ValidToken() { return TokenAt(key_, kAccessKey, kNow - seconds(60)); }

  auth::ServerKey key_;
  std::vector<std::string> key_checks_;
  std::optional<ErrorCode> key_check_error_;
};

// ---- every client style ----

TEST_F(OAuthTokenTest, JavaAndPyIcebergSendCredentialsInTheForm) {
  nlohmann::json body = ExpectToken(
      Send(Form("grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret) +
                "&scope=catalog")));
  EXPECT_EQ(body["scope"], "catalog");
}

TEST_F(OAuthTokenTest, FormDecodingHandlesPlusAndPercentEscapes) {
  // '+' is a space in forms, so a literal '+' in the secret arrives as %2B.
  std::string body =
      "grant_type=client_credentials&client_id=AKIDUSER&client_secret=s3cr3t%2B%2F%3D%25%26Key%3A40"
      "&scope=PRINCIPAL_ROLE%3AALL+catalog";
  nlohmann::json json = ExpectToken(Send(Form(body)));
  EXPECT_EQ(json["scope"], "PRINCIPAL_ROLE:ALL catalog");
  ExpectError(
      Send(Form("grant_type=client_credentials&client_id=AKIDUSER&client_secret=s3cr3t+/=%25%26Key:40")), 401,
      "invalid_client");  // '+' decoded as a space: not the secret
}

TEST_F(OAuthTokenTest, ContentTypeParametersAndCaseAreAccepted) {
  OAuthTokenRequest request =
      Form("grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret));
  request.content_type = "Application/X-WWW-Form-Urlencoded; charset=UTF-8";
  nlohmann::json body = ExpectToken(Send(request));
  EXPECT_FALSE(body.contains("scope"));  // no scope asked, none echoed
}

TEST_F(OAuthTokenTest, DuckDbSendsHttpBasic) {
  OAuthTokenRequest request = Form("grant_type=client_credentials&scope=PRINCIPAL_ROLE%3AALL");
  request.authorization_header = Basic(kAccessKey, kSecret);  // raw, not form-encoded
  EXPECT_EQ(ExpectToken(Send(request))["scope"], "PRINCIPAL_ROLE:ALL");
}

TEST_F(OAuthTokenTest, BasicWithFormEncodedCredentialsPerRfc6749) {
  OAuthTokenRequest request = Form("grant_type=client_credentials");
  request.authorization_header = "basic " + Base64Encode("AKIDUSER:" + FormEncode(kSecret));
  ExpectToken(Send(request));
}

TEST_F(OAuthTokenTest, BasicAgreeingWithFormCredentialsIsAccepted) {
  OAuthTokenRequest request =
      Form("grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret));
  request.authorization_header = Basic(kAccessKey, kSecret);
  ExpectToken(Send(request));
}

TEST_F(OAuthTokenTest, ClickHouseSendsTheFormBody) {
  nlohmann::json body =
      ExpectToken(Send(Form("grant_type=client_credentials&scope=PRINCIPAL_ROLE%3AALL&client_id=AKIDUSER"
                            "&client_secret=" +
                            FormEncode(kSecret))));
  EXPECT_EQ(body["scope"], "PRINCIPAL_ROLE:ALL");
}

// ClickHouse with oauth_server_use_request_body=false sends the client secret in the query
// string, where proxies and access logs keep it: refused, naming the fix; the other parameters
// may still come that way.
TEST_F(OAuthTokenTest, ASecretInTheQueryStringIsRefused) {
  OAuthTokenRequest request;
  request.query =
      "grant_type=client_credentials&scope=PRINCIPAL_ROLE%3AALL&client_id=AKIDUSER&client_secret=" +
      FormEncode(kSecret);
  OAuthTokenResponse response = Send(request);
  ExpectError(response, 400, "invalid_request");
  EXPECT_NE(response.json_body.find("query string"), std::string::npos) << response.json_body;
  request.content_type = std::string(kFormType);  // with a content type and an empty body: the same
  ExpectError(Send(request), 400, "invalid_request");
  EXPECT_TRUE(key_checks_.empty());  // refused before any secret was looked at
}

TEST_F(OAuthTokenTest, BodyAndQueryStringCombine) {
  OAuthTokenRequest request =
      Form("grant_type=client_credentials&scope=catalog&client_secret=" + FormEncode(kSecret));
  request.query = "client_id=AKIDUSER&scope=catalog";
  ExpectToken(Send(request));
}

// A token exchange refreshes a token, it does not extend it: the new one ends when the old one
// would have, so a token cannot be kept alive forever by exchanging it.
TEST_F(OAuthTokenTest, AnExchangedTokenEndsWhenItsSubjectWould) {
  const std::string subject = TokenAt(key_, kAccessKey, kNow - seconds(3000));  // 600 s left
  OAuthTokenResponse response = Send(
      Form("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=" + subject));
  ASSERT_EQ(response.status, 200) << response.json_body;
  nlohmann::json body = nlohmann::json::parse(response.json_body);
  EXPECT_EQ(body["expires_in"], 600);
  Result<auth::BearerClaims> claims =
      auth::VerifyBearerToken(key_, body["access_token"].get<std::string>(), kNow);
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->expires_at, kNow + seconds(600));
}

TEST_F(OAuthTokenTest, TokenExchangeWithSubjectToken) {
  OAuthTokenRequest request = Form(
      "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=" + ValidToken() +
      "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token"
      "&scope=catalog");
  request.authorization_header = "Bearer " + ValidToken();               // what Java sends alongside
  nlohmann::json body = ExpectToken(Send(request), kTtl - seconds(60));  // the subject's remaining life
  EXPECT_EQ(body["scope"], "catalog");
  EXPECT_TRUE(key_checks_.empty());  // no client secret involved
}

TEST_F(OAuthTokenTest, TokenExchangeWithOnlyTheBearerHeaderIsRefused) {
  OAuthTokenRequest request = Form("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange");
  request.authorization_header = "Bearer " + ValidToken();
  ExpectError(Send(request), 400, "invalid_request");  // the specification requires subject_token
}

// ---- errors ----

TEST_F(OAuthTokenTest, WrongSecretIsInvalidClient) {
  OAuthTokenResponse response = Send(
      Form("grant_type=client_credentials&client_id=AKIDUSER&client_secret=wrong-" + FormEncode(kSecret)));
  ExpectError(response, 401, "invalid_client");
  EXPECT_TRUE(response.www_authenticate.empty());
  ExpectError(
      Send(Form("grant_type=client_credentials&client_id=AKIDOTHER&client_secret=" + FormEncode(kSecret))),
      401, "invalid_client");
}

TEST_F(OAuthTokenTest, WrongBasicSecretIsInvalidClientWithChallenge) {
  OAuthTokenRequest request = Form("grant_type=client_credentials");
  request.authorization_header = Basic(kAccessKey, std::string(kSecret) + "x");
  OAuthTokenResponse response = Send(request);
  ExpectError(response, 401, "invalid_client");
  EXPECT_EQ(response.www_authenticate, "Basic realm=\"serac\"");
}

TEST_F(OAuthTokenTest, MissingCredentialsAreInvalidClient) {
  ExpectError(Send(Form("grant_type=client_credentials&scope=catalog")), 401, "invalid_client");
  ExpectError(Send(Form("grant_type=client_credentials&client_id=AKIDUSER")), 401, "invalid_client");
  // Java with a credential that has no "id:" part sends only the secret.
  ExpectError(Send(Form("grant_type=client_credentials&client_secret=" + FormEncode(kSecret))), 401,
              "invalid_client");
  EXPECT_TRUE(key_checks_.empty());
  // A bearer token is not a client credential.
  OAuthTokenRequest request = Form("grant_type=client_credentials");
  request.authorization_header = "Bearer " + ValidToken();
  ExpectError(Send(request), 401, "invalid_client");
}

TEST_F(OAuthTokenTest, MalformedBasicIsInvalidRequest) {
  OAuthTokenRequest request = Form("grant_type=client_credentials");
  for (std::string header :
       {std::string("Basic"), std::string("Basic !!!"), "Basic " + Base64Encode("no-colon")}) {
    request.authorization_header = header;
    ExpectError(Send(request), 400, "invalid_request");
  }
}

TEST_F(OAuthTokenTest, ConflictingCredentialsAreInvalidRequest) {
  OAuthTokenRequest request = Form("grant_type=client_credentials&client_id=AKIDOTHER&client_secret=x");
  request.authorization_header = Basic(kAccessKey, kSecret);
  ExpectError(Send(request), 400, "invalid_request");
  EXPECT_TRUE(key_checks_.empty());
}

TEST_F(OAuthTokenTest, GrantTypeErrors) {
  ExpectError(Send(Form("client_id=AKIDUSER&client_secret=" + FormEncode(kSecret))), 400, "invalid_request");
  ExpectError(Send(Form("grant_type=&client_id=AKIDUSER")), 400, "invalid_request");
  for (std::string grant : {"password", "refresh_token", "authorization_code", "CLIENT_CREDENTIALS"}) {
    ExpectError(
        Send(Form("grant_type=" + grant + "&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret))), 400,
        "unsupported_grant_type");
  }
  EXPECT_TRUE(key_checks_.empty());
}

TEST_F(OAuthTokenTest, MalformedRequestsAreInvalidRequest) {
  std::string good = "grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret);
  OAuthTokenRequest json_body = Form(good);
  json_body.content_type = "application/json";
  ExpectError(Send(json_body), 400, "invalid_request");
  OAuthTokenRequest no_type = Form(good);
  no_type.content_type.clear();
  ExpectError(Send(no_type), 400, "invalid_request");
  ExpectError(Send(Form(good + "&scope=%ZZ")), 400, "invalid_request");
  ExpectError(Send(Form(good + "&client_id=AKIDUSER")), 400, "invalid_request");  // repeated parameter
  OAuthTokenRequest conflicting = Form(good);
  conflicting.query = "client_id=AKIDOTHER";
  ExpectError(Send(conflicting), 400, "invalid_request");
  EXPECT_TRUE(key_checks_.empty());
}

TEST_F(OAuthTokenTest, BodyLargerThanTheLimitIsRefused) {
  std::string body =
      "grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret) + "&pad=";
  body.append(limits::kOAuthTokenRequestBodyBytesMax, 'a');
  OAuthTokenResponse response = Send(Form(body));
  ExpectError(response, 400, "invalid_request");
  EXPECT_NE(response.json_body.find("kOAuthTokenRequestBodyBytesMax"), std::string::npos);
}

TEST_F(OAuthTokenTest, InvalidScopeCharacters) {
  std::string good = "grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret);
  for (std::string scope : {"a%22b", "a%5Cb", "a%0Ab", "a++b", "catalog+", "%C3%A9"}) {
    ExpectError(Send(Form(good + "&scope=" + scope)), 400, "invalid_scope");
  }
  // Unknown but well-formed scopes are accepted and echoed.
  EXPECT_EQ(ExpectToken(Send(Form(good + "&scope=PRINCIPAL_ROLE%3AALL+warehouse%3Ax")))["scope"],
            "PRINCIPAL_ROLE:ALL warehouse:x");
}

TEST_F(OAuthTokenTest, TokenExchangeErrors) {
  const std::string exchange = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange";
  ExpectError(Send(Form(exchange)), 400, "invalid_request");  // no subject token at all
  ExpectError(Send(Form(exchange + "&subject_token=garbage")), 400, "invalid_grant");
  std::string expired = TokenAt(key_, kAccessKey, kNow - seconds(7200));
  OAuthTokenResponse response = Send(Form(exchange + "&subject_token=" + expired));
  ExpectError(response, 400, "invalid_grant");
  EXPECT_NE(response.json_body.find("expired"), std::string::npos);
  std::string other_key = TokenAt(key_, "AKIDOTHER", kNow);  // e.g. a disabled key
  ExpectError(Send(Form(exchange + "&subject_token=" + other_key)), 400, "invalid_grant");
  std::string foreign =
      TokenAt(std::move(auth::ServerKey::FromBytes(std::string(32, 'x'))).value(), kAccessKey, kNow);
  ExpectError(Send(Form(exchange + "&subject_token=" + foreign)), 400, "invalid_grant");
  ExpectError(Send(Form(exchange + "&subject_token=" + ValidToken() +
                        "&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aid_token")),
              400, "invalid_request");
  ExpectError(Send(Form(exchange + "&subject_token=" + ValidToken() +
                        "&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Arefresh_token")),
              400, "invalid_request");
  OAuthTokenRequest basic_only = Form(exchange);
  basic_only.authorization_header = Basic(kAccessKey, kSecret);
  ExpectError(Send(basic_only), 400, "invalid_request");
}

TEST_F(OAuthTokenTest, ServerFailuresAreNotBlamedOnTheClient) {
  std::string good = "grant_type=client_credentials&client_id=AKIDUSER&client_secret=" + FormEncode(kSecret);
  key_check_error_ = ErrorCode::kUnavailable;
  ExpectError(Send(Form(good)), 503, "temporarily_unavailable");
  key_check_error_ = ErrorCode::kIoError;
  ExpectError(Send(Form(good)), 500, "server_error");
  ExpectError(
      Send(Form("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token=" +
                ValidToken())),
      500, "server_error");
  // The callee's own message stays server-side.
  EXPECT_EQ(Send(Form(good)).json_body.find("store failed"), std::string::npos);
}

}  // namespace
}  // namespace serac::catalog
