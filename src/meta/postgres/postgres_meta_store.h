// MetaStore on PostgreSQL, for several serac servers sharing one state: every call a transaction
// on a bounded pool of connections (pg_engine_internal.h), no cache of rows (each read sees every
// server's committed writes), the schema migrated on open under an advisory lock.
#pragma once

#include <memory>
#include <string>

#include "meta/meta_store.h"

namespace serac::meta {

struct PostgresOptions {
  // A libpq URL (postgresql://USER@HOST:PORT/DB?...) or connection string: several hosts with
  // target_session_attrs=read-write, sslmode, a password from PGPASSFILE or PGPASSWORD all work as
  // libpq documents them. Never logged.
  std::string conninfo;
};

Result<std::unique_ptr<MetaStore>> OpenPostgresMetaStore(const PostgresOptions& options);

}  // namespace serac::meta
