// Snapshot producers: the commits that change a table's files, built as Java Iceberg's
// MergingSnapshotProducer builds them, one class for the four kinds of change:
//   append         data files added (operation "append");
//   overwrite      data files removed (by file, or by a row filter: the files all of whose rows
//                  match it, refusing a file only some of whose rows may match) and added
//                  ("overwrite", or "delete" when nothing is added);
//   row delta      data files and delete files added (position deletes, equality deletes, v3
//                  deletion vectors), delete files replaced ("append", "delete" or "overwrite" as
//                  Java names them);
//   replace files  data and delete files rewritten (compaction): the removed files must all still be
//                  live, the added data files may keep the data sequence number of what they
//                  replace so that later deletes still apply to them ("replace").
//
// Each Prepare is one attempt on the table as just loaded: the new files' manifests are written
// once (a retry reuses them); the current snapshot's manifests that hold a removed file are
// rewritten with it marked DELETED (the rest kept as they are); deletion vectors of removed data
// files and delete files older than every live data file go with them; manifests are merged as
// `commit.manifest-merge.enabled`, `commit.manifest.target-size-bytes` and
// `commit.manifest.min-count-to-merge` say (per spec, packed from the end, the bin with the new
// manifest merged only at the minimum count), so the number of manifests stays bounded and the
// cost of a commit grows with what it adds, not with the table. Then the manifest list, the
// summary Java writes (added/removed counts and sizes of data files, position and equality delete
// files and DVs, records, totals, manifest counts) and the catalog's requirements and updates:
// `assert-table-uuid`, `assert-ref-snapshot-id` of main as loaded, `add-snapshot` (sequence
// number, v3 first-row-id and added-rows), `set-snapshot-ref` main.
//
// Conflict validation, against every snapshot committed since the one the change was based on
// (ValidateFromSnapshot; by default the table's current snapshot at the first Prepare), as Java's
// BaseRowDelta, BaseOverwriteFiles and BaseRewriteFiles validate: data files that new position
// deletes or DVs reference must not have been removed; no other DV may have been added for a data
// file this change adds a DV for; files to remove must be live; rewritten data files must not have
// received new deletes (equality deletes excepted when the data sequence number is kept). A failed
// validation is kValidationFailed: retrying cannot help, the change must be redone.
//
// Thread-safety: a producer is used by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/expression/expression.h"
#include "iceberg/io/file_io.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/metadata/table_update.h"

namespace serac::iceberg {

// What a commit sends to the catalog.
struct PreparedCommit {
  TableChanges changes;
  int64_t snapshot_id = 0;
  std::string manifest_list;  // the list this attempt wrote
};

enum class ProducerKind : uint8_t { kAppend, kOverwrite, kRowDelta, kReplaceFiles };

// How manifests are merged (Java's commit.manifest.* table properties and their defaults).
struct ManifestMergeOptions {
  bool enabled = true;                            // commit.manifest-merge.enabled
  int64_t target_size_bytes = 8LL * 1024 * 1024;  // commit.manifest.target-size-bytes
  int32_t min_count_to_merge = 100;               // commit.manifest.min-count-to-merge
  static Result<ManifestMergeOptions> FromTableProperties(
      const std::map<std::string, std::string>& properties);
};

class SnapshotProducer {
 public:
  // `summary` adds entries to the snapshot summary (e.g. a writer's position in its source).
  SnapshotProducer(FileIO& io, ProducerKind kind, std::map<std::string, std::string> summary = {});
  ~SnapshotProducer();
  SnapshotProducer(const SnapshotProducer&) = delete;
  SnapshotProducer& operator=(const SnapshotProducer&) = delete;

  // Files of the table's default partition spec.
  void AddDataFile(DataFile file);
  // Position delete files, equality delete files and DVs (row delta, replace files).
  void AddDeleteFile(DataFile file);
  // A live file to remove, as a manifest listed it (its spec id and partition narrow the manifests
  // read). Data files: overwrite and replace files. Delete files (a DV by path and blob offset):
  // row delta (a DV merged into a new one) and replace files.
  void RemoveDataFile(DataFile file);
  void RemoveDeleteFile(DataFile file);
  // Overwrite by the row filter "true": every live data and delete file goes.
  void RemoveAllFiles();
  // Overwrite by a row filter, bound to the table's schema at each Prepare, as Java's
  // overwriteByRowFilter: data files all of whose rows match go (decided by partition and column
  // metrics, expression.h's FileFilter), and so do delete files all of whose rows match; a data
  // file only some of whose rows may match fails the change with kValidationFailed ("Cannot
  // delete file where some, but not all, rows match filter ..."). With `added_must_match`, every
  // added data file must be shown to hold only matching rows (Java's
  // validateAddedFilesMatchOverwriteFilter), so that the overwrite replaces exactly what it names.
  void RemoveRowsMatching(Expression filter, bool added_must_match);
  // Replace files: the added data files keep this data sequence number (the highest of the files
  // they replace), so deletes committed after those files still apply to the rewritten rows.
  void KeepDataSequenceNumber(int64_t sequence_number);
  // The snapshot the change was based on (what the writer read); nullopt = the table was empty.
  // Unset: the current snapshot at the first Prepare.
  void ValidateFromSnapshot(std::optional<int64_t> snapshot_id);

  // The commit that applies the change to `base`, the table as just loaded. kValidationFailed when
  // a conflicting change has landed since the change's base; kInvalidArgument for a change that
  // is not one (an append with removals, a replace that adds without removing, ...).
  Result<PreparedCommit> Prepare(const TableMetadata& base, int64_t now_ms);

  // Deletes the files no commit uses: every manifest and manifest list written for an attempt that
  // did not land. `committed_list` is the list of the attempt that landed; empty when none did.
  void CleanUp(const std::string& committed_list);

  int64_t snapshot_id() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// A new snapshot id: positive, random, as Java chooses them.
int64_t NewSnapshotId();

// The key a delete file is removed by: its path, and for a DV the blob's offset in it.
std::string ContentFileKey(const DataFile& file);

}  // namespace serac::iceberg
