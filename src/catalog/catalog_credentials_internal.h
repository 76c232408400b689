// Vended credentials (catalog_credentials.cc): temporary keys for a table's files in a load's
// answer, when the client asks for them.
// Private to catalog/.
#pragma once

#include <optional>
#include <string>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "common/json_reads.h"
#include "http/http.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

// True when X-Iceberg-Access-Delegation lists vended-credentials.
bool WantsVendedCredentials(const http::Request& request);
// Temporary credentials for the files under `location` (the table's, with a trailing '/'), as
// FileIO properties: keys, token, expiry, endpoint (ending in '/'), path style, region, and the
// refresh endpoint of `table`. nullopt (and a debug log) when the caller may not read there or the
// location is not an s3:// one; the caller then sends the table without credentials.
std::optional<Json> VendedStorageConfig(RequestContext& ctx, const meta::EntityId& table,
                                        const std::string& location, bool want_write);
// Adds vended credentials to a LoadTableResult body ("config" and "storage-credentials") when the
// request asks for them.
void AddVendedCredentials(RequestContext& ctx, const meta::EntityId& table, const std::string& location,
                          bool want_write, Json& body);
// GET .../tables/{table}/credentials
HandlerResult LoadCredentials(RequestContext& ctx);

}  // namespace serac::catalog
