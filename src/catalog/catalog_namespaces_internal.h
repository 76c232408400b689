// Namespaces and identifiers as other handlers need them (catalog_namespaces.cc).
// Private to catalog/.
#pragma once

#include <string>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "common/json_reads.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

// Lists names of one kind page by page (shared by tables and views).
HandlerResult ListEntities(RequestContext& ctx, meta::EntityKind kind);
// Reads a {"namespace": [...], "name": "..."} identifier.
HandlerResult ParseIdentifier(const Json& json, meta::NamespaceLevels& levels, std::string& name);
Json NamespaceToJson(const meta::NamespaceLevels& levels);

}  // namespace serac::catalog
