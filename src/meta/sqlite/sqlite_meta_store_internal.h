// Test and metrics access to the internals of the SQLite MetaStore.
#pragma once

#include <optional>

#include "meta/meta_store.h"
#include "meta/sqlite/group_commit_internal.h"

namespace serac::meta {

// Group-commit counters of a store opened by OpenSqliteMetaStore; nullopt for any other store.
std::optional<sqlite::GroupCommitStats> SqliteGroupCommitStats(MetaStore& store);

}  // namespace serac::meta
