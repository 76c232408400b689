#include "client/rest_catalog.h"

#include <nlohmann/json.hpp>

#include "client/api_client.h"
#include "client/catalog_requests.h"
#include "client/signed_request_internal.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "http/client.h"

namespace serac::client {
namespace {

using Json = nlohmann::json;

std::string StringField(const Json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

// {"k": "v", ...} → map; members that are not strings are left out.
std::map<std::string, std::string> StringMap(const Json& object) {
  std::map<std::string, std::string> map;
  if (!object.is_object()) return map;
  for (const auto& [key, value] : object.items()) {
    if (value.is_string()) map[key] = value.get<std::string>();
  }
  return map;
}

Result<Json> ParseObject(const std::string& text, std::string_view what) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object())
    return Error(ErrorCode::kInternal, std::string(what) + ": the catalog's answer is not a JSON object");
  return parsed;
}

Result<Json> ParseJsonArgument(std::string_view text, std::string_view what, Json::value_t type) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.type() != type) {
    return Error(ErrorCode::kInvalidArgument, std::string(what) + " must be a JSON " +
                                                  (type == Json::value_t::array ? "array" : "object"));
  }
  return parsed;
}

Result<LoadedTable> LoadedTableFrom(const std::string& body, std::string_view what) {
  SERAC_ASSIGN_OR_RETURN(Json parsed, ParseObject(body, what));
  LoadedTable table;
  table.metadata_location = StringField(parsed, "metadata-location");
  auto metadata = parsed.find("metadata");
  if (metadata == parsed.end() || !metadata->is_object()) {
    return Error(ErrorCode::kInternal, std::string(what) + ": the catalog's answer has no metadata object");
  }
  table.metadata_json = metadata->dump();
  if (auto config = parsed.find("config"); config != parsed.end()) table.config = StringMap(*config);
  return table;
}

Json IdentifierJson(const TableIdentifier& table) {
  return Json{{"namespace", table.levels}, {"name", table.name}};
}

std::string TablePath(const std::string& base, const TableIdentifier& table) {
  return base + "namespaces/" + EncodeNamespace(table.levels) + "/tables/" + UriEncode(table.name, true);
}

}  // namespace

Result<std::unique_ptr<RestCatalog>> RestCatalog::Connect(RestCatalogOptions options) {
  options.uri = internal::TrimTrailingSlashes(options.uri);
  if (!http::ParseUrl(options.uri).ok()) {
    return Error(ErrorCode::kInvalidArgument, "catalog URI is not an http(s) URL: \"" + options.uri + "\"");
  }
  const bool needs_keys =
      options.auth == RestCatalogOptions::Auth::kSigV4 || options.auth == RestCatalogOptions::Auth::kOAuth2;
  if (needs_keys && (options.access_key.empty() || options.secret_key.empty())) {
    return Error(ErrorCode::kInvalidArgument,
                 "catalog client needs an access key (client id) and a secret key");
  }
  if (options.auth == RestCatalogOptions::Auth::kBearer && options.bearer_token.empty()) {
    return Error(ErrorCode::kInvalidArgument, "catalog client needs a bearer token");
  }
  std::unique_ptr<RestCatalog> catalog(new RestCatalog(std::move(options)));
  std::string query;
  if (!catalog->options_.warehouse.empty())
    query = "warehouse=" + UriEncode(catalog->options_.warehouse, true);
  SERAC_ASSIGN_OR_RETURN(Reply reply, catalog->Send("GET", "/v1/config", query, "", false));
  const std::string_view body = reply.body;
  if (reply.status != 200 && (body.starts_with("<?xml") || body.starts_with("<Error>"))) {
    // An S3 endpoint answered: serac's catalog lives at /_iceberg on the same port.
    const std::string& uri = catalog->options_.uri;
    return Error(
        ErrorCode::kInvalidArgument,
        "catalog URI " + uri + " answered as an S3 endpoint, not an Iceberg REST catalog" +
            (uri.ends_with("/_iceberg") ? std::string() : ": serac's catalog is at " + uri + "/_iceberg") +
            " (the server said: " + ErrorMessageFromResponse(reply.status, reply.body) + ")");
  }
  if (reply.status != 200) return ErrorFrom(reply, false);
  SERAC_ASSIGN_OR_RETURN(Json config, ParseObject(reply.body, "GET /v1/config"));
  catalog->config_ = StringMap(config.value("defaults", Json::object()));
  for (const auto& [key, value] : StringMap(config.value("overrides", Json::object())))
    catalog->config_[key] = value;
  if (auto endpoints = config.find("endpoints"); endpoints != config.end() && endpoints->is_array()) {
    catalog->endpoints_.emplace();
    for (const Json& endpoint : *endpoints) {
      if (endpoint.is_string()) catalog->endpoints_->insert(endpoint.get<std::string>());
    }
  }
  if (auto prefix = catalog->config_.find("prefix");
      prefix != catalog->config_.end() && !prefix->second.empty()) {
    catalog->path_base_ = "/v1/" + prefix->second + "/";
  }
  return catalog;
}

