// One Iceberg table fed by one PostgreSQL table: created from the source's columns when missing
// (format v2, the primary key as its identifier fields), written by full loads (rows straight into
// data files, committed with every earlier file removed) and by changes (upserts and deletes kept
// per key until a flush, so that an insert followed by updates of the same row in one commit lands
// as its last state only; each flush one row-delta commit: the rows earlier commits wrote for every
// key touched removed (DeleteKind), and the keys' last rows as data files).
//
// Exactly once: every commit names, in its snapshot summary, how far the table is written
// (kSummaryLsn: the end of the last source transaction it holds; kSummaryLoaded: whether its full
// load is done). A restart reads that back (committed()) and skips what the table already holds;
// replaying a transaction the table holds in part is harmless, as every change is an upsert or a
// delete by key.
//
// Defined along the way a change travels: table_schema.cc (open, bind, evolve), change_buffer.cc
// (the per-key buffer), table_flush.cc (stage, write, delete files, commit).
// Thread-safety: one thread drives a sink; full-load writers (LoadWriter) may run on other threads.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/rest_catalog.h"
#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/write/table_catalog.h"
#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"
#include "sync/config.h"
#include "sync/pg_binary.h"
#include "sync/pgoutput.h"
#include "sync/postgres.h"

namespace serac::sync {

inline constexpr const char* kSummaryLsn = "serac.sync.lsn";
inline constexpr const char* kSummaryLoaded = "serac.sync.loaded";
inline constexpr const char* kSummaryCursor = "serac.sync.cursor";
// When the source committed the newest change in the snapshot, in Unix milliseconds: with the
// snapshot's own timestamp it tells how far the table lags behind the source.
inline constexpr const char* kSummarySourceCommitMs = "serac.sync.source-commit-ms";

// Where a sink's tables live and how they are reached.
struct SinkTargets {
  client::RestCatalog* rest = nullptr;
  iceberg::TableCatalog* catalog = nullptr;
  iceberg::FileIO* io = nullptr;
  bool no_identifier_fields = false;  // destination.json: tables made without identifier fields
  // destination.json's olake_columns: OLake's _olake_id (the key; a composite key's MD5 of its
  // values joined by | in the order of the columns' names), _op_type (r loaded, c inserted, u
  // updated or read by cursor, d deleted), _cdc_timestamp (the source's commit time) and
  // _olake_timestamp (when serac wrote the row), with deletes kept as rows with _op_type d.
  bool olake_columns = false;
  // Where each table's key index lives (a directory per table, by its uuid; parquet/key_index.h):
  // position deletes and DVs find rows there instead of reading the data files' keys again. Empty:
  // no index.
  std::string key_index_directory;
};

// A source row's values (text, nullopt for NULL), one per source column in the order the sink
// was given them (full load: SourceTable's selected columns; changes: the Relation's).
using SourceTexts = std::vector<std::optional<std::string>>;

// How a flush removes the rows earlier commits wrote for the keys it touches (streams.json's
// update_type): equality deletes of the keys (eq), or the rows found by key in the table's data
// files and removed by position — position delete files (pos, format v2) or deletion vectors (dv,
// format v3). Engines differ in what they read: the README's table.
enum class DeleteKind : uint8_t { kEquality, kPositionFiles, kDeletionVectors };

class TableSink {
 public:
  // Loads the table at `ref`, creating it (and its namespace) from `source` when missing: format
  // v3 for update_type dv, else v2, partitioned as partition_regex says. Only the columns named in
  // selected_columns (none: all) are written. update_type (eq, pos, dv; empty: dv on a v3 table,
  // pos otherwise) says how changes delete rows.
  static Result<std::unique_ptr<TableSink>> Open(const SinkTargets& targets, const SourceTable& source,
                                                 const StreamSelection& selection, iceberg::TableRef ref);

  struct Position {
    bool loaded = false;
    pgoutput::Lsn lsn = 0;              // 0: no change applied yet
    std::optional<std::string> cursor;  // incremental: the cursor's highest value the table holds
  };
  const Position& committed() const { return committed_; }
  // cdc streams: a column the source adds with a default (whose older rows hold values no change
  // carried) marks the table to be loaded again (a table property, so a restart does it too); its
  // changes are skipped until then. Without it, such a column is null in older rows.
  void AllowReload() { reloadable_ = true; }
  bool needs_reload() const { return reloadable_ && reload_marked_ && !committed_.loaded; }
  std::string name() const { return ref_.DisplayName(); }
  const SourceTable& source() const { return source_; }
  // The source columns a full load reads (and an incremental read's rows come in), in order.
  const std::vector<std::string>& load_columns() const { return load_columns_; }

