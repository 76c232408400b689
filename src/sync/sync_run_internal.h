// Private to sync/: what one run's files share (sync_run.cc, full_load.cc, change_applier.cc): a
// selected stream as the run holds it, the progress line and log on stderr, and state.json and
// stats.json. Thread-safety: one run per process; ShowProgress and Log from the run's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync/config.h"
#include "sync/pgoutput.h"
#include "sync/postgres.h"
#include "sync/table_sink.h"

namespace serac::sync {

using Clock = std::chrono::steady_clock;

struct StreamRun {
  const Stream* stream = nullptr;
  SourceTable described;                   // the source table as the run found it
  std::optional<std::string> load_cursor;  // incremental: the cursor's highest value in the load's snapshot
  const StreamSelection* selection = nullptr;
  std::unique_ptr<TableSink> sink;
  uint64_t loaded_rows = 0;
};

// On a terminal, one status line redrawn in place (at most five times a second); otherwise a log
// line every kSyncProgressLogSeconds.
void ShowProgress(const std::string& text);
// A line of the run's log (the status line goes first).
void Log(const std::string& line);
// "12.3 MB".
std::string Megabytes(double bytes);

// state.json in OLake's shape: each stream's table position, the slot and its acknowledged `lsn`.
Status WriteState(const std::string& path, const std::vector<StreamRun>& runs, pgoutput::Lsn lsn,
                  const std::string& slot);
// Every row a run wrote: loaded rows and changes alike, as OLake counts Synced Records.
uint64_t RowsLoaded(const std::vector<StreamRun>& runs);
// OLake's stats.json beside the state file at `state_path`.
Status WriteStats(const std::string& state_path, uint64_t records, double seconds, const std::string& phase);

}  // namespace serac::sync
