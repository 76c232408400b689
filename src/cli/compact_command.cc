// `serac table compact WAREHOUSE NS TABLE`: the table's small data files packed into files of its
// target size (maintenance/rewrite_data_files.h) over S3 and the REST catalog, in one
// replace-files commit that keeps data sequence numbers, so no delete committed meanwhile is lost.
#include <cstdio>

#include "cli/table_access.h"
#include "client/rest_table_catalog.h"
#include "maintenance/rewrite_data_files.h"

namespace serac::cli {

Status CompactTable(const CommandState& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<client::RestCatalog> catalog, ConnectCatalog(state));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<iceberg::FileIO> io, ConnectStorage(state));
  client::RestTableCatalog table_catalog(*catalog);
  maintenance::RewriteOptions options;
  options.small_file_bytes = state.small_file_bytes;
  options.min_input_files = state.min_input_files;
  options.strategy = state.compaction_strategy == "sort"      ? maintenance::CompactionStrategy::kSort
                     : state.compaction_strategy == "binpack" ? maintenance::CompactionStrategy::kBinpack
                                                              : maintenance::CompactionStrategy::kAuto;
  SERAC_ASSIGN_OR_RETURN(
      maintenance::RewriteResult result,
      maintenance::RewriteDataFiles(table_catalog, *io, iceberg::TableRef{levels, state.name}, options));
  char line[512];
  if (result.snapshot_id == 0) {
    std::snprintf(line, sizeof(line), "Nothing to compact in %s.%s.", state.ns.c_str(), state.name.c_str());
  } else {
    std::snprintf(
        line, sizeof(line),
        "Compacted %s.%s: %lld files (%lld bytes, %lld rows) in %lld partitions into %lld files (%lld "
        "bytes), snapshot %lld; %lld deleted rows left out, %lld delete files dropped.",
        state.ns.c_str(), state.name.c_str(), static_cast<long long>(result.files_rewritten),
        static_cast<long long>(result.bytes_read), static_cast<long long>(result.rows),
        static_cast<long long>(result.partitions), static_cast<long long>(result.files_written),
        static_cast<long long>(result.bytes_written), static_cast<long long>(result.snapshot_id),
        static_cast<long long>(result.rows_deleted), static_cast<long long>(result.delete_files_removed));
  }
  Print(line);
  return Status::Ok();
}

}  // namespace serac::cli
