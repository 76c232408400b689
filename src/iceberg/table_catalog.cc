#include "iceberg/table_catalog.h"

#include <algorithm>
#include <chrono>
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

Result<int64_t> CommitSnapshot(TableCatalog& catalog, const TableRef& table, SnapshotProducer& producer) {
  Status last = Status::Ok();
  bool outcome_unknown = false;
  for (uint32_t attempt = 0; attempt < limits::kTableCommitAttemptsMax; ++attempt) {
    if (attempt > 0) BackOffBeforeAttempt(attempt);
    Result<TableMetadata> base = catalog.LoadTable(table);
    if (!base.ok()) {
      if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, base.status().message());
      producer.CleanUp("");
      return base.status();
    }
    if (std::optional<Snapshot> landed = base->FindSnapshot(producer.snapshot_id())) {
      producer.CleanUp(landed->manifest_list);  // an earlier attempt whose answer was lost did land
      return producer.snapshot_id();
    }
    // A lost answer whose snapshot is not there: that attempt did not land (its base is gone or
    // it was refused), so preparing again is safe.
    outcome_unknown = false;
    Result<PreparedCommit> commit = producer.Prepare(*base, ToUnixMillis(Now()));
    if (!commit.ok()) {
      producer.CleanUp("");
      return commit.status();
    }
    last = catalog.CommitTable(table, commit->requirements_json, commit->updates_json);
    if (last.ok()) {
      producer.CleanUp(commit->manifest_list);
      return commit->snapshot_id;
    }
    const ErrorCode code = last.code();
    if (code == ErrorCode::kOutcomeUnknown) {
      outcome_unknown = true;
      continue;
    }
    if (code != ErrorCode::kConflict && code != ErrorCode::kUnavailable) {
      producer.CleanUp("");
      return last;
    }
  }
  if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, last.message());
  producer.CleanUp("");
  return Error(ErrorCode::kConflict, "the table " + table.DisplayName() +
                                         " kept changing: gave up after limits::kTableCommitAttemptsMax (" +
                                         std::to_string(limits::kTableCommitAttemptsMax) + ") attempts");
}

Status CommitSnapshots(TableCatalog& catalog, const std::vector<TableSnapshotChange>& changes,
                       size_t* failed) {
  auto clean_up_all = [&] {
    for (const TableSnapshotChange& change : changes) change.producer->CleanUp("");
  };
  Status last = Status::Ok();
  bool outcome_unknown = false;
  for (uint32_t attempt = 0; attempt < limits::kTableCommitAttemptsMax; ++attempt) {
    if (attempt > 0) BackOffBeforeAttempt(attempt);
    std::vector<TableCatalog::TableChange> commits;
    std::vector<std::string> manifest_lists;
    bool landed = false;
    Status prepared = Status::Ok();
    for (size_t i = 0; i < changes.size() && prepared.ok(); ++i) {
      Result<TableMetadata> base = catalog.LoadTable(changes[i].table);
      if (!base.ok()) {
        prepared = base.status();
        break;
      }
      // The commit is all or nothing: one table holding its snapshot means an earlier attempt
      // whose answer was lost landed whole.
      if (std::optional<Snapshot> snapshot = base->FindSnapshot(changes[i].producer->snapshot_id())) {
        landed = true;
        break;
      }
      outcome_unknown = false;  // one table without it: that attempt did not land (all or nothing)
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
      for (const TableSnapshotChange& change : changes) {
        Result<TableMetadata> base = catalog.LoadTable(change.table);
        std::optional<Snapshot> snapshot =
            base.ok() ? base->FindSnapshot(change.producer->snapshot_id()) : std::nullopt;
        change.producer->CleanUp(snapshot ? snapshot->manifest_list : "");
      }
      return Status::Ok();
    }
    if (!prepared.ok()) {
      if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, prepared.message());
      clean_up_all();
      return prepared;
    }
    last = catalog.CommitTables(commits);
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
  return Error(ErrorCode::kConflict,
               "the tables kept changing: gave up after limits::kTableCommitAttemptsMax (" +
                   std::to_string(limits::kTableCommitAttemptsMax) + ") attempts");
}

}  // namespace serac::iceberg
