// The catalog seam of table writers: load a table, commit typed requirements and updates to it
// (iceberg/metadata/table_update.h). The same writer code commits through the REST client
// (client/rest_table_catalog.h: serac or any Iceberg REST catalog, where the changes become JSON)
// or inside the server (catalog/in_process_catalog.cc, where they are applied as they are).
//
// CommitChange is the one commit loop every writer uses: the change is prepared on the table as
// loaded, committed, and after a lost race prepared again on the table as it now is (with backoff,
// at most limits::kTableCommitAttemptsMax times); after an answer that was lost, the change is
// looked for in the table before anything is tried again, so that it is never applied twice.
// Thread-safety: implementations may be shared by threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/metadata/table_update.h"
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
  virtual Status CommitTable(const TableRef& table, const TableChanges& changes) = 0;

  // Several tables' commits applied all or nothing (the REST catalog's transactions/commit).
  struct TableChange {
    TableRef table;
    TableChanges changes;
  };
  virtual bool CommitsAcrossTables() const { return false; }
  // Errors as CommitTable's; kNotImplemented where CommitsAcrossTables() is false.
  virtual Status CommitTables(const std::vector<TableChange>& changes);
};

// The pause before commit attempt `attempt` (from 1) after a lost race: 50 ms doubling to 1 s.
void BackOffBeforeAttempt(uint32_t attempt);

// A change to one table that can be made again on the table as it now is: what CommitChange asks
// of a writer.
class ChangeMaker {
 public:
  virtual ~ChangeMaker() = default;
  // The changes to commit to `base`, the table as just loaded (called again after every lost
  // race). No updates: there is nothing to commit, and the loop ends at once. kValidationFailed
  // when the change can no longer be made on this table (CommitChanges reports which).
  virtual Result<TableChanges> Prepare(const TableMetadata& base, int64_t now_ms) = 0;
  // Whether the change last prepared is in `table` (asked after an answer was lost).
  virtual bool Landed(const TableMetadata& table) const = 0;
  // The loop is over: `landed` says whether the change last prepared was committed, so that the
  // files of attempts that were not can go. Not called while the outcome stays unknown
  // (kOutcomeUnknown: what was written may be referenced).
  virtual void Finish(bool landed) = 0;
};

// Commits the change made by `maker` to `table`.
Status CommitChange(TableCatalog& catalog, const TableRef& table, ChangeMaker& maker);

// CommitChange for several tables in one all-or-nothing commit (CommitsAcrossTables() must hold):
// every table loaded and every change prepared again after a lost race. A Prepare that fails
// with kValidationFailed sets `*failed` to its index.
struct TableChangeOf {
  TableRef table;
  ChangeMaker* maker = nullptr;
};
Status CommitChanges(TableCatalog& catalog, const std::vector<TableChangeOf>& changes, size_t* failed);

// The ChangeMaker of a snapshot producer: its change prepared on each attempt, found by its
// snapshot id after a lost answer, and the files of attempts that did not land deleted.
class SnapshotChange : public ChangeMaker {
 public:
  explicit SnapshotChange(SnapshotProducer& producer) : producer_(producer) {}
  Result<TableChanges> Prepare(const TableMetadata& base, int64_t now_ms) override;
  bool Landed(const TableMetadata& table) const override;
  void Finish(bool landed) override;

 private:
  SnapshotProducer& producer_;
  std::string manifest_list_;  // of the attempt last prepared
};

// Commits the producer's change; the id of the snapshot that landed.
Result<int64_t> CommitSnapshot(TableCatalog& catalog, const TableRef& table, SnapshotProducer& producer);

// CommitSnapshot for several tables in one all-or-nothing commit (CommitChanges over each
// producer's SnapshotChange).
struct TableSnapshotChange {
  TableRef table;
  SnapshotProducer* producer = nullptr;
};
Status CommitSnapshots(TableCatalog& catalog, const std::vector<TableSnapshotChange>& changes,
                       size_t* failed);

}  // namespace serac::iceberg
