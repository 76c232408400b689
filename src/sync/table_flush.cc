// TableSink's flush: the pending rows written as data files, the rows earlier commits wrote for
// their keys removed (equality deletes, position deletes or DVs), and the commit that carries the
// sink's position in its summary; also the commits that replace the table (a load, a TRUNCATE).
#include <algorithm>
#include <chrono>
#include <set>

#include "iceberg/scan/table_files.h"
#include "sync/pg_values.h"
#include "sync/table_sink.h"

namespace serac::sync {

Status TableSink::Flush(pgoutput::Lsn lsn) {
  // Nothing pending: the table's position moves with its next commit that has something (a
  // restart resumes at the slot's acknowledged position, which covers the changes in between).
  if (entries_.empty()) return Status::Ok();
  SERAC_RETURN_IF_ERROR(StageFlush(lsn));
  const iceberg::TableChangeOf change = staged_change();
  Status committed = iceberg::CommitChange(*targets_.catalog, ref_, *change.maker);
  if (!committed.ok()) {
    committed = Error(committed.code(), "committing to " + name() + ": " + committed.message());
  }
  EndStagedFlush(committed);
  return committed;
}

Status TableSink::StageFlush(pgoutput::Lsn lsn) {
  // Every key touched: the rows earlier commits wrote with it go.
  std::vector<parquet::Row> keys;
  for (const Entry& entry : entries_) {
    // An insert into a table without a key, and any row in append mode, deletes nothing.
    if ((!has_key_ || append_mode_) && entry.row) continue;
    parquet::Row key(key_schema_.fields.size());
    for (size_t k = 0; k < key_fields_.size(); ++k) {
      std::optional<std::string_view> text;
      if (entry.key[k]) text = *entry.key[k];
      SERAC_ASSIGN_OR_RETURN(key[k], ValueFromText(text, key_schema_.fields[k].type));
    }
    keys.push_back(std::move(key));
  }
  std::optional<parquet::RowKeys> position_keys;
  if (deletes_ != DeleteKind::kEquality && !keys.empty()) {
    SERAC_ASSIGN_OR_RETURN(position_keys, parquet::RowKeys::FromRows(key_schema_, keys));
  }
  staged_ = std::make_unique<StagedFlush>();
  staged_->lsn = lsn;
  staged_->position_keys = std::move(position_keys);
  Status staged = Status::Ok();
  Result<std::vector<iceberg::DataFile>> data = WritePendingRows();
  if (data.ok()) {
    staged_->files.data = std::move(data).value();
    if (deletes_ == DeleteKind::kEquality) {
      Result<std::vector<iceberg::DataFile>> deletes =
          keys.empty() ? std::vector<iceberg::DataFile>() : WriteEqualityDeletes(keys);
      if (deletes.ok()) staged_->files.deletes = std::move(deletes).value();
      staged = deletes.status();
    }
  } else {
    staged = data.status();
  }
  if (staged.ok()) {
    Result<iceberg::TableMetadata> table = targets_.catalog->LoadTable(ref_);
    staged = table.ok() ? RestageFlush(*table) : table.status();
  }
  if (!staged.ok()) EndStagedFlush(staged);
  return staged;
}

Result<std::vector<iceberg::DataFile>> TableSink::WritePendingRows() {
  const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  SERAC_ASSIGN_OR_RETURN(parquet::DataFileWriter writer, NewLoadWriter());
  std::vector<parquet::Row> rows;
  uint64_t written = 0;
  auto write_rows = [&]() -> Status {
    SERAC_RETURN_IF_ERROR(writer.AppendRows(rows, name(), static_cast<int64_t>(written) + 1));
    written += rows.size();
    rows.clear();
    return Status::Ok();
  };
  Status status = Status::Ok();
  for (Entry& entry : entries_) {
    if (!entry.row) continue;
    status = FillUnchanged(entry);
    if (!status.ok()) break;
    parquet::Row row(schema_.fields.size());
    for (size_t f = 0; f < schema_.fields.size(); ++f) {
      std::optional<std::string_view> text;
      if ((*entry.row)[f]) text = *(*entry.row)[f];
      Result<parquet::RowValue> value = ValueFromText(text, schema_.fields[f].type);
      if (!value.ok()) {
        status = Error(value.status().code(), source_.namespace_name + "." + source_.name + ": column " +
                                                  schema_.fields[f].name + ": " + value.status().message());
        break;
      }
      row[f] = std::move(value).value();
    }
    if (!status.ok()) break;
    if (olake_columns_) FillOlakeColumns(entry, row, now_micros);
    rows.push_back(std::move(row));
    if (rows.size() >= 4096) {
      status = write_rows();
      if (!status.ok()) break;
    }
  }
  if (status.ok() && !rows.empty()) status = write_rows();
  Result<std::vector<iceberg::DataFile>> files =
      status.ok() ? writer.Finish() : Result<std::vector<iceberg::DataFile>>(status);
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  rows_written_ += written;
  return files;
}

Result<std::vector<iceberg::DataFile>> TableSink::WriteEqualityDeletes(
    const std::vector<parquet::Row>& keys) {
  SERAC_ASSIGN_OR_RETURN(
      parquet::DataFileWriter writer,
      parquet::DataFileWriter::Make(key_schema_, spec_, options_, *targets_.io, data_location_));
  Status appended = writer.AppendRows(keys, name() + " (deleted keys)", 1);
  Result<std::vector<iceberg::DataFile>> files =
      appended.ok() ? writer.Finish() : Result<std::vector<iceberg::DataFile>>(appended);
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  std::vector<int32_t> ids;
  for (const iceberg::NestedField& field : key_schema_.fields) ids.push_back(field.id);
  for (iceberg::DataFile& file : *files) {
    file.content = iceberg::FileContent::kEqualityDeletes;
    file.equality_ids = ids;
    file.sort_order_id.reset();
  }
  return files;
}

Status TableSink::RestageFlush(const iceberg::TableMetadata& table) {
  if (deletes_ != DeleteKind::kEquality) SERAC_RETURN_IF_ERROR(FindPositionDeletes(table));
  staged_->producer = MakeProducer(staged_->files, staged_->lsn, false, staged_->validate_from);
  return Status::Ok();
}

Status TableSink::FindPositionDeletes(const iceberg::TableMetadata& table) {
  // The rows are found in the table as it is now; a commit that lands between (a compaction that
  // rewrote a file the deletes point into) fails validation, and the rows are found again.
  for (const iceberg::DataFile& file : staged_->files.deletes) (void)targets_.io->Delete(file.file_path);
  staged_->files.deletes.clear();
  staged_->files.replaced.clear();
  const std::optional<iceberg::Snapshot> current = table.CurrentSnapshot();
  staged_->validate_from = current ? std::optional<int64_t>(current->snapshot_id) : std::nullopt;
  if (!staged_->position_keys) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(iceberg::TableFiles live, iceberg::ReadTableFiles(*targets_.io, current));
  if (key_index_ != nullptr) {
    // Index files of data files a compaction or a load replaced go.
    std::set<std::string> live_paths;
    for (const iceberg::LiveFile& data : live.data) live_paths.insert(data.file.file_path);
    key_index_->Retain(live_paths);
  }
  SERAC_ASSIGN_OR_RETURN(parquet::RowDeletes deletes,
                         parquet::DeleteRowsByKey(*targets_.io, *staged_->position_keys, live,
                                                  deletes_ == DeleteKind::kDeletionVectors
                                                      ? parquet::PositionDeletes::kDeletionVectors
                                                      : parquet::PositionDeletes::kFiles,
                                                  options_, data_location_, key_index_.get()));
  staged_->files.deletes = std::move(deletes.added);
  staged_->files.replaced = std::move(deletes.replaced);
  return Status::Ok();
}

std::unique_ptr<iceberg::SnapshotProducer> TableSink::MakeProducer(
    const ChangeFiles& files, pgoutput::Lsn lsn, bool remove_all,
    std::optional<std::optional<int64_t>> validate_from) {
  std::map<std::string, std::string> summary = {{kSummaryLsn, pgoutput::LsnToText(lsn)},
                                                {kSummaryLoaded, committed_.loaded ? "true" : "false"}};
  if (committed_.cursor) summary[kSummaryCursor] = *committed_.cursor;
  if (change_time_ > 0) summary[kSummarySourceCommitMs] = std::to_string(change_time_ / 1000);
  const bool deletes = !files.deletes.empty() || !files.replaced.empty();
  auto producer = std::make_unique<iceberg::SnapshotProducer>(*targets_.io,
                                                              remove_all ? iceberg::ProducerKind::kOverwrite
                                                              : deletes  ? iceberg::ProducerKind::kRowDelta
                                                                         : iceberg::ProducerKind::kAppend,
                                                              std::move(summary));
  for (const iceberg::DataFile& file : files.data) producer->AddDataFile(file);
  for (const iceberg::DataFile& file : files.deletes) producer->AddDeleteFile(file);
  for (const iceberg::DataFile& file : files.replaced) producer->RemoveDeleteFile(file);
  if (remove_all) producer->RemoveAllFiles();
  if (validate_from) producer->ValidateFromSnapshot(*validate_from);
  return producer;
}

// The restage hook of the commit loop: a producer whose deletes point into files a commit that
// landed first has rewritten (a compaction) fails validation; the rows are then found again in
// the table as the loop loaded it, and the change is prepared anew.
class TableSink::StagedChange final : public iceberg::ChangeMaker {
 public:
  explicit StagedChange(TableSink& sink) : sink_(sink) {}

