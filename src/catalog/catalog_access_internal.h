// Authorisation of catalog requests (catalog_access.cc): the s3tables:* action of every route,
// the condition keys of a request, and the checks handlers call.
// Private to catalog/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

namespace actions {
// AIStor's names (shared/reference/peers.md §2.7) where they are on record.
inline constexpr std::string_view kGetConfig = "s3tables:GetConfig";
inline constexpr std::string_view kCreateWarehouse = "s3tables:CreateWarehouse";
inline constexpr std::string_view kListWarehouses = "s3tables:ListWarehouses";
inline constexpr std::string_view kGetWarehouse = "s3tables:GetWarehouse";
inline constexpr std::string_view kDeleteWarehouse = "s3tables:DeleteWarehouse";
inline constexpr std::string_view kCreateNamespace = "s3tables:CreateNamespace";
inline constexpr std::string_view kListNamespaces = "s3tables:ListNamespaces";
inline constexpr std::string_view kGetNamespace = "s3tables:GetNamespace";
inline constexpr std::string_view kUpdateNamespaceProperties = "s3tables:UpdateNamespaceProperties";
inline constexpr std::string_view kDeleteNamespace = "s3tables:DeleteNamespace";
inline constexpr std::string_view kCreateTable = "s3tables:CreateTable";
inline constexpr std::string_view kListTables = "s3tables:ListTables";
inline constexpr std::string_view kGetTable = "s3tables:GetTable";
inline constexpr std::string_view kUpdateTable = "s3tables:UpdateTable";
inline constexpr std::string_view kDeleteTable = "s3tables:DeleteTable";
inline constexpr std::string_view kRenameTable = "s3tables:RenameTable";
inline constexpr std::string_view kRegisterTable = "s3tables:RegisterTable";
inline constexpr std::string_view kCreateView = "s3tables:CreateView";
inline constexpr std::string_view kListViews = "s3tables:ListViews";
inline constexpr std::string_view kGetView = "s3tables:GetView";
inline constexpr std::string_view kUpdateView = "s3tables:UpdateView";
inline constexpr std::string_view kDeleteView = "s3tables:DeleteView";
inline constexpr std::string_view kRenameView = "s3tables:RenameView";
inline constexpr std::string_view kRegisterView = "s3tables:RegisterView";
// S3 Tables' names of the maintenance API's actions (a warehouse is S3 Tables' table bucket).
inline constexpr std::string_view kGetWarehouseMaintenance =
    "s3tables:GetTableBucketMaintenanceConfiguration";
inline constexpr std::string_view kPutWarehouseMaintenance =
    "s3tables:PutTableBucketMaintenanceConfiguration";
inline constexpr std::string_view kGetTableMaintenance = "s3tables:GetTableMaintenanceConfiguration";
inline constexpr std::string_view kPutTableMaintenance = "s3tables:PutTableMaintenanceConfiguration";
inline constexpr std::string_view kGetTableMaintenanceStatus = "s3tables:GetTableMaintenanceJobStatus";
// serac's own: starting a job now.
inline constexpr std::string_view kRunTableMaintenance = "s3tables:StartTableMaintenanceJob";
inline constexpr std::string_view kGetWarehouseScanPlanning =
    "s3tables:GetTableBucketScanPlanningConfiguration";
inline constexpr std::string_view kPutWarehouseScanPlanning =
    "s3tables:PutTableBucketScanPlanningConfiguration";
}  // namespace actions

// What a route's action is checked against, decided before its handler runs (or by it).
enum class AccessScope {
  kPublic,         // no authentication (the OAuth2 token endpoint)
  kService,        // TablesServiceArn(): account-level (the warehouse list filters in its handler)
  kWarehouseName,  // TablesWarehouseArn({name}) of the warehouse admin API
  kNamespace,      // TablesWarehouseArn({prefix}) with s3tables:namespace = {namespace}
  kTable,          // the existing table {table} (TablesTableArn of its uuid), or any table if none
  kView,           // the same for the view {view}
  kHandler,        // the handler authorises once it has read what the body names
};

struct RouteAccess {
  std::string_view method;
  std::string_view path;    // template after /_iceberg
  std::string_view action;  // empty for kPublic
  AccessScope scope;
};
// Every route with its action, in route-table order (catalog_service.cc).
std::vector<RouteAccess> RouteAccessTable();

// The condition keys of one request about `levels` (s3tables:namespace, levels joined by '.';
// absent for the warehouse level) and, when `name` is not empty, s3tables:tableName or
// s3tables:viewName; plus aws:SourceIp and aws:SecureTransport.
auth::ConditionContext CatalogConditions(const RequestContext& ctx, const meta::NamespaceLevels& levels,
                                         meta::EntityKind kind = meta::EntityKind::kTable,
                                         std::string_view name = {});
// 403 ForbiddenException naming the action unless the principal may do it.
HandlerResult Authorize(RequestContext& ctx, std::string_view action, const std::string& resource,
                        const auth::ConditionContext& conditions);
bool IsAllowed(const RequestContext& ctx, std::string_view action, const std::string& resource,
               const auth::ConditionContext& conditions);
// An action at warehouse level (create, list, namespaces): TablesWarehouseArn(ctx.path.warehouse).
HandlerResult AuthorizeInWarehouse(RequestContext& ctx, std::string_view action,
                                   const meta::NamespaceLevels& levels,
                                   meta::EntityKind kind = meta::EntityKind::kTable,
                                   std::string_view name = {});
// The ARN of a table or view: its uuid when it exists, else "*" (any entity of that kind), so the
// decision for a name that does not exist never depends on whether it exists.
std::string EntityArn(const std::string& warehouse, meta::EntityKind kind,
                      const meta::EntityRecord* existing);
// An action on the table or view `id` (existing or not; see EntityArn).
HandlerResult AuthorizeEntity(RequestContext& ctx, std::string_view action, const meta::EntityId& id,
                              const meta::EntityRecord* existing);
bool IsEntityAllowed(const RequestContext& ctx, std::string_view action, const meta::EntityId& id,
                     const meta::EntityRecord* existing);
// Looks the route's entity up (kNotFound is fine) and authorises ctx.action on it; keeps the
// record in ctx.entity.
HandlerResult AuthorizeRouteEntity(RequestContext& ctx, meta::EntityKind kind);

}  // namespace serac::catalog
