// One run of `serac sync`: the destination reached, the tables opened, the loads (full_load.cc),
// then the slot's messages read and handed to a ChangeApplier (change_applier.cc); state.json,
// stats.json and the progress line kept for all of them.
#include "sync/sync_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "client/rest_catalog.h"
#include "client/rest_table_catalog.h"
#include "client/s3_client.h"
#include "client/s3_file_io.h"
#include "sync/change_applier.h"
#include "sync/config.h"
#include "sync/full_load.h"
#include "sync/postgres.h"
#include "sync/replication.h"
#include "sync/sync_run_internal.h"
#include "sync/table_sink.h"

namespace serac::sync {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void RequestStop(int) { g_stop.store(true); }

// On a terminal, one status line redrawn in place (at most five times a second); otherwise a log
// line every kSyncProgressLogSeconds.
class ProgressLine {
 public:
  ProgressLine() : terminal_(::isatty(STDERR_FILENO) == 1) {}
  void Show(const std::string& text) {
    const auto now = Clock::now();
    if (now - last_ <
        (terminal_ ? std::chrono::milliseconds(200) : std::chrono::seconds(kSyncProgressLogSeconds))) {
      return;
    }
    last_ = now;
    if (terminal_) {
      std::fprintf(stderr, "\r%s\033[K", text.c_str());
      drawn_ = true;
    } else {
      std::fprintf(stderr, "serac sync: %s\n", text.c_str());
    }
    std::fflush(stderr);
  }
  // Before a log line: the status line goes.
  void Clear() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }

 private:
  bool terminal_;
  bool drawn_ = false;
  Clock::time_point last_ = Clock::now() - std::chrono::hours(1);  // the first is shown at once
};

ProgressLine g_progress;

}  // namespace

void ShowProgress(const std::string& text) { g_progress.Show(text); }

void Log(const std::string& line) {
  g_progress.Clear();
  std::fprintf(stderr, "serac sync: %s\n", line.c_str());
  std::fflush(stderr);
}

std::string Megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", bytes / 1e6);
  return text;
}

Status WriteState(const std::string& path, const std::vector<StreamRun>& runs, pgoutput::Lsn lsn,
                  const std::string& slot) {
  nlohmann::json state;
  state["type"] = "GLOBAL";
  nlohmann::json streams = nlohmann::json::array();
  nlohmann::json global_streams = nlohmann::json::array();
  for (const StreamRun& run : runs) {
    nlohmann::json entry;
    entry["stream"] = run.stream->name;
    entry["namespace"] = run.stream->namespace_name;
    entry["sync_mode"] = std::string(SyncModeName(run.stream->sync_mode));
    entry["state"] = {{"chunks", nlohmann::json::array()},
                      {"loaded", run.sink->committed().loaded},
                      {"lsn", pgoutput::LsnToText(run.sink->committed().lsn)}};
    if (run.sink->committed().cursor) entry["state"]["cursor"] = *run.sink->committed().cursor;
    streams.push_back(std::move(entry));
    global_streams.push_back(run.stream->Id());
  }
  state["global"] = {{"state", {{"lsn", pgoutput::LsnToText(lsn)}, {"slot", slot}}},
                     {"streams", global_streams}};
  state["streams"] = std::move(streams);
  return WriteConfigFile(path, state.dump(2) + "\n");
}

uint64_t RowsLoaded(const std::vector<StreamRun>& runs) {
  uint64_t rows = 0;
  for (const StreamRun& run : runs) rows += run.loaded_rows;
  return rows;
}

namespace {

// OLake's stats.json beside the state file it belongs to, named after it so that several syncs
// sharing a directory keep theirs apart: state.json has stats.json (OLake's name), orders-state.json
// orders-stats.json, and any other name NAME.json NAME.stats.json.
std::string StatsPathFor(const std::string& state_path) {
  const size_t slash = state_path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "" : state_path.substr(0, slash + 1);
  std::string name = state_path.substr(directory.size());
  if (const size_t state = name.rfind("state"); state != std::string::npos) {
    return directory + name.replace(state, 5, "stats");
  }
  if (name.ends_with(".json")) name.resize(name.size() - 5);
  return directory + name + ".stats.json";
}

}  // namespace

