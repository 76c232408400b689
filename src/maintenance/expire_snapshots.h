// Snapshot expiry, as Java's ExpireSnapshots (RemoveSnapshots with its reachable-file cleanup):
// each branch keeps its newest `min_snapshots_to_keep` ancestors and every ancestor younger than
// the age limit, a tag keeps the snapshot it points at, a snapshot no ref reaches stays while it is
// younger than the age limit, and branches and tags older than their `max_ref_age_ms` go (never
// main). A branch's or tag's own retention settings win over the job's. The snapshots that are left
// are removed in one commit that asserts every ref as it was planned (a ref moved meanwhile makes
// the job plan again), and only then are the files that no remaining snapshot reaches deleted:
// the expired snapshots' manifest lists, their manifests that no remaining snapshot lists, and
// the data and delete files of those manifests that no remaining manifest holds live, and the
// statistics files the removed snapshots had. A crash
// between the commit and the deletes leaves unreferenced files (the unreferenced-file job's work),
// never a table that names a missing one.
//
// Thread-safety: one call at a time per table; the seams are shared.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/write/table_catalog.h"

namespace serac::maintenance {

// Unset values come from the table's properties (history.expire.max-snapshot-age-ms, default five
// days; history.expire.min-snapshots-to-keep, default 1; history.expire.max-ref-age-ms, default
// forever), as Java reads them.
struct ExpireOptions {
  std::optional<int64_t> max_snapshot_age_ms;
  std::optional<int32_t> min_snapshots_to_keep;
  std::optional<int64_t> max_ref_age_ms;
  // Expired whatever their age, as Java's expireSnapshotId (Spark's expire_snapshots snapshot_ids):
  // kInvalidArgument for the head of a branch or tag (the current snapshot among them), kNotFound
  // for an id the table does not have.
  std::vector<int64_t> snapshot_ids;
  int64_t now_ms = 0;        // 0: the clock's now
  bool delete_files = true;  // false: only the commit (the files stay for the unreferenced-file job)
};

struct ExpireResult {
  int64_t snapshots_removed = 0;  // 0: nothing expired, nothing committed
  int64_t refs_removed = 0;
  int64_t manifest_lists_deleted = 0;
  int64_t manifests_deleted = 0;
  int64_t data_files_deleted = 0;
  int64_t delete_files_deleted = 0;
  int64_t statistics_files_deleted = 0;
  int64_t bytes_deleted = 0;  // as the manifests and manifest lists record the files' sizes
  int64_t files_read = 0;     // manifest lists and manifests read to find what to delete
  int64_t bytes_read = 0;
};

// kFailedPrecondition when the table has gc.enabled=false (its files may be another table's).
Result<ExpireResult> ExpireSnapshots(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                     const iceberg::TableRef& table, const ExpireOptions& options = {});

}  // namespace serac::maintenance
