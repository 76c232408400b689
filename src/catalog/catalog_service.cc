// Request entry point: routing against one route table that also maps every route to its action
// and produces the advertised "endpoints" list; the OAuth2 token endpoint (unauthenticated);
// authentication (SigV4 on the head, then the whole JSON body read through the verifier so nothing
// runs before the signature is proven; or an OAuth2 bearer token); authorisation of the route's
// action before the handler runs; and Iceberg error responses.
#include "catalog/catalog_service.h"

#include <array>

#include "auth/identity.h"
#include "auth/payload.h"
#include "auth/sigv4.h"
#include "blob/blob_store.h"
#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_commit_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_credentials_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_namespaces_internal.h"
#include "catalog/catalog_oauth.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_warehouses_internal.h"
#include "catalog/idempotency.h"
#include "catalog/in_process_tables.h"
#include "catalog/job_lease_owner.h"
#include "catalog/job_runner.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/log.h"
#include "iceberg/write/table_catalog.h"
#include "meta/catalog_locations.h"
#include "service/authenticate.h"
#include "service/error_response.h"

namespace serac::catalog {

Backend::Backend()
    : tables(limits::kCatalogMetadataCacheEntriesMax, limits::kCatalogMetadataCacheBytesMax),
      views(limits::kCatalogMetadataCacheEntriesMax, limits::kCatalogViewMetadataCacheBytesMax),
      table_texts(limits::kCatalogMetadataTextCacheEntriesMax, limits::kCatalogMetadataTextCacheBytesMax) {}

Backend::~Backend() = default;

meta::CatalogStore& Backend::catalog() { return meta->catalog(); }

std::mutex& Backend::CommitLock(const meta::EntityId& table) {
  std::hash<std::string_view> hash;
  size_t mixed = hash(table.warehouse) * 31 + hash(table.name);
  for (const std::string& level : table.levels) mixed = mixed * 31 + hash(level);
  return commit_locks[mixed % commit_locks.size()];
}

struct CatalogService::Impl {
  Backend backend;
  std::shared_ptr<LeaseJobOwner> lease_owner;  // with a shared catalog only
  IdempotencyStore idempotency{std::chrono::seconds(limits::kIdempotencyKeyLifetimeSeconds)};
};

namespace {

// A table's files as its maintenance jobs reach them: only what the table owns, by its row's
// location (which the store keeps from overlapping any other's).
Result<JobRunner::TableStorage> TableStorageFor(Backend& backend, const std::string& warehouse,
                                                const iceberg::TableRef& table) {
  SERAC_ASSIGN_OR_RETURN(
      meta::EntityRecord entity,
      backend.catalog().GetEntity({warehouse, table.namespace_levels, table.name, meta::EntityKind::kTable}));
  std::optional<std::string> owned_key = meta::LocationKeyIn(warehouse, entity.location);
  if (!owned_key) {
    return Error(ErrorCode::kValidationFailed, "the table's location " + entity.location +
                                                   " is not inside warehouse " + warehouse +
                                                   ": maintenance reads and deletes only files a table owns");
  }
  JobRunner::TableStorage storage;
  storage.io = MakeTableFileIO(*backend.meta, *backend.blobs, warehouse, *owned_key);
  storage.list_files = [&backend, warehouse, owned = *owned_key](
                           const std::string& prefix) -> Result<std::vector<maintenance::ListedFile>> {
    std::optional<std::string> key = meta::LocationKeyIn(warehouse, prefix);
    if (!key || !meta::KeyAtOrBelow(*key, owned)) {
      return Error(ErrorCode::kAccessDenied, prefix + " is outside s3://" + warehouse + "/" + owned +
                                                 ", the location of the table listed");
    }
    return ListTableFiles(backend, "s3://" + warehouse + "/" + *key + "/");
  };
  return storage;
}

}  // namespace

CatalogService::CatalogService(meta::MetaStore* meta, blob::BlobStore* blobs,
                               const auth::IdentityService* identity, CatalogOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->backend.Bind(meta, blobs, identity);
  impl_->backend.options = std::move(options);
  if (meta != nullptr && blobs != nullptr) {
    Backend& backend = impl_->backend;
    JobRunner::Seams seams;
    seams.catalog_for = [&backend](const std::string& warehouse) {
      return MakeInProcessTableCatalog(backend, warehouse);
    };
    seams.storage_for = [&backend](const std::string& warehouse, const iceberg::TableRef& table) {
      return TableStorageFor(backend, warehouse, table);
    };
    seams.current_metadata = [&backend](const std::string& warehouse,
                                        const iceberg::TableRef& table) -> Result<std::string> {
      SERAC_ASSIGN_OR_RETURN(meta::EntityRecord entity,
                             backend.catalog().GetEntity(
                                 {warehouse, table.namespace_levels, table.name, meta::EntityKind::kTable}));
      return entity.metadata_location;
    };
    if (!impl_->backend.options.lease_holder.empty()) {
      impl_->lease_owner = std::make_shared<LeaseJobOwner>(*meta, impl_->backend.options.lease_holder);
      seams.owner = impl_->lease_owner;
      seams.node = impl_->backend.options.lease_holder;
    }
    impl_->backend.jobs = std::make_unique<JobRunner>(meta->catalog(), std::move(seams),
                                                      impl_->backend.options.maintenance_check_interval_ms);
  }
}

CatalogService::~CatalogService() {
  impl_->backend.jobs.reset();  // the running job finishes on the stores before they go
}

std::string CatalogService::RenderMetrics() const {
  std::string text = impl_->backend.jobs != nullptr ? impl_->backend.jobs->RenderMetrics() : std::string();
  if (impl_->lease_owner) text += impl_->lease_owner->RenderMetrics();
  return text;
}

std::unique_ptr<iceberg::TableCatalog> CatalogService::InProcessTables(std::string warehouse) {
  return MakeInProcessTableCatalog(impl_->backend, std::move(warehouse));
}

namespace {

constexpr std::string_view kBasePath = "/_iceberg";

using HandlerFn = HandlerResult (*)(RequestContext&);

struct Route {
  const char* method;
  const char* path;  // template after kBasePath, as advertised in "endpoints"
  const char* operation;
  HandlerFn handler;
  bool advertised;
  std::string_view action;
  AccessScope scope;
};

HandlerResult ListTablesRoute(RequestContext& ctx) { return ListEntities(ctx, meta::EntityKind::kTable); }

// Every route the service answers, with the s3tables:* action it needs and what that action is
// checked against (the one place that maps routes to actions). Templates with {prefix} also match
// without that segment. Reporting metrics and fetching credentials are part of reading a table, so
// they need s3tables:GetTable, as do serac's preview, files and health of a table (the preview also
// s3:GetObject on the table's files, catalog_table_insights.cc); a commit that creates a staged table needs
// s3tables:CreateTable (catalog_commit.cc), a rename also the action with the destination's condition keys.
using S = AccessScope;
namespace a = actions;
constexpr std::array<Route, 50> kRoutes = {{
    {"GET", "/v1/config", "GetConfig", GetConfig, false, a::kGetConfig, S::kHandler},
    {"GET", "/v1/warehouses", "ListWarehouses", ListWarehouses, false, a::kListWarehouses, S::kHandler},
    {"POST", "/v1/warehouses", "CreateWarehouse", CreateWarehouse, false, a::kCreateWarehouse, S::kHandler},
    {"GET", "/v1/warehouses/{name}", "GetWarehouse", GetWarehouse, false, a::kGetWarehouse,
     S::kWarehouseName},
    {"DELETE", "/v1/warehouses/{name}", "DeleteWarehouse", DeleteWarehouse, false, a::kDeleteWarehouse,
     S::kWarehouseName},
    {"GET", "/v1/warehouses/{name}/maintenance", "GetWarehouseMaintenance", GetWarehouseMaintenance, false,
     a::kGetWarehouseMaintenance, S::kWarehouseName},
    {"PUT", "/v1/warehouses/{name}/maintenance/{type}", "PutWarehouseMaintenance", PutWarehouseMaintenance,
     false, a::kPutWarehouseMaintenance, S::kWarehouseName},
    {"DELETE", "/v1/warehouses/{name}/maintenance/{type}", "DeleteWarehouseMaintenance",
     DeleteWarehouseMaintenance, false, a::kPutWarehouseMaintenance, S::kWarehouseName},
    {"GET", "/v1/warehouses/{name}/scan-planning", "GetWarehouseScanPlanning", GetWarehouseScanPlanning,
     false, a::kGetWarehouseScanPlanning, S::kWarehouseName},
    {"PUT", "/v1/warehouses/{name}/scan-planning", "PutWarehouseScanPlanning", PutWarehouseScanPlanning,
     false, a::kPutWarehouseScanPlanning, S::kWarehouseName},
    {"DELETE", "/v1/warehouses/{name}/scan-planning", "DeleteWarehouseScanPlanning",
     DeleteWarehouseScanPlanning, false, a::kPutWarehouseScanPlanning, S::kWarehouseName},
    {"GET", "/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance",
     "GetTableMaintenance", GetTableMaintenance, false, a::kGetTableMaintenance, S::kTable},
    {"GET", "/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance/{type}",
     "GetTableMaintenance", GetTableMaintenance, false, a::kGetTableMaintenance, S::kTable},
    {"PUT", "/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance/{type}",
     "PutTableMaintenance", PutTableMaintenance, false, a::kPutTableMaintenance, S::kTable},
    {"DELETE", "/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance/{type}",
     "DeleteTableMaintenance", DeleteTableMaintenance, false, a::kPutTableMaintenance, S::kTable},
    {"GET", "/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance/{type}/status",
     "GetTableMaintenanceJobStatus", GetTableMaintenanceStatus, false, a::kGetTableMaintenanceStatus,
     S::kTable},
    {"POST", "/v1/warehouses/{warehouse}/namespaces/{namespace}/tables/{table}/maintenance/{type}/run",
     "StartTableMaintenanceJob", RunTableMaintenance, false, a::kRunTableMaintenance, S::kTable},
    {"GET", "/v1/{prefix}/namespaces", "ListNamespaces", ListNamespaces, true, a::kListNamespaces,
     S::kHandler},
    {"POST", "/v1/{prefix}/namespaces", "CreateNamespace", CreateNamespace, true, a::kCreateNamespace,
     S::kHandler},
    {"GET", "/v1/{prefix}/namespaces/{namespace}", "LoadNamespace", LoadNamespace, true, a::kGetNamespace,
     S::kNamespace},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}", "NamespaceExists", NamespaceExists, true,
     a::kGetNamespace, S::kNamespace},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}", "DropNamespace", DropNamespace, true,
     a::kDeleteNamespace, S::kNamespace},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/properties", "UpdateNamespaceProperties",
     UpdateNamespaceProperties, true, a::kUpdateNamespaceProperties, S::kNamespace},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables", "ListTables", ListTablesRoute, true, a::kListTables,
     S::kNamespace},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables", "CreateTable", CreateTable, true, a::kCreateTable,
     S::kHandler},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "LoadTable", LoadTable, true, a::kGetTable,
     S::kTable},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "TableExists", TableExists, true,
     a::kGetTable, S::kTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "CommitTable", CommitTable, true,
     a::kUpdateTable, S::kHandler},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", "DropTable", DropTable, true,
     a::kDeleteTable, S::kTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials", "LoadCredentials",
     LoadCredentials, true, a::kGetTable, S::kTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/register", "RegisterTable", RegisterTable, true,
     a::kRegisterTable, S::kHandler},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics", "ReportMetrics", ReportMetrics,
     true, a::kGetTable, S::kTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/preview", "PreviewTable", PreviewTable, false,
     a::kGetTable, S::kTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/files", "ListTableFiles", ListTableFiles,
     false, a::kGetTable, S::kTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/health", "GetTableHealth", GetTableHealth,
     false, a::kGetTable, S::kTable},
    {"POST", "/v1/{prefix}/tables/rename", "RenameTable", RenameTable, true, a::kRenameTable, S::kHandler},
    {"POST", "/v1/{prefix}/transactions/commit", "CommitTransaction", CommitTransaction, true,
     a::kUpdateTable, S::kHandler},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/views", "ListViews", ListViews, true, a::kListViews,
     S::kNamespace},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/views", "CreateView", CreateView, true, a::kCreateView,
     S::kHandler},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "LoadView", LoadView, true, a::kGetView,
     S::kView},
    {"HEAD", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "ViewExists", ViewExists, true, a::kGetView,
     S::kView},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "ReplaceView", ReplaceView, true,
     a::kUpdateView, S::kView},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/views/{view}", "DropView", DropView, true, a::kDeleteView,
     S::kView},
    {"POST", "/v1/{prefix}/views/rename", "RenameView", RenameView, true, a::kRenameView, S::kHandler},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/register-view", "RegisterView", RegisterView, true,
     a::kRegisterView, S::kHandler},
    {"POST", "/v1/oauth/tokens", "OAuthTokens", nullptr, false, {}, S::kPublic},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan", "PlanTableScan", PlanTableScan, true,
     a::kGetTable, S::kTable},
    {"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}", "FetchPlanningResult",
     FetchPlanningResult, true, a::kGetTable, S::kTable},
    {"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}", "CancelPlanning",
     CancelPlanning, true, a::kGetTable, S::kTable},
    {"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks", "FetchScanTasks", FetchScanTasks,
     true, a::kGetTable, S::kTable},
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
  bool has_prefix = false;    // the template has {prefix}
  bool prefix_given = false;  // ... and the request carried it
  bool path_known = false;    // some route matched the path, maybe not the method
  std::string allowed;        // the methods of the routes that matched the path ("GET, HEAD")
};