Status WriteStats(const std::string& state_path, uint64_t records, double seconds, const std::string& phase) {
  const std::string path = StatsPathFor(state_path);
  nlohmann::json stats;
  stats["Synced Records"] = records;
  stats["Seconds Elapsed"] = static_cast<int64_t>(seconds);
  char speed[64];
  std::snprintf(speed, sizeof(speed), "%.2f rps", seconds > 0 ? static_cast<double>(records) / seconds : 0.0);
  stats["Speed"] = speed;
  stats["Running Threads"] = 1;
  stats["Phase"] = phase;
  return WriteConfigFile(path, stats.dump(2) + "\n");
}

namespace {

struct Destination {
  std::unique_ptr<client::RestCatalog> rest;
  std::unique_ptr<client::RestTableCatalog> catalog;
  std::unique_ptr<iceberg::FileIO> io;
};

Result<Destination> ConnectDestination(const IcebergDestination& config) {
  client::RestCatalogOptions options = CatalogOptions(config);
  Destination destination;
  auto rest = client::RestCatalog::Connect(std::move(options));
  if (!rest.ok()) return NamingCredentials(config, rest.status());
  destination.rest = std::move(rest).value();
  destination.catalog = std::make_unique<client::RestTableCatalog>(*destination.rest);
  client::S3ClientOptions s3;
  s3.endpoint = config.s3_endpoint;
  if (s3.endpoint.find("://") == std::string::npos) {
    s3.endpoint = (config.s3_use_ssl ? "https://" : "http://") + s3.endpoint;
  }
  s3.access_key = config.access_key;
  s3.secret_key = config.secret_key;
  s3.session_token = config.session_token;
  s3.region = config.s3_region;
  SERAC_ASSIGN_OR_RETURN(client::S3Client s3_client, client::S3Client::Make(std::move(s3)));
  destination.io = client::MakeS3FileIO(std::move(s3_client));
  return destination;
}

Result<bool> SlotExists(PgConnection& connection, const std::string& slot) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         connection.Query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {slot}));
  return !rows.rows.empty();
}

// Starts the slot's stream where the slot stands: what the run is behind by is measured from there
// (the server starts from it whatever a lower position asks). PostgreSQL 14 and later stream a
// transaction larger than its logical_decoding_work_mem while it runs (protocol 2): kept on disk
// here until it ends, rather than by the source.
Result<ReplicationStream::StartOptions> StartFromSlot(const PostgresSource::Replication& replication,
                                                      ReplicationStream& stream, PgConnection& lookup) {
  ReplicationStream::StartOptions start;
  start.protocol_version = lookup.server_version() >= 140000 ? 2 : 1;
  start.publication = replication.publication;
  start.streaming = start.protocol_version >= 2;
  SERAC_ASSIGN_OR_RETURN(PgRows slot,
                         lookup.Query("SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                      "WHERE slot_name = $1",
                                      {replication.slot}));
  pgoutput::Lsn slot_position = 0;
  if (!slot.rows.empty() && slot.rows[0][0]) {
    SERAC_ASSIGN_OR_RETURN(slot_position, pgoutput::ParseLsn(*slot.rows[0][0]));
  }
  SERAC_RETURN_IF_ERROR(stream.Start(replication.slot, slot_position, start));
  return start;
}

// Applies the slot's changes to the tables of `runs` until the source's position at start (or,
// following, until asked to stop), acknowledging after each flush. True when it stopped early for
// a table that needs loading again (TableSink::needs_reload): the run starts over.
Result<bool> StreamChanges(const PostgresSource& source, ReplicationStream& stream,
                           std::vector<StreamRun>& runs, iceberg::TableCatalog& catalog,
                           const std::string& state_path, bool follow, const Clock::time_point run_started) {
  const PostgresSource::Replication& replication = *source.replication;
  SERAC_ASSIGN_OR_RETURN(pgoutput::Lsn target, stream.CurrentPosition());
  SERAC_ASSIGN_OR_RETURN(PgConnection lookup, PgConnection::Connect(source));
  SERAC_ASSIGN_OR_RETURN(ReplicationStream::StartOptions start, StartFromSlot(replication, stream, lookup));
  // What the loads wrote counts before the first change does.
  SERAC_RETURN_IF_ERROR(WriteStats(state_path, RowsLoaded(runs),
                                   std::chrono::duration<double>(Clock::now() - run_started).count(), "cdc"));
  ChangeApplier applier(replication, stream, runs, catalog, lookup, state_path, follow, run_started, target);
  pgoutput::Decoder decoder(start.protocol_version);
  Log("streaming changes from slot " + replication.slot + " up to " + pgoutput::LsnToText(target) +
      (follow ? " and on" : ""));
  while (!g_stop.load() && !applier.stops_for_reload()) {
    SERAC_ASSIGN_OR_RETURN(std::optional<ReplicationStream::Frame> frame, stream.Next(applier.wait()));
    if (!frame) {
      SERAC_ASSIGN_OR_RETURN(bool caught_up, applier.OnQuiet());
      if (caught_up) break;
      continue;
    }
    SERAC_ASSIGN_OR_RETURN(pgoutput::Message message, decoder.Decode(frame->payload));
    SERAC_RETURN_IF_ERROR(applier.OnMessage(*frame, message));
  }
  return applier.Finish();
}

}  // namespace

