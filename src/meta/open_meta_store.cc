#include "meta/open_meta_store.h"

#include <string>

#include "common/store_url.h"
#include "meta/postgres/postgres_meta_store.h"
#include "meta/sqlite/sqlite_meta_store.h"

namespace serac::meta {

namespace {

constexpr std::string_view kSqliteScheme = "sqlite:";

constexpr std::string_view kStoreKind = "metadata store";
constexpr std::string_view kAcceptedUrls = "sqlite:PATH, postgresql://USER@HOST:PORT/DB?...";

// libpq accepts both spellings of its URL scheme.
bool IsPostgresUrl(std::string_view url) {
  return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

}  // namespace

Result<std::unique_ptr<MetaStore>> OpenMetaStore(std::string_view url, const MetaStoreOpenOptions& options) {
  if (std::optional<std::string_view> path = StoreUrlLocation(url, kSqliteScheme)) {
    SqliteOptions sqlite;
    sqlite.path = std::string(*path);
    sqlite.fsync = options.fsync;
    return OpenSqliteMetaStore(sqlite);
  }
  // Every write is durable on the server when it commits (synchronous_commit is the server's to
  // set); MetaStoreOpenOptions::fsync is the embedded back end's alone.
  if (IsPostgresUrl(url)) return OpenPostgresMetaStore(PostgresOptions{std::string(url)});
  return UnknownStoreUrl(kStoreKind, url, kAcceptedUrls);
}

bool IsSharedMetaStoreUrl(std::string_view url) { return IsPostgresUrl(url); }

std::string DefaultMetaStoreUrl(std::string_view data_dir) {
  return std::string(kSqliteScheme) + std::string(data_dir) + "/meta.db";
}

}  // namespace serac::meta