// Each route's template split into segments once, with and without its {prefix} segment.
struct RouteTemplate {
  std::vector<std::string_view> parts;
  std::vector<std::string_view> parts_without_prefix;
  bool has_prefix = false;
};

const std::vector<RouteTemplate>& RouteTemplates() {
  static const std::vector<RouteTemplate> templates = [] {
    std::vector<RouteTemplate> split;
    for (const Route& route : kRoutes) {
      RouteTemplate& entry = split.emplace_back();
      entry.parts = SplitSegments(route.path);
      entry.parts_without_prefix = entry.parts;
      std::erase(entry.parts_without_prefix, std::string_view("{prefix}"));
      entry.has_prefix = entry.parts_without_prefix.size() != entry.parts.size();
    }
    return split;
  }();
  return templates;
}

// Fills ctx.path from the placeholders; false if the segments do not fit the template.
bool MatchTemplate(const std::vector<std::string_view>& parts, const std::vector<std::string_view>& segments,
                   PathParams& params, bool& decode_error) {
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
    if (parts[i] == "{prefix}" || parts[i] == "{warehouse}") {
      found.warehouse = std::move(*decoded);
    } else if (parts[i] == "{type}") {
      found.type = std::move(*decoded);
    } else if (parts[i] == "{plan-id}") {
      found.plan_id = std::move(*decoded);
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
  const std::vector<RouteTemplate>& templates = RouteTemplates();
  for (size_t i = 0; i < kRoutes.size(); ++i) {
    const Route& route = kRoutes[i];
    const bool has_prefix = templates[i].has_prefix;
    PathParams candidate;
    const auto& parts = has_prefix && prefix_less ? templates[i].parts_without_prefix : templates[i].parts;
    if (!MatchTemplate(parts, segments, candidate, decode_error)) continue;
    match.path_known = true;
    if (method != route.method) {
      if (match.allowed.find(route.method) == std::string::npos) {
        match.allowed += match.allowed.empty() ? "" : ", ";
        match.allowed += route.method;
      }
      continue;
    }
    match.route = &route;
    match.has_prefix = has_prefix;
    match.prefix_given = has_prefix && !prefix_less;
    params = std::move(candidate);
    return match;
  }
  return match;
}

void SendError(RequestContext& ctx, const IcebergError& error) {
  service::SendErrorResponse(ctx, error.http_status, [&] {
    return http::ErrorDocument{"application/json", RenderErrorJson(error)};
  });
}

IcebergError NotAuthorized(std::string message) {
  return MakeError(401, "NotAuthorizedException", std::move(message));
}

// Failures to establish who is calling are 401 (ClickHouse fetches a new token only after a 401);
// failures of the stores behind that are theirs (503/500).
IcebergError AuthenticationError(const Status& status) {
  IcebergError error = ErrorFromStatus(status, NotAuthorized(status.message()));
  if (error.http_status < 500) error = NotAuthorized(status.message());
  return error;
}

HandlerResult BodyTooLarge() {
  return MakeError(413, "BadRequestException",
                   "request body exceeds limits::kJsonRequestBodyBytesMax (16 MiB)");
}

HandlerResult AuthenticateSigV4(RequestContext& ctx) {
  service::SignaturePolicy policy;
  policy.services = {"s3tables", "s3"};
  policy.uri_encoding = auth::UriEncoding::kGeneric;
  // PyIceberg signs the body's hash without sending it: the body is read before the verdict.
  policy.unsent_body_hash_bytes_max = limits::kJsonRequestBodyBytesMax;
  service::SignatureFailure failure;
  if (!service::AuthenticateSignature(ctx, *ctx.backend.identity, ctx.backend.credentials, policy, failure)) {
    if (failure.status.code() == ErrorCode::kLimitExceeded) {
      ctx.response.CloseAfterResponse();  // the rest of the body is still on the wire
      return BodyTooLarge();
    }
    return AuthenticationError(failure.status);
  }
  return kHandled;
}

HandlerResult Authenticate(RequestContext& ctx) {
  // A client holding both signs with SigV4 and moves the bearer to Original-Authorization.
  auto token = service::BearerToken(ctx.request);
  if (!token) {
    if (auth::HasSignature(ctx.request)) return AuthenticateSigV4(ctx);
    return NotAuthorized(
        "Requests to the catalog must be signed with AWS SigV4 or carry an OAuth2 bearer token");
  }
  Status authenticated = service::AuthenticateBearer(ctx, *ctx.backend.identity, *token);
  if (!authenticated.ok()) {
    if (authenticated.code() == ErrorCode::kExpired) return NotAuthorized("the bearer token has expired");
    IcebergError error = AuthenticationError(authenticated);
    if (error.http_status == 401) error.message = "the bearer token is not valid";
    return error;
  }
  return kHandled;
}

// SigV4 signs generic services' paths with "." and ".." segments removed, and the router would
// read them as names: the two would disagree on what was signed. No client sends them.
HandlerResult DotSegmentProblem(std::string_view path) {
  for (std::string_view segment : SplitSegments(path)) {
    if (segment == "." || segment == "..") {
      return BadRequest("a catalog path may not hold \".\" or \"..\" segments: " + std::string(path));
    }
  }
  return kHandled;
}

bool HasUnreadBody(RequestContext& ctx) {
  if (ctx.body_read_for_signature) return false;
  return ctx.request.FindHeader("transfer-encoding") != nullptr ||
         ctx.raw_body.content_length().value_or(0) > 0;
}

// Reads the whole body through the payload verifier (a body PyIceberg-style requests signed
// without sending its hash was read, and verified, by authentication). Bearer requests have
// nothing to verify in the body.
HandlerResult ReadBody(RequestContext& ctx) {
  const bool signed_request = !ctx.verified.access_key.empty();
  Result<std::string> text = std::string();
  if (ctx.body_read_for_signature) {
    text = std::move(*ctx.body_read_for_signature);
    ctx.body_read_for_signature.reset();
  } else if (signed_request) {
    auth::PayloadOptions options;
    options.compute_md5 = false;
    auto reader = auth::VerifyingBodyReader::Create(ctx.request, ctx.verified, ctx.raw_body, options);
    if (!reader.ok()) return ErrorFromStatus(reader.status(), BadRequest(reader.status().message()));
    text = (*reader)->ReadAll(limits::kJsonRequestBodyBytesMax);
  } else {
    text = ctx.raw_body.ReadAll(limits::kJsonRequestBodyBytesMax);
  }
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kLimitExceeded) return BodyTooLarge();
    return ErrorFromStatus(text.status(), BadRequest(text.status().message()));
  }
  ctx.outcome.bytes_in += text->size();
  ctx.body = std::move(text).value();
  return kHandled;
}

