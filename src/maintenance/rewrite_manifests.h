// Small manifests rewritten into fewer, as Java's RewriteManifests (and Spark's rewrite_manifests)
// do: the current snapshot's manifests smaller than the target size, per partition spec and content
// (data, deletes), are read and their live entries written again as EXISTING entries (snapshot ids,
// data and file sequence numbers and v3 first row ids kept), clustered by partition, into manifests
// of about the target size; one commit (operation "replace") lists them beside the manifests kept.
// No file changes: every reader plans the same files before and after, with fewer manifests to read.
// The commit asserts main as read, so a commit that landed meanwhile makes it plan again.
// Thread-safety: one call at a time per table; the seams are shared.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/write/table_catalog.h"

namespace serac::maintenance {

struct RewriteManifestsOptions {
  // Manifests below this size are small, and written ones roll over at it; 0: the table's
  // commit.manifest.target-size-bytes (8 MiB by default).
  int64_t target_manifest_bytes = 0;
  // A spec and content's small manifests are rewritten when there are at least this many.
  int32_t min_manifests = 2;
};

struct RewriteManifestsResult {
  int64_t snapshot_id = 0;  // 0: nothing rewritten, nothing committed
  int64_t manifests_rewritten = 0;
  int64_t manifests_written = 0;
  int64_t entries = 0;     // live entries carried over
  int64_t bytes_read = 0;  // sizes of the manifests rewritten
  int64_t bytes_written = 0;
};

Result<RewriteManifestsResult> RewriteManifests(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                                const iceberg::TableRef& table,
                                                const RewriteManifestsOptions& options = {});

}  // namespace serac::maintenance
