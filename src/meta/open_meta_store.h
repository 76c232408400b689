// The one way to open a MetaStore: a URL names the back end and where its data lives, so the server
// and the contract suites open every back end alike and a new one plugs in here without touching
// its callers.
//   sqlite:PATH   the embedded SQLite database at PATH (created if missing; sqlite:///abs/path
//                 also reads as /abs/path); the default,
//                 sqlite:DATA_DIR/meta.db
//   postgresql://USER@HOST:PORT/DB?PARAMS (also postgres://)
//                 PostgreSQL, shared by several servers; libpq's URL, so its parameters
//                 (several hosts, target_session_attrs, sslmode, options) and its password sources
//                 (PGPASSFILE, PGPASSWORD) apply. Never logged.
// Thread-safety: OpenMetaStore may be called from any thread.
#pragma once

#include <memory>
#include <string_view>

#include "common/status.h"
#include "meta/meta_store.h"

namespace serac::meta {

struct MetaStoreOpenOptions {
  bool fsync = true;  // each write durable before it returns; false only for benchmarks
};

// kInvalidArgument, naming the URL and the back ends this build has, for an unknown scheme or an
// empty location; the back end's own error when it cannot open.
Result<std::unique_ptr<MetaStore>> OpenMetaStore(std::string_view url,
                                                 const MetaStoreOpenOptions& options = {});

// True for a back end several servers may share (PostgreSQL): what one process assumes alone
// (meta_store.h) does not hold for it.
bool IsSharedMetaStoreUrl(std::string_view url);

// "sqlite:DIR/meta.db": the default store of a data directory.
std::string DefaultMetaStoreUrl(std::string_view data_dir);

}  // namespace serac::meta
