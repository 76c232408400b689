// The requirements and updates of one table commit as typed values: the REST specification's
// TableRequirement and TableUpdate, one struct per kind. Writers build them (the snapshot
// producers, table maintenance, serac sync), the catalog applies them (CommitTable), and JSON is
// read into them only at the catalog's route (TableChanges::FromJson, once per request body) and
// written from them only by the REST client (TableChanges::RequirementsJson/UpdatesJson): a commit
// made inside the server never passes through text.
//
// Documents the metadata keeps as the client wrote them (a schema, partition spec, sort order,
// snapshot, statistics file, encryption key) travel as their parsed JSON tree, shared and never
// changed, so that fields serac does not model survive; the typed constructors (AddSchema::Of,
// AddSnapshot::Of) build them for writers outside this module.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {

// A document as the client wrote it (its parsed tree).
using JsonDocument = std::shared_ptr<const nlohmann::json>;

// "-1": the schema, spec or sort order this commit added last.
inline constexpr int32_t kLastAdded = -1;

// ---- Requirements: checked against the table before any update applies ----

struct AssertCreate {};  // the table must not exist yet (finishing a stage-create)
struct AssertTableUuid {
  std::string uuid;
};
struct AssertRefSnapshotId {
  std::string ref;
  std::optional<int64_t> snapshot_id;  // nullopt: the ref must not exist
};
struct AssertLastAssignedFieldId {
  int64_t last_assigned_field_id = 0;
};
struct AssertCurrentSchemaId {
  int64_t current_schema_id = 0;
};
struct AssertLastAssignedPartitionId {
  int64_t last_assigned_partition_id = 0;
};
struct AssertDefaultSpecId {
  int64_t default_spec_id = 0;
};
struct AssertDefaultSortOrderId {
  int64_t default_sort_order_id = 0;
};
using TableRequirement =
    std::variant<AssertCreate, AssertTableUuid, AssertRefSnapshotId, AssertLastAssignedFieldId,
                 AssertCurrentSchemaId, AssertLastAssignedPartitionId, AssertDefaultSpecId,
                 AssertDefaultSortOrderId>;

// ---- Updates: applied in order, as Java's TableMetadata.Builder applies them ----

struct AssignUuid {
  std::string uuid;
};
struct UpgradeFormatVersion {
  int64_t format_version = 0;
};
struct AddSchema {
  JsonDocument schema;
  std::optional<int64_t> last_column_id;  // sent by clients, ignored as the reference ignores it
  static AddSchema Of(const Schema& schema, int32_t last_column_id);
};
struct SetCurrentSchema {
  int32_t schema_id = kLastAdded;
};
struct AddPartitionSpec {
  JsonDocument spec;
};
struct SetDefaultSpec {
  int32_t spec_id = kLastAdded;
};
struct AddSortOrder {
  JsonDocument sort_order;
};
struct SetDefaultSortOrder {
  int32_t sort_order_id = kLastAdded;
};
struct AddSnapshot {
  JsonDocument snapshot;
  // The snapshot's document as a table of `format_version` stores it (sequence number from v2,
  // row lineage from v3).
  static AddSnapshot Of(const Snapshot& snapshot, int format_version);
};
struct SetSnapshotRef {
  std::string ref_name;
  SnapshotRef ref;
};
struct RemoveSnapshots {
  std::vector<int64_t> snapshot_ids;
};
struct RemoveSnapshotRef {
  std::string ref_name;
};
struct SetLocation {
  std::string location;
};
struct SetProperties {
  std::map<std::string, std::string> updates;
};
struct RemoveProperties {
  std::vector<std::string> removals;
};
struct SetStatistics {
  JsonDocument statistics;
};
struct RemoveStatistics {
  int64_t snapshot_id = 0;
};
struct SetPartitionStatistics {
  JsonDocument partition_statistics;
};
struct RemovePartitionStatistics {
  int64_t snapshot_id = 0;
};
struct RemovePartitionSpecs {
  std::vector<int64_t> spec_ids;
};
struct RemoveSchemas {
  std::vector<int64_t> schema_ids;
};
struct AddEncryptionKey {
  JsonDocument encryption_key;
};
struct RemoveEncryptionKey {
  std::string key_id;
};
struct EnableRowLineage {};  // sent by 1.8 clients; a v3 table always has row lineage
using TableUpdate = std::variant<AssignUuid, UpgradeFormatVersion, AddSchema, SetCurrentSchema,
                                 AddPartitionSpec, SetDefaultSpec, AddSortOrder, SetDefaultSortOrder,
                                 AddSnapshot, SetSnapshotRef, RemoveSnapshots, RemoveSnapshotRef, SetLocation,
                                 SetProperties, RemoveProperties, SetStatistics, RemoveStatistics,
                                 SetPartitionStatistics, RemovePartitionStatistics, RemovePartitionSpecs,
                                 RemoveSchemas, AddEncryptionKey, RemoveEncryptionKey, EnableRowLineage>;

// What one commit asks of one table (an UpdateTableRequest, or one entry of a transaction's
// table-changes).
struct TableChanges {
  std::vector<TableRequirement> requirements;
  std::vector<TableUpdate> updates;

  // Whether a requirement says the table must not exist yet (finishing a stage-create).
  bool asserts_create() const;

  // The request's members, read as the reference's parsers read them (malformed: kInvalidArgument;
  // an unknown kind: kNotImplemented; more than the named limits: kLimitExceeded). Each a JSON array
  // (null reads as empty); the documents are moved out of them, not copied.
  static Result<TableChanges> FromJson(nlohmann::json requirements, nlohmann::json updates);
  // The same from the arrays' text (tools and tests).
  static Result<TableChanges> Parse(std::string_view requirements_json, std::string_view updates_json);
  // The members as the REST protocol sends them.
  std::string RequirementsJson() const;
  std::string UpdatesJson() const;
};

// The commit of a writer's new snapshot `snapshot` of `base`, made the head of main: the table must
// still be `base`'s and main still at the snapshot's parent (absent when it has none).
TableChanges SnapshotOnMain(const TableMetadata& base, const Snapshot& snapshot);

struct TableCommitResult {
  TableMetadata metadata;
  bool changed = false;  // false: the commit changes nothing and nothing needs to be written
};

// Checks the requirements against `current` and applies the updates, as Java's
// TableMetadata.Builder does. `current` null means the table does not exist yet (finishing a
// stage-create): the updates then build it from empty metadata. Requirement failures are
// kConflict (409 CommitFailedException).
Result<TableCommitResult> CommitTable(const TableMetadata* current, const TableChanges& changes,
                                      const CommitOptions& options);

}  // namespace serac::iceberg