// POST /v1/oauth/tokens: unauthenticated by nature. Neither the query string nor the body (they
// carry the client secret) is ever logged.
void ServeOAuthTokens(RequestContext& ctx) {
  const auth::IdentityService& identity = *ctx.backend.identity;
  OAuthTokenRequest request;
  request.content_type = std::string(ctx.request.HeaderOr("content-type"));
  request.authorization_header = std::string(ctx.request.HeaderOr("authorization"));
  request.query = ctx.request.query;
  auto body = ctx.raw_body.ReadAll(limits::kOAuthTokenRequestBodyBytesMax);
  if (!body.ok() && body.status().code() != ErrorCode::kLimitExceeded) {
    ctx.response.CloseAfterResponse();
    SendError(ctx, ErrorFromStatus(body.status(), BadRequest("cannot read the request body")));
    return;
  }
  if (body.ok()) {
    request.body = std::move(body).value();
  } else {
    // One byte past the limit makes the handler answer invalid_request; the rest is not read.
    request.body.assign(limits::kOAuthTokenRequestBodyBytesMax + 1, ' ');
    ctx.response.CloseAfterResponse();
  }
  ctx.outcome.bytes_in += request.body.size();
  const WallTime now = Now();
  // Guessing is slowed down per address and client (the client named by client_id or HTTP Basic;
  // a token exchange's subject is no guess of a secret worth a name of its own).
  const std::string address = auth::SourceIpFromPeer(ctx.request.remote_address);
  const std::string client = OAuthClientId(request);
  const auth::SignInThrottle::Clock::time_point steady_now = auth::SignInThrottle::Clock::now();
  if (std::optional<std::chrono::seconds> wait =
          ctx.backend.sign_in_throttle.WaitFor(address, client, steady_now)) {
    ctx.response.SetStatus(429);
    ctx.response.AddHeader("Content-Type", "application/json");
    ctx.response.AddHeader("Cache-Control", "no-store");
    ctx.response.AddHeader("Retry-After", std::to_string(wait->count()));
    const std::string body = Json{
        {"error", "slow_down"},
        {"error_description",
         "too many failed sign-ins from this address; retry in " + std::to_string(wait->count()) +
             " s"}}.dump();
    ctx.outcome.bytes_out += body.size();
    (void)ctx.response.Send(body);
    return;
  }
  OAuthKeyCheck check_key = [&identity](std::string_view access_key, std::string_view secret) {
    return identity.CheckClientSecret(access_key, secret);
  };
  OAuthTokenCheck check_token = [&identity, now](std::string_view token) {
    return identity.ValidBearerClaims(token, now);
  };
  OAuthIssue issue = [&identity, now](std::string_view access_key, WallTime expires_at) {
    return identity.IssueBearerToken(access_key, now, expires_at);
  };
  OAuthTokenResponse response =
      HandleOAuthTokenRequest(request, check_key, check_token, issue, now, identity.bearer_token_ttl());
  if (response.status == 200) {
    ctx.backend.sign_in_throttle.RecordSuccess(address, client);
  } else if (response.status == 401 || response.json_body.find("\"invalid_grant\"") != std::string::npos) {
    ctx.backend.sign_in_throttle.RecordFailure(address, client, steady_now);
  }
  ctx.response.SetStatus(response.status);
  ctx.response.AddHeader("Content-Type", "application/json");
  ctx.response.AddHeader("Cache-Control", "no-store");
  ctx.response.AddHeader("Pragma", "no-cache");
  if (!response.www_authenticate.empty())
    ctx.response.AddHeader("WWW-Authenticate", response.www_authenticate);
  ctx.outcome.bytes_out += response.json_body.size();
  (void)ctx.response.Send(response.json_body);
}

