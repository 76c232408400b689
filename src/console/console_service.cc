#include "console/console_service.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "admin/admin_api.h"
#include "auth/identity.h"
#include "auth/sign_in_throttle.h"
#include "auth/tokens.h"
#include "catalog/catalog_service.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/log.h"
#include "console/console_api_internal.h"
#include "console/console_assets_internal.h"
#include "meta/meta_store.h"
#include "s3/s3_service.h"

namespace serac::console {

namespace {

// No script, style, image or connection from anywhere but this origin, nothing inline, no framing,
// no forms posting elsewhere: a key or a property shown as HTML by mistake still could not run.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src "
    "'self'; "
    "font-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// A sign-out is remembered as a lease of this name on the session id until the session would have
// expired: every server of a shared store sees it, and it leaves by itself.
constexpr std::string_view kSignedOutLeasePrefix = "console/signed-out/";
constexpr std::string_view kSignedOutHolder = "signed-out";

constexpr std::string_view kNotBuiltPage =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>serac console</title></head>"
    "<body><p>This serac binary was built without its web console (-DSERAC_CONSOLE=OFF).</p></body></html>";

void AddSecurityHeaders(http::ResponseWriter& response) {
  response.AddHeader("Content-Security-Policy", kContentSecurityPolicy);
  response.AddHeader("X-Content-Type-Options", "nosniff");
  response.AddHeader("X-Frame-Options", "DENY");
  response.AddHeader("Referrer-Policy", "no-referrer");
  response.AddHeader("Cross-Origin-Opener-Policy", "same-origin");
  response.AddHeader("Cross-Origin-Resource-Policy", "same-origin");
}

std::string_view ContentTypeOf(std::string_view path) {
  struct Type {
    std::string_view extension;
    std::string_view content_type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
  };
  for (const Type& type : kTypes) {
    if (path.ends_with(type.extension)) return type.content_type;
  }
  return "application/octet-stream";
}

bool AcceptsGzip(const http::Request& request) {
  return AsciiLower(request.HeaderOr("accept-encoding")).find("gzip") != std::string::npos;
}

// The value of cookie `name` in the request's Cookie headers, if sent.
std::optional<std::string_view> CookieValue(const http::Request& request, std::string_view name) {
  for (std::string_view header : request.FindHeaders("cookie")) {
    while (!header.empty()) {
      const size_t end = header.find(';');
      std::string_view pair = TrimWhitespace(header.substr(0, end));
      header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
      const size_t equals = pair.find('=');
      if (equals != std::string_view::npos && TrimWhitespace(pair.substr(0, equals)) == name) {
        return TrimWhitespace(pair.substr(equals + 1));
      }
    }
  }
  return std::nullopt;
}

}  // namespace

struct ConsoleService::Impl {
  ConsoleServices services;
  ConsoleOptions options;
  auth::SignInThrottle throttle;
  WallTime started = Now();

  void ServeAsset(const http::Request& request, http::ResponseWriter& response,
                  http::RequestOutcome& outcome);
  void ServeApi(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
                http::RequestOutcome& outcome);

