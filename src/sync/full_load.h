// The run's loads, before any change is applied: whole tables read by COPY in parallel chunks under
// one snapshot (full_refresh, a cdc table's first load), and incremental streams read from their
// cursor on. Thread-safety: called from the run's thread; LoadTables runs its readers on threads of
// its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync/config.h"
#include "sync/pgoutput.h"
#include "sync/postgres.h"
#include "sync/sync_run_internal.h"

namespace serac::sync {

// Opens `count` reader connections that see `snapshot_name` (empty: a fresh snapshot of their own,
// all taken by one exporting transaction so that every reader sees the same rows).
Result<std::vector<PgConnection>> OpenReaders(const PostgresSource& source, const std::string& snapshot_name,
                                              int32_t count);

// Reads every table of `runs` under the snapshot the readers' connections hold and commits each
// table's files in one commit that replaces what it had, at `lsn`.
Status LoadTables(std::vector<StreamRun*> runs, std::vector<PgConnection>& readers, pgoutput::Lsn lsn,
                  bool mark_loaded);

// "column" or "column:fallback" (OLake's cursor_field) as an SQL expression.
std::string CursorExpression(const Stream& stream);

// incremental: the rows whose cursor is at or past the table's (past it without a key, whose rows
// cannot be upserted), upserted by key, committed with the cursor's new highest value, all read
// in one snapshot.
Status ReadIncrement(const PostgresSource& source, StreamRun& run);

}  // namespace serac::sync
