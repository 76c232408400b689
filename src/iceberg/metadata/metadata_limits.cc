#include "common/limits.h"
#include "iceberg/metadata/metadata_limits_internal.h"

namespace serac::iceberg {
namespace {

Status TooLarge(const std::string& what, const char* limit, uint64_t value, const char* unit) {
  return Error(ErrorCode::kLimitExceeded,
               what + " exceeds limits::" + limit + " (" + std::to_string(value) + " " + unit + ")");
}

uint64_t CountFields(const Json& type) {
  if (!type.is_object()) return 0;
  uint64_t count = 0;
  auto visit = [&](const char* key) {
    auto child = type.find(key);
    if (child != type.end()) count += CountFields(*child);
  };
  auto fields = type.find("fields");
  if (fields != type.end() && fields->is_array()) {
    for (const Json& field : *fields) {
      ++count;
      if (field.is_object() && field.contains("type")) count += CountFields(field["type"]);
    }
  }
  visit("element");
  visit("key");
  visit("value");
  return count;
}

}  // namespace

Status CheckPropertyLimits(const std::map<std::string, std::string>& properties) {
  uint64_t total = 0;
  for (const auto& [key, value] : properties) {
    if (key.size() > limits::kIcebergPropertyKeyBytesMax) {
      return TooLarge("property name " + key.substr(0, 64) + "...", "kIcebergPropertyKeyBytesMax",
                      limits::kIcebergPropertyKeyBytesMax, "bytes");
    }
    if (value.size() > limits::kIcebergPropertyValueBytesMax) {
      return TooLarge("the value of property " + key, "kIcebergPropertyValueBytesMax",
                      limits::kIcebergPropertyValueBytesMax, "bytes");
    }
    total += key.size() + value.size();
  }
  if (total > limits::kIcebergPropertiesBytesMax) {
    return TooLarge("the properties together", "kIcebergPropertiesBytesMax",
                    limits::kIcebergPropertiesBytesMax, "bytes");
  }
  return Status::Ok();
}

// Recursion is bounded: the schema was checked against kIcebergTypeNestingDepthMax first.
Status CheckSchemaFieldCount(const Json& schema) {
  if (CountFields(schema) > limits::kIcebergSchemaFieldsMax) {
    return TooLarge("the schema", "kIcebergSchemaFieldsMax", limits::kIcebergSchemaFieldsMax, "fields");
  }
  return Status::Ok();
}

Status CheckCommitSize(size_t requirements, size_t updates) {
  if (requirements + updates > limits::kCatalogUpdatesPerCommitMax) {
    return TooLarge("the commit", "kCatalogUpdatesPerCommitMax", limits::kCatalogUpdatesPerCommitMax,
                    "requirements and updates");
  }
  return Status::Ok();
}

}  // namespace serac::iceberg
