// Commit requirements: checked against the current metadata before any update is applied.
// A requirement that no longer holds is kConflict (409 CommitFailedException: reload and retry);
// a malformed one is kInvalidArgument (400). Failure messages start with "Requirement failed: "
// and otherwise read as the reference implementation's do: Java clients recognise that prefix,
// and conformance tests compare the text.
#include <algorithm>
#include <cctype>
#include <string>

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg {
namespace {

Status Failed(const std::string& message) {
  return Error(ErrorCode::kConflict, "Requirement failed: " + message);
}

bool EqualsIgnoringCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

Status CheckRefSnapshotId(const TableModel& current, const Json& requirement) {
  SERAC_ASSIGN_OR_RETURN(std::string ref_name, RequiredString(requirement, "ref"));
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> expected, OptionalInt(requirement, "snapshot-id"));
  auto ref = current.refs.find(ref_name);
  if (ref == current.refs.end()) {
    if (expected)
      return Failed("branch or tag " + ref_name + " is missing, expected " + std::to_string(*expected));
    return Status::Ok();
  }
  const std::string type = StringOr(ref->second, "type", "branch");
  if (!expected) return Failed(type + " " + ref_name + " was created concurrently");
  const int64_t actual = ref->second.at("snapshot-id").get<int64_t>();
  if (actual != *expected) {
    return Failed(type + " " + ref_name + " has changed: expected id " + std::to_string(*expected) +
                  " != " + std::to_string(actual));
  }
  return Status::Ok();
}

// Requirements that compare one integer field of the request with one of the metadata.
Status CheckIntEquals(const Json& requirement, const char* key, int64_t actual, const char* what) {
  SERAC_ASSIGN_OR_RETURN(int64_t expected, RequiredInt(requirement, key));
  if (expected != actual) {
    return Failed(std::string(what) + " changed: expected id " + std::to_string(expected) +
                  " != " + std::to_string(actual));
  }
  return Status::Ok();
}

Status CheckOne(const TableModel* current, const Json& requirement) {
  SERAC_ASSIGN_OR_RETURN(std::string type, RequiredString(requirement, "type"));
  if (type == "assert-create") {
    if (current != nullptr) return Failed("table already exists");
    return Status::Ok();
  }
  static const char* const kKnown[] = {"assert-table-uuid",
                                       "assert-ref-snapshot-id",
                                       "assert-last-assigned-field-id",
                                       "assert-current-schema-id",
                                       "assert-last-assigned-partition-id",
                                       "assert-default-spec-id",
                                       "assert-default-sort-order-id"};
  if (std::find(std::begin(kKnown), std::end(kKnown), type) == std::end(kKnown)) {
    return Error(ErrorCode::kNotImplemented, "unknown requirement type: " + type);
  }
  if (current == nullptr) return Failed("table does not exist");
  if (type == "assert-table-uuid") {
    SERAC_ASSIGN_OR_RETURN(std::string uuid, RequiredString(requirement, "uuid"));
    if (!EqualsIgnoringCase(uuid, current->table_uuid)) {
      // The reference names the table's uuid as the expected one.
      return Failed("UUID does not match: expected " + current->table_uuid + " != " + uuid);
    }
    return Status::Ok();
  }
  if (type == "assert-ref-snapshot-id") return CheckRefSnapshotId(*current, requirement);
  if (type == "assert-last-assigned-field-id") {
    return CheckIntEquals(requirement, "last-assigned-field-id", current->last_column_id,
                          "last assigned field id");
  }
  if (type == "assert-current-schema-id") {
    return CheckIntEquals(requirement, "current-schema-id", current->current_schema_id, "current schema");
  }
  if (type == "assert-last-assigned-partition-id") {
    return CheckIntEquals(requirement, "last-assigned-partition-id", current->last_partition_id,
                          "last assigned partition id");
  }
  if (type == "assert-default-spec-id") {
    return CheckIntEquals(requirement, "default-spec-id", current->default_spec_id, "default partition spec");
  }
  return CheckIntEquals(requirement, "default-sort-order-id", current->default_sort_order_id,
                        "default sort order");
}

}  // namespace

Status CheckTableRequirements(const TableModel* current, const Json& requirements) {
  if (requirements.is_null()) return Status::Ok();
  if (!requirements.is_array()) return Error(ErrorCode::kInvalidArgument, "requirements must be an array");
  for (const Json& requirement : requirements) {
    if (!requirement.is_object()) return Error(ErrorCode::kInvalidArgument, "requirement must be an object");
    SERAC_RETURN_IF_ERROR(CheckOne(current, requirement));
  }
  return Status::Ok();
}

}  // namespace serac::iceberg
