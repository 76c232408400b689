#include "catalog/catalog_oauth.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "auth/tokens.h"
#include "common/encoding.h"
#include "common/limits.h"

namespace serac::catalog {

namespace {

using Params = std::map<std::string, std::string, std::less<>>;

constexpr std::string_view kFormContentType = "application/x-www-form-urlencoded";
constexpr std::string_view kBasicRealm = "Basic realm=\"serac\"";

// An OAuth error response, or nothing (carry on).
using Failure = std::optional<OAuthTokenResponse>;

OAuthTokenResponse OAuthError(int status, std::string_view error, std::string_view description) {
  nlohmann::json body = {{"error", error}, {"error_description", description}};
  return OAuthTokenResponse{status, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), ""};
}

OAuthTokenResponse InvalidRequest(std::string_view description) {
  return OAuthError(400, "invalid_request", description);
}

// Server-side failures of a callback; client-side ones are the caller's `client_error`.
std::optional<OAuthTokenResponse> ServerFailure(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnavailable:
      return OAuthError(503, "temporarily_unavailable",
                        "the server cannot check credentials right now; retry later");
    case ErrorCode::kIoError:
    case ErrorCode::kInternal:
    case ErrorCode::kTimeout:
      return OAuthError(500, "server_error", "the server failed to check the credentials");
    default:
      return std::nullopt;
  }
}

// application/x-www-form-urlencoded: '&'-separated name=value pairs, '+' is a space, %XX escapes.
// A repeated parameter is an error (RFC 6749 §3.2).
Result<Params> ParseForm(std::string_view text, std::string_view where) {
  Params params;
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::optional<std::string> name = UriDecode(pair.substr(0, eq), true);
    std::optional<std::string> value =
        UriDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!name.has_value() || !value.has_value()) {
      return Error(ErrorCode::kInvalidArgument, "malformed percent-encoding in the " + std::string(where));
    }
    if (!params.emplace(std::move(*name), std::move(*value)).second) {
      return Error(ErrorCode::kInvalidArgument, "a parameter is repeated in the " + std::string(where));
    }
  }
  return params;
}

// Body parameters, then query-string ones (ClickHouse may send either); the same name in both
// with different values is refused.
Result<Params> CollectParams(const OAuthTokenRequest& request) {
  Params params;
  if (!request.body.empty()) {
    std::string_view media_type = request.content_type;
    media_type = TrimWhitespace(media_type.substr(0, media_type.find(';')));
    if (!AsciiEqualsIgnoreCase(media_type, kFormContentType)) {
      return Error(ErrorCode::kInvalidArgument, "the request body must be application/x-www-form-urlencoded");
    }
    SERAC_ASSIGN_OR_RETURN(params, ParseForm(request.body, "request body"));
  }
  SERAC_ASSIGN_OR_RETURN(Params query, ParseForm(request.query, "query string"));
  if (query.count("client_secret") != 0) {
    return Error(
        ErrorCode::kInvalidArgument,
        "client_secret must be sent in the form body or the Authorization header, never in the query "
        "string (proxies and logs keep URLs)");
  }
  for (auto& [name, value] : query) {
    auto [it, inserted] = params.emplace(name, value);
    if (!inserted && it->second != value) {
      return Error(ErrorCode::kInvalidArgument,
                   "parameter " + name + " differs between the body and the query string");
    }
  }
  return params;
}

const std::string* Find(const Params& params, std::string_view name) {
  auto it = params.find(name);
  return it == params.end() ? nullptr : &it->second;
}

// The Authorization header split into scheme (lower-case) and credentials.
struct Authorization {
  std::string scheme;
  std::string credentials;
};

Authorization ParseAuthorization(std::string_view header) {
  header = TrimWhitespace(header);
  size_t space = header.find(' ');
  if (space == std::string_view::npos) return {AsciiLower(header), ""};
  return {AsciiLower(header.substr(0, space)), std::string(TrimWhitespace(header.substr(space + 1)))};
}

struct ClientCredentials {
  std::string id;
  std::string secret;
};

// RFC 6749 §2.3.1: Basic base64(form-encode(id) ":" form-encode(secret)). Some clients skip the
// form encoding, so the raw pair is tried first and the decoded pair second (see Authenticate).
struct BasicCredentials {
  ClientCredentials raw;
  std::optional<ClientCredentials> decoded;  // set when decoding changes something
};

