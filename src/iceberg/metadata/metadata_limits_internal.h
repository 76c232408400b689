// The size limits serac puts on table and view metadata (common/limits.h, "Iceberg metadata"),
// checked where a request could exceed them. Each error is kLimitExceeded with the limit's name and
// unit. Pure and thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {

// Names, values and their sum against kIcebergPropertyKeyBytesMax, kIcebergPropertyValueBytesMax
// and kIcebergPropertiesBytesMax.
Status CheckPropertyLimits(const std::map<std::string, std::string>& properties);
// Fields at every level against kIcebergSchemaFieldsMax.
Status CheckSchemaFieldCount(const Json& schema);
// Requirements plus updates of one commit against kCatalogUpdatesPerCommitMax.
Status CheckCommitSize(size_t requirements, size_t updates);

}  // namespace serac::iceberg
