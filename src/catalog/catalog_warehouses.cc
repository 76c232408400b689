// GET /v1/config and the warehouse admin API (AIStor-compatible): a warehouse is a bucket whose
// tables the catalog manages.
#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_warehouses_internal.h"
#include "common/clock.h"
#include "common/json_reads.h"
#include "common/limits.h"

namespace serac::catalog {
namespace {

IcebergError NoSuchWarehouse(std::string_view name) {
  return MakeError(404, "NoSuchWarehouseException", "Warehouse does not exist: " + std::string(name));
}

// ISO 8601's duration as the REST specification writes idempotency-key-lifetime ("PT30M").
std::string IsoDuration(int64_t seconds) {
  std::string text = "PT";
  if (seconds >= 3600) text += std::to_string(seconds / 3600) + "H";
  if (seconds % 3600 >= 60) text += std::to_string(seconds % 3600 / 60) + "M";
  if (seconds % 60 != 0 || seconds == 0) text += std::to_string(seconds % 60) + "S";
  return text;
}

// "wh", "s3://wh" and "s3://wh/" all name warehouse "wh".
std::string WarehouseFromParameter(std::string_view value) {
  if (auto location = ParseS3Location(value)) return location->bucket;
  while (!value.empty() && value.back() == '/') value.remove_suffix(1);
  return std::string(value);
}

// The catalog acts on a warehouse's bucket with its own authority. Where that reaches objects the
// catalog did not make — adopting an existing bucket, removing a bucket with whatever it holds —
// the caller must hold the S3 rights it would need to do the same through S3.
HandlerResult RequireS3Rights(RequestContext& ctx, const std::string& bucket,
                              std::initializer_list<std::string_view> bucket_actions,
                              std::initializer_list<std::string_view> object_actions) {
  const auth::ConditionContext conditions = auth::RequestConditions(ctx.principal, ctx.request);
  for (std::string_view action : bucket_actions) {
    if (auto error = Authorize(ctx, action, auth::S3BucketArn(bucket), conditions)) return error;
  }
  for (std::string_view action : object_actions) {
    if (auto error = Authorize(ctx, action, auth::S3ObjectArn(bucket, "*"), conditions)) return error;
  }
  return kHandled;
}

}  // namespace

HandlerResult RequireWarehouse(RequestContext& ctx, const std::string& warehouse) {
  auto found = ctx.catalog().GetWarehouse(warehouse);
  if (!found.ok()) return ErrorFromStatus(found.status(), NoSuchWarehouse(warehouse));
  return kHandled;
}

HandlerResult ResolveDefaultWarehouse(RequestContext& ctx, std::string& warehouse) {
  if (!ctx.backend.options.default_warehouse.empty()) {
    warehouse = ctx.backend.options.default_warehouse;
    return kHandled;
  }
  auto listed = ctx.catalog().ListWarehouses("", 2);
  if (!listed.ok()) return ErrorFromStatus(listed.status(), NoSuchWarehouse(""));
  if (listed->size() != 1) {
    return BadRequest("this request names no warehouse: pass ?warehouse= to /v1/config and use its prefix");
  }
  warehouse = listed->front().name;
  return kHandled;
}

HandlerResult GetConfig(RequestContext& ctx) {
  std::string warehouse = WarehouseFromParameter(ctx.query.Get("warehouse"));
  if (warehouse.empty()) {
    if (auto error = ResolveDefaultWarehouse(ctx, warehouse)) return error;
  }
  if (auto error =
          Authorize(ctx, ctx.action, auth::TablesWarehouseArn(warehouse), CatalogConditions(ctx, {}))) {
    return error;
  }
  if (auto error = RequireWarehouse(ctx, warehouse)) return error;
  Json defaults = StorageConfig(ctx);
  defaults["view-endpoints-supported"] = "true";
  Json overrides = {{"prefix", warehouse}, {"warehouse", warehouse}, {"namespace-separator", "%1F"}};
  if (const std::string mode = WarehouseScanPlanningMode(ctx, warehouse); !mode.empty()) {
    overrides["scan-planning-mode"] = mode;
  }
  Json body = {{"defaults", defaults},
               {"overrides", overrides},
               {"endpoints", AdvertisedEndpoints()},
               {"idempotency-key-lifetime", IsoDuration(limits::kIdempotencyKeyLifetimeSeconds)}};
  return SendJson(ctx, body);
}

HandlerResult CreateWarehouse(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  auto name = RequiredString(body, "name");
  if (!name.ok()) return BadRequest(name.status().message());
  if (auto problem = WarehouseNameProblem(*name)) return BadRequest(*problem);
  if (auto error = Authorize(ctx, ctx.action, auth::TablesWarehouseArn(*name), CatalogConditions(ctx, {}))) {
    return error;
  }
  bool upgrade_existing = false;
  if (auto it = body.find("upgrade-existing"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) return BadRequest("upgrade-existing must be a boolean");
    upgrade_existing = it->get<bool>();
  }
  if (upgrade_existing && ctx.backend.meta->GetBucket(*name).ok()) {
    // The catalog will list, read, write and (on purge) delete objects of a bucket it did not make.
    if (auto error = RequireS3Rights(ctx, *name, {"s3:ListBucket"},
                                     {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"})) {
      return error;
    }
  }
  meta::WarehouseRecord record{*name, ToUnixMillis(Now())};
  Status created = ctx.catalog().CreateWarehouse(record, upgrade_existing);
  if (!created.ok()) {
    if (created.code() == ErrorCode::kAlreadyExists) {
      return MakeError(409, "AlreadyExistsException", "Warehouse or bucket already exists: " + *name);
    }
    return ErrorFromStatus(created, NoSuchWarehouse(*name));
  }
  return SendJson(ctx, Json{{"name", *name}});
}

// The same rule as S3's ListBuckets (s3/s3_auth.cc): a caller allowed s3tables:ListWarehouses sees
// every warehouse; without that Allow, the warehouses it may s3tables:GetWarehouse or
// s3tables:GetConfig on (what an engine needs to start using one), possibly none; an explicit
// Deny of s3tables:ListWarehouses refuses the listing. Names of other warehouses never show.
HandlerResult ListWarehouses(RequestContext& ctx) {
  const std::string service_arn(auth::TablesServiceArn());
  const auth::ConditionContext conditions = CatalogConditions(ctx, {});
  const auth::PolicyDecision listing =
      ctx.backend.identity->Decide(ctx.principal, ctx.action, service_arn, &conditions);
  if (listing == auth::PolicyDecision::kExplicitDeny)
    return Authorize(ctx, ctx.action, service_arn, conditions);
  Paging paging;
  if (auto error = ReadPaging(ctx, paging)) return error;
  paging.paged = true;  // the admin API always pages
  auto visible = [&](const meta::WarehouseRecord& record) {
    if (listing == auth::PolicyDecision::kAllow) return true;
    const std::string arn = auth::TablesWarehouseArn(record.name);
    return IsAllowed(ctx, actions::kGetWarehouse, arn, conditions) ||
           IsAllowed(ctx, actions::kGetConfig, arn, conditions);
  };
  auto fetch = [&](const std::string& start_after, uint32_t limit) {
    return ctx.catalog().ListWarehouses(start_after, limit);
  };
  auto key = [](const meta::WarehouseRecord& record) { return record.name; };
  auto to_json = [](const meta::WarehouseRecord& record) { return Json(record.name); };
  Json listed;
  if (auto error =
          CollectListing("warehouses", paging, fetch, key, to_json, visible, NoSuchWarehouse(""), listed)) {
    return error;
  }
  return SendJson(ctx, listed);
}

HandlerResult GetWarehouse(RequestContext& ctx) {
  auto found = ctx.catalog().GetWarehouse(ctx.path.name);
  if (!found.ok()) return ErrorFromStatus(found.status(), NoSuchWarehouse(ctx.path.name));
  return SendJson(ctx, Json{{"name", found->name}, {"created-at-ms", found->created_ms}});
}

HandlerResult DeleteWarehouse(RequestContext& ctx) {
  auto force = ParseBoolean(ctx.query.Get("force", "false"));
  auto preserve_bucket = ParseBoolean(ctx.query.Get("preserve-bucket", "false"));
  if (!force || !preserve_bucket) return BadRequest("force and preserve-bucket must be true or false");
  if (!*preserve_bucket) {
    // The bucket goes with every object in it, whoever wrote them.
    if (auto error = RequireS3Rights(ctx, ctx.path.name, {"s3:DeleteBucket"}, {"s3:DeleteObject"}))
      return error;
  }
  Status deleted = ctx.catalog().DeleteWarehouse(ctx.path.name, *force, *preserve_bucket);
  if (!deleted.ok()) {
    if (deleted.code() == ErrorCode::kNotEmpty) {
      return MakeError(409, "WarehouseNotEmptyException",
                       "Warehouse still holds namespaces (use force=true): " + ctx.path.name);
    }
    return ErrorFromStatus(deleted, NoSuchWarehouse(ctx.path.name));
  }
  ctx.backend.scan_planning.CacheWarehouseMode(ctx.path.name, "");  // its settings went with it
  return SendNoContent(ctx);
}

}  // namespace serac::catalog
