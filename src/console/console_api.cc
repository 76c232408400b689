// The console's own routes: the overview's figures, the server's metrics, presigned share links
// and the engines' configuration. Everything else the console shows comes from the S3, catalog and
// admin APIs themselves (console_service.cc forwards to them).
#include <chrono>
#include <optional>
#include <string>

#include "auth/policy.h"
#include "auth/sigv4.h"
#include "client/engine_config.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "console/console_api_internal.h"
#include "meta/catalog_store.h"
#include "meta/meta_store.h"
#include "service/query_params.h"

namespace serac::console {

namespace {

constexpr std::string_view kJsonContentType = "application/json";
constexpr std::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr uint32_t kWarehousePage = 1000;

// The engines the console offers configuration for, with the names people know them by.
struct EngineTitle {
  std::string_view name;
  std::string_view title;
};
constexpr EngineTitle kEngineTitles[] = {
    {"spark", "Apache Spark"}, {"trino", "Trino"},           {"pyiceberg", "PyIceberg"},
    {"duckdb", "DuckDB"},      {"clickhouse", "ClickHouse"}, {"aws", "AWS CLI and SDKs"},
};

// "http://host:port" as the browser reached the server (the page's own origin).
std::string Endpoint(const http::Request& request) {
  return std::string(request.tls ? "https://" : "http://") +
         std::string(request.HeaderOr("host", "localhost"));
}

// Figures of what the session's principal may list: buckets it may list the objects of (all of
// them when it may list every bucket), warehouses it may see. A figure the principal may see
// nothing of is null rather than a count of things hidden from it.
Json Overview(const ConsoleApiContext& context, const Session& session, const http::Request& request) {
  const auth::IdentityService& identity = *context.services.identity;
  const auth::ConditionContext conditions = auth::RequestConditions(session.principal, request);
  auto allowed = [&](std::string_view action, const std::string& resource) {
    return identity.IsAllowed(session.principal, action, resource, &conditions);
  };
  Json reply{
      {"version", context.options.version},
      {"node", context.options.node_name},
      {"uptime-seconds", std::chrono::duration_cast<std::chrono::seconds>(Now() - context.started).count()},
      {"buckets", nullptr},
      {"objects", nullptr},
      {"bytes", nullptr},
      {"warehouses", nullptr},
      {"tables", nullptr},
      {"views", nullptr}};
  meta::MetaStore& meta = *context.services.meta;
  if (Result<std::vector<meta::BucketRecord>> buckets = meta.ListBuckets(); buckets.ok()) {
    const bool every_bucket = allowed("s3:ListAllMyBuckets", std::string(auth::S3ServiceArn()));
    uint64_t visible = 0, objects = 0, bytes = 0;
    for (const meta::BucketRecord& bucket : *buckets) {
      if (!every_bucket && !allowed("s3:ListBucket", auth::S3BucketArn(bucket.name))) continue;
      ++visible;
      if (Result<meta::BucketUsage> usage = meta.GetBucketUsage(bucket.name); usage.ok()) {
        objects += usage->objects;
        bytes += usage->bytes;
      }
    }
    if (every_bucket || visible > 0) {
      reply["buckets"] = visible;
      reply["objects"] = objects;
      reply["bytes"] = bytes;
    }
  }
  const bool every_warehouse = allowed("s3tables:ListWarehouses", std::string(auth::TablesServiceArn()));
  uint64_t warehouses = 0, tables = 0, views = 0;
  std::string after;
  for (;;) {
    Result<std::vector<meta::WarehouseRecord>> page = meta.catalog().ListWarehouses(after, kWarehousePage);
    if (!page.ok()) break;
    for (const meta::WarehouseRecord& warehouse : *page) {
      const std::string arn = auth::TablesWarehouseArn(warehouse.name);
      if (!every_warehouse && !allowed("s3tables:GetWarehouse", arn) && !allowed("s3tables:GetConfig", arn))
        continue;
      ++warehouses;
      if (Result<meta::EntityCounts> counts = meta.catalog().CountEntities(warehouse.name); counts.ok()) {
        tables += counts->tables;
        views += counts->views;
      }
    }
    if (page->size() < kWarehousePage) break;
    after = page->back().name;
  }
  if (every_warehouse || warehouses > 0) {
    reply["warehouses"] = warehouses;
    reply["tables"] = tables;
    reply["views"] = views;
  }
  return reply;
}

void Presign(const ConsoleApiContext& context, ApiCall& call, const Session& session) {
  std::optional<Json> body = ReadJsonObject(call);
  if (!body) return;
  Result<std::string> bucket = RequiredString(*body, "bucket");
  Result<std::string> key = RequiredString(*body, "key");
  Result<int64_t> expires = RequiredInt(*body, "expires-seconds");
  const int64_t expires_max = limits::kPresignedExpiryMax.count();
  if (!bucket.ok() || !key.ok() || bucket->empty() || key->empty()) {
    return SendApiError(call, 400, "InvalidRequest", "\"bucket\" and \"key\" are required strings");
  }
  if (!expires.ok() || *expires < 1 || *expires > expires_max) {
    return SendApiError(call, 400, "InvalidRequest",
                        "\"expires-seconds\" must be 1 to " + std::to_string(expires_max) +
                            " (limits::kPresignedExpiryMax, 7 days)");
  }
  // The link acts as the signed-in key: it is given only for what that key may read now.
  const auth::IdentityService& identity = *context.services.identity;
  const auth::ConditionContext conditions = auth::RequestConditions(session.principal, call.request);
  if (!identity.IsAllowed(session.principal, "s3:GetObject", auth::S3ObjectArn(*bucket, *key), &conditions)) {
    return SendApiError(call, 403, "AccessDenied", "you may not read s3://" + *bucket + "/" + *key);
  }
  Result<auth::Credentials> credentials = identity.Lookup(session.principal.access_key);
  if (!credentials.ok()) return SendApiError(call, 403, "AccessDenied", credentials.status().message());
  auth::SignOptions sign;
  sign.region = context.options.region;
  sign.service = "s3";
  sign.uri_encoding = auth::UriEncoding::kS3;
  sign.now = Now();
  const std::string host(call.request.HeaderOr("host", "localhost"));
  const std::string path = "/" + UriEncode(*bucket, true) + "/" + UriEncode(*key, false);
  const std::string query = auth::PresignQuery("GET", path, host, *credentials, sign, *expires);
  SendApiJson(call, 200,
              Json{{"url", Endpoint(call.request) + path + "?" + query},
                   {"expires-ms", ToUnixMillis(sign.now) + *expires * 1000}});
}

void EngineConfig(const ConsoleApiContext& context, ApiCall& call, const Session& session) {
  const service::QueryParams query = service::QueryParams::Parse(call.request.query);
  client::EngineConfigInput input;
  input.endpoint = Endpoint(call.request);
  input.access_key = session.principal.access_key;
  input.region = context.options.region;
  input.warehouse = query.Get("warehouse");
  Json engines = Json::array();
  for (const EngineTitle& engine : kEngineTitles) {
    Result<std::string> text = client::RenderEngineConfig(engine.name, input);
    if (!text.ok()) return SendApiError(call, 400, "InvalidRequest", text.status().message());
    engines.push_back(Json{{"name", engine.name}, {"title", engine.title}, {"text", *text}});
  }
  SendApiJson(call, 200, Json{{"engines", std::move(engines)}});
}

}  // namespace

// The console's own answers are never stored (they name the session's user and its anti-forgery
// value); answers of the S3, catalog and admin APIs keep their own caching headers.
void SendApiJson(ApiCall& call, int status, const Json& body) {
  const std::string text = body.dump();
  call.response.SetStatus(status);
  call.response.AddHeader("Content-Type", kJsonContentType);
  call.response.AddHeader("Cache-Control", "no-store");
  call.outcome.bytes_out += text.size();
  (void)call.response.Send(text);
}

void SendApiError(ApiCall& call, int status, std::string_view code, std::string_view message) {
  SendApiJson(call, status, Json{{"error", {{"code", code}, {"message", message}}}});
}

bool NoBodyOrRefuse(ApiCall& call) {
  const std::optional<uint64_t> length = call.body.content_length();
  const bool has_body = length ? *length > 0 : call.request.FindHeader("transfer-encoding") != nullptr;
  if (!has_body || call.request.method == "POST") return true;
  call.response.CloseAfterResponse();
  SendApiError(call, 400, "InvalidRequest", call.request.method + " " + call.request.path + " takes no body");
  return false;
}

std::optional<Json> ReadJsonObject(ApiCall& call) {
  Result<std::string> text = call.body.ReadAll(limits::kConsoleSignInBodyBytesMax);
  if (!text.ok()) {
    call.response.CloseAfterResponse();
    SendApiError(call, 400, "InvalidRequest",
                 "the body must be a JSON object of at most limits::kConsoleSignInBodyBytesMax (4 KiB)");
    return std::nullopt;
  }
  call.outcome.bytes_in += text->size();
  Result<Json> parsed = ParseJson(*text);
  if (!parsed.ok() || !parsed->is_object()) {
    SendApiError(call, 400, "InvalidRequest", "the body must be a JSON object");
    return std::nullopt;
  }
  return std::move(parsed).value();
}

bool ServeConsoleRoute(const ConsoleApiContext& context, ApiCall& call, const Session& session,
                       std::string_view route) {
  const std::string& method = call.request.method;
  if (route == "overview" && method == "GET") {
    call.outcome.operation = "ConsoleOverview";
    SendApiJson(call, 200, Overview(context, session, call.request));
    return true;
  }
  if (route == "metrics" && method == "GET") {
    call.outcome.operation = "ConsoleMetrics";
    const std::string text =
        context.options.render_metrics ? context.options.render_metrics() : std::string();
    call.response.SetStatus(200);
    call.response.AddHeader("Content-Type", kMetricsContentType);
    call.response.AddHeader("Cache-Control", "no-store");
    call.outcome.bytes_out += text.size();
    (void)call.response.Send(text);
    return true;
  }
  if (route == "presign" && method == "POST") {
    call.outcome.operation = "ConsolePresign";
    Presign(context, call, session);
    return true;
  }
  if (route == "engine-config" && method == "GET") {
    call.outcome.operation = "ConsoleEngineConfig";
    EngineConfig(context, call, session);
    return true;
  }
  return false;
}

}  // namespace serac::console
