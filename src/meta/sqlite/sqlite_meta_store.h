// MetaStore on SQLite in WAL mode with synchronous=FULL: one writer connection (writes are
// serialised; concurrent writers are batched into one transaction and one fsync — group commit)
// and a pool of reader connections. Schema migrations run on open.
#pragma once

#include <memory>
#include <string>

#include "meta/meta_store.h"

namespace serac::meta {

struct SqliteOptions {
  std::string path;   // database file, created if missing
  bool fsync = true;  // synchronous=FULL; false only for benchmarks without durability
};

Result<std::unique_ptr<MetaStore>> OpenSqliteMetaStore(const SqliteOptions& options);

}  // namespace serac::meta