Result<BasicCredentials> ParseBasic(std::string_view credentials) {
  std::optional<std::string> decoded = Base64Decode(credentials);
  size_t colon = decoded.has_value() ? decoded->find(':') : std::string::npos;
  if (colon == std::string::npos) {
    return Error(ErrorCode::kInvalidArgument,
                 "the Basic authorization is not base64 of client_id:client_secret");
  }
  BasicCredentials basic;
  basic.raw = {decoded->substr(0, colon), decoded->substr(colon + 1)};
  std::optional<std::string> id = UriDecode(basic.raw.id, true);
  std::optional<std::string> secret = UriDecode(basic.raw.secret, true);
  if (id.has_value() && secret.has_value() && (*id != basic.raw.id || *secret != basic.raw.secret)) {
    basic.decoded = ClientCredentials{std::move(*id), std::move(*secret)};
  }
  return basic;
}

std::optional<std::string> ValidScope(const Params& params, Failure* failure) {
  const std::string* scope = Find(params, "scope");
  if (scope == nullptr || scope->empty()) return std::nullopt;
  // scope = scope-token *( SP scope-token ); scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
  bool after_space = true;
  for (char c : *scope) {
    bool token_char = c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E);
    if (c == ' ' && !after_space) {
      after_space = true;
    } else if (token_char) {
      after_space = false;
    } else {
      *failure = OAuthError(400, "invalid_scope", "the scope holds characters RFC 6749 §3.3 does not allow");
      return std::nullopt;
    }
  }
  if (after_space) *failure = OAuthError(400, "invalid_scope", "the scope ends with a space");
  return *scope;
}

OAuthTokenResponse Issue(const OAuthIssue& issue, std::string_view access_key, WallTime now,
                         WallTime expires_at, const std::optional<std::string>& scope) {
  Result<std::string> token = issue(access_key, expires_at);
  if (!token.ok()) {
    if (std::optional<OAuthTokenResponse> failure = ServerFailure(token.status().code())) return *failure;
    return OAuthError(400, "invalid_grant", "the credentials can no longer obtain a token");
  }
  nlohmann::json body = {
      {"access_token", *token},
      {"token_type", "bearer"},
      {"expires_in", std::chrono::duration_cast<std::chrono::seconds>(expires_at - now).count()},
      {"issued_token_type", kOAuthAccessTokenType},
  };
  if (scope.has_value()) body["scope"] = *scope;
  return OAuthTokenResponse{200, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), ""};
}

OAuthTokenResponse InvalidClient(bool used_basic, std::string_view description) {
  OAuthTokenResponse response = OAuthError(401, "invalid_client", description);
  if (used_basic) response.www_authenticate = std::string(kBasicRealm);
  return response;
}

// Picks the client credentials from the Basic header or the parameters and checks them.
// Returns the access key, or the error response.
std::variant<std::string, OAuthTokenResponse> AuthenticateClient(const OAuthTokenRequest& request,
                                                                 const Params& params,
                                                                 const OAuthKeyCheck& check_key) {
  Authorization authorization = ParseAuthorization(request.authorization_header);
  const std::string* form_id = Find(params, "client_id");
  const std::string* form_secret = Find(params, "client_secret");
  std::vector<ClientCredentials> candidates;
  bool used_basic = authorization.scheme == "basic";
  if (used_basic) {
    Result<BasicCredentials> basic = ParseBasic(authorization.credentials);
    if (!basic.ok()) return InvalidRequest(basic.status().message());
    const ClientCredentials& effective = basic->decoded.has_value() ? *basic->decoded : basic->raw;
    bool id_conflict = form_id != nullptr && *form_id != basic->raw.id && *form_id != effective.id;
    bool secret_conflict =
        form_secret != nullptr && *form_secret != basic->raw.secret && *form_secret != effective.secret;
    if (id_conflict || secret_conflict) {
      return InvalidRequest("client credentials differ between the Authorization header and the parameters");
    }
    candidates.push_back(basic->raw);
    if (basic->decoded.has_value()) candidates.push_back(*basic->decoded);
  } else if (form_secret != nullptr) {
    candidates.push_back({form_id != nullptr ? *form_id : "", *form_secret});
  } else {
    return InvalidClient(false,
                         form_id != nullptr ? "client_secret is missing" : "no client credentials were sent");
  }
  OAuthTokenResponse rejected = InvalidClient(used_basic, "invalid client credentials");
  for (const ClientCredentials& candidate : candidates) {
    if (candidate.id.empty()) {
      rejected =
          InvalidClient(used_basic, "client_id is missing: send the credential as client_id:client_secret");
      continue;
    }
    Status status = check_key(candidate.id, candidate.secret);
    if (status.ok()) return candidate.id;
    if (std::optional<OAuthTokenResponse> failure = ServerFailure(status.code())) return *failure;
  }
  return rejected;
}