bool RestCatalog::Advertises(const std::string& endpoint) const {
  if (endpoints_) return endpoints_->count(endpoint) > 0;
  static const std::set<std::string> kSpecDefaults = {
      "GET /v1/{prefix}/namespaces",
      "POST /v1/{prefix}/namespaces",
      "GET /v1/{prefix}/namespaces/{namespace}",
      "DELETE /v1/{prefix}/namespaces/{namespace}",
      "POST /v1/{prefix}/namespaces/{namespace}/properties",
      "GET /v1/{prefix}/namespaces/{namespace}/tables",
      "POST /v1/{prefix}/namespaces/{namespace}/tables",
      "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
      "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
      "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
      "POST /v1/{prefix}/namespaces/{namespace}/register",
      "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
      "POST /v1/{prefix}/tables/rename",
      "POST /v1/{prefix}/transactions/commit",
  };
  return kSpecDefaults.count(endpoint) > 0;
}

Result<std::string> RestCatalog::BearerToken() {
  if (options_.auth == RestCatalogOptions::Auth::kBearer) return options_.bearer_token;
  std::lock_guard<std::mutex> lock(token_mutex_);
  const auto now = std::chrono::steady_clock::now();
  if (!token_.empty() && now < token_renew_at_) return token_;
  const std::string server =
      options_.oauth2_server_uri.empty() ? options_.uri + "/v1/oauth/tokens" : options_.oauth2_server_uri;
  http::ClientRequest request;
  request.method = "POST";
  request.url = server;
  request.tls_ca_file = options_.ca_file;
  request.tls_insecure = options_.insecure;
  request.headers.push_back({"Content-Type", "application/x-www-form-urlencoded"});
  request.body = "grant_type=client_credentials&client_id=" + UriEncode(options_.access_key, true) +
                 "&client_secret=" + UriEncode(options_.secret_key, true) +
                 "&scope=" + UriEncode(options_.oauth2_scope, true);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, http::Send(request));
  Json parsed = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (response.status != 200 || !parsed.is_object() || StringField(parsed, "access_token").empty()) {
    // The token endpoint answers RFC 6749 errors: {"error": "...", "error_description": "..."}.
    std::string reason = parsed.is_object() ? StringField(parsed, "error_description") : "";
    if (reason.empty() && parsed.is_object()) reason = StringField(parsed, "error");
    if (reason.empty()) reason = "HTTP " + std::to_string(response.status);
    return Error(response.status == 401 || response.status == 400 ? ErrorCode::kAccessDenied
                                                                  : internal::CodeForStatus(response.status),
                 "OAuth2 token request to " + server + " failed: " + reason);
  }
  token_ = StringField(parsed, "access_token");
  auto expires_in = parsed.find("expires_in");
  const int64_t seconds =
      expires_in != parsed.end() && expires_in->is_number_integer() ? expires_in->get<int64_t>() : 3600;
  token_renew_at_ = now + std::chrono::seconds(seconds) - limits::kOAuth2TokenRenewBefore;
  return token_;
}