// A refusal of destination.json's credentials, naming the file and the fields that hold them.
Status NamingCredentials(const IcebergDestination& config, const Status& status) {
  if (status.code() != ErrorCode::kAccessDenied) return status;
  const char* fields = "writer (it gives no credentials)";
  switch (config.auth) {
    case IcebergDestination::Auth::kSigV4:
      fields = "writer.aws_access_key and writer.aws_secret_key";
      break;
    case IcebergDestination::Auth::kOAuth2:
      fields = "writer.credential";
      break;
    case IcebergDestination::Auth::kToken:
      fields = "writer.token";
      break;
    case IcebergDestination::Auth::kNone:
      break;
  }
  return Error(status.code(), config.file + ": " + fields + ": the catalog at " + config.catalog_uri +
                                  " refused them: " + status.message());
}

client::RestCatalogOptions CatalogOptions(const IcebergDestination& destination) {
  client::RestCatalogOptions options;
  options.uri = destination.catalog_uri;
  options.warehouse = destination.warehouse;
  options.region = destination.signing_region;
  options.signing_name = destination.signing_name;
  switch (destination.auth) {
    case IcebergDestination::Auth::kSigV4:
      options.auth = client::RestCatalogOptions::Auth::kSigV4;
      options.access_key = destination.access_key;
      options.secret_key = destination.secret_key;
      options.session_token = destination.session_token;
      break;
    case IcebergDestination::Auth::kOAuth2: {
      options.auth = client::RestCatalogOptions::Auth::kOAuth2;
      // credential is "client_id:client_secret".
      const size_t colon = destination.credential.find(':');
      options.access_key = destination.credential.substr(0, colon);
      options.secret_key = colon == std::string::npos ? "" : destination.credential.substr(colon + 1);
      options.oauth2_server_uri = destination.oauth2_uri;
      options.oauth2_scope = destination.oauth2_scope;
      break;
    }
    case IcebergDestination::Auth::kToken:
      options.auth = client::RestCatalogOptions::Auth::kBearer;
      options.bearer_token = destination.token;
      break;
    case IcebergDestination::Auth::kNone:
      options.auth = client::RestCatalogOptions::Auth::kNone;
      break;
  }
  return options;
}

namespace {

Status RunSyncUnnamed(const SyncRunOptions& options);

}  // namespace

Status RunSync(const SyncRunOptions& options) {
  Status status = RunSyncUnnamed(options);
  // The S3 keys are only tried when data files go up (a catalog signed in with OAuth2 or a token
  // has not seen them): a refusal of their signature names the fields too.
  const std::string& message = status.message();
  if (status.code() == ErrorCode::kAccessDenied &&
      message.find(options.destination_path) == std::string::npos &&
      (message.find("SignatureDoesNotMatch") != std::string::npos ||
       message.find("InvalidAccessKeyId") != std::string::npos)) {
    return Error(status.code(),
                 options.destination_path +
                     ": writer.aws_access_key and writer.aws_secret_key: the S3 endpoint refused "
                     "them: " +
                     message);
  }
  return status;
}

