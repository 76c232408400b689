// Plain-text tables for the command line's human-readable output: one header row, columns
// separated by two spaces and padded to their widest cell (in bytes), no trailing spaces.
// Thread-safe: a free function without state.
#pragma once

#include <string>
#include <vector>

namespace serac::cli {

// Rows shorter than the header are padded with empty cells; longer ones are cut. Ends with '\n'.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

}  // namespace serac::cli
