// Vended credentials: temporary S3 keys limited to one table's files, handed out with a table
// (X-Iceberg-Access-Delegation: vended-credentials) and refreshed by GET .../credentials. They live
// for `serac server --vended-credential-ttl` (auth::IdentityOptions::session_ttl); S3 then answers
// 400 ExpiredToken, as AWS does for an expired session token.
//
// Clients read them from different places (shared/reference/iceberg-rest.md §1.10): PyIceberg,
// DuckDB and Java prefer "storage-credentials", ClickHouse reads only "config", so they go in both.
// s3.endpoint ends with '/' because ClickHouse otherwise fails to strip the table location from
// file paths and asks for the key twice; the other clients accept the slash.
#include <string>

#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_credentials_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/json_reads.h"
#include "common/log.h"

namespace serac::catalog {
namespace {

constexpr std::string_view kVendedCredentials = "vended-credentials";

std::string EndpointWithSlash(std::string endpoint) {
  if (endpoint.empty() || endpoint.back() != '/') endpoint += '/';
  return endpoint;
}

// The refresh route of `table`, relative to the catalog URI as Java's credentials provider
// resolves it: "v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials".
std::string RefreshEndpoint(const meta::EntityId& table) {
  std::string levels;
  for (const std::string& level : table.levels) {
    if (!levels.empty()) levels += '\x1f';
    levels += level;
  }
  return "v1/" + UriEncode(table.warehouse, true) + "/namespaces/" + UriEncode(levels, true) + "/tables/" +
         UriEncode(table.name, true) + "/credentials";
}

std::string WithoutTrailingSlashes(std::string text) {
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

bool WantsVendedCredentials(const http::Request& request) {
  for (std::string_view header : request.FindHeaders("x-iceberg-access-delegation")) {
    while (!header.empty()) {
      const size_t comma = header.find(',');
      if (AsciiEqualsIgnoreCase(TrimWhitespace(header.substr(0, comma)), kVendedCredentials)) return true;
      if (comma == std::string_view::npos) break;
      header.remove_prefix(comma + 1);
    }
  }
  return false;
}

std::optional<Json> VendedStorageConfig(RequestContext& ctx, const meta::EntityId& table,
                                        const std::string& location, bool want_write) {
  auto parsed = ParseS3Location(WithoutTrailingSlashes(location));
  if (!parsed || parsed->key.empty()) {
    log::Debug("catalog: no vended credentials for a table outside s3:// locations");
    return std::nullopt;
  }
  auto vended = ctx.backend.identity->VendCredentials(ctx.principal, parsed->bucket, parsed->key + "/",
                                                      want_write, Now());
  if (!vended.ok()) {
    log::Debug("catalog: no vended credentials for " + ctx.principal.access_key + ": " +
               vended.status().ToString());
    return std::nullopt;
  }
  Json config = StorageConfig(ctx);
  config["s3.endpoint"] = EndpointWithSlash(AdvertisedS3Endpoint(ctx));
  config["s3.access-key-id"] = vended->access_key;
  config["s3.secret-access-key"] = vended->secret_key;
  config["s3.session-token"] = vended->session_token;
  config["s3.session-token-expires-at-ms"] = std::to_string(ToUnixMillis(vended->expires_at));
  config["client.refresh-credentials-endpoint"] = RefreshEndpoint(table);
  config["client.refresh-credentials-enabled"] = "true";
  return config;
}

void AddVendedCredentials(RequestContext& ctx, const meta::EntityId& table, const std::string& location,
                          bool want_write, Json& body) {
  if (!WantsVendedCredentials(ctx.request)) return;
  auto config = VendedStorageConfig(ctx, table, location, want_write);
  if (!config) return;
  Json& merged = body["config"];
  for (const auto& [key, value] : config->items()) merged[key] = value;
  body["storage-credentials"] =
      Json::array({Json{{"prefix", WithoutTrailingSlashes(location)}, {"config", std::move(*config)}}});
}

HandlerResult LoadCredentials(RequestContext& ctx) {
  // AuthorizeRouteEntity already found the table (or answered 403).
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  const meta::EntityId id = ctx.Entity(meta::EntityKind::kTable);
  const bool want_write = IsEntityAllowed(ctx, actions::kUpdateTable, id, &*ctx.entity);
  auto config = VendedStorageConfig(ctx, id, ctx.entity->location, want_write);
  if (!config) {
    return MakeError(403, "ForbiddenException",
                     "no storage credentials can be vended for " + EntityDisplayName(ctx));
  }
  Json credentials = Json::array(
      {Json{{"prefix", WithoutTrailingSlashes(ctx.entity->location)}, {"config", std::move(*config)}}});
  return SendJson(ctx, Json{{"storage-credentials", std::move(credentials)}});
}

}  // namespace serac::catalog
