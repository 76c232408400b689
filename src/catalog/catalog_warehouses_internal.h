// Warehouses as other handlers need them (catalog_warehouses.cc, catalog_scan_planning.cc): the
// warehouse of a request, and the scan planning mode clients are told.
// Private to catalog/.
#pragma once

#include <string>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "iceberg/metadata/table_metadata.h"

namespace serac::catalog {

// The scan planning mode a table's clients are told ("server" or "client" from the table's
// `scan-planning-mode` property, else its warehouse's setting); empty when neither says.
std::string ScanPlanningMode(RequestContext& ctx, const iceberg::TableMetadata& metadata);
// The warehouse's own setting alone (empty when it sets none), for /v1/config.
std::string WarehouseScanPlanningMode(RequestContext& ctx, const std::string& warehouse);
// Resolves the warehouse of a prefix-less request (options.default_warehouse, else the only one).
HandlerResult ResolveDefaultWarehouse(RequestContext& ctx, std::string& warehouse);
// 404 NoSuchWarehouseException unless it exists.
HandlerResult RequireWarehouse(RequestContext& ctx, const std::string& warehouse);

}  // namespace serac::catalog