  void SignIn(ApiCall& call);
  void DescribeSession(ApiCall& call, const Session& session);
  void SignOut(ApiCall& call, const Session& session);
  // The session the request's cookie names, or the error that ends the request (sent).
  // `csrf_needed` is false only for GET session, which a page asks once it has loaded to learn the
  // value (it reads nothing else and changes nothing; another site's page can neither send the
  // cookie nor read the answer).
  std::optional<Session> RequireSession(ApiCall& call, bool csrf_needed);
  enum class FrontEnd { kS3, kCatalog, kAdmin };
  void Proxy(ApiCall& call, const Session& session, FrontEnd front_end, std::string_view target_path);
};

ConsoleService::ConsoleService(ConsoleServices services, ConsoleOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->services = services;
  impl_->options = std::move(options);
}

ConsoleService::~ConsoleService() = default;

bool ConsoleAssetsBuiltIn() { return !EmbeddedAssets().empty(); }

void ConsoleService::Handle(const http::Request& request, http::BodyReader& body,
                            http::ResponseWriter& response, http::RequestOutcome& outcome) {
  AddSecurityHeaders(response);
  const std::string_view path = request.path;
  if (path == kConsoleApiPath || path.starts_with(std::string(kConsoleApiPath) + "/")) {
    impl_->ServeApi(request, body, response, outcome);
    return;
  }
  // The page's own files take no body; one sent is not read, and the connection closes after.
  const std::optional<uint64_t> length = body.content_length();
  if (length ? *length > 0 : request.FindHeader("transfer-encoding") != nullptr)
    response.CloseAfterResponse();
  impl_->ServeAsset(request, response, outcome);
}

void ConsoleService::Impl::ServeAsset(const http::Request& request, http::ResponseWriter& response,
                                      http::RequestOutcome& outcome) {
  outcome.operation = "ConsolePage";
  if (request.method != "GET" && request.method != "HEAD") {
    response.SetStatus(405);
    response.AddHeader("Allow", "GET, HEAD");
    response.AddHeader("Content-Type", "text/plain; charset=utf-8");
    (void)response.Send("the console's pages are read with GET\n");
    return;
  }
  std::string_view relative = std::string_view(request.path).substr(kConsolePath.size());
  if (relative.empty()) {
    // "/_serac/console" itself: the page's relative asset paths need the trailing slash.
    response.SetStatus(308);
    response.AddHeader("Location", std::string(kConsolePath) + "/");
    (void)response.Send("");
    return;
  }
  relative.remove_prefix(1);  // the '/'
  if (relative.empty()) relative = "index.html";
  if (!ConsoleAssetsBuiltIn() && relative == "index.html") {
    response.SetStatus(200);
    response.AddHeader("Content-Type", "text/html; charset=utf-8");
    response.AddHeader("Cache-Control", "no-store");
    (void)response.Send(kNotBuiltPage);
    return;
  }
  const std::span<const EmbeddedAsset> assets = EmbeddedAssets();
  const auto found = std::find_if(assets.begin(), assets.end(),
                                  [&](const EmbeddedAsset& asset) { return asset.path == relative; });
  if (found == assets.end()) {
    response.SetStatus(404);
    response.AddHeader("Content-Type", "text/plain; charset=utf-8");
    response.AddHeader("Cache-Control", "no-store");
    (void)response.Send("no such console file\n");
    return;
  }
  response.SetStatus(200);
  response.AddHeader("Content-Type", ContentTypeOf(found->path));
  // Built files under assets/ are named by their content's hash: they never change under a name.
  response.AddHeader("Cache-Control",
                     found->path.starts_with("assets/") ? "public, max-age=31536000, immutable" : "no-cache");
  response.AddHeader("Vary", "Accept-Encoding");
  std::string_view body = found->body;
  if (!found->gzipped.empty() && AcceptsGzip(request)) {
    response.AddHeader("Content-Encoding", "gzip");
    body = found->gzipped;
  }
  outcome.bytes_out += body.size();
  (void)response.Send(body);
}

void ConsoleService::Impl::ServeApi(const http::Request& request, http::BodyReader& body,
                                    http::ResponseWriter& response, http::RequestOutcome& outcome) {
  ApiCall call{request, body, response, outcome};
  std::string_view route = std::string_view(request.path).substr(kConsoleApiPath.size());
  if (!route.empty()) route.remove_prefix(1);
  // Browsers say where a request comes from: one another site's page made is refused before the
  // cookie is even looked at (SameSite=Strict keeps the cookie from it too; this says so clearly).
  const std::string_view fetch_site = request.HeaderOr("sec-fetch-site");
  if (!fetch_site.empty() && fetch_site != "same-origin" && fetch_site != "none") {
    outcome.operation = "ConsoleCrossSite";
    return SendApiError(call, 403, "CrossSiteRequest", "the console's API answers only its own pages");
  }
  if (route == "session" && request.method == "POST") {
    outcome.operation = "ConsoleSignIn";
    return SignIn(call);
  }
  std::optional<Session> session = RequireSession(call, !(route == "session" && request.method == "GET"));
  if (!session) return;
  outcome.principal = session->principal.access_key;
  auto under = [&](std::string_view prefix) {
    return route == prefix ||
           (route.starts_with(prefix) && route.size() > prefix.size() && route[prefix.size()] == '/');
  };
  if (under("s3")) return Proxy(call, *session, FrontEnd::kS3, route.substr(2));
  if (under("iceberg")) {
    return Proxy(call, *session, FrontEnd::kCatalog, "/_iceberg" + std::string(route.substr(7)));
  }
  if (under("admin")) {
    return Proxy(call, *session, FrontEnd::kAdmin,
                 std::string(admin::kAdminPathPrefix) + std::string(route.substr(5)));
  }
  if (!NoBodyOrRefuse(call)) return;
  if (route == "session") {
    if (request.method == "GET") {
      outcome.operation = "ConsoleSession";
      return DescribeSession(call, *session);
    }
    if (request.method == "DELETE") {
      outcome.operation = "ConsoleSignOut";
      return SignOut(call, *session);
    }
  }
  ConsoleApiContext context{services, options, started};
  if (ServeConsoleRoute(context, call, *session, route)) return;
  outcome.operation = "ConsoleNotFound";
  SendApiError(call, 404, "NoSuchRoute", "no console route for " + request.method + " " + request.path);
}

void ConsoleService::Impl::SignIn(ApiCall& call) {
  Result<std::string> text = call.body.ReadAll(limits::kConsoleSignInBodyBytesMax);
  if (!text.ok()) {
    call.response.CloseAfterResponse();
    return SendApiError(call, 400, "InvalidRequest",
                        "a sign-in is a JSON object of at most limits::kConsoleSignInBodyBytesMax (4 KiB)");
  }
  call.outcome.bytes_in += text->size();
  Result<Json> parsed = ParseJson(*text);
  if (!parsed.ok() || !parsed->is_object()) {
    return SendApiError(call, 400, "InvalidRequest",
                        "the body must be {\"access-key\":...,\"secret-key\":...}");
  }
  Result<std::string> access_key = RequiredString(*parsed, "access-key");
  Result<std::string> secret_key = RequiredString(*parsed, "secret-key");
  if (!access_key.ok() || !secret_key.ok() || access_key->empty() ||
      access_key->size() > limits::kTokenAccessKeyBytesMax) {
    return SendApiError(call, 400, "InvalidRequest",
                        "\"access-key\" and \"secret-key\" are required strings");
  }
  const std::string address = auth::SourceIpFromPeer(call.request.remote_address);
  const auth::SignInThrottle::Clock::time_point steady_now = auth::SignInThrottle::Clock::now();
  if (std::optional<std::chrono::seconds> wait = throttle.WaitFor(address, *access_key, steady_now)) {
    call.response.AddHeader("Retry-After", std::to_string(wait->count()));
    return SendApiError(
        call, 429, "SlowDown",
        "too many failed sign-ins from this address; try again in " + std::to_string(wait->count()) + " s");
  }
  const auth::IdentityService& identity = *services.identity;
  if (!identity.CheckClientSecret(*access_key, *secret_key).ok()) {
    throttle.RecordFailure(address, *access_key, steady_now);
    log::Info("console: failed sign-in for access key " + *access_key + " from " + address);
    return SendApiError(call, 401, "InvalidCredentials", "the access key or secret key is not right");
  }
  Result<auth::ConsoleSession> issued = identity.IssueConsoleSession(*access_key, Now());
  if (!issued.ok()) return SendApiError(call, 401, "InvalidCredentials", issued.status().message());
  Result<auth::Principal> principal = identity.PrincipalForConsoleSession(issued->claims);
  if (!principal.ok()) return SendApiError(call, 401, "InvalidCredentials", principal.status().message());
  throttle.RecordSuccess(address, *access_key);
  const int64_t max_age =
      std::chrono::duration_cast<std::chrono::seconds>(limits::kConsoleSessionTtl).count();
  // Sent back only to the API's own paths, never readable by the page, never sent by another site.
  std::string cookie = std::string(kSessionCookie) + "=" + issued->token +
                       "; Path=" + std::string(kConsoleApiPath) + "; Max-Age=" + std::to_string(max_age) +
                       "; HttpOnly; SameSite=Strict";
  if (call.request.tls) cookie += "; Secure";
  call.response.AddHeader("Set-Cookie", cookie);
  log::Info("console: " + principal->user + " signed in from " + address);
  Session session{issued->token, issued->claims, std::move(principal).value()};
  DescribeSession(call, session);
}

std::optional<Session> ConsoleService::Impl::RequireSession(ApiCall& call, bool csrf_needed) {
  std::optional<std::string_view> token = CookieValue(call.request, kSessionCookie);
  if (!token || token->empty()) {
    SendApiError(call, 401, "NotSignedIn", "sign in to the console first");
    return std::nullopt;
  }
  Result<auth::ConsoleSessionClaims> claims =
      auth::VerifyConsoleSession(services.identity->server_key(), *token, Now());
  if (!claims.ok()) {
    const bool expired = claims.status().code() == ErrorCode::kExpired;
    SendApiError(call, 401, expired ? "SessionExpired" : "NotSignedIn",
                 expired ? "the console session has expired; sign in again" : "sign in to the console first");
    return std::nullopt;
  }
  // The anti-forgery value before anything else is looked up: a forged request learns nothing.
  const std::string expected = auth::ConsoleCsrfToken(*token);
  const std::string* sent = call.request.FindHeader(kCsrfHeader);
  if (csrf_needed && (sent == nullptr || !ConstantTimeEquals(*sent, expected))) {
    SendApiError(call, 403, "BadCsrfToken", "the request lacks this session's X-Serac-Csrf value");
    return std::nullopt;
  }
  Result<std::optional<meta::LeaseRecord>> signed_out =
      services.meta->GetLease(std::string(kSignedOutLeasePrefix) + claims->session_id);
  if (!signed_out.ok()) {
    SendApiError(call, 503, "ServiceUnavailable", "the metadata store cannot be reached; retry later");
    return std::nullopt;
  }
  if (signed_out->has_value()) {
    SendApiError(call, 401, "SessionExpired", "this console session was signed out; sign in again");
    return std::nullopt;
  }
  Result<auth::Principal> principal = services.identity->PrincipalForConsoleSession(*claims);
  if (!principal.ok()) {
    SendApiError(call, 401, "SessionExpired", principal.status().message());
    return std::nullopt;
  }
  return Session{std::string(*token), std::move(claims).value(), std::move(principal).value()};
}

void ConsoleService::Impl::DescribeSession(ApiCall& call, const Session& session) {
  Json reply{{"user", session.principal.user},
             {"access-key", session.principal.access_key},
             {"root", session.principal.acts_as_root},
             {"csrf", auth::ConsoleCsrfToken(session.token)},
             {"expires-ms", ToUnixMillis(session.claims.expires_at)}};
  SendApiJson(call, 200, reply);
}

void ConsoleService::Impl::SignOut(ApiCall& call, const Session& session) {
  const auto remaining =
      std::chrono::duration_cast<std::chrono::milliseconds>(session.claims.expires_at - Now());
  Result<bool> remembered = services.meta->AcquireLease(
      std::string(kSignedOutLeasePrefix) + session.claims.session_id, std::string(kSignedOutHolder),
      std::max(remaining, std::chrono::milliseconds(1000)));
  if (!remembered.ok()) {
    return SendApiError(call, 503, "ServiceUnavailable", "the sign-out could not be recorded; retry");
  }
  // Records of sessions that have expired since are no longer needed: each sign-out clears them.
  if (Status forgotten = services.meta->ForgetExpiredLeases(std::string(kSignedOutLeasePrefix));
      !forgotten.ok()) {
    log::Warn("console: expired sign-out records not cleared: " + forgotten.ToString());
  }
  call.response.AddHeader(
      "Set-Cookie", std::string(kSessionCookie) + "=; Path=" + std::string(kConsoleApiPath) +
                        "; Max-Age=0; HttpOnly; SameSite=Strict" + (call.request.tls ? "; Secure" : ""));
  log::Info("console: " + session.principal.user + " signed out");
  call.response.SetStatus(204);
  call.response.AddHeader("Cache-Control", "no-store");
  (void)call.response.Send("");
}

void ConsoleService::Impl::Proxy(ApiCall& call, const Session& session, FrontEnd front_end,
                                 std::string_view target_path) {
  // The request as the front end would have received it, at its own path, path-style, without the
  // console's cookie: the front end acts as the session's principal and checks its policies.
  http::Request forwarded;
  forwarded.method = call.request.method;
  forwarded.path = target_path.empty() ? std::string("/") : std::string(target_path);
  forwarded.query = call.request.query;
  forwarded.target = forwarded.path + (forwarded.query.empty() ? "" : "?" + forwarded.query);
  forwarded.remote_address = call.request.remote_address;
  forwarded.tls = call.request.tls;
  forwarded.request_id = call.request.request_id;
  for (const http::Header& header : call.request.headers) {
    const std::string name = AsciiLower(header.name);
    if (name == "cookie" || name == "authorization" || name == "host" || name == kCsrfHeader) continue;
    forwarded.headers.push_back(header);
  }
  switch (front_end) {
    case FrontEnd::kS3:
      return services.s3->HandleAs(session.principal, forwarded, call.body, call.response, call.outcome);
    case FrontEnd::kCatalog:
      return services.catalog->HandleAs(session.principal, forwarded, call.body, call.response, call.outcome);
    case FrontEnd::kAdmin:
      return services.admin->HandleAs(session.principal, forwarded, call.body, call.response, call.outcome);
  }
}

}  // namespace serac::console
