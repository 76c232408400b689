// Full loads: a table read by COPY in chunks of heap pages, one reader thread per connection, each
// chunk into data files of its own, committed as one snapshot that replaces the table; and the
// incremental read from a cursor, upserted by key.
#include "sync/full_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "parquet/parquet_files.h"
#include "sync/pg_binary.h"
#include "sync/pg_values.h"
#include "sync/replication.h"
#include "sync/sync_run.h"
#include "sync/table_sink.h"

namespace serac::sync {
namespace {

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

}  // namespace

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
      ShowProgress(line);
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

std::string CursorExpression(const Stream& stream) {
  const size_t colon = stream.cursor_field.find(':');
  if (colon == std::string::npos) return QuoteIdentifier(stream.cursor_field);
  return "COALESCE(" + QuoteIdentifier(stream.cursor_field.substr(0, colon)) + ", " +
         QuoteIdentifier(stream.cursor_field.substr(colon + 1)) + ")";
}

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

}  // namespace serac::sync