// The checks a route's scope asks for before its handler runs (kHandler: the handler's own).
HandlerResult AuthorizeRoute(RequestContext& ctx, AccessScope scope) {
  switch (scope) {
    case AccessScope::kService:
      return Authorize(ctx, ctx.action, std::string(auth::TablesServiceArn()), CatalogConditions(ctx, {}));
    case AccessScope::kWarehouseName:
      return Authorize(ctx, ctx.action, auth::TablesWarehouseArn(ctx.path.name), CatalogConditions(ctx, {}));
    case AccessScope::kNamespace:
      return AuthorizeInWarehouse(ctx, ctx.action, ctx.path.levels);
    case AccessScope::kTable:
      return AuthorizeRouteEntity(ctx, meta::EntityKind::kTable);
    case AccessScope::kView:
      return AuthorizeRouteEntity(ctx, meta::EntityKind::kView);
    case AccessScope::kPublic:
    case AccessScope::kHandler:
      break;
  }
  return kHandled;
}

HandlerResult Dispatch(RequestContext& ctx, const Match& match, bool decode_error) {
  if (match.route == nullptr) {
    if (decode_error) return BadRequest("malformed path segment in " + ctx.request.path);
    if (match.path_known) {
      ctx.response.AddHeader("Allow", match.allowed);
      return MakeError(405, "BadRequestException",
                       "method not allowed on this route; allowed: " + match.allowed);
    }
    return MakeError(404, "NotFoundException",
                     "no catalog route for " + ctx.request.method + " " + ctx.request.path);
  }
  ctx.action = match.route->action;
  if (match.has_prefix && !match.prefix_given) {
    if (auto error = ResolveDefaultWarehouse(ctx, ctx.path.warehouse)) return error;
  }
  if (auto error = AuthorizeRoute(ctx, match.route->scope)) return error;
  if (match.route->handler == nullptr) {
    return MakeError(501, "NotImplementedException",
                     std::string(match.route->operation) + " is not implemented");
  }
  // An entity the route's check found implies its warehouse (its row refers to the warehouse's), so the
  // warehouse is looked up only when no entity was: one query fewer per table load on a remote store.
  if (match.has_prefix && !ctx.entity) {
    if (auto error = RequireWarehouse(ctx, ctx.path.warehouse)) return error;
  }
  return match.route->handler(ctx);
}

