// `serac sync --config source.json --streams streams.json --destination destination.json --state
// state.json [--follow]`: one run of the replication. Each selected stream gets its Iceberg table
// (table_sink.h); tables in full_refresh mode are loaded again whole under one snapshot; tables
// in cdc mode are loaded once under the replication slot's exported snapshot (a table added later,
// or whose load was cut short, under a temporary slot's own snapshot), then follow the slot's
// changes; strict_cdc tables only follow changes. The run ends when it has applied everything the
// source had committed when it started (with --follow it keeps going until SIGINT or SIGTERM).
// The slot is acknowledged only up to what every table has committed, so a run killed at any
// moment resumes where the tables are: no change lost, none applied twice. state.json (OLake's
// shape) and stats.json beside it say how far the run is; the tables themselves are the truth.
// Thread-safety: one run per process.
#pragma once

#include <cstdint>
#include <string>

#include "client/rest_catalog.h"
#include "common/status.h"
#include "sync/config.h"

namespace serac::sync {

// Changes kept in memory before a flush commits them, and the longest a change waits for one.
inline constexpr uint64_t kSyncFlushBytesMax = 64ull * 1024 * 1024;
inline constexpr int64_t kSyncFlushIntervalMs = 2000;
// How long the stream may be quiet, with changes pending, before they are committed.
inline constexpr int64_t kSyncQuietFlushMs = 50;
// Away from a terminal, how often a progress line is logged.
inline constexpr int64_t kSyncProgressLogSeconds = 10;
// Rows a full-load reader converts before handing them to its data file writer.
inline constexpr size_t kSyncLoadBatchRows = 4096;
// Heap pages of a table one full-load chunk reads (8 KiB each: 256 MiB).
inline constexpr int64_t kSyncChunkPages = 32768;

struct SyncRunOptions {
  std::string source_path;
  std::string streams_path;
  std::string destination_path;
  std::string state_path;
  bool follow = false;
};

// The REST catalog client's options for destination.json's writer block (its authentication:
// SigV4, OAuth2 client credentials, a bearer token, or none).
client::RestCatalogOptions CatalogOptions(const IcebergDestination& destination);
// `status` as it is, or for a refusal of the destination's credentials, the same naming the file
// and the fields that hold them (writer.aws_access_key and writer.aws_secret_key, ...).
Status NamingCredentials(const IcebergDestination& config, const Status& status);

// Runs one sync; progress lines go to stderr. The error names the file, table or column at fault.
Status RunSync(const SyncRunOptions& options);

}  // namespace serac::sync
