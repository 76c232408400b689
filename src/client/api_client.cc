#include "client/api_client.h"

#include <nlohmann/json.hpp>

#include "client/signed_request_internal.h"

namespace serac::client {
namespace {

using Json = nlohmann::json;

// Enough of an unexpected (non-JSON) body to recognise it, not a page of HTML.
constexpr size_t kErrorBodyExcerptBytes = 300;

// The string at `key`, or "" (value() would throw on a non-string from a misbehaving server).
std::string StringField(const Json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

}  // namespace

Connection ResolveConnection(const ConnectionFlags& flags,
                             const std::function<const char*(const char* name)>& environment) {
  auto set = [&environment](const char* variable) {
    const char* value = environment(variable);
    return value != nullptr && *value != '\0';
  };
  // The flag, else the first variable set, else the fallback.
  auto pick = [&](const std::string& flag, std::initializer_list<const char*> variables,
                  std::string fallback) {
    if (!flag.empty()) return flag;
    for (const char* variable : variables) {
      if (set(variable)) return std::string(environment(variable));
    }
    return fallback;
  };
  Connection connection;
  connection.endpoint = pick(flags.endpoint, {"SERAC_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"},
                             connection.endpoint);
  // A key pair comes from one place: serac's own variables when either is set, else the AWS SDK's
  // (the lines the server's start-up banner prints).
  const bool serac_keys = set("SERAC_ACCESS_KEY") || set("SERAC_SECRET_KEY");
  connection.access_key = pick(flags.access_key, {serac_keys ? "SERAC_ACCESS_KEY" : "AWS_ACCESS_KEY_ID"}, "");
  connection.secret_key =
      pick(flags.secret_key, {serac_keys ? "SERAC_SECRET_KEY" : "AWS_SECRET_ACCESS_KEY"}, "");
  connection.region =
      pick(flags.region, {"SERAC_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"}, connection.region);
  connection.ca_file = flags.ca_file;
  connection.insecure = flags.insecure;
  return connection;
}

Result<http::ClientRequest> BuildSignedRequest(const Connection& connection, const ApiRequest& api,
                                               WallTime now) {
  internal::Target target{internal::TrimTrailingSlashes(connection.endpoint), connection.ca_file,
                          connection.insecure};
  internal::Signing signing;
  signing.access_key = connection.access_key;
  signing.secret_key = connection.secret_key;
  signing.region = connection.region;
  signing.service = api.s3_signing ? "s3" : std::string(kCatalogSigningName);
  signing.s3_uri_encoding = api.s3_signing;
  signing.now = now;
  internal::Call call;
  call.method = api.method;
  call.raw_path = api.path;
  call.raw_query = api.query;
  call.body = api.body;
  if (!api.body.empty()) call.headers.push_back({"Content-Type", "application/json"});
  return internal::BuildRequest(target, signing, call);
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

Result<std::string> ApiClient::Call(const ApiRequest& api) const {
  if (connection_.access_key.empty() || connection_.secret_key.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "no credentials: pass --access-key/--secret-key or set SERAC_ACCESS_KEY/SERAC_SECRET_KEY "
                 "(or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)");
  }
  SERAC_ASSIGN_OR_RETURN(http::ClientRequest request, BuildSignedRequest(connection_, api, Now()));
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, http::Send(request));
  if (response.status >= 200 && response.status < 300) return std::move(response.body);
  return Error(internal::CodeForStatus(response.status),
               ErrorMessageFromResponse(response.status, response.body));
}

}  // namespace serac::client