// The answer kept for an earlier request with the same Idempotency-Key, sent again.
void SendRecorded(RequestContext& ctx, const RecordedResponse& recorded) {
  ctx.response.SetStatus(recorded.status);
  for (const auto& [name, value] : recorded.headers) ctx.response.AddHeader(name, value);
  ctx.response.AddHeader("Idempotent-Replayed", "true");
  ctx.outcome.bytes_out += recorded.body.size();
  (void)ctx.response.Send(recorded.body);
}

// An Idempotency-Key is printable ASCII of a bounded length (the specification's are UUIDv7s).
bool IdempotencyKeyValid(std::string_view key) {
  return !key.empty() && key.size() <= limits::kIdempotencyKeyBytesMax &&
         std::all_of(key.begin(), key.end(), [](char c) { return c > 0x20 && c < 0x7F; });
}

}  // namespace

void CatalogService::Handle(const http::Request& request, http::BodyReader& body,
                            http::ResponseWriter& response, http::RequestOutcome& outcome) {
  Serve(nullptr, request, body, response, outcome);
}

void CatalogService::HandleAs(const auth::Principal& principal, const http::Request& request,
                              http::BodyReader& body, http::ResponseWriter& response,
                              http::RequestOutcome& outcome) {
  Serve(&principal, request, body, response, outcome);
}

