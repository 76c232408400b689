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

// The one commit loop of CommitChange and CommitChanges: every table loaded and its change
// prepared, the changes committed (one table's through CommitTable, several through CommitTables,
// all or nothing), and after a lost race all of it again; after a lost answer, an attempt that
// landed is found in any one of the tables (all or nothing: then it is in all of them). `display`
// names what is committed in the message of giving up.
Status CommitLoop(TableCatalog& catalog, const std::vector<TableChangeOf>& changes, bool across_tables,
                  const std::string& display, size_t* failed) {
  auto finish_all = [&](bool landed) {
    for (const TableChangeOf& change : changes) change.maker->Finish(landed);
  };
  Status last = Status::Ok();
  bool outcome_unknown = false;
  for (uint32_t attempt = 0; attempt < limits::kTableCommitAttemptsMax; ++attempt) {
    if (attempt > 0) BackOffBeforeAttempt(attempt);
    std::vector<TableCatalog::TableChange> commits;
    bool landed = false;
    bool anything = false;
    Status prepared = Status::Ok();
    for (size_t i = 0; i < changes.size(); ++i) {
      Result<TableMetadata> base = catalog.LoadTable(changes[i].table);
      if (!base.ok()) {
        prepared = base.status();
        break;
      }
      if (outcome_unknown) {
        if (changes[i].maker->Landed(*base)) {
          landed = true;
          break;
        }
        // A lost answer whose change is not there: that attempt did not land (its base is gone
        // or it was refused; all or nothing across tables), so preparing again is safe.
        outcome_unknown = false;
      }
      Result<TableChanges> commit = changes[i].maker->Prepare(*base, ToUnixMillis(Now()));
      if (!commit.ok()) {
        if (commit.status().code() == ErrorCode::kValidationFailed && failed != nullptr) *failed = i;
        prepared = commit.status();
        break;
      }
      anything = anything || !commit->updates.empty();
      commits.push_back({changes[i].table, std::move(commit).value()});
    }
    if (landed) {
      finish_all(true);
      return Status::Ok();
    }
    if (!prepared.ok()) {
      if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, prepared.message());
      finish_all(false);
      return prepared;
    }
    if (!anything) {
      finish_all(false);
      return Status::Ok();
    }
    last = across_tables ? catalog.CommitTables(commits)
                         : catalog.CommitTable(commits[0].table, commits[0].changes);
    if (last.ok()) {
      finish_all(true);
      return Status::Ok();
    }
    const ErrorCode code = last.code();
    if (code == ErrorCode::kOutcomeUnknown) {
      outcome_unknown = true;
      continue;
    }
    if (code != ErrorCode::kConflict && code != ErrorCode::kUnavailable) {
      finish_all(false);
      return last;
    }
  }
  if (outcome_unknown) return Error(ErrorCode::kOutcomeUnknown, last.message());
  finish_all(false);
  return Error(ErrorCode::kConflict, display +
                                         " kept changing: gave up after limits::kTableCommitAttemptsMax (" +
                                         std::to_string(limits::kTableCommitAttemptsMax) + ") attempts");
}

}  // namespace

Status CommitChange(TableCatalog& catalog, const TableRef& table, ChangeMaker& maker) {
  return CommitLoop(catalog, {TableChangeOf{table, &maker}}, /*across_tables=*/false,
                    "the table " + table.DisplayName(), nullptr);
}

Status CommitChanges(TableCatalog& catalog, const std::vector<TableChangeOf>& changes, size_t* failed) {
  return CommitLoop(catalog, changes, /*across_tables=*/true, "the tables", failed);
}

Result<TableChanges> SnapshotChange::Prepare(const TableMetadata& base, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(PreparedCommit commit, producer_.Prepare(base, now_ms));
  manifest_list_ = commit.manifest_list;
  return std::move(commit.changes);
}

bool SnapshotChange::Landed(const TableMetadata& table) const {
  // Every attempt has the same snapshot id: the one that landed is the one last prepared.
  return table.FindSnapshot(producer_.snapshot_id()).has_value();
}

void SnapshotChange::Finish(bool landed) { producer_.CleanUp(landed ? manifest_list_ : ""); }

Result<int64_t> CommitSnapshot(TableCatalog& catalog, const TableRef& table, SnapshotProducer& producer) {
  SnapshotChange change(producer);
  SERAC_RETURN_IF_ERROR(CommitChange(catalog, table, change));
  return producer.snapshot_id();
}

Status CommitSnapshots(TableCatalog& catalog, const std::vector<TableSnapshotChange>& changes,
                       size_t* failed) {
  std::vector<SnapshotChange> made;
  made.reserve(changes.size());
  std::vector<TableChangeOf> of;
  for (const TableSnapshotChange& change : changes) {
    made.emplace_back(*change.producer);
    of.push_back({change.table, &made.back()});
  }
  return CommitChanges(catalog, of, failed);
}

}  // namespace serac::iceberg
