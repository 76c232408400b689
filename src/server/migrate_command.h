// `serac admin migrate --from sqlite:DIR/meta.db --to URL`: moves a single node's whole state — its
// embedded metadata store — into another metadata store (PostgreSQL, which several servers share),
// resumably, then compares the two (meta/meta_migration.h). It lives beside `serac server` because
// it takes the same data directory lock: no server may run on the source meanwhile.
#pragma once

#include <cstdio>
#include <string>

#include "common/status.h"

namespace serac::server {

struct MigrateCommandOptions {
  std::string from_url;  // sqlite:PATH, the source node's metadata store
  std::string to_url;    // any URL meta::OpenMetaStore takes
  // Where the node's blobs are (default file:DIR/blobs beside the database), and where to copy
  // them to (empty: they stay where they are, and the target's servers use that store).
  std::string blobs_from_url;
  std::string copy_blobs_to_url;
};

// Migrates and checks, writing progress and the summary to `out`. kAlreadyExists while a server
// holds the source's data directory; kValidationFailed when the check finds a difference (the
// first ones are printed); the step's error when a step fails (running again resumes).
Status RunMigration(const MigrateCommandOptions& options, std::FILE* out);

// The process exit code: 0 when everything moved and the check found no difference, else 1 (the
// error on stderr).
int RunMigrateCommand(const MigrateCommandOptions& options);

}  // namespace serac::server