void CatalogService::Serve(const auth::Principal* proven, const http::Request& request,
                           http::BodyReader& body, http::ResponseWriter& response,
                           http::RequestOutcome& outcome) {
  RecordingResponseWriter recorder(response);
  RequestContext ctx(impl_->backend, request, body, recorder, outcome);
  outcome.operation = "Catalog";
  std::string_view path = request.path;
  path.remove_prefix(std::min(path.size(), kBasePath.size()));
  bool decode_error = false;
  const Match match = FindRoute(request.method, path, ctx.path, decode_error);
  if (match.route != nullptr) outcome.operation = match.route->operation;
  if (match.route != nullptr && match.route->scope == AccessScope::kPublic) {
    ServeOAuthTokens(ctx);
    return;
  }
  HandlerResult error = DotSegmentProblem(request.path);
  if (!error && proven != nullptr) {
    // Proven by the caller (the web console's session); the body is taken as sent, unsigned.
    ctx.principal = *proven;
    ctx.outcome.principal = proven->access_key;
  } else if (!error) {
    error = Authenticate(ctx);
  }
  if (error && HasUnreadBody(ctx)) ctx.response.CloseAfterResponse();  // never wait for an unproven body
  if (!error) error = ReadBody(ctx);
  // A mutation with an Idempotency-Key, once its principal is proven: the first answer again for a
  // retry, or this one run and its answer kept. A request that ends without Finish (an exception)
  // forgets its key, so a retry runs it.
  std::optional<std::string> idempotency_scope;
  struct ForgetUnlessFinished {
    IdempotencyStore& store;
    std::optional<std::string>& scope;
    ~ForgetUnlessFinished() {
      if (scope) store.Finish(*scope, RecordedResponse{});
    }
  } forget_unless_finished{impl_->idempotency, idempotency_scope};
  const std::string* idempotency_key = request.FindHeader("idempotency-key");
  if (!error && idempotency_key != nullptr && match.route != nullptr && request.method != "GET" &&
      request.method != "HEAD") {
    if (!IdempotencyKeyValid(*idempotency_key)) {
      error = BadRequest("Idempotency-Key must be 1 to " + std::to_string(limits::kIdempotencyKeyBytesMax) +
                         " printable ASCII characters");
    } else {
      // The key as it is now (its user and when it was made): a key id deleted and made again,
      // for another user even, does not inherit the answers its earlier holder was given.
      const std::string scope = ctx.principal.access_key + '\n' + ctx.principal.key.user + '\n' +
                                std::to_string(ctx.principal.key.created_ms) + '\n' + *idempotency_key;
      const std::string fingerprint =
          request.method + ' ' + request.path + '?' + request.query + '\n' + Sha256Hex(ctx.body);
      RecordedResponse replay;
      switch (impl_->idempotency.Begin(scope, fingerprint, replay)) {
        case IdempotencyStore::Claim::kReplay:
          SendRecorded(ctx, replay);
          return;
        case IdempotencyStore::Claim::kMismatch:
          error = MakeError(422, "UnprocessableEntityException",
                            "this Idempotency-Key was used for a different request");
          break;
        case IdempotencyStore::Claim::kBusy:
          error = MakeError(503, "ServiceUnavailableException",
                            "a request with this Idempotency-Key is still running; retry later");
          break;
        case IdempotencyStore::Claim::kRun:
          idempotency_scope = scope;
          recorder.Record();
          break;
      }
    }
  }
  try {
    if (!error) error = Dispatch(ctx, match, decode_error);
  } catch (const Json::exception& e) {
    // Handlers read client JSON through checked accessors; a type they did not expect still
    // means a malformed request, never a server error. Logged: it marks a missing check.
    log::Warn(std::string("catalog request with unexpected JSON: ") + e.what());
    if (response.started()) return;
    error = BadRequest(std::string("malformed request body: ") + e.what());
  }
  if (error) SendError(ctx, *error);
  if (idempotency_scope) {
    impl_->idempotency.Finish(*idempotency_scope, recorder.recorded());
    idempotency_scope.reset();
  }
}

