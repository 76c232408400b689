// How deeply a JSON text nests, found by one pass over its bytes before any parser sees it.
// nlohmann-json parses iteratively, but copying, comparing, serialising and validating a parsed
// value recurse once per level: a body nested a hundred thousand levels deep would exhaust a
// connection thread's stack. Every JSON text that comes from the network or from a file is checked
// against limits::kJsonNestingDepthMax first. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace serac {

// True when no array or object in `text` lies deeper than `depth_max` levels (the outermost value
// is level 1). Brackets inside strings, escapes included, do not count. The text need not be valid
// JSON: the parser decides that afterwards.
bool JsonNestingWithin(std::string_view text, size_t depth_max);

}  // namespace serac
