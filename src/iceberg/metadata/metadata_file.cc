// Metadata file names: "NNNNN-<uuid>.metadata.json", numbered one past the previous file.
#include <cstdio>
#include <string>

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {
namespace {

// The number that starts the previous file's name, or -1 when there is none.
int64_t ParseVersion(std::string_view location) {
  const size_t slash = location.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? location : location.substr(slash + 1);
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 18) return -1;
  int64_t version = 0;
  for (char c : name.substr(0, dash)) {
    if (c < '0' || c > '9') return -1;
    version = version * 10 + (c - '0');
  }
  return version;
}

}  // namespace

std::string MetadataFileName(std::string_view previous_metadata_location, std::string_view file_uuid) {
  const int64_t next = previous_metadata_location.empty() ? 0 : ParseVersion(previous_metadata_location) + 1;
  char number[24];
  std::snprintf(number, sizeof(number), "%05lld", static_cast<long long>(next));
  return std::string(number) + "-" + std::string(file_uuid) + ".metadata.json";
}

std::string NewTableMetadataFileLocation(const TableModel& metadata,
                                         std::string_view previous_metadata_location,
                                         std::string_view file_uuid) {
  std::string directory;
  if (auto it = metadata.properties.find(kMetadataPathProperty);
      it != metadata.properties.end() && !it->second.empty()) {
    directory = it->second;
  } else {
    directory = metadata.location;
    while (!directory.empty() && directory.back() == '/') directory.pop_back();
    directory += "/metadata";
  }
  while (!directory.empty() && directory.back() == '/') directory.pop_back();
  return directory + "/" + MetadataFileName(previous_metadata_location, file_uuid);
}

}  // namespace serac::iceberg
