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

Status CheckRefSnapshotId(const TableModel& current, const AssertRefSnapshotId& requirement) {
  const std::optional<int64_t>& expected = requirement.snapshot_id;
  auto ref = current.refs.find(requirement.ref);
  if (ref == current.refs.end()) {
    if (expected)
      return Failed("branch or tag " + requirement.ref + " is missing, expected " +
                    std::to_string(*expected));
    return Status::Ok();
  }
  const std::string type = StringOr(ref->second, "type", "branch");
  if (!expected) return Failed(type + " " + requirement.ref + " was created concurrently");
  const int64_t actual = ref->second.at("snapshot-id").get<int64_t>();
  if (actual != *expected) {
    return Failed(type + " " + requirement.ref + " has changed: expected id " + std::to_string(*expected) +
                  " != " + std::to_string(actual));
  }
  return Status::Ok();
}

// Requirements that compare one integer of the request with one of the metadata.
Status CheckIntEquals(int64_t expected, int64_t actual, const char* what) {
  if (expected != actual) {
    return Failed(std::string(what) + " changed: expected id " + std::to_string(expected) +
                  " != " + std::to_string(actual));
  }
  return Status::Ok();
}

// One requirement against the table (null: it does not exist yet).
struct Checker {
  const TableModel* current;

  Status operator()(const AssertCreate&) const {
    return current != nullptr ? Failed("table already exists") : Status::Ok();
  }
  Status operator()(const AssertTableUuid& requirement) const {
    if (!EqualsIgnoringCase(requirement.uuid, current->table_uuid)) {
      // The reference names the table's uuid as the expected one.
      return Failed("UUID does not match: expected " + current->table_uuid + " != " + requirement.uuid);
    }
    return Status::Ok();
  }
  Status operator()(const AssertRefSnapshotId& requirement) const {
    return CheckRefSnapshotId(*current, requirement);
  }
  Status operator()(const AssertLastAssignedFieldId& requirement) const {
    return CheckIntEquals(requirement.last_assigned_field_id, current->last_column_id,
                          "last assigned field id");
  }
  Status operator()(const AssertCurrentSchemaId& requirement) const {
    return CheckIntEquals(requirement.current_schema_id, current->current_schema_id, "current schema");
  }
  Status operator()(const AssertLastAssignedPartitionId& requirement) const {
    return CheckIntEquals(requirement.last_assigned_partition_id, current->last_partition_id,
                          "last assigned partition id");
  }
  Status operator()(const AssertDefaultSpecId& requirement) const {
    return CheckIntEquals(requirement.default_spec_id, current->default_spec_id, "default partition spec");
  }
  Status operator()(const AssertDefaultSortOrderId& requirement) const {
    return CheckIntEquals(requirement.default_sort_order_id, current->default_sort_order_id,
                          "default sort order");
  }
};

}  // namespace

Status CheckTableRequirements(const TableModel* current, const std::vector<TableRequirement>& requirements) {
  for (const TableRequirement& requirement : requirements) {
    if (current == nullptr && !std::holds_alternative<AssertCreate>(requirement)) {
      return Failed("table does not exist");
    }
    SERAC_RETURN_IF_ERROR(std::visit(Checker{current}, requirement));
  }
  return Status::Ok();
}

}  // namespace serac::iceberg
