#include "service/query_params.h"

#include "common/encoding.h"

namespace serac::service {
namespace {

std::string DecodeOrRaw(std::string_view text) {
  std::optional<std::string> decoded = UriDecode(text, /*plus_is_space=*/true);
  return decoded ? std::move(*decoded) : std::string(text);
}

}  // namespace

QueryParams QueryParams::Parse(std::string_view raw) {
  QueryParams params;
  while (!raw.empty()) {
    const size_t amp = raw.find('&');
    const std::string_view item = raw.substr(0, amp);
    raw = amp == std::string_view::npos ? std::string_view() : raw.substr(amp + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string name = DecodeOrRaw(item.substr(0, eq));
    std::string value = eq == std::string_view::npos ? std::string() : DecodeOrRaw(item.substr(eq + 1));
    params.entries_.emplace_back(std::move(name), std::move(value));
  }
  return params;
}

const std::string* QueryParams::Find(std::string_view name) const {
  for (const auto& [key, value] : entries_) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::string_view QueryParams::Get(std::string_view name, std::string_view fallback) const {
  const std::string* value = Find(name);
  return value ? std::string_view(*value) : fallback;
}

}  // namespace serac::service