std::vector<RouteAccess> RouteAccessTable() {
  std::vector<RouteAccess> table;
  for (const Route& route : kRoutes) table.push_back({route.method, route.path, route.action, route.scope});
  return table;
}

std::vector<std::string> AdvertisedEndpoints() {
  std::vector<std::string> endpoints;
  for (const Route& route : kRoutes) {
    if (route.advertised) endpoints.push_back(std::string(route.method) + " " + route.path);
  }
  return endpoints;
}

HandlerResult ParseJsonObject(RequestContext& ctx, Json& out) {
  auto parsed = ParseJson(ctx.body);
  if (!parsed.ok()) return BadRequest("malformed JSON body: " + parsed.status().message());
  if (!parsed->is_object()) return BadRequest("the request body must be a JSON object");
  out = std::move(parsed).value();
  return kHandled;
}

HandlerResult ReadPaging(RequestContext& ctx, Paging& paging) {
  paging.page_size = limits::kCatalogPageSizeMax;
  if (const std::string* size = ctx.query.Find("pageSize"); size != nullptr) {
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

namespace {

HandlerResult SendJsonText(RequestContext& ctx, const std::string& text, int status) {
  ctx.response.SetStatus(status);
  ctx.response.AddHeader("Content-Type", "application/json");
  ctx.outcome.bytes_out += text.size();
  (void)ctx.response.Send(text);
  return kHandled;
}

}  // namespace

HandlerResult SendJson(RequestContext& ctx, const Json& body, int status) {
  return SendJsonText(ctx, body.dump(-1, ' ', false, Json::error_handler_t::replace), status);
}

std::string RawMemberHead(const Json& body, std::string_view name) {
  std::string text = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  text.pop_back();  // the closing brace of the object
  if (text.size() > 1) text += ',';
  text += Json(std::string(name)).dump();
  text += ':';
  return text;
}

namespace {

HandlerResult SendGathered(RequestContext& ctx, std::vector<std::string_view>& parts, int status) {
  uint64_t length = 0;
  for (std::string_view part : parts) length += part.size();
  ctx.response.SetStatus(status);
  ctx.response.AddHeader("Content-Type", "application/json");
  ctx.outcome.bytes_out += length;
  if (!ctx.response.Begin(length).ok()) return kHandled;
  (void)ctx.response.WriteGathered(parts);
  return kHandled;
}

}  // namespace

// A large member (a busy table's metadata) goes out as it is rather than copied behind the head
// first; a small one is cheaper in one write.
constexpr size_t kCopiedMemberBytesMax = 64 * 1024;

HandlerResult SendJsonAfterHead(RequestContext& ctx, std::string head, std::string_view raw_json,
                                int status) {
  if (raw_json.size() <= kCopiedMemberBytesMax) {
    head += raw_json;
    head += '}';
    return SendJsonText(ctx, head, status);
  }
  std::vector<std::string_view> parts{head, raw_json, "}"};
  return SendGathered(ctx, parts, status);
}

HandlerResult SendJsonAfterHead(RequestContext& ctx, const std::string& head,
                                const std::vector<iceberg::MetadataTextPiece>& raw_json, int status) {
  const uint64_t member_bytes = iceberg::MetadataPiecesSize(raw_json);
  if (member_bytes <= kCopiedMemberBytesMax) {
    std::string body;
    body.reserve(head.size() + member_bytes + 1);
    body += head;
    for (const iceberg::MetadataTextPiece& piece : raw_json) body += piece.view();
    body += '}';
    return SendJsonText(ctx, body, status);
  }
  std::vector<std::string_view> parts;
  parts.reserve(raw_json.size() + 2);
  parts.push_back(head);
  for (const iceberg::MetadataTextPiece& piece : raw_json) parts.push_back(piece.view());
  parts.push_back("}");
  return SendGathered(ctx, parts, status);
}

HandlerResult SendJsonWithRawMember(RequestContext& ctx, const Json& body, std::string_view name,
                                    std::string_view raw_json, int status) {
  return SendJsonAfterHead(ctx, RawMemberHead(body, name), raw_json, status);
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

namespace {

// The FileIO settings of StorageConfig, in the order a JSON object lists its keys.
std::array<std::pair<std::string_view, std::string>, 5> StorageConfigEntries(const RequestContext& ctx) {
  const std::string& region = ctx.backend.options.region;
  return {{{"client.region", region},
           {"s3.endpoint", AdvertisedS3Endpoint(ctx)},
           {"s3.force-virtual-addressing", "false"},
           {"s3.path-style-access", "true"},
           {"s3.region", region}}};
}

}  // namespace

Json StorageConfig(const RequestContext& ctx) {
  Json config = Json::object();
  for (auto& [key, value] : StorageConfigEntries(ctx)) config[std::string(key)] = std::move(value);
  return config;
}

void AppendStorageConfigText(const RequestContext& ctx, std::string& out) {
  // Every load writes it, and it changes only with the Host a client uses: each thread keeps the
  // last one written.
  thread_local std::string cached_endpoint;
  thread_local std::string cached_region;
  thread_local std::string cached_text;
  std::string endpoint = AdvertisedS3Endpoint(ctx);
  const std::string& region = ctx.backend.options.region;
  if (cached_text.empty() || endpoint != cached_endpoint || region != cached_region) {
    cached_text.clear();
    char separator = '{';
    for (const auto& [key, value] : StorageConfigEntries(ctx)) {
      cached_text += separator;
      separator = ',';
      AppendJsonString(cached_text, key);
      cached_text += ':';
      AppendJsonString(cached_text, value);
    }
    cached_text += '}';
    cached_endpoint = std::move(endpoint);
    cached_region = region;
  }
  out += cached_text;
}

}  // namespace serac::catalog
