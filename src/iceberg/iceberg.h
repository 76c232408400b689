// The metadata rules of the Iceberg REST catalog as JSON text: table and view metadata (format v1,
// v2, v3), building metadata for create requests, the commit rules (requirements and updates) and
// metadata file naming. These functions do no I/O (the catalog module reads and writes the files
// and swaps pointers; they only decide what the next metadata is), though other parts of this
// module do: manifests, Puffin files and the snapshot producers read and write through FileIO.
//
// This header is the JSON-text form of the same rules, for tests and fuzz targets that speak the
// documents themselves; other modules use the typed values of iceberg/metadata/table_metadata.h (same rules,
// no re-parsing per call).
//
// Errors, each where Java Iceberg raises the exception named: kInvalidArgument = malformed request
// or a rule the client broke (IllegalArgumentException); kValidationFailed = a rule Java's
// TableMetadata.Builder checks with ValidationException; kNotImplemented = an update action or
// requirement type serac does not know (UnsupportedOperationException); kConflict = a requirement no
// longer holds or the client's view is stale (HTTP 409, CommitFailedException; the client reloads
// and retries).
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace serac::iceberg {

struct CommitOptions {
  int64_t now_ms = 0;  // becomes last-updated-ms when the commit changes something
  // Location of the metadata file the current metadata was read from; appended to metadata-log.
  // Empty when there is none (a create).
  std::string previous_metadata_location;
  // Table uuid used when a commit creates a table (stage-create finish) without assign-uuid.
  // Empty: a random one is generated.
  std::string new_table_uuid;
};

struct JsonCommitResult {
  std::string metadata_json;
  bool changed = false;  // false: nothing to write, answer with the current metadata
};

// Table metadata for a CreateTableRequest body (server-assigned ids, format-version from the
// properties, default 2). `location` is the table location the catalog chose.
Result<std::string> CreateTableMetadataJson(std::string_view create_request_json, std::string_view location,
                                            std::string_view table_uuid, int64_t now_ms);

// Applies one table commit. `current_metadata_json` is nullopt when the table does not exist yet
// (finishing a stage-create with assert-create). `requirements_json` / `updates_json` are the JSON
// arrays of the UpdateTableRequest.
Result<JsonCommitResult> CommitTableJson(const std::optional<std::string>& current_metadata_json,
                                         std::string_view requirements_json, std::string_view updates_json,
                                         const CommitOptions& options);

// View metadata for a CreateViewRequest body.
Result<std::string> CreateViewMetadataJson(std::string_view create_request_json, std::string_view location,
                                           std::string_view view_uuid);

// Applies one view commit (assert-view-uuid; view updates) at the server's time `now_ms`.
Result<JsonCommitResult> CommitViewJson(std::string_view current_metadata_json,
                                        std::string_view requirements_json, std::string_view updates_json,
                                        int64_t now_ms);

// "NNNNN-<file_uuid>.metadata.json", NNNNN one more than the number that starts the file name of
// `previous_metadata_location` (00000 when empty or unnumbered).
std::string MetadataFileName(std::string_view previous_metadata_location, std::string_view file_uuid);

}  // namespace serac::iceberg
