#include "client/rest_table_catalog.h"

namespace serac::client {

Result<iceberg::TableMetadata> RestTableCatalog::LoadTable(const iceberg::TableRef& table) {
  SERAC_ASSIGN_OR_RETURN(LoadedTable loaded,
                         catalog_.LoadTable(TableIdentifier{table.namespace_levels, table.name}));
  return iceberg::TableMetadata::Parse(loaded.metadata_json);
}

Status RestTableCatalog::CommitTable(const iceberg::TableRef& table, const std::string& requirements_json,
                                     const std::string& updates_json) {
  TableCommit commit;
  commit.table = TableIdentifier{table.namespace_levels, table.name};
  commit.requirements_json = requirements_json;
  commit.updates_json = updates_json;
  return catalog_.CommitTable(commit).status();
}

bool RestTableCatalog::CommitsAcrossTables() const {
  return catalog_.Advertises("POST /v1/{prefix}/transactions/commit");
}

Status RestTableCatalog::CommitTables(const std::vector<TableChange>& changes) {
  std::vector<TableCommit> commits;
  for (const TableChange& change : changes) {
    TableCommit commit;
    commit.table = TableIdentifier{change.table.namespace_levels, change.table.name};
    commit.requirements_json = change.requirements_json;
    commit.updates_json = change.updates_json;
    commits.push_back(std::move(commit));
  }
  return catalog_.CommitTransaction(commits);
}

}  // namespace serac::client
