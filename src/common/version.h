// serac's version, as `serac --version` and the web console show it.
#pragma once

#include <string_view>

namespace serac {

inline constexpr std::string_view kSeracVersion = "0.1.0";

}  // namespace serac