  // ---- full load ----
  // Before a full load, or with every change applied: the table's schema follows the source's
  // columns as they are now.
  Status PrepareLoad(const std::vector<SourceColumn>& columns);
  // The columns a full load reads, in load_columns() order, with their source types and fields.
  std::vector<LoadColumn> LoadPlan() const;
  // A builder of rows for the writers NewLoadWriter makes.
  Result<parquet::RowBatchBuilder> NewRowBuilder() const { return parquet::RowBatchBuilder::Make(schema_); }
  // A writer of the table's data files for one reader thread.
  Result<parquet::DataFileWriter> NewLoadWriter() const;
  // Replaces everything the table holds with `files` (a full load), marking it loaded at `lsn`.
  // With `cursor` (incremental), the table holds the source up to that cursor value.
  Status CommitLoad(std::vector<iceberg::DataFile> files, pgoutput::Lsn lsn, bool mark_loaded,
                    std::optional<std::string> cursor = std::nullopt);

  // ---- changes ----
  // The columns of the source's Relation message: the order of the tuples that follow.
  Status SetRelation(const pgoutput::Relation& relation);
  // Whether a transaction whose commit record is at `commit_lsn` is already in the table.
  bool Holds(pgoutput::Lsn commit_lsn) const { return commit_lsn < committed_.lsn; }
  Status Insert(const pgoutput::Tuple& row);
  Status Update(const pgoutput::Update& update);
  Status Delete(const pgoutput::Delete& deleted);
  // incremental: a row read by its cursor (texts in load_columns() order), upserted by its key.
  Status UpsertLoaded(const SourceTexts& texts);
  // incremental: commits what is pending with the table holding the source up to `cursor`.
  Status CommitCursor(std::string cursor);
  // TRUNCATE: what is pending is committed first, then every row goes.
  Status Truncate(pgoutput::Lsn lsn);
  // The source commit time (Unix microseconds) of the transaction whose changes come next.
  void SetChangeTime(int64_t unix_micros) { change_time_ = unix_micros; }
  bool has_pending() const { return !entries_.empty(); }
  uint64_t pending_bytes() const { return pending_bytes_; }
  uint64_t rows_written() const { return rows_written_; }
  // Commits what is pending, the table then holding the source up to `lsn`.
  Status Flush(pgoutput::Lsn lsn);

  // ---- a flush committed with other tables' (FlushTogether) ----
  // Writes what is pending and makes its commit against the table as it is now.
  Status StageFlush(pgoutput::Lsn lsn);
  // The staged commit as the commit loop makes it (iceberg::CommitChanges): prepared on the table
  // as it is at each attempt, its deleted rows found again there when a commit that moved them
  // landed first (at most kFlushRestagesMax times).
  iceberg::TableChangeOf staged_change();
  // Ends the staged flush: committed, what was pending is done; failed, its files go (unless the
  // outcome is unknown: a commit may reference them).
  void EndStagedFlush(const Status& committed);

  // Unchanged TOAST values of rows whose earlier version is not pending are read from the source
  // at flush (the current value: a later change of the column follows in the stream).
  void SetLookupConnection(PgConnection* connection) { lookup_ = connection; }

 private:
  TableSink() = default;

  // ---- the table's schema: open, bind, evolve (table_schema.cc) ----
  // Which source attribute each field was written from ("id:attnum,..."), kept as a table property
  // so that a column renamed while no sync ran is still recognised by its attribute number.
  static constexpr const char* kAttnumsProperty = "serac.sync.attnums";
  // Set while the table waits for a full load again (a column arrived whose older rows hold values
  // no change carried); removed once the load is committed.
  static constexpr const char* kReloadProperty = "serac.sync.reload";
  // Whether the stream writes a source column (selected_columns, sync_new_columns; the key always).
  bool Selected(const std::string& column) const;
  // The source's columns as they are now: the table's schema follows (added, renamed, widened and
  // dropped columns) in one schema change, committed before rows of the new shape.
  Status Evolve(const std::vector<SourceColumn>& columns);
  // load_columns_, load_fields_, key_fields_ and key_schema_ from source_ and schema_.
  Status Bind();

  // ---- the per-key change buffer: upsert, remove, key of a row (change_buffer.cc) ----
  struct Entry {
    std::vector<std::optional<std::string>> key;  // key columns' texts
    std::optional<SourceTexts> row;               // table columns' texts; nullopt: deleted
    std::vector<bool> unchanged;                  // table columns whose value was not sent (TOAST)
    char op = 'c';                                // _op_type of the row's last version
    int64_t changed_at = 0;                       // its source commit time (Unix microseconds)
  };
  Result<std::string> KeyOf(const pgoutput::Tuple& tuple, std::vector<std::optional<std::string>>& key) const;
  Status Upsert(const pgoutput::Tuple& row, char op);
  Status RemoveKey(const pgoutput::Tuple& key_tuple);
  Status FillUnchanged(Entry& entry);
  void FillOlakeColumns(const Entry& entry, parquet::Row& row, int64_t now_micros) const;
  std::string OlakeId(const std::vector<std::optional<std::string>>& key) const;

