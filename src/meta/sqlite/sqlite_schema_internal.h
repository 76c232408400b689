// The SQLite schema as an append-only list of migrations. PRAGMA user_version records how many
// have been applied; opening a database applies the missing ones, each in its own transaction.
// Later modules (catalog, IAM, maintenance) add their tables by appending to the list in
// sqlite_schema.cc — never edit or reorder a migration that has shipped.
#pragma once

#include <span>
#include <string_view>

#include "common/status.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

std::span<const std::string_view> Migrations();

// Brings the database up to the newest schema. Fails if it was written by a newer serac.
Status MigrateSchema(Connection& writer);

}  // namespace serac::meta::sqlite