Result<RestCatalog::Reply> RestCatalog::Send(std::string_view method, const std::string& path,
                                             const std::string& query, const std::string& body,
                                             bool is_write) {
  internal::Target target{options_.uri, options_.ca_file, options_.insecure};
  internal::Signing signing;
  switch (options_.auth) {
    case RestCatalogOptions::Auth::kSigV4:
      signing.kind = internal::Signing::Kind::kSigV4;
      signing.access_key = options_.access_key;
      signing.secret_key = options_.secret_key;
      signing.session_token = options_.session_token;
      signing.region = options_.region;
      signing.service = options_.signing_name;
      signing.s3_uri_encoding = false;
      break;
    case RestCatalogOptions::Auth::kOAuth2:
    case RestCatalogOptions::Auth::kBearer: {
      SERAC_ASSIGN_OR_RETURN(std::string token, BearerToken());
      signing.kind = internal::Signing::Kind::kBearer;
      signing.bearer_token = std::move(token);
      break;
    }
    case RestCatalogOptions::Auth::kNone:
      signing.kind = internal::Signing::Kind::kNone;
      break;
  }
  internal::Call call;
  call.method = std::string(method);
  call.raw_path = path;
  call.raw_query = query;
  call.body = body;
  if (!body.empty()) call.headers.push_back({"Content-Type", "application/json"});
  SERAC_ASSIGN_OR_RETURN(http::ClientRequest request, internal::BuildRequest(target, signing, call));
  bool request_sent = false;
  Result<http::ClientResponse> response = http::Send(request, &request_sent);
  if (!response.ok()) {
    if (is_write && request_sent) {
      return Error(ErrorCode::kOutcomeUnknown, call.method + " " + path +
                                                   ": no answer, the change may or may not have happened: " +
                                                   response.status().message());
    }
    return response.status();
  }
  return Reply{response->status, std::move(response->body)};
}

Status RestCatalog::ErrorFrom(const Reply& reply, bool is_commit) {
  Json parsed = Json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  std::string type;
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
    type = StringField(parsed["error"], "type");
  }
  ErrorCode code = internal::CodeForStatus(reply.status);
  if (type == "AlreadyExistsException") code = ErrorCode::kAlreadyExists;
  if (reply.status == 406) code = ErrorCode::kNotImplemented;
  if (reply.status == 419) code = ErrorCode::kExpired;
  // The spec: a commit answered 500, 502 or 504 (or CommitStateUnknownException) may have landed.
  if (is_commit && (reply.status == 500 || reply.status == 502 || reply.status == 504 ||
                    type == "CommitStateUnknownException")) {
    code = ErrorCode::kOutcomeUnknown;
  }
  return Error(code, ErrorMessageFromResponse(reply.status, reply.body));
}

Status RestCatalog::CreateNamespace(const NamespaceLevels& levels,
                                    const std::map<std::string, std::string>& properties) {
  Json body{{"namespace", levels}, {"properties", Json(properties)}};
  SERAC_ASSIGN_OR_RETURN(Reply reply, Send("POST", path_base_ + "namespaces", "", body.dump(), true));
  if (reply.status != 200) return ErrorFrom(reply, false);
  return Status::Ok();
}

Result<bool> RestCatalog::NamespaceExists(const NamespaceLevels& levels) {
  SERAC_ASSIGN_OR_RETURN(Reply reply,
                         Send("GET", path_base_ + "namespaces/" + EncodeNamespace(levels), "", "", false));
  if (reply.status == 200) return true;
  if (reply.status == 404) return false;
  return ErrorFrom(reply, false);
}

Result<std::vector<std::string>> RestCatalog::ListTables(const NamespaceLevels& levels) {
  std::vector<std::string> names;
  std::string page_token;
  for (uint32_t page = 0; page < limits::kCliListPagesMax; ++page) {
    std::string query = page_token.empty() ? "" : "pageToken=" + UriEncode(page_token, true);
    SERAC_ASSIGN_OR_RETURN(
        Reply reply,
        Send("GET", path_base_ + "namespaces/" + EncodeNamespace(levels) + "/tables", query, "", false));
    if (reply.status != 200) return ErrorFrom(reply, false);
    SERAC_ASSIGN_OR_RETURN(Json parsed, ParseObject(reply.body, "ListTables"));
    for (const Json& identifier : parsed.value("identifiers", Json::array())) {
      if (identifier.is_object()) names.push_back(StringField(identifier, "name"));
    }
    page_token = StringField(parsed, "next-page-token");
    if (page_token.empty()) return names;
  }
  return Error(ErrorCode::kLimitExceeded, "ListTables: more than limits::kCliListPagesMax pages");
}

