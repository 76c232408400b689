// One run of `serac sync`: the destination reached, the tables opened, full loads read in parallel
// chunks under one snapshot, then the slot's changes applied and acknowledged after each commit.
#include "sync/sync_run.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "client/rest_catalog.h"
#include "client/rest_table_catalog.h"
#include "client/s3_client.h"
#include "client/s3_file_io.h"
#include "sync/config.h"
#include "sync/pg_binary.h"
#include "sync/pg_values.h"
#include "sync/postgres.h"
#include "sync/replication.h"
#include "sync/streamed_transactions.h"
#include "sync/table_sink.h"

namespace serac::sync {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void RequestStop(int) { g_stop.store(true); }

using Clock = std::chrono::steady_clock;

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

struct StreamRun {
  const Stream* stream = nullptr;
  SourceTable described;                   // the source table as the run found it
  std::optional<std::string> load_cursor;  // incremental: the cursor's highest value in the load's snapshot
  const StreamSelection* selection = nullptr;
  std::unique_ptr<TableSink> sink;
  uint64_t loaded_rows = 0;
};

// The ctid ranges a full load reads a table in: [first page, end page), the last one open.
std::vector<std::string> ChunkConditions(int64_t pages) {
  std::vector<std::string> conditions;
  if (pages <= kSyncChunkPages) return {""};
  for (int64_t start = 0; start < pages; start += kSyncChunkPages) {
    std::string condition = " WHERE ";
    if (start > 0) condition += "ctid >= '(" + std::to_string(start) + ",0)'::tid";
    if (start + kSyncChunkPages < pages) {
      condition += std::string(start > 0 ? " AND " : "") + "ctid < '(" +
                   std::to_string(start + kSyncChunkPages) + ",0)'::tid";
    }
    conditions.push_back(condition);
  }
  return conditions;
}

// Reads every table of `runs` under the snapshot the readers' connections hold and commits each
// table's files in one commit that replaces what it had, at `lsn`.
Status LoadTables(std::vector<StreamRun*> runs, std::vector<PgConnection>& readers, pgoutput::Lsn lsn,
                  bool mark_loaded) {
  for (StreamRun* run : runs) {
    TableSink& sink = *run->sink;
    SERAC_RETURN_IF_ERROR(sink.PrepareLoad(run->described.columns));
    const auto started = Clock::now();
    std::string columns;
    for (const std::string& column : sink.load_columns()) {
      columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(column);
    }
    const std::vector<std::string> chunks = ChunkConditions(sink.source().pages);
    std::atomic<size_t> next_chunk{0};
    std::atomic<uint64_t> rows{0};
    std::mutex mutex;
    Status failure = Status::Ok();
    std::vector<iceberg::DataFile> files;
    std::vector<parquet::DataFileWriter> writers;
    std::atomic<size_t> finished{0};
    // Each chunk (a range of heap pages) goes into files of its own: rows come in the order they
    // lie in the heap, so a table filled in key order gets files of narrow key ranges, whose
    // bounds let a change's deletes skip every other file (parquet::RowKeys::MayBeIn).
    auto read_chunks = [&](PgConnection& connection) {
      Result<parquet::RowBatchBuilder> builder = sink.NewRowBuilder();
      if (!builder.ok()) {
        std::lock_guard lock(mutex);
        failure = builder.status();
        return;
      }
      parquet::RowBatchBuilder& batch = *builder;
      while (true) {
        const size_t chunk = next_chunk.fetch_add(1);
        if (chunk >= chunks.size()) break;
        {
          std::lock_guard lock(mutex);
          if (!failure.ok()) break;
        }
        Result<parquet::DataFileWriter> made = sink.NewLoadWriter();
        if (!made.ok()) {
          std::lock_guard lock(mutex);
          failure = made.status();
          return;
        }
        parquet::DataFileWriter writer = std::move(made).value();
        CopyBinaryRows decoder(sink.LoadPlan());
        // streams.json's filter narrows what a load reads (as OLake's does; changes are not filtered).
        std::string where = chunks[chunk];
        if (run->selection->row_filter) {
          where += (where.empty() ? " WHERE (" : " AND (") + run->selection->row_filter->Sql() + ")";
        }
        const std::string copy = "COPY (SELECT " + decoder.SelectList() + " FROM " +
                                 sink.source().QualifiedName() + where + ") TO STDOUT (FORMAT binary)";
        Status status = connection.CopyOut(
            copy,
            [&](std::string_view buffer) -> Status {
              bool row_done = false;
              Status read = decoder.Read(buffer, batch, row_done);
              if (!read.ok())
                return Error(read.code(), sink.source().QualifiedName() + ": " + read.message());
              if (batch.rows() >= static_cast<int64_t>(kSyncLoadBatchRows)) {
                rows += static_cast<uint64_t>(batch.rows());
                SERAC_RETURN_IF_ERROR(writer.AppendBatch(batch, sink.name(), 1));
              }
              return Status::Ok();
            },
            true);
        if (status.ok() && batch.rows() > 0) {
          rows += static_cast<uint64_t>(batch.rows());
          status = writer.AppendBatch(batch, sink.name(), 1);
        }
        Result<std::vector<iceberg::DataFile>> written =
            status.ok() ? writer.Finish() : Result<std::vector<iceberg::DataFile>>(status);
        std::lock_guard lock(mutex);
        writers.push_back(std::move(writer));
        if (!written.ok()) {
          if (failure.ok()) failure = written.status();
          return;
        }
        for (iceberg::DataFile& file : *written) files.push_back(std::move(file));
      }
    };
    auto read = [&](PgConnection& connection) {
      read_chunks(connection);
      ++finished;
    };
    std::vector<std::thread> threads;
    const size_t thread_count = std::min(readers.size(), chunks.size());
    for (size_t t = 0; t < thread_count; ++t) threads.emplace_back(read, std::ref(readers[t]));
    // Rows, bytes read, rate and time left (from the planner's row estimate) while the readers run.
    const int64_t estimate = sink.source().estimated_rows;
    const double heap_bytes = static_cast<double>(sink.source().pages) * 8192;
    while (true) {
      if (finished.load() == thread_count) break;
      const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
      const double loaded = static_cast<double>(rows.load());
      const double rate = seconds > 0 ? loaded / seconds : 0;
      std::string line = sink.name() + ": " + std::to_string(rows.load()) + " rows";
      if (estimate > 0) {
        const double share = std::min(1.0, loaded / static_cast<double>(estimate));
        char text[160];
        std::snprintf(text, sizeof(text), " of about %lld (%.0f%%), %s of %s, %.0f rows/s, about %.0f s left",
                      static_cast<long long>(estimate), share * 100, Megabytes(heap_bytes * share).c_str(),
                      Megabytes(heap_bytes).c_str(), rate,
                      rate > 0 ? std::max(0.0, (static_cast<double>(estimate) - loaded) / rate) : 0.0);
        line += text;
      }
      g_progress.Show(line);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (std::thread& thread : threads) thread.join();
    if (!failure.ok()) {
      for (parquet::DataFileWriter& writer : writers) writer.AbortAndDelete();
      return failure;
    }
    Status committed = sink.CommitLoad(std::move(files), lsn, mark_loaded, run->load_cursor);
    if (!committed.ok()) {
      if (committed.code() != ErrorCode::kOutcomeUnknown) {
        for (parquet::DataFileWriter& writer : writers) writer.AbortAndDelete();
      }
      return committed;
    }
    run->loaded_rows = rows.load();
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    char line[256];
    std::snprintf(line, sizeof(line), "%s: loaded %llu rows in %.1f s (%.0f rows/s)", sink.name().c_str(),
                  static_cast<unsigned long long>(rows.load()), seconds,
                  seconds > 0 ? static_cast<double>(rows.load()) / seconds : 0.0);
    Log(line);
  }
  return Status::Ok();
}

// Opens `count` reader connections that see `snapshot_name` (empty: a fresh snapshot of their own,
// all taken by one exporting transaction so that every reader sees the same rows).
Result<std::vector<PgConnection>> OpenReaders(const PostgresSource& source, const std::string& snapshot_name,
                                              int32_t count) {
  std::vector<PgConnection> readers;
  for (int32_t i = 0; i < std::max<int32_t>(1, count); ++i) {
    SERAC_ASSIGN_OR_RETURN(PgConnection connection, PgConnection::Connect(source));
    if (!snapshot_name.empty()) SERAC_RETURN_IF_ERROR(BeginWithSnapshot(connection, snapshot_name));
    readers.push_back(std::move(connection));
  }
  return readers;
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

// Every row a run wrote: loaded rows and changes alike, as OLake counts Synced Records.
uint64_t RowsLoaded(const std::vector<StreamRun>& runs) {
  uint64_t rows = 0;
  for (const StreamRun& run : runs) rows += run.loaded_rows;
  return rows;
}

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

Result<bool> SlotExists(PgConnection& connection, const std::string& slot) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         connection.Query("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1", {slot}));
  return !rows.rows.empty();
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
  // PostgreSQL 14 and later stream a transaction larger than its logical_decoding_work_mem while
  // it runs (protocol 2): kept on disk here until it ends, rather than by the source.
  ReplicationStream::StartOptions start;
  start.protocol_version = lookup.server_version() >= 140000 ? 2 : 1;
  start.publication = replication.publication;
  start.streaming = start.protocol_version >= 2;
  // From where the slot stands: what the run is behind by is measured from there (the server
  // starts from it whatever a lower position asks).
  SERAC_ASSIGN_OR_RETURN(PgRows slot,
                         lookup.Query("SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                      "WHERE slot_name = $1",
                                      {replication.slot}));
  pgoutput::Lsn slot_position = 0;
  if (!slot.rows.empty() && slot.rows[0][0]) {
    SERAC_ASSIGN_OR_RETURN(slot_position, pgoutput::ParseLsn(*slot.rows[0][0]));
  }
  SERAC_RETURN_IF_ERROR(stream.Start(replication.slot, slot_position, start));
  // What the loads wrote counts before the first change does.
  SERAC_RETURN_IF_ERROR(WriteStats(state_path, RowsLoaded(runs),
                                   std::chrono::duration<double>(Clock::now() - run_started).count(), "cdc"));
  const std::filesystem::path state_directory = std::filesystem::path(state_path).parent_path();
  StreamedTransactions streamed(state_directory.empty() ? "." : state_directory.string());
  bool in_stream_block = false;
  uint32_t stream_xid = 0;  // the transaction whose stream block is open
  std::map<std::string, TableSink*> by_name;
  for (StreamRun& run : runs) {
    if (run.stream->sync_mode != SyncMode::kCdc && run.stream->sync_mode != SyncMode::kStrictCdc) continue;
    run.sink->SetLookupConnection(&lookup);
    by_name[run.sink->source().namespace_name + "." + run.sink->source().name] = run.sink.get();
  }
  std::map<uint32_t, TableSink*> relations;
  pgoutput::Decoder decoder(start.protocol_version);
  bool in_transaction = false;
  pgoutput::Lsn transaction_lsn = 0;  // the open transaction's commit record
  pgoutput::Lsn applied_end = 0;      // the end of the last transaction received whole
  uint64_t changes = 0;
  uint64_t pending_changes = 0;
  auto first_pending = Clock::now();
  auto last_keepalive_request = Clock::now();

  std::vector<TableSink*> sinks;
  for (StreamRun& run : runs) sinks.push_back(run.sink.get());
  // Every table written in one commit: a source transaction lands in all its tables at once.
  auto flush = [&](pgoutput::Lsn lsn) -> Status {
    SERAC_RETURN_IF_ERROR(FlushTogether(sinks, lsn, catalog));
    if (lsn > stream.acknowledged()) SERAC_RETURN_IF_ERROR(stream.Acknowledge(lsn));
    pending_changes = 0;
    SERAC_RETURN_IF_ERROR(WriteState(state_path, runs, stream.acknowledged(), replication.slot));
    const double seconds = std::chrono::duration<double>(Clock::now() - run_started).count();
    return WriteStats(state_path, RowsLoaded(runs) + changes, seconds, "cdc");
  };
  int64_t last_commit_time = 0;  // the last transaction received whole: its commit time (PostgreSQL's clock)
  auto ShowLag = [&](pgoutput::Lsn received) {
    const pgoutput::Lsn server = std::max(received, stream.server_wal_end());
    const double behind_bytes =
        server > stream.acknowledged() ? static_cast<double>(server - stream.acknowledged()) : 0;
    const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
    const double behind_seconds =
        last_commit_time == 0 || pending_changes == 0
            ? 0
            : std::max<double>(
                  0,
                  static_cast<double>(now_micros - pgoutput::UnixMicrosFromPostgres(last_commit_time)) / 1e6);
    char line[200];
    std::snprintf(line, sizeof(line), "changes: %llu applied, %s behind the source, %.1f s",
                  static_cast<unsigned long long>(changes), Megabytes(behind_bytes).c_str(), behind_seconds);
    g_progress.Show(line);
  };
  auto reload_needed = [&] {
    return std::any_of(runs.begin(), runs.end(),
                       [](const StreamRun& run) { return run.sink->needs_reload(); });
  };
  auto pending_bytes = [&] {
    uint64_t bytes = 0;
    for (StreamRun& run : runs) bytes += run.sink->pending_bytes();
    return bytes;
  };

  auto sink_of = [&](uint32_t relation) -> TableSink* {
    auto found = relations.find(relation);
    if (found == relations.end() || found->second == nullptr) return nullptr;
    TableSink* sink = found->second;
    // A table waiting to be loaded again takes none: its load's snapshot has them.
    return sink->Holds(transaction_lsn) || sink->needs_reload() ? nullptr : sink;
  };
  auto begin_transaction = [&](pgoutput::Lsn commit_lsn, int64_t commit_time) {
    in_transaction = true;
    transaction_lsn = commit_lsn;
    for (StreamRun& run : runs) run.sink->SetChangeTime(pgoutput::UnixMicrosFromPostgres(commit_time));
  };
  auto end_transaction = [&](pgoutput::Lsn end_lsn, int64_t commit_time) -> Status {
    in_transaction = false;
    applied_end = end_lsn;
    last_commit_time = commit_time;
    const bool due = pending_bytes() >= kSyncFlushBytesMax ||
                     Clock::now() - first_pending >= std::chrono::milliseconds(kSyncFlushIntervalMs) ||
                     (!follow && applied_end >= target);
    if (pending_changes > 0 && due) SERAC_RETURN_IF_ERROR(flush(applied_end));
    return Status::Ok();
  };
  // A message of a transaction (sent at its commit, or replayed at the end of a streamed one).
  auto apply = [&](const pgoutput::Message& message) -> Status {
    if (auto* relation = std::get_if<pgoutput::Relation>(&message.body)) {
      auto found = by_name.find(relation->namespace_name + "." + relation->name);
      TableSink* sink = found == by_name.end() ? nullptr : found->second;
      relations[relation->oid] = sink;
      if (sink != nullptr) SERAC_RETURN_IF_ERROR(sink->SetRelation(*relation));
    } else if (auto* insert = std::get_if<pgoutput::Insert>(&message.body)) {
      if (TableSink* sink = sink_of(insert->relation)) {
        if (pending_changes == 0) first_pending = Clock::now();
        SERAC_RETURN_IF_ERROR(sink->Insert(insert->row));
        ++pending_changes;
        ++changes;
      }
    } else if (auto* update = std::get_if<pgoutput::Update>(&message.body)) {
      if (TableSink* sink = sink_of(update->relation)) {
        if (pending_changes == 0) first_pending = Clock::now();
        SERAC_RETURN_IF_ERROR(sink->Update(*update));
        ++pending_changes;
        ++changes;
      }
    } else if (auto* deleted = std::get_if<pgoutput::Delete>(&message.body)) {
      if (TableSink* sink = sink_of(deleted->relation)) {
        if (pending_changes == 0) first_pending = Clock::now();
        SERAC_RETURN_IF_ERROR(sink->Delete(*deleted));
        ++pending_changes;
        ++changes;
      }
    } else if (auto* truncate = std::get_if<pgoutput::Truncate>(&message.body)) {
      for (uint32_t relation : truncate->relations) {
        if (TableSink* sink = sink_of(relation)) {
          // Changes before the TRUNCATE in this transaction are committed first; the position
          // stays before the transaction until its commit, so a replay truncates again.
          SERAC_RETURN_IF_ERROR(sink->Truncate(sink->committed().lsn));
          ++changes;
        }
      }
    }
    // A transaction too large to hold is committed in parts; its end is recorded only with its
    // commit, so a restart applies it again whole (upserts and deletes by key repeat harmlessly).
    if (in_transaction && pending_bytes() >= kSyncFlushBytesMax) {
      for (StreamRun& run : runs) {
        if (run.sink->has_pending()) SERAC_RETURN_IF_ERROR(run.sink->Flush(run.sink->committed().lsn));
      }
    }
    return Status::Ok();
  };

  Log("streaming changes from slot " + replication.slot + " up to " + pgoutput::LsnToText(target) +
      (follow ? " and on" : ""));
  while (true) {
    if (g_stop.load()) break;
    if (!in_transaction && reload_needed()) break;
    // With changes pending, a short quiet spell is enough to commit them (the lag stays small);
    // with none, the wait only bounds how soon a stop is noticed.
    SERAC_ASSIGN_OR_RETURN(
        std::optional<ReplicationStream::Frame> frame,
        stream.Next(std::chrono::milliseconds(pending_changes > 0 ? kSyncQuietFlushMs : 200)));
    if (!frame) {
      if (!in_transaction && pending_changes > 0) SERAC_RETURN_IF_ERROR(flush(applied_end));
      ShowLag(0);
      if (!in_transaction) {
        const pgoutput::Lsn seen = std::max(applied_end, stream.server_wal_end());
        if (!follow && seen >= target) break;
        // Idle: everything sent so far is applied; ask where the server is.
        if (Clock::now() - last_keepalive_request > std::chrono::milliseconds(200)) {
          if (seen > stream.acknowledged() && pending_changes == 0)
            SERAC_RETURN_IF_ERROR(stream.Acknowledge(seen));
          SERAC_RETURN_IF_ERROR(stream.RequestKeepalive());
          last_keepalive_request = Clock::now();
        }
      }
      continue;
    }
    SERAC_ASSIGN_OR_RETURN(pgoutput::Message message, decoder.Decode(frame->payload));
    ShowLag(frame->wal_end);
    if (in_stream_block) {
      // Inside a stream block: kept until the transaction's end.
      if (std::holds_alternative<pgoutput::StreamStop>(message.body)) {
        in_stream_block = false;
      } else {
        SERAC_RETURN_IF_ERROR(streamed.Append(stream_xid, message, frame->payload));
      }
    } else if (auto* begin = std::get_if<pgoutput::Begin>(&message.body)) {
      begin_transaction(begin->final_lsn, begin->commit_time);
    } else if (auto* commit = std::get_if<pgoutput::Commit>(&message.body)) {
      SERAC_RETURN_IF_ERROR(end_transaction(commit->end_lsn, commit->commit_time));
    } else if (auto* stream_start = std::get_if<pgoutput::StreamStart>(&message.body)) {
      in_stream_block = true;
      stream_xid = stream_start->xid;
    } else if (auto* stream_abort = std::get_if<pgoutput::StreamAbort>(&message.body)) {
      streamed.Abort(stream_abort->xid, stream_abort->subtransaction_xid);
    } else if (auto* stream_commit = std::get_if<pgoutput::StreamCommit>(&message.body)) {
      // A streamed transaction ends: applied now, whole, as if it had been sent at its commit.
      begin_transaction(stream_commit->commit_lsn, stream_commit->commit_time);
      SERAC_RETURN_IF_ERROR(streamed.Replay(stream_commit->xid, apply));
      SERAC_RETURN_IF_ERROR(end_transaction(stream_commit->end_lsn, stream_commit->commit_time));
    } else {
      SERAC_RETURN_IF_ERROR(apply(message));
    }
  }
  if (!in_transaction && reload_needed()) {
    // What the other tables have is committed and acknowledged; the run starts over to load it.
    SERAC_RETURN_IF_ERROR(flush(applied_end));
    return true;
  }
  if (!in_transaction) {
    SERAC_RETURN_IF_ERROR(flush(std::max(applied_end, stream.server_wal_end())));
    // DDL after a table's last change reaches the stream only with its next change: the tables
    // take the source's columns as they are now, every change before now being applied.
    for (StreamRun& run : runs) {
      if (!by_name.count(run.sink->source().namespace_name + "." + run.sink->source().name)) continue;
      SERAC_ASSIGN_OR_RETURN(SourceTable now,
                             DescribeTable(lookup, run.described.namespace_name, run.described.name));
      SERAC_RETURN_IF_ERROR(run.sink->PrepareLoad(now.columns));
    }
    if (reload_needed()) return true;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "applied %llu changes; slot %s acknowledged at %s",
                static_cast<unsigned long long>(changes), replication.slot.c_str(),
                pgoutput::LsnToText(stream.acknowledged()).c_str());
  Log(line);
  return false;
}

// "column" or "column:fallback" (OLake's cursor_field) as an SQL expression.
std::string CursorExpression(const Stream& stream) {
  const size_t colon = stream.cursor_field.find(':');
  if (colon == std::string::npos) return QuoteIdentifier(stream.cursor_field);
  return "COALESCE(" + QuoteIdentifier(stream.cursor_field.substr(0, colon)) + ", " +
         QuoteIdentifier(stream.cursor_field.substr(colon + 1)) + ")";
}

// incremental: the rows whose cursor is at or past the table's (past it without a key, whose rows
// cannot be upserted), upserted by key, committed with the cursor's new highest value, all read
// in one snapshot.
Status ReadIncrement(const PostgresSource& source, StreamRun& run) {
  TableSink& sink = *run.sink;
  const auto started = Clock::now();
  SERAC_ASSIGN_OR_RETURN(PgConnection connection, PgConnection::Connect(source));
  const std::string primary = run.stream->cursor_field.substr(0, run.stream->cursor_field.find(':'));
  SERAC_ASSIGN_OR_RETURN(PgRows type,
                         connection.Query("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE "
                                          "attrelid = $1 AND attname = $2 AND NOT attisdropped",
                                          {std::to_string(run.described.oid), primary}));
  if (type.rows.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 run.stream->Id() + ": cursor_field: the source has no column " + primary);
  }
  const std::string expression = CursorExpression(*run.stream);
  SERAC_RETURN_IF_ERROR(connection.Query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
  SERAC_ASSIGN_OR_RETURN(PgRows highest, connection.Query("SELECT max(" + expression + ")::text FROM " +
                                                          run.described.QualifiedName()));
  std::string columns;
  for (const std::string& column : sink.load_columns()) {
    columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(column);
  }
  const bool keyed = !run.described.primary_key.empty();
  std::string copy = "COPY (SELECT " + columns + " FROM " + run.described.QualifiedName() + " WHERE " +
                     expression + (keyed ? " >= " : " > ") + QuoteLiteral(*sink.committed().cursor) +
                     "::" + type.rows[0][0].value_or("text");
  if (run.selection->row_filter) copy += " AND (" + run.selection->row_filter->Sql() + ")";
  copy += ") TO STDOUT";
  SourceTexts texts;
  uint64_t rows = 0;
  SERAC_RETURN_IF_ERROR(connection.CopyOut(copy, [&](std::string_view line) -> Status {
    SERAC_RETURN_IF_ERROR(SplitCopyLine(line, texts));
    SERAC_RETURN_IF_ERROR(sink.UpsertLoaded(texts));
    ++rows;
    // A large increment is committed in parts under the old cursor: reading it again is harmless.
    if (sink.pending_bytes() >= kSyncFlushBytesMax) SERAC_RETURN_IF_ERROR(sink.Flush(sink.committed().lsn));
    return Status::Ok();
  }));
  SERAC_RETURN_IF_ERROR(connection.Query("COMMIT").status());
  if (highest.rows.at(0).at(0)) SERAC_RETURN_IF_ERROR(sink.CommitCursor(*highest.rows[0][0]));
  run.loaded_rows = rows;
  char line[256];
  std::snprintf(line, sizeof(line), "%s: %llu rows from cursor %s in %.1f s", sink.name().c_str(),
                static_cast<unsigned long long>(rows), sink.committed().cursor.value_or("-").c_str(),
                std::chrono::duration<double>(Clock::now() - started).count());
  Log(line);
  return Status::Ok();
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
