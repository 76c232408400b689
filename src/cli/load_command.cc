// `serac table load WAREHOUSE NS TABLE FILE...`: local Parquet, CSV or JSON-lines files written as
// the table's own Parquet data files (through S3 on the server) and committed as one append
// snapshot through the catalog. Nothing is committed unless every row fits; a commit that loses a
// race is prepared again on the new table state (the data files are kept, only the manifest list is
// rewritten); a commit whose answer was lost is looked for before it is tried again.
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/client_commands_internal.h"
#include "client/rest_catalog.h"
#include "client/s3_file_io.h"
#include "common/clock.h"
#include "common/limits.h"
#include "iceberg/snapshot_producer.h"
#include "iceberg/table_metadata.h"
#include "parquet/parquet_files.h"

namespace serac::cli {

namespace {

Result<std::unique_ptr<client::RestCatalog>> ConnectCatalog(const CommandState& state) {
  client::RestCatalogOptions options;
  std::string endpoint = state.connection.endpoint;
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  options.uri = endpoint + "/_iceberg";
  options.warehouse = state.warehouse;
  options.access_key = state.connection.access_key;
  options.secret_key = state.connection.secret_key;
  options.region = state.connection.region;
  options.ca_file = state.connection.ca_file;
  options.insecure = state.connection.insecure;
  return client::RestCatalog::Connect(std::move(options));
}

Result<std::unique_ptr<iceberg::FileIO>> ConnectStorage(const CommandState& state) {
  client::S3ClientOptions options;
  options.endpoint = state.connection.endpoint;
  options.access_key = state.connection.access_key;
  options.secret_key = state.connection.secret_key;
  options.region = state.connection.region;
  options.ca_file = state.connection.ca_file;
  options.insecure = state.connection.insecure;
  SERAC_ASSIGN_OR_RETURN(client::S3Client s3, client::S3Client::Make(std::move(options)));
  return client::MakeS3FileIO(std::move(s3));
}

Result<parquet::InputFormat> FormatOf(const CommandState& state, const std::string& path) {
  if (!state.input_format.empty()) return parquet::ParseInputFormat(state.input_format);
  return parquet::InputFormatOfPath(path);
}

Result<iceberg::TableMetadata> Load(client::RestCatalog& catalog, const client::TableIdentifier& id) {
  SERAC_ASSIGN_OR_RETURN(client::LoadedTable loaded, catalog.LoadTable(id));
  return iceberg::TableMetadata::Parse(loaded.metadata_json);
}

// Commits the append, preparing it again after a lost race; an unknown outcome is settled by
// looking for the snapshot before anything is tried again.
Result<int64_t> CommitAppend(client::RestCatalog& catalog, const client::TableIdentifier& id,
                             iceberg::AppendProducer& producer) {
  for (uint32_t attempt = 0; attempt < limits::kTableCommitAttemptsMax; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000u, 25u << attempt)));
    SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata base, Load(catalog, id));
    if (base.FindSnapshot(producer.snapshot_id())) {
      producer.CleanUp(base.FindSnapshot(producer.snapshot_id())->manifest_list);
      return producer.snapshot_id();  // an earlier attempt whose answer was lost did land
    }
    SERAC_ASSIGN_OR_RETURN(iceberg::PreparedCommit commit, producer.Prepare(base, ToUnixMillis(Now())));
    client::TableCommit request;
    request.table = id;
    request.requirements_json = commit.requirements_json;
    request.updates_json = commit.updates_json;
    Result<client::LoadedTable> committed = catalog.CommitTable(request);
    if (committed.ok()) {
      producer.CleanUp(commit.manifest_list);
      return commit.snapshot_id;
    }
    const ErrorCode code = committed.status().code();
    if (code != ErrorCode::kConflict && code != ErrorCode::kOutcomeUnknown &&
        code != ErrorCode::kUnavailable) {
      return committed.status();
    }
  }
  return Error(ErrorCode::kConflict,
               "the table kept changing: gave up after limits::kTableCommitAttemptsMax (" +
                   std::to_string(limits::kTableCommitAttemptsMax) + ") attempts");
}

}  // namespace

Status LoadIntoTable(const CommandState& state) {
  const auto started = std::chrono::steady_clock::now();
  if (state.input_files.empty()) return Error(ErrorCode::kInvalidArgument, "no input files");
  if (state.load_mode != "append") {
    return Error(ErrorCode::kNotImplemented,
                 "--mode " + state.load_mode + " is not supported yet (append is)");
  }
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  const client::TableIdentifier id{levels, state.name};
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<client::RestCatalog> catalog, ConnectCatalog(state));

  Result<iceberg::TableMetadata> table = Load(*catalog, id);
  if (!table.ok() && table.status().code() == ErrorCode::kNotFound && state.create_table) {
    SERAC_ASSIGN_OR_RETURN(parquet::InputFormat format, FormatOf(state, state.input_files[0]));
    SERAC_ASSIGN_OR_RETURN(iceberg::Schema schema, parquet::InferSchema(state.input_files[0], format));
    client::TableCreation creation;
    creation.name = state.name;
    creation.schema_json = iceberg::SchemaToJson(schema);
    SERAC_RETURN_IF_ERROR(catalog->CreateTable(levels, creation).status());
    table = Load(*catalog, id);
  }
  if (!table.ok()) return table.status();

  SERAC_ASSIGN_OR_RETURN(parquet::WriteOptions options,
                         parquet::WriteOptions::FromTableProperties(table->properties()));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<iceberg::FileIO> io, ConnectStorage(state));
  std::string location = table->location();
  while (!location.empty() && location.back() == '/') location.pop_back();
  SERAC_ASSIGN_OR_RETURN(parquet::DataFileWriter writer,
                         parquet::DataFileWriter::Make(table->CurrentSchema(), table->DefaultSpec(), options,
                                                       *io, location + "/data"));
  for (const std::string& path : state.input_files) {
    Result<parquet::InputFormat> format = FormatOf(state, path);
    Status appended = format.ok() ? writer.AppendFile(path, *format) : format.status();
    if (!appended.ok()) {
      writer.AbortAndDelete();
      return Error(appended.code(), appended.message() + " (nothing was committed)");
    }
  }
  Result<std::vector<iceberg::DataFile>> files = writer.Finish();
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  iceberg::AppendProducer producer(*io, *files);
  Result<int64_t> snapshot = CommitAppend(*catalog, id, producer);
  if (!snapshot.ok()) {
    if (snapshot.status().code() != ErrorCode::kOutcomeUnknown) {
      producer.CleanUp("");
      writer.AbortAndDelete();
    }
    return Error(snapshot.status().code(), snapshot.status().message() + " (nothing was committed)");
  }
  const parquet::LoadProgress& progress = writer.progress();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char line[512];
  std::snprintf(
      line, sizeof(line),
      "Loaded %llu rows into %s.%s: %llu data files, %llu bytes, snapshot %lld (%.1f s, %.0f rows/s)",
      static_cast<unsigned long long>(progress.rows), state.ns.c_str(), state.name.c_str(),
      static_cast<unsigned long long>(progress.files_written),
      static_cast<unsigned long long>(progress.bytes_written), static_cast<long long>(*snapshot), seconds,
      seconds > 0 ? static_cast<double>(progress.rows) / seconds : 0.0);
  Print(line);
  return Status::Ok();
}

}  // namespace serac::cli
