#include "common/store_url.h"

#include <string>

namespace serac {

std::optional<std::string_view> StoreUrlLocation(std::string_view url, std::string_view scheme) {
  if (!url.starts_with(scheme)) return std::nullopt;
  std::string_view location = url.substr(scheme.size());
  if (location.starts_with("///")) location.remove_prefix(2);
  if (location.empty()) return std::nullopt;
  return location;
}

Status UnknownStoreUrl(std::string_view store, std::string_view url, std::string_view accepted) {
  return Error(ErrorCode::kInvalidArgument, "cannot open " + std::string(store) + " \"" + std::string(url) +
                                                "\": the URL must be " + std::string(accepted) +
                                                " (the back end this build has)");
}

}  // namespace serac
