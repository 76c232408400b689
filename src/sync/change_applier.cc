// ChangeApplier: a message of the slot's stream to its table's sink (TableSink::Insert, Update,
// Delete, Truncate, SetRelation), and the flushes that commit the sinks and acknowledge the slot.
#include "sync/change_applier.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <variant>

namespace serac::sync {
namespace {

std::string StateDirectory(const std::string& state_path) {
  const std::filesystem::path state_directory = std::filesystem::path(state_path).parent_path();
  return state_directory.empty() ? "." : state_directory.string();
}

}  // namespace

ChangeApplier::ChangeApplier(const PostgresSource::Replication& replication, ReplicationStream& stream,
                             std::vector<StreamRun>& runs, iceberg::TableCatalog& catalog,
                             PgConnection& lookup, const std::string& state_path, bool follow,
                             Clock::time_point run_started, pgoutput::Lsn target)
    : slot_(replication.slot),
      stream_(stream),
      runs_(runs),
      catalog_(catalog),
      lookup_(lookup),
      state_path_(state_path),
      follow_(follow),
      run_started_(run_started),
      target_(target),
      streamed_(StateDirectory(state_path)) {
  for (StreamRun& run : runs_) {
    if (run.stream->sync_mode != SyncMode::kCdc && run.stream->sync_mode != SyncMode::kStrictCdc) continue;
    run.sink->SetLookupConnection(&lookup_);
    by_name_[run.sink->source().namespace_name + "." + run.sink->source().name] = run.sink.get();
  }
  for (StreamRun& run : runs_) sinks_.push_back(run.sink.get());
}

Result<bool> ChangeApplier::OnQuiet() {
  if (!in_transaction_ && pending_changes_ > 0) SERAC_RETURN_IF_ERROR(FlushAndAcknowledge(applied_end_));
  ShowLag(0);
  if (!in_transaction_) {
    const pgoutput::Lsn seen = std::max(applied_end_, stream_.server_wal_end());
    if (!follow_ && seen >= target_) return true;
    // Idle: everything sent so far is applied; ask where the server is.
    if (Clock::now() - last_keepalive_request_ > std::chrono::milliseconds(200)) {
      if (seen > stream_.acknowledged() && pending_changes_ == 0)
        SERAC_RETURN_IF_ERROR(stream_.Acknowledge(seen));
      SERAC_RETURN_IF_ERROR(stream_.RequestKeepalive());
      last_keepalive_request_ = Clock::now();
    }
  }
  return false;
}

Status ChangeApplier::OnMessage(const ReplicationStream::Frame& frame, const pgoutput::Message& message) {
  ShowLag(frame.wal_end);
  if (in_stream_block_) {
    // Inside a stream block: kept until the transaction's end.
    if (std::holds_alternative<pgoutput::StreamStop>(message.body)) {
      in_stream_block_ = false;
    } else {
      SERAC_RETURN_IF_ERROR(streamed_.Append(stream_xid_, message, frame.payload));
    }
  } else if (auto* begin = std::get_if<pgoutput::Begin>(&message.body)) {
    OnBegin(begin->final_lsn, begin->commit_time);
  } else if (auto* commit = std::get_if<pgoutput::Commit>(&message.body)) {
    SERAC_RETURN_IF_ERROR(OnCommit(commit->end_lsn, commit->commit_time));
  } else if (auto* stream_start = std::get_if<pgoutput::StreamStart>(&message.body)) {
    in_stream_block_ = true;
    stream_xid_ = stream_start->xid;
  } else if (auto* stream_abort = std::get_if<pgoutput::StreamAbort>(&message.body)) {
    streamed_.Abort(stream_abort->xid, stream_abort->subtransaction_xid);
  } else if (auto* stream_commit = std::get_if<pgoutput::StreamCommit>(&message.body)) {
    // A streamed transaction ends: applied now, whole, as if it had been sent at its commit.
    OnBegin(stream_commit->commit_lsn, stream_commit->commit_time);
    SERAC_RETURN_IF_ERROR(streamed_.Replay(
        stream_commit->xid, [this](const pgoutput::Message& replayed) { return Apply(replayed); }));
    SERAC_RETURN_IF_ERROR(OnCommit(stream_commit->end_lsn, stream_commit->commit_time));
  } else {
    SERAC_RETURN_IF_ERROR(Apply(message));
  }
  return Status::Ok();
}

Result<bool> ChangeApplier::Finish() {
  if (!in_transaction_ && ReloadNeeded()) {
    // What the other tables have is committed and acknowledged; the run starts over to load it.
    SERAC_RETURN_IF_ERROR(FlushAndAcknowledge(applied_end_));
    return true;
  }
  if (!in_transaction_) {
    SERAC_RETURN_IF_ERROR(FlushAndAcknowledge(std::max(applied_end_, stream_.server_wal_end())));
    // DDL after a table's last change reaches the stream only with its next change: the tables
    // take the source's columns as they are now, every change before now being applied.
    for (StreamRun& run : runs_) {
      if (!by_name_.count(run.sink->source().namespace_name + "." + run.sink->source().name)) continue;
      SERAC_ASSIGN_OR_RETURN(SourceTable now,
                             DescribeTable(lookup_, run.described.namespace_name, run.described.name));
      SERAC_RETURN_IF_ERROR(run.sink->PrepareLoad(now.columns));
    }
    if (ReloadNeeded()) return true;
  }
  char line[256];
  std::snprintf(line, sizeof(line), "applied %llu changes; slot %s acknowledged at %s",
                static_cast<unsigned long long>(changes_), slot_.c_str(),
                pgoutput::LsnToText(stream_.acknowledged()).c_str());
  Log(line);
  return false;
}

// ---- transactions ----

void ChangeApplier::OnBegin(pgoutput::Lsn commit_lsn, int64_t commit_time) {
  in_transaction_ = true;
  transaction_lsn_ = commit_lsn;
  for (StreamRun& run : runs_) run.sink->SetChangeTime(pgoutput::UnixMicrosFromPostgres(commit_time));
}

Status ChangeApplier::OnCommit(pgoutput::Lsn end_lsn, int64_t commit_time) {
  in_transaction_ = false;
  applied_end_ = end_lsn;
  last_commit_time_ = commit_time;
  const bool due = PendingBytes() >= kSyncFlushBytesMax ||
                   Clock::now() - first_pending_ >= std::chrono::milliseconds(kSyncFlushIntervalMs) ||
                   (!follow_ && applied_end_ >= target_);
  if (pending_changes_ > 0 && due) SERAC_RETURN_IF_ERROR(FlushAndAcknowledge(applied_end_));
  return Status::Ok();
}

Status ChangeApplier::Apply(const pgoutput::Message& message) {
  if (auto* relation = std::get_if<pgoutput::Relation>(&message.body)) {
    SERAC_RETURN_IF_ERROR(OnRelation(*relation));
  } else if (auto* insert = std::get_if<pgoutput::Insert>(&message.body)) {
    SERAC_RETURN_IF_ERROR(OnInsert(*insert));
  } else if (auto* update = std::get_if<pgoutput::Update>(&message.body)) {
    SERAC_RETURN_IF_ERROR(OnUpdate(*update));
  } else if (auto* deleted = std::get_if<pgoutput::Delete>(&message.body)) {
    SERAC_RETURN_IF_ERROR(OnDelete(*deleted));
  } else if (auto* truncate = std::get_if<pgoutput::Truncate>(&message.body)) {
    SERAC_RETURN_IF_ERROR(OnTruncate(*truncate));
  }
  return FlushLargeTransaction();
}

// ---- changes, each to its table's sink ----

Status ChangeApplier::OnRelation(const pgoutput::Relation& relation) {
  auto found = by_name_.find(relation.namespace_name + "." + relation.name);
  TableSink* sink = found == by_name_.end() ? nullptr : found->second;
  relations_[relation.oid] = sink;
  if (sink != nullptr) SERAC_RETURN_IF_ERROR(sink->SetRelation(relation));
  return Status::Ok();
}

Status ChangeApplier::OnInsert(const pgoutput::Insert& insert) {
  if (TableSink* sink = SinkOf(insert.relation)) {
    if (pending_changes_ == 0) first_pending_ = Clock::now();
    SERAC_RETURN_IF_ERROR(sink->Insert(insert.row));
    ++pending_changes_;
    ++changes_;
  }
  return Status::Ok();
}

Status ChangeApplier::OnUpdate(const pgoutput::Update& update) {
  if (TableSink* sink = SinkOf(update.relation)) {
    if (pending_changes_ == 0) first_pending_ = Clock::now();
    SERAC_RETURN_IF_ERROR(sink->Update(update));
    ++pending_changes_;
    ++changes_;
  }
  return Status::Ok();
}

Status ChangeApplier::OnDelete(const pgoutput::Delete& deleted) {
  if (TableSink* sink = SinkOf(deleted.relation)) {
    if (pending_changes_ == 0) first_pending_ = Clock::now();
    SERAC_RETURN_IF_ERROR(sink->Delete(deleted));
    ++pending_changes_;
    ++changes_;
  }
  return Status::Ok();
}

Status ChangeApplier::OnTruncate(const pgoutput::Truncate& truncate) {
  for (uint32_t relation : truncate.relations) {
    if (TableSink* sink = SinkOf(relation)) {
      // Changes before the TRUNCATE in this transaction are committed first; the position
      // stays before the transaction until its commit, so a replay truncates again.
      SERAC_RETURN_IF_ERROR(sink->Truncate(sink->committed().lsn));
      ++changes_;
    }
  }
  return Status::Ok();
}

TableSink* ChangeApplier::SinkOf(uint32_t relation) {
  auto found = relations_.find(relation);
  if (found == relations_.end() || found->second == nullptr) return nullptr;
  TableSink* sink = found->second;
  // A table waiting to be loaded again takes none: its load's snapshot has them.
  return sink->Holds(transaction_lsn_) || sink->needs_reload() ? nullptr : sink;
}

// ---- flushes and acknowledgement ----

Status ChangeApplier::FlushAndAcknowledge(pgoutput::Lsn lsn) {
  SERAC_RETURN_IF_ERROR(FlushTogether(sinks_, lsn, catalog_));
  if (lsn > stream_.acknowledged()) SERAC_RETURN_IF_ERROR(stream_.Acknowledge(lsn));
  pending_changes_ = 0;
  SERAC_RETURN_IF_ERROR(WriteState(state_path_, runs_, stream_.acknowledged(), slot_));
  const double seconds = std::chrono::duration<double>(Clock::now() - run_started_).count();
  return WriteStats(state_path_, RowsLoaded(runs_) + changes_, seconds, "cdc");
}

Status ChangeApplier::FlushLargeTransaction() {
  // Its end is recorded only with its commit, so a restart applies it again whole (upserts and
  // deletes by key repeat harmlessly).
  if (in_transaction_ && PendingBytes() >= kSyncFlushBytesMax) {
    for (StreamRun& run : runs_) {
      if (run.sink->has_pending()) SERAC_RETURN_IF_ERROR(run.sink->Flush(run.sink->committed().lsn));
    }
  }
  return Status::Ok();
}

uint64_t ChangeApplier::PendingBytes() const {
  uint64_t bytes = 0;
  for (const StreamRun& run : runs_) bytes += run.sink->pending_bytes();
  return bytes;
}

bool ChangeApplier::ReloadNeeded() const {
  return std::any_of(runs_.begin(), runs_.end(),
                     [](const StreamRun& run) { return run.sink->needs_reload(); });
}

// ---- progress ----

void ChangeApplier::ShowLag(pgoutput::Lsn received) {
  const pgoutput::Lsn server = std::max(received, stream_.server_wal_end());
  const double behind_bytes =
      server > stream_.acknowledged() ? static_cast<double>(server - stream_.acknowledged()) : 0;
  const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  const double behind_seconds =
      last_commit_time_ == 0 || pending_changes_ == 0
          ? 0
          : std::max<double>(
                0,
                static_cast<double>(now_micros - pgoutput::UnixMicrosFromPostgres(last_commit_time_)) / 1e6);
  char line[200];
  std::snprintf(line, sizeof(line), "changes: %llu applied, %s behind the source, %.1f s",
                static_cast<unsigned long long>(changes_), Megabytes(behind_bytes).c_str(), behind_seconds);
  ShowProgress(line);
}

}  // namespace serac::sync
