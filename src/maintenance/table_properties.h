// Reading a table's Iceberg properties as the operations need them.
// Thread-safety: plain functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace serac::maintenance {

// A table property that is a whole number of at least `min` (a mistyped one is ignored: it must
// not stop a job, and Java would have refused the writer's commits long before).
std::optional<int64_t> IntegerProperty(const std::map<std::string, std::string>& properties, const char* name,
                                       int64_t min = 1);

}  // namespace serac::maintenance
