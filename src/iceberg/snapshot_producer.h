// Snapshot producers: the commits that add data to a table, built as Java Iceberg's
// SnapshotProducer builds them. An append writes one manifest of the new data files (once: a retry
// reuses it), then, for the table as it is at each attempt, a manifest list of that manifest and
// the current snapshot's manifests, and the catalog commit: requirements `assert-table-uuid` and
// `assert-ref-snapshot-id` (main as loaded), updates `add-snapshot` (sequence number, summary with
// Java's counters and totals, v3 first-row-id and added-rows) and `set-snapshot-ref` main. Commit
// cost grows with what is added and the number of manifests, never with the number of files.
// Thread-safety: a producer is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/file_io.h"
#include "iceberg/manifest.h"
#include "iceberg/table_metadata.h"

namespace serac::iceberg {

// What a commit sends to the catalog (JSON arrays, as the REST protocol takes them).
struct PreparedCommit {
  std::string requirements_json;
  std::string updates_json;
  int64_t snapshot_id = 0;
  std::string manifest_list;  // the list this attempt wrote
};

class AppendProducer {
 public:
  // `files` are data files of the table's default partition spec. `summary` adds entries to the
  // snapshot summary (e.g. the writer's position in a source).
  AppendProducer(FileIO& io, std::vector<DataFile> files, std::map<std::string, std::string> summary = {});

  // The commit that appends the files to `base`, the table as just loaded. Manifests are written on
  // the first call; each call writes a manifest list for its base.
  Result<PreparedCommit> Prepare(const TableMetadata& base, int64_t now_ms);

  // Deletes the files no commit uses: every manifest list but `committed_list` and, when nothing was
  // committed (empty `committed_list`), the manifests too.
  void CleanUp(const std::string& committed_list);

  int64_t snapshot_id() const { return snapshot_id_; }

 private:
  FileIO& io_;
  std::vector<DataFile> files_;
  std::map<std::string, std::string> summary_;
  int64_t snapshot_id_ = 0;
  std::vector<ManifestFile> new_manifests_;
  std::vector<std::string> lists_written_;
  uint32_t attempt_ = 0;
};

// A new snapshot id: positive, random, as Java chooses them.
int64_t NewSnapshotId();

}  // namespace serac::iceberg
