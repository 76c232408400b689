// The PostgreSQL schema as an append-only list of migrations, applied once however many servers
// start at the same moment (each takes a transaction-scoped advisory lock, reads the version and
// applies what is missing); a server refuses a schema newer than it knows.
#pragma once

#include <span>
#include <string_view>

#include "common/status.h"
#include "meta/postgres/pg_engine_internal.h"

namespace serac::meta::postgres {

std::span<const std::string_view> Migrations();

// The version the schema is at (0 for none); kIoError, saying so, when it is newer than
// Migrations() knows.
Result<int64_t> SchemaVersion(PgConnection& db);

Status MigrateSchema(PgEngine& engine);

}  // namespace serac::meta::postgres
