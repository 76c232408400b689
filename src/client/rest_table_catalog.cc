#include "client/rest_table_catalog.h"

namespace serac::client {

Result<iceberg::TableMetadata> RestTableCatalog::LoadTable(const iceberg::TableRef& table) {
  SERAC_ASSIGN_OR_RETURN(LoadedTable loaded,
                         catalog_.LoadTable(TableIdentifier{table.namespace_levels, table.name}));
  return iceberg::TableMetadata::Parse(loaded.metadata_json);
}

Status RestTableCatalog::CommitTable(const iceberg::TableRef& table, const iceberg::TableChanges& changes) {
  // The one place a commit becomes JSON: the REST protocol's requirements and updates.
  TableCommit commit;
  commit.table = TableIdentifier{table.namespace_levels, table.name};
  commit.requirements_json = changes.RequirementsJson();
  commit.updates_json = changes.UpdatesJson();
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
    commit.requirements_json = change.changes.RequirementsJson();
    commit.updates_json = change.changes.UpdatesJson();
    commits.push_back(std::move(commit));
  }
  return catalog_.CommitTransaction(commits);
}

}  // namespace serac::client
