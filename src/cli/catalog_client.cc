#include "cli/catalog_client.h"

#include <nlohmann/json.hpp>

#include "auth/sigv4.h"
#include "common/hash.h"

namespace serac::cli {
namespace {

using Json = nlohmann::json;

// Enough of an unexpected (non-JSON) body to recognise it, not a page of HTML.
constexpr size_t kErrorBodyExcerptBytes = 300;

ErrorCode CodeForStatus(int status) {
  switch (status) {
    case 400:
      return ErrorCode::kInvalidArgument;
    case 401:
    case 403:
      return ErrorCode::kAccessDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kConflict;
    case 501:
      return ErrorCode::kNotImplemented;
    case 503:
      return ErrorCode::kUnavailable;
    default:
      return status >= 500 ? ErrorCode::kInternal : ErrorCode::kInvalidArgument;
  }
}

// The string at `key`, or "" (value() would throw on a non-string from a misbehaving server).
std::string StringField(const Json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

std::string TrimTrailingSlashes(std::string text) {
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

Connection ResolveConnection(const ConnectionFlags& flags,
                             const std::function<const char*(const char* name)>& environment) {
  auto pick = [&environment](const std::string& flag, const char* variable, std::string fallback) {
    if (!flag.empty()) return flag;
    const char* value = environment(variable);
    return value != nullptr && *value != '\0' ? std::string(value) : fallback;
  };
  Connection connection;
  connection.endpoint = pick(flags.endpoint, "SERAC_ENDPOINT", connection.endpoint);
  connection.access_key = pick(flags.access_key, "SERAC_ACCESS_KEY", "");
  connection.secret_key = pick(flags.secret_key, "SERAC_SECRET_KEY", "");
  connection.region = pick(flags.region, "SERAC_REGION", connection.region);
  connection.ca_file = flags.ca_file;
  connection.insecure = flags.insecure;
  return connection;
}

Result<http::ClientRequest> BuildSignedRequest(const Connection& connection, const ApiRequest& api,
                                               WallTime now) {
  std::string url = TrimTrailingSlashes(connection.endpoint) + api.path;
  if (!api.query.empty()) url += "?" + api.query;
  Result<http::Url> parsed = http::ParseUrl(url);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "bad endpoint '" + connection.endpoint + "': " + parsed.status().message());
  }
  http::ClientRequest request;
  request.method = api.method;
  request.url = url;
  request.body = api.body;
  request.tls_ca_file = connection.ca_file;
  request.tls_insecure = connection.insecure;
  request.headers.push_back({"Host", parsed->HostHeader()});
  if (!api.body.empty()) request.headers.push_back({"Content-Type", "application/json"});
  auth::Credentials credentials{connection.access_key, connection.secret_key, ""};
  auth::SignOptions options;
  options.region = connection.region;
  options.service = api.s3_signing ? "s3" : std::string(kCatalogSigningName);
  options.uri_encoding = api.s3_signing ? auth::UriEncoding::kS3 : auth::UriEncoding::kGeneric;
  options.now = now;
  options.payload_sha256_hex = Sha256Hex(api.body);
  auth::SignRequest(api.method, parsed->path, parsed->query, request.headers, credentials, options);
  return request;
}

std::string ErrorMessageFromResponse(int status, std::string_view body) {
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
    const Json& error = parsed["error"];
    std::string message = StringField(error, "message");
    std::string type = StringField(error, "type");
    if (type.empty()) type = StringField(error, "code");  // the admin API's error shape
    if (message.empty()) message = "HTTP " + std::to_string(status);
    return type.empty() ? message : message + " (" + type + ")";
  }
  std::string text = "HTTP " + std::to_string(status);
  if (!body.empty()) text += ": " + std::string(body.substr(0, kErrorBodyExcerptBytes));
  return text;
}

Result<std::string> CatalogClient::Call(const ApiRequest& api) const {
  if (connection_.access_key.empty() || connection_.secret_key.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "no credentials: pass --access-key/--secret-key or set SERAC_ACCESS_KEY/SERAC_SECRET_KEY");
  }
  SERAC_ASSIGN_OR_RETURN(http::ClientRequest request, BuildSignedRequest(connection_, api, Now()));
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, http::Send(request));
  if (response.status >= 200 && response.status < 300) return std::move(response.body);
  return Error(CodeForStatus(response.status), ErrorMessageFromResponse(response.status, response.body));
}

}  // namespace serac::cli
