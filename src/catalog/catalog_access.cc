// Authorisation of catalog requests: the condition keys a request carries, and the checks against
// the warehouse, table and view ARNs. Which action each route needs is in the route table of
// catalog_service.cc; this file only evaluates.
#include <string>

#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "common/encoding.h"

namespace serac::catalog {
namespace {

std::string DottedNamespace(const meta::NamespaceLevels& levels) {
  std::string dotted;
  for (const std::string& level : levels) {
    if (!dotted.empty()) dotted += '.';
    dotted += level;
  }
  return dotted;
}

}  // namespace

auth::ConditionContext CatalogConditions(const RequestContext& ctx, const meta::NamespaceLevels& levels,
                                         meta::EntityKind kind, std::string_view name) {
  auth::ConditionContext conditions = auth::RequestConditions(ctx.principal, ctx.request);
  if (auth::IsUnrestricted(ctx.principal)) return conditions;
  if (!levels.empty()) conditions.Set(auth::condition_keys::kTablesNamespace, DottedNamespace(levels));
  if (!name.empty()) {
    conditions.Set(kind == meta::EntityKind::kTable ? auth::condition_keys::kTablesTableName
                                                    : auth::condition_keys::kTablesViewName,
                   std::string(name));
  }
  return conditions;
}

bool IsAllowed(const RequestContext& ctx, std::string_view action, const std::string& resource,
               const auth::ConditionContext& conditions) {
  return ctx.backend.identity->IsAllowed(ctx.principal, action, resource, &conditions);
}

HandlerResult Authorize(RequestContext& ctx, std::string_view action, const std::string& resource,
                        const auth::ConditionContext& conditions) {
  Status allowed = ctx.backend.identity->Authorize(ctx.principal, action, resource, &conditions);
  if (allowed.ok()) return kHandled;
  if (allowed.code() == ErrorCode::kAccessDenied) {
    return MakeError(403, "ForbiddenException", "Access denied: " + std::string(action) + " on " + resource);
  }
  return ErrorFromStatus(allowed, MakeError(403, "ForbiddenException", allowed.message()));
}

HandlerResult AuthorizeInWarehouse(RequestContext& ctx, std::string_view action,
                                   const meta::NamespaceLevels& levels, meta::EntityKind kind,
                                   std::string_view name) {
  return Authorize(ctx, action, auth::TablesWarehouseArn(ctx.path.warehouse),
                   CatalogConditions(ctx, levels, kind, name));
}

std::string EntityArn(const std::string& warehouse, meta::EntityKind kind,
                      const meta::EntityRecord* existing) {
  const std::string_view uuid =
      existing != nullptr ? std::string_view(existing->uuid) : std::string_view("*");
  return kind == meta::EntityKind::kTable ? auth::TablesTableArn(warehouse, uuid)
                                          : auth::TablesViewArn(warehouse, uuid);
}

HandlerResult AuthorizeEntity(RequestContext& ctx, std::string_view action, const meta::EntityId& id,
                              const meta::EntityRecord* existing) {
  return Authorize(ctx, action, EntityArn(id.warehouse, id.kind, existing),
                   CatalogConditions(ctx, id.levels, id.kind, id.name));
}

bool IsEntityAllowed(const RequestContext& ctx, std::string_view action, const meta::EntityId& id,
                     const meta::EntityRecord* existing) {
  return IsAllowed(ctx, action, EntityArn(id.warehouse, id.kind, existing),
                   CatalogConditions(ctx, id.levels, id.kind, id.name));
}

HandlerResult AuthorizeRouteEntity(RequestContext& ctx, meta::EntityKind kind) {
  const meta::EntityId id = ctx.Entity(kind);
  auto found = ctx.catalog().GetEntity(id);
  if (found.ok()) {
    ctx.entity = std::move(found).value();
  } else if (found.status().code() != ErrorCode::kNotFound) {
    return ErrorFromStatus(found.status(), BadRequest(""));
  }
  return AuthorizeEntity(ctx, ctx.action, id, ctx.entity ? &*ctx.entity : nullptr);
}

}  // namespace serac::catalog