Result<LoadedTable> RestCatalog::LoadTable(const TableIdentifier& table) {
  SERAC_ASSIGN_OR_RETURN(Reply reply, Send("GET", TablePath(path_base_, table), "", "", false));
  if (reply.status != 200) return ErrorFrom(reply, false);
  return LoadedTableFrom(reply.body, "LoadTable");
}

Result<LoadedTable> RestCatalog::CreateTable(const NamespaceLevels& levels, const TableCreation& request) {
  Json body{{"name", request.name},
            {"properties", Json(request.properties)},
            {"stage-create", request.stage_create}};
  SERAC_ASSIGN_OR_RETURN(body["schema"],
                         ParseJsonArgument(request.schema_json, "schema", Json::value_t::object));
  if (!request.partition_spec_json.empty()) {
    SERAC_ASSIGN_OR_RETURN(
        body["partition-spec"],
        ParseJsonArgument(request.partition_spec_json, "partition spec", Json::value_t::object));
  }
  if (!request.sort_order_json.empty()) {
    SERAC_ASSIGN_OR_RETURN(body["write-order"],
                           ParseJsonArgument(request.sort_order_json, "sort order", Json::value_t::object));
  }
  if (!request.location.empty()) body["location"] = request.location;
  SERAC_ASSIGN_OR_RETURN(
      Reply reply,
      Send("POST", path_base_ + "namespaces/" + EncodeNamespace(levels) + "/tables", "", body.dump(), true));
  if (reply.status != 200) return ErrorFrom(reply, false);
  return LoadedTableFrom(reply.body, "CreateTable");
}

Result<LoadedTable> RestCatalog::CommitTable(const TableCommit& commit) {
  Json body{{"identifier", IdentifierJson(commit.table)}};
  SERAC_ASSIGN_OR_RETURN(body["requirements"],
                         ParseJsonArgument(commit.requirements_json, "requirements", Json::value_t::array));
  SERAC_ASSIGN_OR_RETURN(body["updates"],
                         ParseJsonArgument(commit.updates_json, "updates", Json::value_t::array));
  SERAC_ASSIGN_OR_RETURN(Reply reply,
                         Send("POST", TablePath(path_base_, commit.table), "", body.dump(), true));
  if (reply.status != 200) return ErrorFrom(reply, true);
  return LoadedTableFrom(reply.body, "CommitTable");
}

Status RestCatalog::CommitTransaction(const std::vector<TableCommit>& commits) {
  Json changes = Json::array();
  for (const TableCommit& commit : commits) {
    Json change{{"identifier", IdentifierJson(commit.table)}};
    SERAC_ASSIGN_OR_RETURN(change["requirements"],
                           ParseJsonArgument(commit.requirements_json, "requirements", Json::value_t::array));
    SERAC_ASSIGN_OR_RETURN(change["updates"],
                           ParseJsonArgument(commit.updates_json, "updates", Json::value_t::array));
    changes.push_back(std::move(change));
  }
  Json body{{"table-changes", std::move(changes)}};
  SERAC_ASSIGN_OR_RETURN(Reply reply,
                         Send("POST", path_base_ + "transactions/commit", "", body.dump(), true));
  if (reply.status != 204 && reply.status != 200) return ErrorFrom(reply, true);
  return Status::Ok();
}

Status RestCatalog::DropTable(const TableIdentifier& table, bool purge) {
  SERAC_ASSIGN_OR_RETURN(Reply reply, Send("DELETE", TablePath(path_base_, table),
                                           purge ? "purgeRequested=true" : "", "", true));
  if (reply.status != 204 && reply.status != 200) return ErrorFrom(reply, false);
  return Status::Ok();
}

}  // namespace serac::client