  Result<iceberg::TableChanges> Prepare(const iceberg::TableMetadata& base, int64_t now_ms) override {
    for (int restages = 0;; ++restages) {
      Result<iceberg::PreparedCommit> commit = staged().producer->Prepare(base, now_ms);
      if (commit.ok()) {
        manifest_list_ = commit->manifest_list;
        return std::move(commit->changes);
      }
      if (commit.status().code() != ErrorCode::kValidationFailed || restages >= kFlushRestagesMax) {
        return commit.status();
      }
      staged().producer->CleanUp("");
      SERAC_RETURN_IF_ERROR(sink_.RestageFlush(base));
    }
  }
  bool Landed(const iceberg::TableMetadata& table) const override {
    return table.FindSnapshot(sink_.staged_->producer->snapshot_id()).has_value();
  }
  void Finish(bool landed) override { staged().producer->CleanUp(landed ? manifest_list_ : ""); }

 private:
  StagedFlush& staged() { return *sink_.staged_; }

  TableSink& sink_;
  std::string manifest_list_;  // of the attempt last prepared
};

TableSink::StagedFlush::~StagedFlush() = default;

iceberg::TableChangeOf TableSink::staged_change() {
  if (!staged_->change) staged_->change = std::make_unique<StagedChange>(*this);
  return {ref_, staged_->change.get()};
}

void TableSink::EndStagedFlush(const Status& committed) {
  if (committed.ok()) {
    committed_.lsn = std::max(committed_.lsn, staged_->lsn);
    entries_.clear();
    pending_.clear();
    pending_bytes_ = 0;
  } else if (committed.code() != ErrorCode::kOutcomeUnknown) {
    DeleteWritten(staged_->files);
  }
  staged_.reset();
}

void TableSink::DeleteWritten(const ChangeFiles& files) {
  for (const iceberg::DataFile& file : files.data) (void)targets_.io->Delete(file.file_path);
  for (const iceberg::DataFile& file : files.deletes) (void)targets_.io->Delete(file.file_path);
}

Status FlushTogether(const std::vector<TableSink*>& sinks, pgoutput::Lsn lsn,
                     iceberg::TableCatalog& catalog) {
  std::vector<TableSink*> pending;
  for (TableSink* sink : sinks) {
    if (sink->has_pending()) pending.push_back(sink);
  }
  if (pending.size() < 2 || !catalog.CommitsAcrossTables()) {
    for (TableSink* sink : pending) SERAC_RETURN_IF_ERROR(sink->Flush(lsn));
    return Status::Ok();
  }
  if (pending.size() > kSyncTablesPerCommitMax) {
    for (size_t first = 0; first < pending.size(); first += kSyncTablesPerCommitMax) {
      const size_t end = std::min(pending.size(), first + kSyncTablesPerCommitMax);
      SERAC_RETURN_IF_ERROR(FlushTogether({pending.begin() + first, pending.begin() + end}, lsn, catalog));
    }
    return Status::Ok();
  }
  size_t staged_count = 0;
  Status committed = Status::Ok();
  for (; staged_count < pending.size() && committed.ok(); ++staged_count) {
    committed = pending[staged_count]->StageFlush(lsn);
  }
  if (!committed.ok()) {
    // The one that failed has ended its flush; the ones staged before it end theirs.
    for (size_t i = 0; i + 1 < staged_count; ++i) pending[i]->EndStagedFlush(committed);
    return committed;
  }
  std::vector<iceberg::TableChangeOf> changes;
  for (TableSink* sink : pending) changes.push_back(sink->staged_change());
  committed = iceberg::CommitChanges(catalog, changes, nullptr);
  if (!committed.ok()) {
    std::string names;
    for (TableSink* sink : pending) names += (names.empty() ? "" : ", ") + sink->name();
    committed = Error(committed.code(), "committing to " + names + ": " + committed.message());
  }
  for (TableSink* sink : pending) sink->EndStagedFlush(committed);
  return committed;
}

Result<parquet::DataFileWriter> TableSink::NewLoadWriter() const {
  return parquet::DataFileWriter::Make(schema_, spec_, options_, *targets_.io, data_location_);
}

Status TableSink::Commit(const ChangeFiles& files, pgoutput::Lsn lsn, bool remove_all,
                         std::optional<std::optional<int64_t>> validate_from) {
  std::unique_ptr<iceberg::SnapshotProducer> producer = MakeProducer(files, lsn, remove_all, validate_from);
  Result<int64_t> snapshot = iceberg::CommitSnapshot(*targets_.catalog, ref_, *producer);
  if (!snapshot.ok()) {
    return Error(snapshot.status().code(), "committing to " + name() + ": " + snapshot.status().message());
  }
  committed_.lsn = std::max(committed_.lsn, lsn);
  return Status::Ok();
}

Status TableSink::CommitLoad(std::vector<iceberg::DataFile> files, pgoutput::Lsn lsn, bool mark_loaded,
                             std::optional<std::string> cursor) {
  const bool was_loaded = committed_.loaded;
  const std::optional<std::string> cursor_before = committed_.cursor;
  committed_.loaded = mark_loaded;
  committed_.cursor = std::move(cursor);
  committed_.lsn = 0;  // the load replaces the table: its position is the load's
  ChangeFiles load;
  load.data = std::move(files);
  Status committed = Commit(load, lsn, true, std::nullopt);
  if (!committed.ok()) {
    committed_.loaded = was_loaded;
    committed_.cursor = cursor_before;
    if (committed.code() != ErrorCode::kOutcomeUnknown) DeleteWritten(load);
    return committed;
  }
  if (reload_marked_ && mark_loaded) {
    // A crash before this only loads the table once more.
    iceberg::TableChanges unmark;
    unmark.updates.push_back(iceberg::RemoveProperties{{kReloadProperty}});
    SERAC_RETURN_IF_ERROR(targets_.catalog->CommitTable(ref_, unmark));
    reload_marked_ = false;
  }
  return Status::Ok();
}

Status TableSink::CommitCursor(std::string cursor) {
  // Nothing read: the cursor stays where it is (the next run reads from it again).
  if (!has_pending()) return Status::Ok();
  const std::optional<std::string> before = committed_.cursor;
  committed_.cursor = std::move(cursor);
  Status flushed = Flush(committed_.lsn);
  if (!flushed.ok()) committed_.cursor = before;
  return flushed;
}

}  // namespace serac::sync
