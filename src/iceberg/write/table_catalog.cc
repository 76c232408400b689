#include "iceberg/write/table_catalog.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "common/clock.h"
#include "common/limits.h"

namespace serac::iceberg {

std::string TableRef::DisplayName() const {
  std::string text;
  for (const std::string& level : namespace_levels) text += level + ".";
  return text + name;
}

Status TableCatalog::CommitTables(const std::vector<TableChange>&) {
  return Error(ErrorCode::kNotImplemented, "this catalog commits one table at a time");
}

void BackOffBeforeAttempt(uint32_t attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000u, 25u << std::min(attempt, 10u))));
}

namespace {

// The one commit loop of CommitSnapshot and CommitSnapshots: every table loaded and its producer
// prepared, the changes committed (one table's through CommitTable, several through CommitTables,
// all or nothing), and after a lost race all of it again; after a lost answer, an attempt that
// landed is found by its snapshot in any one of the tables (all or nothing: then in all of them).
// `display` names what is committed in the message of giving up.
Status CommitLoop(TableCatalog& catalog, const std::vector<TableSnapshotChange>& changes, bool across_tables,
                  const std::string& display, size_t* failed) {
  auto clean_up_all = [&] {
    for (const TableSnapshotChange& change : changes) change.producer->CleanUp("");
  };
  Status last = Status::Ok();
  bool outcome_unknown = false;
  for (uint32_t attempt = 0; attempt < limits::kTableCommitAttemptsMax; ++attempt) {
    if (attempt > 0) BackOffBeforeAttempt(attempt);
    std::vector<TableCatalog::TableChange> commits;
    std::vector<std::string> manifest_lists;
    std::optional<size_t> landed;  // a table holding its snapshot: an earlier attempt landed
    std::string landed_list;
    Status prepared = Status::Ok();
    for (size_t i = 0; i < changes.size(); ++i) {
      Result<TableMetadata> base = catalog.LoadTable(changes[i].table);
      if (!base.ok()) {
        prepared = base.status();
        break;
      }
      if (std::optional<Snapshot> snapshot = base->FindSnapshot(changes[i].producer->snapshot_id())) {
        landed = i;
        landed_list = snapshot->manifest_list;
        break;
      }
      // A lost answer whose snapshot is not there: that attempt did not land (its base is gone or
      // it was refused; all or nothing across tables), so preparing again is safe.
      outcome_unknown = false;
      Result<PreparedCommit> commit = changes[i].producer->Prepare(*base, ToUnixMillis(Now()));
      if (!commit.ok()) {
        if (commit.status().code() == ErrorCode::kValidationFailed && failed != nullptr) *failed = i;
        prepared = commit.status();
        break;
      }
      commits.push_back({changes[i].table, commit->requirements_json, commit->updates_json});
      manifest_lists.push_back(commit->manifest_list);
    }
    if (landed) {
      for (size_t i = 0; i < changes.size(); ++i) {
        if (i == *landed) {
          changes[i].producer->CleanUp(landed_list);
          continue;
        }
        Result<TableMetadata> base = catalog.LoadTable(changes[i].table);
        std::optional<Snapshot> snapshot =
            base.ok() ? base->FindSnapshot(changes[i].producer->snapshot_id()) : std::nullopt;
        changes[i].producer->CleanUp(snapshot ? snapshot->manifest_list : "");
      }
      return Status::Ok();
    }
    if (!prepared.ok()) {
      if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, prepared.message());
      clean_up_all();
      return prepared;
    }
    last = across_tables
               ? catalog.CommitTables(commits)
               : catalog.CommitTable(commits[0].table, commits[0].requirements_json, commits[0].updates_json);
    if (last.ok()) {
      for (size_t i = 0; i < changes.size(); ++i) changes[i].producer->CleanUp(manifest_lists[i]);
      return Status::Ok();
    }
    const ErrorCode code = last.code();
    if (code == ErrorCode::kOutcomeUnknown) {
      outcome_unknown = true;
      continue;
    }
    if (code != ErrorCode::kConflict && code != ErrorCode::kUnavailable) {
      clean_up_all();
      return last;
    }
  }
  if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, last.message());
  clean_up_all();
  return Error(ErrorCode::kConflict, display +
                                         " kept changing: gave up after limits::kTableCommitAttemptsMax (" +
                                         std::to_string(limits::kTableCommitAttemptsMax) + ") attempts");
}

}  // namespace

Result<int64_t> CommitSnapshot(TableCatalog& catalog, const TableRef& table, SnapshotProducer& producer) {
  SERAC_RETURN_IF_ERROR(CommitLoop(catalog, {TableSnapshotChange{table, &producer}}, /*across_tables=*/false,
                                   "the table " + table.DisplayName(), nullptr));
  return producer.snapshot_id();
}

Status CommitSnapshots(TableCatalog& catalog, const std::vector<TableSnapshotChange>& changes,
                       size_t* failed) {
  return CommitLoop(catalog, changes, /*across_tables=*/true, "the tables", failed);
}

}  // namespace serac::iceberg
