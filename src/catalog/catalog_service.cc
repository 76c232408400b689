// Request entry point: authentication (SigV4 on the head, then the whole JSON body read through
// the verifier so nothing runs before the signature is proven), routing against one route table
// that also produces the advertised "endpoints" list, and Iceberg error responses.
#include "catalog/catalog_service.h"

#include <array>

#include "auth/payload.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "catalog/catalog_internal.h"

namespace serac::catalog {

Backend::Backend()
    : tables(limits::kCatalogMetadataCacheEntriesMax), views(limits::kCatalogMetadataCacheEntriesMax) {}

meta::CatalogStore& Backend::catalog() { return meta->catalog(); }

struct CatalogService::Impl {
  Backend backend;
};

CatalogService::CatalogService(meta::MetaStore* meta, blob::BlobStore* blobs, auth::CredentialLookup credentials,
                               CatalogOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->backend.meta = meta;
  impl_->backend.blobs = blobs;
  impl_->backend.credentials = std::move(credentials);
  impl_->backend.options = std::move(options);
}

CatalogService::~CatalogService() = default;

namespace {

constexpr std::string_view kBasePath = "/_iceberg";

using HandlerFn = HandlerResult (*)(RequestContext&);

struct Route {
  const char* method;
  const char* path;  // template after kBasePath, as advertised in "endpoints"
  const char* operation;
  HandlerFn handler;
  bool advertised;
};

HandlerResult ListTablesRoute(RequestContext& ctx) { return ListEntities(ctx, meta::EntityKind::kTable); }

// Every route the service answers. Templates with {prefix} also match without that segment.
constexpr std::array<Route, 31> kRoutes = {{
    {"GET", "/v1/config", "GetConfig", GetConfig, false},
    {"GET", "/v1/warehouses", "ListWarehouses", ListWarehouses, false},
    {"POST", "/v1/warehouses", "CreateWarehouse", CreateWarehouse, false},
    {"GET", "/v1/warehouses/{name}", "GetWarehouse", GetWarehouse, false},
    {"DELETE", "/v1/warehouses/{name}", "DeleteWarehouse", DeleteWarehouse, false},
    {"GET", "/v1/{prefix}/namespaces", "ListNamespaces", ListNamespaces, true},
    {"POST", "/v1/{prefix}/namespaces", "CreateNamespace", CreateNamespace, true},
    {"GET", "/v1/{prefix}/namespaces/{namespace}", "LoadNamespace", LoadNamespace, true},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}", "NamespaceExists", NamespaceExists, true},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}", "DropNamespace", DropNamespace, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/properties", "UpdateNamespaceProperties",
     UpdateNamespaceProperties, true},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables", "ListTables", ListTablesRoute, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables", "CreateTable", CreateTable, true},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "LoadTable", LoadTable, true},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "TableExists", TableExists, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "CommitTable", CommitTable, true},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "DropTable", DropTable, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/register", "RegisterTable", RegisterTable, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics", "ReportMetrics", ReportMetrics, true},
    {"POST", "/v1/{prefix}/tables/rename", "RenameTable", RenameTable, true},
    {"POST", "/v1/{prefix}/transactions/commit", "CommitTransaction", CommitTransaction, true},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/views", "ListViews", ListViews, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/views", "CreateView", CreateView, true},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "LoadView", LoadView, true},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "ViewExists", ViewExists, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "ReplaceView", ReplaceView, true},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "DropView", DropView, true},
    {"POST", "/v1/{prefix}/views/rename", "RenameView", RenameView, true},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/register-view", "RegisterView", RegisterView, true},
    {"POST", "/v1/oauth/tokens", "OAuthTokens", nullptr, false},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan", "PlanTableScan", nullptr, false},
}};

