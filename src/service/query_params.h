// A request's query string, decoded once: what every front end (S3, the catalog, the admin API)
// reads its parameters from.
// Thread-safety: a QueryParams is a plain value.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace serac::service {

class QueryParams {
 public:
  // Splits on '&' and '=', decodes '%XX' and '+' (a space). A part that does not decode is kept raw,
  // so that the handler, not the parser, decides whether it is an error.
  static QueryParams Parse(std::string_view raw);
  bool Has(std::string_view name) const { return Find(name) != nullptr; }
  const std::string* Find(std::string_view name) const;  // the first value of `name`
  std::string_view Get(std::string_view name, std::string_view fallback = {}) const;
  // In request order, repeated names included.
  const std::vector<std::pair<std::string, std::string>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

}  // namespace serac::service
