// ChangeApplier: the decoded pgoutput messages of the slot's stream applied to the tables' sinks —
// transactions opened and closed, streamed ones kept on disk until they commit, flushes decided,
// committed across tables and acknowledged to the slot, and the progress line kept up to date.
// sync_run.cc's StreamChanges reads the messages and hands them over. Thread-safety: one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/write/table_catalog.h"
#include "sync/config.h"
#include "sync/pgoutput.h"
#include "sync/postgres.h"
#include "sync/replication.h"
#include "sync/streamed_transactions.h"
#include "sync/sync_run.h"
#include "sync/sync_run_internal.h"
#include "sync/table_sink.h"

namespace serac::sync {

class ChangeApplier {
 public:
  // Applies to the cdc and strict_cdc tables of `runs`, reading unchanged TOAST values and the
  // source's columns through `lookup`. Without `follow`, the run ends at `target` (the source's
  // position when streaming started).
  ChangeApplier(const PostgresSource::Replication& replication, ReplicationStream& stream,
                std::vector<StreamRun>& runs, iceberg::TableCatalog& catalog, PgConnection& lookup,
                const std::string& state_path, bool follow, Clock::time_point run_started,
                pgoutput::Lsn target);

  // Between transactions, a table waits to be loaded again (TableSink::needs_reload): the stream
  // stops here and the run starts over.
  bool stops_for_reload() const { return !in_transaction_ && ReloadNeeded(); }
  // How long to wait for the next message. With changes pending, a short quiet spell is enough to
  // commit them (the lag stays small); with none, the wait only bounds how soon a stop is noticed.
  std::chrono::milliseconds wait() const {
    return std::chrono::milliseconds(pending_changes_ > 0 ? kSyncQuietFlushMs : 200);
  }

  // No message came for wait(): between transactions, what is pending is committed and the server
  // asked how far it is. True once everything up to the target is applied (never while following).
  Result<bool> OnQuiet();
  // A message as `frame` brought it.
  Status OnMessage(const ReplicationStream::Frame& frame, const pgoutput::Message& message);
  // The stream ends (caught up, asked to stop, or a table to load again): between transactions,
  // what is applied is committed and acknowledged and the tables take the source's columns as they
  // are now. True when a table needs loading again: the run starts over.
  Result<bool> Finish();

 private:
  // ---- transactions ----
  void OnBegin(pgoutput::Lsn commit_lsn, int64_t commit_time);
  Status OnCommit(pgoutput::Lsn end_lsn, int64_t commit_time);
  // A message of a transaction (sent at its commit, or replayed at the end of a streamed one).
  Status Apply(const pgoutput::Message& message);

  // ---- changes, each to its table's sink ----
  Status OnRelation(const pgoutput::Relation& relation);
  Status OnInsert(const pgoutput::Insert& insert);
  Status OnUpdate(const pgoutput::Update& update);
  Status OnDelete(const pgoutput::Delete& deleted);
  Status OnTruncate(const pgoutput::Truncate& truncate);
  // The sink of a relation's changes in the open transaction; null when none takes them.
  TableSink* SinkOf(uint32_t relation);

  // ---- flushes and acknowledgement ----
  // Every table written in one commit (a source transaction lands in all its tables at once), the
  // slot acknowledged up to `lsn`, state.json and stats.json written.
  Status FlushAndAcknowledge(pgoutput::Lsn lsn);
  // A transaction too large to hold is committed in parts.
  Status FlushLargeTransaction();
  uint64_t PendingBytes() const;
  bool ReloadNeeded() const;

  // ---- progress ----
  void ShowLag(pgoutput::Lsn received);

  std::string slot_;
  ReplicationStream& stream_;
  std::vector<StreamRun>& runs_;
  iceberg::TableCatalog& catalog_;
  PgConnection& lookup_;
  std::string state_path_;
  bool follow_;
  Clock::time_point run_started_;
  pgoutput::Lsn target_;

  StreamedTransactions streamed_;
  bool in_stream_block_ = false;
  uint32_t stream_xid_ = 0;                    // the transaction whose stream block is open
  std::map<std::string, TableSink*> by_name_;  // "schema.table": the sinks of the changing tables
  std::map<uint32_t, TableSink*> relations_;   // relation oid: its sink (null: not synced)
  std::vector<TableSink*> sinks_;
  bool in_transaction_ = false;
  pgoutput::Lsn transaction_lsn_ = 0;  // the open transaction's commit record
  pgoutput::Lsn applied_end_ = 0;      // the end of the last transaction received whole
  int64_t last_commit_time_ = 0;  // the last transaction received whole: its commit time (PostgreSQL's clock)
  uint64_t changes_ = 0;
  uint64_t pending_changes_ = 0;
  Clock::time_point first_pending_ = Clock::now();
  Clock::time_point last_keepalive_request_ = Clock::now();
};

}  // namespace serac::sync
