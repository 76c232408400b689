#include "cli/text_table.h"

#include <algorithm>

namespace serac::cli {
namespace {

constexpr size_t kColumnGapBytes = 2;

std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line;
  for (size_t column = 0; column < widths.size(); ++column) {
    const std::string cell = column < cells.size() ? cells[column] : std::string();
    line += cell;
    if (column + 1 < widths.size()) line.append(widths[column] - cell.size() + kColumnGapBytes, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

}  // namespace

std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const std::string& title : header) widths.push_back(title.size());
  for (const auto& row : rows) {
    for (size_t column = 0; column < widths.size() && column < row.size(); ++column) {
      widths[column] = std::max(widths[column], row[column].size());
    }
  }
  std::string text = FormatRow(header, widths);
  for (const auto& row : rows) text += FormatRow(row, widths);
  return text;
}

}  // namespace serac::cli