namespace {

Status RunSyncUnnamed(const SyncRunOptions& options) {
  const auto run_started = Clock::now();
  std::vector<ConfigNotice> notices;
  SERAC_ASSIGN_OR_RETURN(std::string source_text, ReadConfigFile(options.source_path));
  SERAC_ASSIGN_OR_RETURN(PostgresSource source, ParseSourceConfig(source_text, options.source_path, notices));
  SERAC_ASSIGN_OR_RETURN(std::string destination_text, ReadConfigFile(options.destination_path));
  SERAC_ASSIGN_OR_RETURN(IcebergDestination destination,
                         ParseDestinationConfig(destination_text, options.destination_path, notices));
  SERAC_ASSIGN_OR_RETURN(std::string streams_text, ReadConfigFile(options.streams_path));
  SERAC_ASSIGN_OR_RETURN(StreamCatalog catalog, ParseStreams(streams_text, options.streams_path, notices));
  for (const ConfigNotice& notice : notices) Log(notice.ToString());

  std::vector<StreamRun> runs;
  for (const StreamSelection& selection : catalog.selected) {
    const Stream* stream = catalog.Find(selection.namespace_name, selection.stream_name);
    if (stream == nullptr) {
      return Error(ErrorCode::kInvalidArgument,
                   options.streams_path + ": selected_streams: " + selection.namespace_name + "." +
                       selection.stream_name + " is not among its streams (run serac sync discover)");
    }
    if (stream->sync_mode == SyncMode::kIncremental && stream->cursor_field.empty()) {
      return Error(ErrorCode::kInvalidArgument, options.streams_path + ": " + stream->Id() +
                                                    ": cursor_field: sync_mode incremental needs a cursor "
                                                    "column (\"column\" or \"column:fallback\")");
    }
    if ((stream->sync_mode == SyncMode::kCdc || stream->sync_mode == SyncMode::kStrictCdc) &&
        !source.replication) {
      return Error(ErrorCode::kInvalidArgument, options.source_path + ": update_method: " + stream->Id() +
                                                    " is synced by " +
                                                    std::string(SyncModeName(stream->sync_mode)) +
                                                    ", which needs a replication slot and a publication");
    }
    StreamRun run;
    run.stream = stream;
    run.selection = &selection;
    runs.push_back(std::move(run));
  }
  if (runs.empty())
    return Error(ErrorCode::kInvalidArgument, options.streams_path + ": no stream is selected");

  SERAC_ASSIGN_OR_RETURN(Destination target, ConnectDestination(destination));
  SERAC_ASSIGN_OR_RETURN(PgConnection meta, PgConnection::Connect(source));
  SinkTargets sink_targets{target.rest.get(), target.catalog.get(), target.io.get(),
                           destination.no_identifier_fields, destination.olake_columns};
  // Beside state.json: "state.json.keys/<table uuid>/".
  if (destination.key_index) sink_targets.key_index_directory = options.state_path + ".keys";
  for (StreamRun& run : runs) {
    SERAC_ASSIGN_OR_RETURN(SourceTable table,
                           DescribeTable(meta, run.stream->namespace_name, run.stream->name));
    // A filter's columns are the table's (names as written: OLake quotes them, so case matters).
    if (run.selection->row_filter) {
      for (const FilterCondition& condition : run.selection->row_filter->conditions) {
        const bool found =
            std::any_of(table.columns.begin(), table.columns.end(),
                        [&](const SourceColumn& column) { return column.name == condition.column; });
        if (!found) {
          return Error(ErrorCode::kInvalidArgument,
                       run.selection->row_filter_origin + ": column " + condition.column +
                           " is not a column of " + table.QualifiedName() + " (names are case-sensitive)");
        }
      }
    }
    iceberg::TableRef ref;
    std::string database = run.stream->destination_database;
    if (database.empty()) database = destination.default_namespace;
    if (database.empty()) database = run.stream->namespace_name;
    ref.namespace_levels = {database};
    ref.name = run.stream->destination_table.empty() ? run.stream->name : run.stream->destination_table;
    StreamSelection selection = *run.selection;
    if (selection.engines.empty()) selection.engines = destination.engines;  // the writer's, for every stream
    SERAC_ASSIGN_OR_RETURN(run.sink, TableSink::Open(sink_targets, table, selection, ref));
    run.described = std::move(table);
  }

  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);