std::variant<auth::BearerClaims, OAuthTokenResponse> AuthenticateSubject(const Params& params,
                                                                         const OAuthTokenCheck& check_token) {
  for (std::string_view name : {"subject_token_type", "requested_token_type"}) {
    const std::string* type = Find(params, name);
    if (type != nullptr && *type != kOAuthAccessTokenType) {
      return InvalidRequest(std::string(name) + " must be " + std::string(kOAuthAccessTokenType));
    }
  }
  // The specification's TokenExchangeRequest requires subject_token; a bearer header alone is not
  // one (it authenticates the request, it does not name what is exchanged).
  const std::string* token = Find(params, "subject_token");
  const std::string subject = token != nullptr ? *token : std::string();
  if (subject.empty()) return InvalidRequest("subject_token is required for a token exchange");
  Result<auth::BearerClaims> claims = check_token(subject);
  if (claims.ok()) return std::move(claims).value();
  if (std::optional<OAuthTokenResponse> failure = ServerFailure(claims.status().code())) return *failure;
  if (claims.status().code() == ErrorCode::kExpired) {
    return OAuthError(400, "invalid_grant", "the subject token has expired");
  }
  return OAuthError(400, "invalid_grant", "the subject token is not valid");
}

}  // namespace

std::string OAuthClientId(const OAuthTokenRequest& request) {
  Authorization authorization = ParseAuthorization(request.authorization_header);
  if (authorization.scheme == "basic") {
    Result<BasicCredentials> basic = ParseBasic(authorization.credentials);
    if (basic.ok()) return basic->decoded.has_value() ? basic->decoded->id : basic->raw.id;
  }
  Result<Params> params = CollectParams(request);
  if (!params.ok()) return "";
  const std::string* id = Find(*params, "client_id");
  return id != nullptr ? *id : "";
}

OAuthTokenResponse HandleOAuthTokenRequest(const OAuthTokenRequest& request, const OAuthKeyCheck& check_key,
                                           const OAuthTokenCheck& check_token, const OAuthIssue& issue,
                                           WallTime now, std::chrono::seconds ttl) {
  if (request.body.size() > limits::kOAuthTokenRequestBodyBytesMax) {
    return InvalidRequest("the request body is larger than limits::kOAuthTokenRequestBodyBytesMax");
  }
  Result<Params> params = CollectParams(request);
  if (!params.ok()) return InvalidRequest(params.status().message());

  Failure failure;
  std::optional<std::string> scope = ValidScope(*params, &failure);
  if (failure.has_value()) return *failure;

  const std::string* grant_type = Find(*params, "grant_type");
  if (grant_type == nullptr || grant_type->empty()) return InvalidRequest("grant_type is required");
  // Whole seconds, as tokens count them.
  const WallTime issued = std::chrono::floor<std::chrono::seconds>(now);
  if (*grant_type == kOAuthGrantClientCredentials) {
    std::variant<std::string, OAuthTokenResponse> client = AuthenticateClient(request, *params, check_key);
    if (auto* response = std::get_if<OAuthTokenResponse>(&client)) return std::move(*response);
    return Issue(issue, std::get<std::string>(client), issued, issued + ttl, scope);
  }
  if (*grant_type == kOAuthGrantTokenExchange) {
    std::variant<auth::BearerClaims, OAuthTokenResponse> subject = AuthenticateSubject(*params, check_token);
    if (auto* response = std::get_if<OAuthTokenResponse>(&subject)) return std::move(*response);
    // A refresh, not an extension: the new token ends when the one it replaces would have.
    const auth::BearerClaims& claims = std::get<auth::BearerClaims>(subject);
    return Issue(issue, claims.access_key, issued, std::min(issued + ttl, claims.expires_at), scope);
  }
  return OAuthError(400, "unsupported_grant_type",
                    "supported grant types: client_credentials, " + std::string(kOAuthGrantTokenExchange));
}

}  // namespace serac::catalog
