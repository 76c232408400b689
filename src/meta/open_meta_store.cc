#include "meta/open_meta_store.h"

#include <string>

#include "common/store_url.h"
#include "meta/sqlite/sqlite_meta_store.h"

namespace serac::meta {

namespace {

constexpr std::string_view kSqliteScheme = "sqlite:";

constexpr std::string_view kStoreKind = "metadata store";
constexpr std::string_view kAcceptedUrls = "sqlite:PATH";

}  // namespace

Result<std::unique_ptr<MetaStore>> OpenMetaStore(std::string_view url, const MetaStoreOpenOptions& options) {
  if (std::optional<std::string_view> path = StoreUrlLocation(url, kSqliteScheme)) {
    SqliteOptions sqlite;
    sqlite.path = std::string(*path);
    sqlite.fsync = options.fsync;
    return OpenSqliteMetaStore(sqlite);
  }
  return UnknownStoreUrl(kStoreKind, url, kAcceptedUrls);
}

std::string DefaultMetaStoreUrl(std::string_view data_dir) {
  return std::string(kSqliteScheme) + std::string(data_dir) + "/meta.db";
}

}  // namespace serac::meta