  // full_refresh: each run loads the table again under one snapshot.
  // incremental: a table without a cursor yet is loaded whole, with the cursor's highest value in
  // the same snapshot; one with a cursor reads the rows from it on.
  std::vector<StreamRun*> refresh;
  std::vector<StreamRun*> incremental;
  for (StreamRun& run : runs) {
    if (run.stream->sync_mode == SyncMode::kFullRefresh) refresh.push_back(&run);
    if (run.stream->sync_mode != SyncMode::kIncremental) continue;
    (run.sink->committed().cursor ? incremental : refresh).push_back(&run);
  }
  if (!refresh.empty()) {
    SERAC_ASSIGN_OR_RETURN(PgConnection exporter, PgConnection::Connect(source));
    SERAC_RETURN_IF_ERROR(exporter.Query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
    SERAC_ASSIGN_OR_RETURN(PgRows exported, exporter.Query("SELECT pg_export_snapshot()"));
    for (StreamRun* run : refresh) {
      if (run->stream->sync_mode != SyncMode::kIncremental) continue;
      SERAC_ASSIGN_OR_RETURN(PgRows highest,
                             exporter.Query("SELECT max(" + CursorExpression(*run->stream) + ")::text FROM " +
                                            run->described.QualifiedName()));
      run->load_cursor = highest.rows.at(0).at(0);  // nullopt for an empty table: loaded again next time
    }
    SERAC_ASSIGN_OR_RETURN(std::vector<PgConnection> readers,
                           OpenReaders(source, exported.rows.at(0).at(0).value_or(""), source.max_threads));
    SERAC_RETURN_IF_ERROR(LoadTables(refresh, readers, 0, true));
  }

  for (StreamRun* run : incremental) {
    SERAC_RETURN_IF_ERROR(ReadIncrement(source, *run));
  }

  std::vector<StreamRun*> changing;
  for (StreamRun& run : runs) {
    if (run.stream->sync_mode == SyncMode::kCdc || run.stream->sync_mode == SyncMode::kStrictCdc) {
      changing.push_back(&run);
    }
  }
  if (changing.empty()) {
    SERAC_RETURN_IF_ERROR(WriteState(options.state_path, runs, 0, ""));
    return WriteStats(options.state_path, RowsLoaded(runs),
                      std::chrono::duration<double>(Clock::now() - run_started).count(), "done");
  }
  const PostgresSource::Replication& replication = *source.replication;
  for (StreamRun* run : changing) {
    if (run->stream->sync_mode == SyncMode::kCdc) run->sink->AllowReload();
  }
  int temporary_slots = 0;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(ReplicationStream stream, ReplicationStream::Connect(source));
    SERAC_ASSIGN_OR_RETURN(bool slot_exists, SlotExists(meta, replication.slot));
    std::vector<StreamRun*> to_load;
    if (!slot_exists) {
      // A new slot: every cdc table is loaded under its snapshot (whatever the table held was
      // written from a slot that is gone), strict_cdc tables start at its consistent point.
      SERAC_ASSIGN_OR_RETURN(ReplicationStream::CreatedSlot slot, stream.CreateSlot(replication.slot));
      Log("created replication slot " + replication.slot + " at " +
          pgoutput::LsnToText(slot.consistent_point));
      for (StreamRun* run : changing) {
        if (run->stream->sync_mode == SyncMode::kCdc) to_load.push_back(run);
      }
      SERAC_ASSIGN_OR_RETURN(std::vector<PgConnection> readers,
                             OpenReaders(source, slot.snapshot_name, source.max_threads));
      SERAC_RETURN_IF_ERROR(LoadTables(to_load, readers, slot.consistent_point, true));
    } else {
      for (StreamRun* run : changing) {
        if (run->stream->sync_mode == SyncMode::kCdc && !run->sink->committed().loaded)
          to_load.push_back(run);
      }
      if (!to_load.empty()) {
        // Tables added since the slot was made, whose load did not finish, or that wait to be
        // loaded again: loaded under a temporary slot's snapshot; the main slot's changes before
        // its point are skipped for them.
        for (StreamRun* run : to_load) {
          SERAC_ASSIGN_OR_RETURN(run->described,
                                 DescribeTable(meta, run->stream->namespace_name, run->stream->name));
        }
        SERAC_ASSIGN_OR_RETURN(ReplicationStream exporter, ReplicationStream::Connect(source));
        // Named afresh for each load: the last one's slot may not be dropped yet.
        const std::string temporary = replication.slot.substr(0, 40) + "_load_" + std::to_string(::getpid()) +
                                      "_" + std::to_string(++temporary_slots);
        SERAC_ASSIGN_OR_RETURN(ReplicationStream::CreatedSlot slot, exporter.CreateSlot(temporary, true));
        SERAC_ASSIGN_OR_RETURN(std::vector<PgConnection> readers,
                               OpenReaders(source, slot.snapshot_name, source.max_threads));
        SERAC_RETURN_IF_ERROR(LoadTables(to_load, readers, slot.consistent_point, true));
      }
    }
    SERAC_RETURN_IF_ERROR(WriteState(options.state_path, runs, stream.acknowledged(), replication.slot));
    SERAC_ASSIGN_OR_RETURN(bool start_over, StreamChanges(source, stream, runs, *target.catalog,
                                                          options.state_path, options.follow, run_started));
    if (!start_over) return Status::Ok();
  }
}

}  // namespace

}  // namespace serac::sync
