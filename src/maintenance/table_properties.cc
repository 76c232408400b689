#include "maintenance/table_properties.h"

namespace serac::maintenance {

std::optional<int64_t> IntegerProperty(const std::map<std::string, std::string>& properties, const char* name,
                                       int64_t min) {
  auto it = properties.find(name);
  if (it == properties.end()) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t value = std::stoll(it->second, &used);
    if (used != it->second.size() || value < min) return std::nullopt;
    return value;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace serac::maintenance
