// The S3 bucket naming rules, shared by S3 CreateBucket and the catalog's warehouses (a warehouse
// is a bucket). Pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace serac::service {

// Why `name` is not a valid bucket name, or nullopt when it is.
std::optional<std::string> BucketNameProblem(std::string_view name);

}  // namespace serac::service
