// A table commit inside the server (catalog_commit.cc), for the REST route and the server's own
// writers (in_process_catalog.cc).
// Private to catalog/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/metadata/table_update.h"
#include "iceberg/write/table_catalog.h"
#include "meta/catalog_store.h"

namespace serac::catalog {

// What caching a new version pushed out of the caches: released once the commit has answered,
// since freeing parsed documents is not the client's wait.
struct ReleasedVersions {
  std::vector<std::shared_ptr<const iceberg::TableMetadata>> tables;
  std::vector<std::shared_ptr<const TableText>> texts;
};
// The table's metadata after a commit: the current file, its document as loads send it, parsed.
struct CommittedTable {
  std::string metadata_location;
  std::shared_ptr<const TableText> text;
  std::shared_ptr<const iceberg::TableMetadata> metadata;  // null when the cache let it go already
};
// Applies `changes` to the table (a commit that finishes a staged create creates it) under its
// commit lock, retrying lost races with the requirements checked against the winner. The caller
// has authorised it. Used by the REST route and by the server's own writers (in_process_tables.h).
HandlerResult CommitTableChange(Backend& backend, const meta::EntityId& table, iceberg::TableChanges changes,
                                ReleasedVersions& released, CommittedTable& out);
// in_process_catalog.cc: CatalogService::InProcessTables.
std::unique_ptr<iceberg::TableCatalog> MakeInProcessTableCatalog(Backend& backend, std::string warehouse);

}  // namespace serac::catalog
