#include "meta/open_meta_store.h"

#include <string>

#include "meta/sqlite/sqlite_meta_store.h"

namespace serac::meta {

namespace {

constexpr std::string_view kSqliteScheme = "sqlite:";

Status UnknownBackEnd(std::string_view url) {
  return Error(ErrorCode::kInvalidArgument,
               "cannot open metadata store \"" + std::string(url) +
                   "\": the URL must be sqlite:PATH (the back end this build has)");
}

// "scheme:PATH", or "scheme:///abs/path" as a URL with an empty authority writes it.
std::string_view LocationAfterScheme(std::string_view url, std::string_view scheme) {
  std::string_view location = url.substr(scheme.size());
  if (location.starts_with("///")) location.remove_prefix(2);
  return location;
}

}  // namespace

Result<std::unique_ptr<MetaStore>> OpenMetaStore(std::string_view url, const MetaStoreOpenOptions& options) {
  if (url.starts_with(kSqliteScheme)) {
    SqliteOptions sqlite;
    sqlite.path = std::string(LocationAfterScheme(url, kSqliteScheme));
    sqlite.fsync = options.fsync;
    if (sqlite.path.empty()) return UnknownBackEnd(url);
    return OpenSqliteMetaStore(sqlite);
  }
  return UnknownBackEnd(url);
}

std::string DefaultMetaStoreUrl(std::string_view data_dir) {
  return std::string(kSqliteScheme) + std::string(data_dir) + "/meta.db";
}

}  // namespace serac::meta
