// The route handlers of the catalog (catalog_service.cc routes requests to them).
// Private to catalog/.
#pragma once

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"

namespace serac::catalog {

// One function per route of catalog_service.cc's table, by the file that holds it.

// catalog_warehouses.cc
HandlerResult GetConfig(RequestContext& ctx);
HandlerResult CreateWarehouse(RequestContext& ctx);
HandlerResult ListWarehouses(RequestContext& ctx);
HandlerResult GetWarehouse(RequestContext& ctx);
HandlerResult DeleteWarehouse(RequestContext& ctx);

// catalog_scan_planning.cc
HandlerResult PlanTableScan(RequestContext& ctx);
HandlerResult FetchPlanningResult(RequestContext& ctx);
HandlerResult CancelPlanning(RequestContext& ctx);
HandlerResult FetchScanTasks(RequestContext& ctx);
HandlerResult GetWarehouseScanPlanning(RequestContext& ctx);
HandlerResult PutWarehouseScanPlanning(RequestContext& ctx);
HandlerResult DeleteWarehouseScanPlanning(RequestContext& ctx);

// catalog_maintenance.cc
HandlerResult GetWarehouseMaintenance(RequestContext& ctx);
HandlerResult PutWarehouseMaintenance(RequestContext& ctx);
HandlerResult DeleteWarehouseMaintenance(RequestContext& ctx);
HandlerResult GetTableMaintenance(RequestContext& ctx);
HandlerResult PutTableMaintenance(RequestContext& ctx);
HandlerResult DeleteTableMaintenance(RequestContext& ctx);
HandlerResult GetTableMaintenanceStatus(RequestContext& ctx);
HandlerResult RunTableMaintenance(RequestContext& ctx);

// catalog_table_insights.cc (serac's own, for the web console)
HandlerResult PreviewTable(RequestContext& ctx);
HandlerResult ListTableFiles(RequestContext& ctx);
HandlerResult GetTableHealth(RequestContext& ctx);

// catalog_namespaces.cc
HandlerResult ListNamespaces(RequestContext& ctx);
HandlerResult CreateNamespace(RequestContext& ctx);
HandlerResult LoadNamespace(RequestContext& ctx);
HandlerResult NamespaceExists(RequestContext& ctx);
HandlerResult DropNamespace(RequestContext& ctx);
HandlerResult UpdateNamespaceProperties(RequestContext& ctx);

// catalog_tables.cc
HandlerResult CreateTable(RequestContext& ctx);
HandlerResult LoadTable(RequestContext& ctx);
HandlerResult TableExists(RequestContext& ctx);
HandlerResult DropTable(RequestContext& ctx);
HandlerResult RegisterTable(RequestContext& ctx);
HandlerResult ReportMetrics(RequestContext& ctx);
HandlerResult RenameTable(RequestContext& ctx);
HandlerResult RenameView(RequestContext& ctx);

// catalog_commit.cc
HandlerResult CommitTable(RequestContext& ctx);
HandlerResult CommitTransaction(RequestContext& ctx);

// catalog_views.cc
HandlerResult ListViews(RequestContext& ctx);
HandlerResult CreateView(RequestContext& ctx);
HandlerResult LoadView(RequestContext& ctx);
HandlerResult ViewExists(RequestContext& ctx);
HandlerResult ReplaceView(RequestContext& ctx);
HandlerResult DropView(RequestContext& ctx);
HandlerResult RegisterView(RequestContext& ctx);

}  // namespace serac::catalog