std::vector<std::string_view> SplitSegments(std::string_view path) {
  std::vector<std::string_view> segments;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  while (true) {
    size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

struct Match {
  const Route* route = nullptr;
  bool has_prefix = false;     // the template has {prefix}
  bool prefix_given = false;   // ... and the request carried it
  bool path_known = false;     // some route matched the path, maybe not the method
};

// Fills ctx.path from the placeholders; false if the segments do not fit the template.
bool MatchTemplate(std::string_view path_template, const std::vector<std::string_view>& segments,
                   bool skip_prefix, PathParams& params, bool& decode_error) {
  std::vector<std::string_view> parts = SplitSegments(path_template);
  if (skip_prefix) std::erase(parts, std::string_view("{prefix}"));
  if (parts.size() != segments.size()) return false;
  PathParams found;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].front() != '{') {
      if (parts[i] != segments[i]) return false;
      continue;
    }
    auto decoded = UriDecode(segments[i], false);
    if (!decoded || decoded->empty()) {
      decode_error = true;
      return false;
    }
    if (parts[i] == "{prefix}") {
      found.warehouse = std::move(*decoded);
    } else if (parts[i] == "{namespace}") {
      auto levels = SplitNamespace(*decoded);
      if (!levels) {
        decode_error = true;
        return false;
      }
      found.levels = std::move(*levels);
    } else {
      found.name = std::move(*decoded);
    }
  }
  params = std::move(found);
  return true;
}

Match FindRoute(const std::string& method, std::string_view path, PathParams& params, bool& decode_error) {
  Match match;
  std::vector<std::string_view> segments = SplitSegments(path);
  const bool prefix_less = segments.size() >= 2 && IsReservedPrefixWord(segments[1]);
  for (const Route& route : kRoutes) {
    const bool has_prefix = std::string_view(route.path).find("{prefix}") != std::string_view::npos;
    PathParams candidate;
    if (!MatchTemplate(route.path, segments, has_prefix && prefix_less, candidate, decode_error)) continue;
    match.path_known = true;
    if (method != route.method) continue;
    match.route = &route;
    match.has_prefix = has_prefix;
    match.prefix_given = has_prefix && !prefix_less;
    params = std::move(candidate);
    return match;
  }
  return match;
}

void SendError(RequestContext& ctx, const IcebergError& error) {
  if (ctx.response.started()) {
    ctx.response.CloseAfterResponse();
    return;
  }
  ctx.response.SetStatus(error.http_status);
  if (ctx.request.method == "HEAD" || error.http_status == 304) {
    (void)ctx.response.Send("");
    return;
  }
  if (error.http_status == 411 || error.http_status == 413) ctx.response.CloseAfterResponse();
  ctx.response.AddHeader("Content-Type", "application/json");
  (void)ctx.response.Send(RenderErrorJson(error));
}

HandlerResult Authenticate(RequestContext& ctx) {
  if (!auth::HasSignature(ctx.request)) {
    return MakeError(401, "NotAuthorizedException", "Requests to the catalog must be signed with AWS SigV4");
  }
  auth::VerifyOptions options;
  options.services = {"s3tables", "s3"};
  options.uri_encoding = auth::UriEncoding::kGeneric;
  options.now = Now();
  auto verified = auth::Verify(ctx.request, options, ctx.backend.credentials);
  if (!verified.ok()) {
    IcebergError error = ErrorFromStatus(verified.status(), MakeError(401, "NotAuthorizedException", ""));
    if (error.http_status == 400) error = MakeError(401, "NotAuthorizedException", verified.status().message());
    return error;
  }
  ctx.verified = std::move(verified).value();
  ctx.outcome.principal = ctx.verified.access_key;
  return kHandled;
}

// Reads the whole body through the payload verifier; for PyIceberg-style requests (no
// x-amz-content-sha256) this is where the signature check completes.
HandlerResult ReadVerifiedBody(RequestContext& ctx) {
  auth::PayloadOptions options;
  options.compute_md5 = false;
  auto reader = auth::VerifyingBodyReader::Create(ctx.request, ctx.verified, ctx.raw_body, options);
  if (!reader.ok()) return ErrorFromStatus(reader.status(), BadRequest(reader.status().message()));
  auto text = (*reader)->ReadAll(limits::kJsonRequestBodyBytesMax);
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kLimitExceeded) {
      return MakeError(413, "BadRequestException",
                       "request body exceeds limits::kJsonRequestBodyBytesMax (16 MiB)");
    }
    return ErrorFromStatus(text.status(), BadRequest(text.status().message()));
  }
  ctx.outcome.bytes_in += text->size();
  ctx.body = std::move(text).value();
  return kHandled;
}

