// The logic of the OAuth2 token endpoint, POST /_iceberg/v1/oauth/tokens (RFC 6749 §4.4 client
// credentials, RFC 8693 token exchange), free of the HTTP server's types so it can be tested alone.
// The caller reads the body (at most limits::kOAuthTokenRequestBodyBytesMax), passes the request
// head fields below, and writes the response with Content-Type: application/json,
// Cache-Control: no-store and, when set, WWW-Authenticate.
//
// What each engine sends (shared/reference/iceberg-rest.md §1.11), all accepted:
//   - Java (Spark, Trino, Flink) and PyIceberg: form body grant_type=client_credentials,
//     client_id, client_secret, scope=catalog; refresh by token exchange with subject_token = the
//     current token (and that token in Authorization: Bearer);
//   - DuckDB: Authorization: Basic base64(id:secret), form body grant_type and scope;
//   - ClickHouse: the form body (its default; with oauth_server_use_request_body=false it would send
//     the secret in the query string, which is refused).
// Any scope is accepted and echoed back. Tokens are auth/tokens.h bearer tokens for the access key.
// No response ever contains the client secret.
// Thread-safe: a pure function of its arguments (the callbacks must be thread-safe themselves).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "auth/tokens.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/status.h"

namespace serac::catalog {

struct OAuthTokenRequest {
  std::string content_type;          // Content-Type header, as sent
  std::string body;                  // the whole request body
  std::string authorization_header;  // Authorization header, as sent, or empty
  std::string query;                 // raw query string without '?'
};

struct OAuthTokenResponse {
  int status = 200;
  std::string json_body;  // always a JSON object: the token, or {"error", "error_description"}
  // "Basic realm=..." on a 401 after the client tried HTTP Basic (RFC 6749 §5.2); else empty.
  std::string www_authenticate;
};

// Ok when the pair is a valid, enabled key; kAccessDenied / kUnknownAccessKey /
// kSignatureMismatch (any client error) → 401 invalid_client; kUnavailable → 503; other server
// errors (kIoError, kInternal, kTimeout) → 500. The callee compares secrets in constant time.
using OAuthKeyCheck = std::function<Status(std::string_view access_key, std::string_view secret)>;
// The claims of a valid bearer token whose key still exists, is enabled and is the key it was
// issued to. Client errors (kExpired, kAccessDenied, ...) → 400 invalid_grant; server errors as for
// OAuthKeyCheck.
using OAuthTokenCheck = std::function<Result<auth::BearerClaims>(std::string_view bearer_token)>;
// A bearer token for the access key, valid until `expires_at`.
using OAuthIssue = std::function<Result<std::string>(std::string_view access_key, WallTime expires_at)>;

// The client a token request names (client_id, or the id of HTTP Basic credentials), for
// counting failed sign-ins; "" when it names none or cannot be read.
std::string OAuthClientId(const OAuthTokenRequest& request);

inline constexpr std::string_view kOAuthGrantClientCredentials = "client_credentials";
inline constexpr std::string_view kOAuthGrantTokenExchange =
    "urn:ietf:params:oauth:grant-type:token-exchange";
inline constexpr std::string_view kOAuthAccessTokenType = "urn:ietf:params:oauth:token-type:access_token";

// Success: 200 {"access_token", "token_type": "bearer", "expires_in": seconds,
// "issued_token_type": access_token type, "scope" (when the request had one)}. A token from client
// credentials lives `ttl`; one from a token exchange never outlives the token it replaces.
// Errors (RFC 6749 §5.2): 400 invalid_request (malformed form, wrong content type, body too
// large, repeated or conflicting parameters, missing grant_type or subject_token, unsupported
// token type, a client_secret in the query string, where proxies and logs would keep it), 400
// unsupported_grant_type, 400 invalid_scope (characters outside RFC 6749 §3.3), 401 invalid_client
// (missing or wrong client credentials), 400 invalid_grant (bad or expired subject token), 500
// server_error, 503 temporarily_unavailable.
OAuthTokenResponse HandleOAuthTokenRequest(const OAuthTokenRequest& request, const OAuthKeyCheck& check_key,
                                           const OAuthTokenCheck& check_token, const OAuthIssue& issue,
                                           WallTime now, std::chrono::seconds ttl);

}  // namespace serac::catalog
