#include "service/bucket_name.h"

#include <algorithm>

#include "common/limits.h"

namespace serac::service {

namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool LooksLikeIpv4(std::string_view name) {
  int groups = 0;
  while (true) {
    size_t dot = name.find('.');
    std::string_view group = name.substr(0, dot);
    if (group.empty() || group.size() > 3 ||
        !std::all_of(group.begin(), group.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    ++groups;
    if (dot == std::string_view::npos) break;
    name = name.substr(dot + 1);
  }
  return groups == 4;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

std::optional<std::string> BucketNameProblem(std::string_view name) {
  if (name.size() < limits::kBucketNameBytesMin || name.size() > limits::kBucketNameBytesMax) {
    return "Bucket names must be between 3 and 63 characters long";
  }
  for (char c : name) {
    if (!IsLowerAlnum(c) && c != '.' && c != '-') {
      return "Bucket names can consist only of lowercase letters, numbers, dots and hyphens";
    }
  }
  if (!IsLowerAlnum(name.front()) || !IsLowerAlnum(name.back())) {
    return "Bucket names must begin and end with a letter or number";
  }
  if (name.find("..") != std::string_view::npos) return "Bucket names must not contain two adjacent periods";
  if (LooksLikeIpv4(name)) return "Bucket names must not be formatted as an IP address";
  if (name.substr(0, 4) == "xn--" || name.substr(0, 7) == "sthree-") {
    return "Bucket names must not start with a reserved prefix";
  }
  if (EndsWith(name, "-s3alias") || EndsWith(name, "--ol-s3") || EndsWith(name, "--x-s3")) {
    return "Bucket names must not end with a reserved suffix";
  }
  return std::nullopt;
}

}  // namespace serac::service
