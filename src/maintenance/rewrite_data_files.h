// Compaction, as Java's RewriteDataFiles with the binpack strategy and deletes applied: the small
// data files of each partition, and every file some delete applies to, are read and written again
// as files of the table's target size (sorted by its sort order, when it has one) without the rows
// their deletion vectors, position deletes and equality deletes remove, and swapped in by one
// replace-files commit. The rewritten files take the data sequence number of the snapshot they
// were read from, so deletes committed meanwhile or later still apply to them; the delete files
// that then apply to nothing are dropped in the same commit (DVs go with their data files); and
// the commit fails, with nothing changed, when a file it replaces was removed or got new position
// deletes meanwhile. It runs over the writers' seams (iceberg/io/file_io.h, iceberg/write/table_catalog.h):
// from the command line over S3 and REST, in the server over its own object and commit paths.
//
// The strategy, as S3 Tables names it: `binpack` writes the rows in the order read; `sort` writes
// them in the table's sort order and also rewrites every file not written in that order (its
// sort_order_id), whatever its size, so that each partition ends up sorted; `auto` is `sort` for a
// table with a sort order and `binpack` for one without (so is `sort`). Files of older partition
// specs are always rewritten, into the current spec; files written under older schemas are read by
// field id into the current one (renamed columns by id, added ones null or their initial default).
// Thread-safety: one call at a time per table; the seams are shared.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/write/table_catalog.h"

namespace serac::maintenance {

// How compaction orders the rows it writes: by the table's sort order when it has one (kAuto, kSort)
// or as they come (kBinpack).
enum class CompactionStrategy : uint8_t { kAuto, kBinpack, kSort };

struct RewriteOptions {
  CompactionStrategy strategy = CompactionStrategy::kAuto;
  // A data file below this many bytes is small; 0: three quarters of write.target-file-size-bytes
  // (Java's min-file-size-bytes default).
  int64_t small_file_bytes = 0;
  // A partition is rewritten when it has at least this many small files (Java's min-input-files is
  // 5; two small files already make one fewer).
  int32_t min_input_files = 2;
  // The size files are written at; 0: the table's write.target-file-size-bytes.
  int64_t target_file_bytes = 0;
  // Files some delete applies to are rewritten without the deleted rows (whatever their size), and
  // the delete files that then apply to nothing are dropped in the same commit. false: such files
  // are left as they are.
  bool apply_deletes = true;
};

// The size below which compaction calls a data file small: `options.small_file_bytes`, else three
// quarters of the size files are written at (`target_file_bytes`, which is the options' when set).
int64_t SmallFileBytes(const RewriteOptions& options, int64_t target_file_bytes);

struct RewriteResult {
  int64_t snapshot_id = 0;  // 0: nothing was rewritten, nothing committed
  int64_t files_rewritten = 0;
  int64_t files_written = 0;
  int64_t bytes_read = 0;  // sizes of the files rewritten
  int64_t bytes_written = 0;
  int64_t rows = 0;
  int64_t partitions = 0;
  int64_t files_skipped_for_deletes = 0;  // small files left because deletes apply (apply_deletes false)
  int64_t rows_deleted = 0;               // deleted rows left out of the rewritten files
  int64_t delete_files_read = 0;          // position and equality delete files read (DVs not counted)
  int64_t delete_files_removed = 0;  // position and equality delete files dropped (DVs go with their files)
};

Result<RewriteResult> RewriteDataFiles(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                       const iceberg::TableRef& table, const RewriteOptions& options = {});

}  // namespace serac::maintenance
