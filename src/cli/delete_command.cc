// `serac table delete-rows WAREHOUSE NS TABLE --keys FILE [--as dv|position|equality]`: the rows
// whose key columns equal a row of the key file are deleted in one row-delta commit. With DVs
// (format v3) or position deletes (v2), every live data file's key columns are read to find the
// rows, and each data file that has some gets a DV (merged with the one it had, which the commit
// replaces) or a position delete file; with equality deletes the key file itself becomes the
// delete files. The commit is validated against what landed meanwhile (a data file compacted away,
// another DV for the same file) and refused rather than applied to the wrong rows.
#include <chrono>
#include <cstdio>

#include "cli/table_access.h"
#include "client/rest_table_catalog.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/write/snapshot_producer.h"
#include "iceberg/write/table_catalog.h"
#include "parquet/row_deletes.h"

namespace serac::cli {

Status DeleteFromTable(const CommandState& state) {
  const auto started = std::chrono::steady_clock::now();
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  const client::TableIdentifier id{levels, state.name};
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<client::RestCatalog> catalog, ConnectCatalog(state));
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata table, LoadTableMetadata(*catalog, id));
  const int version = table.format_version();
  if (version < 2) {
    return Error(ErrorCode::kInvalidArgument,
                 state.ns + "." + state.name +
                     " is format version 1, which has no delete files (upgrade it "
                     "with `table update --set format-version=2`)");
  }
  std::string kind = state.delete_as.empty() ? (version >= 3 ? "dv" : "position") : state.delete_as;
  if (kind != "dv" && kind != "position" && kind != "equality") {
    return Error(ErrorCode::kInvalidArgument, "--as is dv, position or equality, not " + kind);
  }
  if (kind == "dv" && version < 3)
    return Error(ErrorCode::kInvalidArgument, "--as dv needs format version 3");
  if (kind == "position" && version >= 3) {
    return Error(ErrorCode::kInvalidArgument, "format version 3 keeps position deletes as DVs: use --as dv");
  }

  SERAC_ASSIGN_OR_RETURN(parquet::InputFormat format, FormatOf(state, state.keys_file));
  SERAC_ASSIGN_OR_RETURN(parquet::RowKeys keys,
                         parquet::RowKeys::Read(state.keys_file, format, table.CurrentSchema()));
  SERAC_ASSIGN_OR_RETURN(parquet::WriteOptions options,
                         parquet::WriteOptions::FromTableProperties(table.properties()));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<iceberg::FileIO> io, ConnectStorage(state));
  const std::optional<iceberg::Snapshot> current = table.CurrentSnapshot();
  const std::string data_location = TableLocation(table) + "/data";

  iceberg::SnapshotProducer producer(*io, iceberg::ProducerKind::kRowDelta);
  producer.ValidateFromSnapshot(current ? std::optional<int64_t>(current->snapshot_id) : std::nullopt);
  std::vector<std::string> written;  // delete files to remove if nothing is committed
  auto give_up = [&](const Status& status) {
    for (const std::string& location : written) (void)io->Delete(location);
    return Error(status.code(), status.message() + " (nothing was committed)");
  };
  uint64_t rows_deleted = 0;
  uint64_t delete_files = 0;
  if (kind == "equality") {
    Result<std::vector<iceberg::DataFile>> files = parquet::WriteEqualityDeletes(
        *io, state.keys_file, format, keys, table.DefaultSpec(), options, data_location);
    if (!files.ok()) return give_up(files.status());
    for (iceberg::DataFile& file : *files) {
      written.push_back(file.file_path);
      rows_deleted += static_cast<uint64_t>(file.record_count);
      ++delete_files;
      producer.AddDeleteFile(std::move(file));
    }
  } else {
    SERAC_ASSIGN_OR_RETURN(iceberg::TableFiles files, iceberg::ReadTableFiles(*io, current));
    Result<parquet::RowDeletes> deletes = parquet::DeleteRowsByKey(
        *io, keys, files,
        kind == "dv" ? parquet::PositionDeletes::kDeletionVectors : parquet::PositionDeletes::kFiles, options,
        data_location);
    if (!deletes.ok()) return give_up(deletes.status());
    written = deletes->written;
    rows_deleted = deletes->rows;
    for (iceberg::DataFile& file : deletes->replaced) producer.RemoveDeleteFile(std::move(file));
    for (iceberg::DataFile& file : deletes->added) {
      ++delete_files;
      producer.AddDeleteFile(std::move(file));
    }
  }
  if (delete_files == 0) {
    Print("No rows of " + state.ns + "." + state.name + " match the keys; nothing was committed");
    return Status::Ok();
  }
  client::RestTableCatalog table_catalog(*catalog);
  Result<int64_t> snapshot =
      iceberg::CommitSnapshot(table_catalog, iceberg::TableRef{levels, state.name}, producer);
  if (!snapshot.ok()) {
    if (snapshot.status().code() == ErrorCode::kOutcomeUnknown) return snapshot.status();
    return give_up(snapshot.status());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char line[512];
  std::snprintf(line, sizeof(line), "Deleted %s%llu rows from %s.%s: %llu %s, snapshot %lld (%.1f s)",
                kind == "equality" ? "the rows of " : "", static_cast<unsigned long long>(rows_deleted),
                state.ns.c_str(), state.name.c_str(), static_cast<unsigned long long>(delete_files),
                kind == "dv"         ? "deletion vectors"
                : kind == "position" ? "position delete files"
                                     : "equality delete files",
                static_cast<long long>(*snapshot), seconds);
  Print(line);
  return Status::Ok();
}

}  // namespace serac::cli
