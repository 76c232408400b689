// The table writers' catalog seam (iceberg::TableCatalog) over the REST catalog client: serac's
// catalog or any other Iceberg REST catalog.
// Thread-safe as RestCatalog is.
#pragma once

#include "client/rest_catalog.h"
#include "iceberg/write/table_catalog.h"

namespace serac::client {

class RestTableCatalog final : public iceberg::TableCatalog {
 public:
  explicit RestTableCatalog(RestCatalog& catalog) : catalog_(catalog) {}
  Result<iceberg::TableMetadata> LoadTable(const iceberg::TableRef& table) override;
  Status CommitTable(const iceberg::TableRef& table, const iceberg::TableChanges& changes) override;
  // Where the catalog serves transactions/commit.
  bool CommitsAcrossTables() const override;
  Status CommitTables(const std::vector<TableChange>& changes) override;

 private:
  RestCatalog& catalog_;
};

}  // namespace serac::client
