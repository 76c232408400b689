// The catalog seam of table writers: load a table, commit requirements and updates to it. The
// same producer code commits through the REST client (client/rest_table_catalog.h: serac or any
// Iceberg REST catalog) or inside the server (catalog/), and CommitSnapshot is the one commit loop
// both use: prepare on the table as loaded, commit, prepare again after a lost race (with backoff,
// at most limits::kTableCommitAttemptsMax times), and after an answer that was lost, look for the
// snapshot before trying again, so that a change is never applied twice.
// Thread-safety: implementations may be shared by threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/write/snapshot_producer.h"

namespace serac::iceberg {

struct TableRef {
  std::vector<std::string> namespace_levels;
  std::string name;
  std::string DisplayName() const;  // "a.b.table"
};

class TableCatalog {
 public:
  virtual ~TableCatalog() = default;
  // kNotFound when the table does not exist.
  virtual Result<TableMetadata> LoadTable(const TableRef& table) = 0;
  // kConflict when a requirement fails (the table changed), kOutcomeUnknown when the answer was
  // lost, kUnavailable when the catalog asks to be tried again later.
  virtual Status CommitTable(const TableRef& table, const std::string& requirements_json,
                             const std::string& updates_json) = 0;

  // Several tables' commits applied all or nothing (the REST catalog's transactions/commit).
  struct TableChange {
    TableRef table;
    std::string requirements_json;
    std::string updates_json;
  };
  virtual bool CommitsAcrossTables() const { return false; }
  // Errors as CommitTable's; kNotImplemented where CommitsAcrossTables() is false.
  virtual Status CommitTables(const std::vector<TableChange>& changes);
};

// The pause before commit attempt `attempt` (from 1) after a lost race: 50 ms doubling to 1 s.
void BackOffBeforeAttempt(uint32_t attempt);

// Commits the producer's change; the id of the snapshot that landed. The producer's unused files
// are deleted unless the outcome stays unknown (kOutcomeUnknown: they may be referenced).
Result<int64_t> CommitSnapshot(TableCatalog& catalog, const TableRef& table, SnapshotProducer& producer);

// CommitSnapshot for several tables in one all-or-nothing commit (CommitsAcrossTables() must hold):
// every table loaded and every producer prepared again after a lost race. A producer's validation
// failure (kValidationFailed) sets `*failed` to its index, so that its caller can make that change
// again against the table as it is now.
struct TableSnapshotChange {
  TableRef table;
  SnapshotProducer* producer = nullptr;
};
Status CommitSnapshots(TableCatalog& catalog, const std::vector<TableSnapshotChange>& changes,
                       size_t* failed);

}  // namespace serac::iceberg
