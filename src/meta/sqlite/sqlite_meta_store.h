// MetaStore on SQLite in WAL mode: one writer connection (writes are serialised; concurrent
// writers are batched into one transaction and one fsync of the log — group commit, with the fsync
// of one batch overlapping the next batch) and a pool of reader connections. Schema migrations
// run on open.
#pragma once

#include <memory>
#include <string>

#include "meta/meta_store.h"

namespace serac::meta {

struct SqliteOptions {
  std::string path;   // database file, created if missing
  bool fsync = true;  // each write durable before it returns; false only for benchmarks
};

Result<std::unique_ptr<MetaStore>> OpenSqliteMetaStore(const SqliteOptions& options);

}  // namespace serac::meta
