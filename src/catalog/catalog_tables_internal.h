// Tables and views as other handlers need them (catalog_tables.cc): names and who holds them,
// locations, the cached documents loads send, and the load answer.
// Private to catalog/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "common/json_reads.h"
#include "iceberg/io/file_io.h"
#include "iceberg/metadata/table_metadata.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

// The start of RegisterTable and RegisterView: the body, its name and metadata-location, the name's
// rules, and the caller's right to register an entity of `kind` under that name.
HandlerResult ReadRegistration(RequestContext& ctx, meta::EntityKind kind, Json& body, std::string& name,
                               std::string& metadata_location);
// "ns.name" of the request's table or view, for messages.
std::string EntityDisplayName(const RequestContext& ctx);
// "Table" or "View", as messages name them.
const char* KindName(meta::EntityKind kind);
// The request's table's files (ctx.entity), read with the server's authority but only below the
// table's own location (MakeTableFileIO); a 400 when that location is no place in the warehouse.
HandlerResult OpenTableFiles(RequestContext& ctx, std::unique_ptr<iceberg::FileIO>& io);
// Which kind holds the name of `wanted` (its own kind first), if any.
std::optional<meta::EntityKind> HolderKind(Backend& backend, const meta::EntityId& wanted);
// The 409 AlreadyExistsException for a taken name, worded as the reference server words it (Java
// clients and the conformance kit compare the text): "<Kind> already exists: ns.name" when the
// same kind holds it, "<Other kind> with same name already exists: ns.name" otherwise.
IcebergError NameTaken(Backend& backend, const meta::EntityId& wanted);
// NameTaken unless neither a table nor a view holds the name of `wanted`.
HandlerResult RequireNameFree(Backend& backend, const meta::EntityId& wanted);
// Where a new table lives: the client's location when it lies inside the warehouse bucket (below
// its root), else a fresh default location. Locations elsewhere (another bucket, file:/...) are
// overridden rather than refused, as the REST spec allows: serac stores data only in its own
// buckets, and the response tells the client where the table went. A location in the bucket that
// names no place a table can own (its root, an empty, "." or ".." segment) is a 400; one that
// overlaps another table's is refused by the store when the table is created.
HandlerResult ChooseTableLocation(std::string_view warehouse, const meta::NamespaceLevels& levels,
                                  std::string_view name, const std::optional<std::string>& requested,
                                  std::string& location);
// The quoted ETag of one rendering of one metadata file.
// The table document (with every snapshot, or only referenced ones) as loads send it, from the
// cache or serialised now and cached.
std::shared_ptr<const TableText> CachedTableText(Backend& backend, const std::string& metadata_location,
                                                 const iceberg::TableMetadata& metadata,
                                                 iceberg::SnapshotSelection selection);
// Caches the document (every snapshot) of a metadata file about to be committed, as its pieces.
// Returns the texts it pushed out, for the caller to release once it has answered.
std::vector<std::shared_ptr<const TableText>> CacheCommittedTableText(Backend& backend,
                                                                      const std::string& metadata_location,
                                                                      std::shared_ptr<const TableText> text);
// Forgets what a commit cached of a metadata file it did not commit: the parsed metadata and the
// text CacheCommittedTableText put.
void ForgetTableVersion(Backend& backend, const std::string& metadata_location);
std::string TableEtag(const std::string& metadata_location, iceberg::SnapshotSelection selection);
// LoadTableResult ({metadata-location, metadata, config}) with an ETag when the location is known,
// and vended credentials for the table's location (read-write when `vend_write`) when the request
// asks for them. The table is ctx.path's. `etag`: the location's TableEtag when the caller has
// already computed it.
HandlerResult SendTableResult(RequestContext& ctx, const std::optional<std::string>& metadata_location,
                              const iceberg::TableMetadata& metadata, bool vend_write,
                              iceberg::SnapshotSelection selection = iceberg::SnapshotSelection::kAll,
                              const std::string* etag = nullptr);
// 400 unless `location` is an object location in the warehouse bucket (the request's).
HandlerResult RequireInWarehouse(std::string_view warehouse, const std::string& location);
HandlerResult RequireInWarehouse(const RequestContext& ctx, const std::string& location);
// 400 unless the metadata file is an object below `owned_key`, its table's location key.
HandlerResult RequireOwnedMetadataFile(std::string_view warehouse, const std::string& owned_key,
                                       const std::string& file);

}  // namespace serac::catalog
