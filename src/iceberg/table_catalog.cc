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

Result<int64_t> CommitSnapshot(TableCatalog& catalog, const TableRef& table, SnapshotProducer& producer) {
  Status last = Status::Ok();
  bool outcome_unknown = false;
  for (uint32_t attempt = 0; attempt < limits::kTableCommitAttemptsMax; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(1000u, 25u << attempt)));
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

}  // namespace serac::iceberg
