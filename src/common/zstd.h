// Whole zstd frames in memory, for text the server keeps compressed (the inline parts of catalog
// metadata files in the metadata store). Thread-safe: no shared state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace serac::zstd {

// One frame holding `input`; `level` as zstd's (1 is fastest). "" only when zstd has no memory for
// its context (a frame is never empty).
std::string Compress(std::string_view input, int level);

// The bytes of one frame, which must come to exactly `size` bytes; kInternal otherwise (stored
// data that does not decompress is damage, not a caller's mistake).
Result<std::string> Decompress(std::string_view frame, size_t size);

}  // namespace serac::zstd