HandlerResult Dispatch(RequestContext& ctx) {
  std::string_view path = ctx.request.path;
  path.remove_prefix(std::min(path.size(), kBasePath.size()));
  bool decode_error = false;
  Match match = FindRoute(ctx.request.method, path, ctx.path, decode_error);
  if (match.route == nullptr) {
    if (decode_error) return BadRequest("malformed path segment in " + ctx.request.path);
    if (match.path_known) return MakeError(405, "BadRequestException", "method not allowed on this route");
    return MakeError(404, "NotFoundException", "no catalog route for " + ctx.request.method + " " + ctx.request.path);
  }
  ctx.outcome.operation = match.route->operation;
  if (match.route->handler == nullptr) {
    return MakeError(501, "NotImplementedException", std::string(match.route->operation) + " is not implemented");
  }
  if (match.has_prefix) {
    if (!match.prefix_given) {
      if (auto error = ResolveDefaultWarehouse(ctx, ctx.path.warehouse)) return error;
    }
    if (auto error = RequireWarehouse(ctx, ctx.path.warehouse)) return error;
  }
  return match.route->handler(ctx);
}

}  // namespace

void CatalogService::Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
                            http::RequestOutcome& outcome) {
  RequestContext ctx(impl_->backend, request, body, response, outcome);
  outcome.operation = "Catalog";
  HandlerResult error = Authenticate(ctx);
  if (!error) error = ReadVerifiedBody(ctx);
  if (!error) error = Dispatch(ctx);
  if (error) SendError(ctx, *error);
}

std::vector<std::string> AdvertisedEndpoints() {
  std::vector<std::string> endpoints;
  for (const Route& route : kRoutes) {
    if (route.advertised) endpoints.push_back(std::string(route.method) + " " + route.path);
  }
  return endpoints;
}

HandlerResult ParseJsonObject(RequestContext& ctx, Json& out) {
  auto parsed = iceberg::ParseJson(ctx.body);
  if (!parsed.ok()) return BadRequest("malformed JSON body: " + parsed.status().message());
  if (!parsed->is_object()) return BadRequest("the request body must be a JSON object");
  out = std::move(parsed).value();
  return kHandled;
}

HandlerResult ReadPaging(RequestContext& ctx, Paging& paging) {
  paging.page_size = limits::kCatalogPageSizeMax;
  if (const std::string* size = ctx.query.Find("pageSize"); size != nullptr && !size->empty()) {
    auto parsed = ParseUint64(*size);
    if (!parsed || *parsed == 0) return BadRequest("pageSize must be a positive integer");
    paging.page_size = static_cast<uint32_t>(std::min<uint64_t>(*parsed, limits::kCatalogPageSizeMax));
  }
  const std::string* token = ctx.query.Find("pageToken");
  paging.paged = token != nullptr;
  if (token != nullptr && !token->empty()) {
    auto decoded = DecodePageToken(*token);
    if (!decoded || decoded->empty()) return BadRequest("invalid pageToken");
    paging.start_after = std::move(*decoded);
  }
  return kHandled;
}

HandlerResult SendJson(RequestContext& ctx, const Json& body, int status) {
  std::string text = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  ctx.response.SetStatus(status);
  ctx.response.AddHeader("Content-Type", "application/json");
  ctx.outcome.bytes_out += text.size();
  (void)ctx.response.Send(text);
  return kHandled;
}

HandlerResult SendNoContent(RequestContext& ctx) {
  ctx.response.SetStatus(204);
  (void)ctx.response.Send("");
  return kHandled;
}

std::string AdvertisedS3Endpoint(const RequestContext& ctx) {
  if (!ctx.backend.options.s3_endpoint.empty()) return ctx.backend.options.s3_endpoint;
  std::string_view scheme = ctx.request.tls ? "https" : "http";
  std::string_view forwarded = TrimWhitespace(ctx.request.HeaderOr("x-forwarded-proto"));
  if (AsciiEqualsIgnoreCase(forwarded, "https") || AsciiEqualsIgnoreCase(forwarded, "http")) {
    scheme = AsciiEqualsIgnoreCase(forwarded, "https") ? "https" : "http";
  }
  std::string_view host = TrimWhitespace(ctx.request.HeaderOr("host", "localhost:9000"));
  return std::string(scheme) + "://" + std::string(host);
}

Json StorageConfig(const RequestContext& ctx) {
  const std::string& region = ctx.backend.options.region;
  return Json{{"s3.endpoint", AdvertisedS3Endpoint(ctx)},
              {"s3.path-style-access", "true"},
              {"s3.force-virtual-addressing", "false"},
              {"client.region", region},
              {"s3.region", region}};
}

}  // namespace serac::catalog
