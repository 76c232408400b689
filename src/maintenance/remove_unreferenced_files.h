// Unreferenced-file removal, as Java's DeleteOrphanFiles and S3 Tables' job of that name: every
// object under a table's location that no metadata of the table reaches, and that is old enough,
// is deleted. Reached: the current metadata file and every one its metadata log names, every
// snapshot's manifest list, the manifests those list, every file any of their entries names (live
// or deleted: a conservative reading), and the statistics files the metadata names. The listing
// comes first and the metadata is read after it, so a file a commit references by then is seen as
// reached; the age limit keeps the files of writes not committed yet (a writer uploads before it
// commits). Metadata files dropped from the metadata log were current once and go after
// `non_current_older_than_ms`; any other unreferenced file after `unreferenced_older_than_ms`.
// When any manifest list or manifest cannot be read, nothing is deleted; a table with
// gc.enabled=false is refused (kValidationFailed), as Java refuses it.
// Thread-safety: one call at a time per table; the seams are shared.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/write/table_catalog.h"

namespace serac::maintenance {

struct ListedFile {
  std::string location;  // as the table names its files ("s3://bucket/key")
  int64_t size = 0;
  int64_t modified_ms = 0;
};
// Every file whose location starts with `prefix` (a table's location and "/").
using ListFiles = std::function<Result<std::vector<ListedFile>>(const std::string& prefix)>;

struct UnreferencedOptions {
  int64_t now_ms = 0;                      // 0: the clock's now
  int64_t unreferenced_older_than_ms = 0;  // age an unreferenced file must reach to be deleted
  int64_t non_current_older_than_ms = 0;   // the same for metadata files dropped from the log
};

struct UnreferencedResult {
  int64_t files_listed = 0;
  int64_t files_reached = 0;
  int64_t files_removed = 0;
  int64_t bytes_removed = 0;
  int64_t files_kept_young = 0;  // unreferenced, but younger than their limit
  int64_t files_read = 0;        // manifest lists and manifests read
  int64_t bytes_read = 0;
};

// `current_metadata_location`: the table's current metadata file (the catalog's pointer).
Result<UnreferencedResult> RemoveUnreferencedFiles(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                                   const iceberg::TableRef& table,
                                                   const std::string& current_metadata_location,
                                                   const ListFiles& list_files,
                                                   const UnreferencedOptions& options);

}  // namespace serac::maintenance