  // ---- the flush: stage, write, delete files, commit (table_flush.cc) ----
  // A flush's files: data files of the rows, delete files, and DVs the new ones replace.
  struct ChangeFiles {
    std::vector<iceberg::DataFile> data;
    std::vector<iceberg::DataFile> deletes;
    std::vector<iceberg::DataFile> replaced;
  };
  Result<std::vector<iceberg::DataFile>> WritePendingRows();
  Result<std::vector<iceberg::DataFile>> WriteEqualityDeletes(const std::vector<parquet::Row>& keys);
  // `validate_from`: the snapshot the change's deletes were found in (nullopt inside: none).
  std::unique_ptr<iceberg::SnapshotProducer> MakeProducer(
      const ChangeFiles& files, pgoutput::Lsn lsn, bool remove_all,
      std::optional<std::optional<int64_t>> validate_from);
  Status Commit(const ChangeFiles& files, pgoutput::Lsn lsn, bool remove_all,
                std::optional<std::optional<int64_t>> validate_from);
  // A flush written and ready to commit: its files, the keys whose earlier rows it removes by
  // position (found again if a commit moved them first), and its commit.
  class StagedChange;
  struct StagedFlush {
    ChangeFiles files;
    std::optional<parquet::RowKeys> position_keys;
    pgoutput::Lsn lsn = 0;
    std::optional<std::optional<int64_t>> validate_from;
    std::unique_ptr<iceberg::SnapshotProducer> producer;
    std::unique_ptr<StagedChange> change;
    ~StagedFlush();
  };
  // The staged flush's producer made (again) for `table`, its position deletes found there.
  Status RestageFlush(const iceberg::TableMetadata& table);
  // The staged flush's position deletes found in `table`.
  Status FindPositionDeletes(const iceberg::TableMetadata& table);
  void DeleteWritten(const ChangeFiles& files);

  // ---- the table and its schema (set by Open, kept by Bind and Evolve) ----
  SinkTargets targets_;
  SourceTable source_;
  iceberg::TableRef ref_;
  iceberg::Schema schema_;
  iceberg::PartitionSpec spec_;  // the table's default spec: data and equality delete files follow it
  iceberg::Schema key_schema_;   // the key columns (or every primitive column without a key)
  std::vector<int> key_fields_;  // their indexes in schema_.fields
  std::vector<std::string> load_columns_;
  std::vector<int> load_fields_;      // per load column: its index in schema_.fields
  std::vector<int> relation_fields_;  // per Relation column: its index in schema_.fields, or -1
  bool has_key_ = false;
  bool olake_columns_ = false;
  bool append_mode_ = false;  // streams.json's append_mode: every change appended, nothing upserted
  std::array<int, 4> olake_fields_ = {-1, -1, -1,
                                      -1};  // _olake_id, _op_type, _cdc_timestamp, _olake_timestamp
  StreamSelection selection_;
  int32_t last_column_id_ = 0;
  std::vector<std::string> initial_columns_;  // the source's columns when the sync started
  std::map<int32_t, int32_t> field_attnums_;  // field id: the source attribute it is written from
  // The last Relation's columns (name, type oid, type modifier): a change means a new schema.
  std::vector<std::pair<std::string, std::pair<uint32_t, int32_t>>> relation_columns_;
  bool reloadable_ = false;
  bool reload_marked_ = false;  // the table has kReloadProperty

  // ---- the change buffer ----
  int64_t change_time_ = 0;  // the commit time of the changes coming in
  std::unordered_map<std::string, size_t> pending_;
  std::vector<Entry> entries_;
  uint64_t pending_bytes_ = 0;
  PgConnection* lookup_ = nullptr;

  // ---- the flush and what the table holds ----
  DeleteKind deletes_ = DeleteKind::kPositionFiles;
  parquet::WriteOptions options_;
  std::string data_location_;
  Position committed_;
  std::unique_ptr<StagedFlush> staged_;
  std::unique_ptr<parquet::DataFileKeyIndex> key_index_;
  uint64_t rows_written_ = 0;
};

// Tables in one commit across tables: a flush touching more commits them in groups this size (each
// table still exact at its own position). serac's catalog takes limits::kCatalogTablesPerTransactionMax.
inline constexpr size_t kSyncTablesPerCommitMax = 100;
// How many times one flush's deletes are found again when commits that moved their rows keep
// landing first (each is a compaction finishing between two attempts).
inline constexpr int kFlushRestagesMax = 2;

// Commits what is pending in `sinks` up to `lsn`: one all-or-nothing commit across the tables
// where the catalog has it (so that a source transaction touching several tables lands in all of
// them at once), else one commit per table.
Status FlushTogether(const std::vector<TableSink*>& sinks, pgoutput::Lsn lsn, iceberg::TableCatalog& catalog);

}  // namespace serac::sync
