#include <gtest/gtest.h>

#include "common/limits.h"
#include "iceberg/iceberg.h"
#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/test_util_internal.h"

namespace serac::iceberg {
namespace {

using testing::AddSnapshot;
using testing::CommitError;
using testing::MustCommit;
using testing::NewTable;
using testing::Options;
using testing::SetMain;
using testing::Snapshot;

Json Requirement(const char* type, const char* key, Json value) {
  return Json::array({Json{{"type", type}, {key, std::move(value)}}});
}

// A v2 table whose main branch points at snapshot 1 (sequence number 1).
TableModel TableWithSnapshot(int format_version = 2) {
  Json snapshot = Snapshot(1, std::nullopt, format_version == 1 ? 0 : 1, 2000);  // v1: always 0
  if (format_version >= 3) {
    snapshot["first-row-id"] = 0;
    snapshot["added-rows"] = 10;
  }
  return MustCommit(NewTable(format_version), Json::array({AddSnapshot(snapshot), SetMain(1)})).metadata;
}

// ---- Requirements ----

TEST(RequirementTest, AssertCreate) {
  TableModel table = NewTable(2);
  Json create = Json::array({Json{{"type", "assert-create"}}});
  EXPECT_EQ(CommitError(table, create, Json::array()), ErrorCode::kConflict);
  EXPECT_TRUE(CheckTableRequirements(nullptr, create).ok());
}

TEST(RequirementTest, AssertTableUuidIgnoresCase) {
  TableModel table = NewTable(2);
  EXPECT_EQ(
      CommitError(table, Requirement("assert-table-uuid", "uuid", "6F0B6C8C-0000-4000-8000-000000000001"),
                  Json::array()),
      ErrorCode::kOk);
  EXPECT_EQ(
      CommitError(table, Requirement("assert-table-uuid", "uuid", "00000000-0000-4000-8000-000000000001"),
                  Json::array()),
      ErrorCode::kConflict);
  EXPECT_EQ(CommitError(table, Requirement("assert-table-uuid", "uuid", 5), Json::array()),
            ErrorCode::kInvalidArgument);
}

TEST(RequirementTest, AssertRefSnapshotId) {
  TableModel table = TableWithSnapshot();
  auto check = [&](const char* ref, Json id) {
    return CommitError(
        table, Json::array({Json{{"type", "assert-ref-snapshot-id"}, {"ref", ref}, {"snapshot-id", id}}}),
        Json::array());
  };
  EXPECT_EQ(check("main", 1), ErrorCode::kOk);
  EXPECT_EQ(check("main", 2), ErrorCode::kConflict);
  EXPECT_EQ(check("main", nullptr), ErrorCode::kConflict);  // null: must not exist, but it does
  EXPECT_EQ(check("dev", nullptr), ErrorCode::kOk);
  EXPECT_EQ(check("dev", 1), ErrorCode::kConflict);
}

TEST(RequirementTest, IntegerAssertions) {
  TableModel table = NewTable(2);  // last-column-id 2, schema 0, partition 1000, spec 0, order 1
  struct Case {
    const char* type;
    const char* key;
    int64_t good;
  };
  for (const Case& c : {Case{"assert-last-assigned-field-id", "last-assigned-field-id", 2},
                        Case{"assert-current-schema-id", "current-schema-id", 0},
                        Case{"assert-last-assigned-partition-id", "last-assigned-partition-id", 1000},
                        Case{"assert-default-spec-id", "default-spec-id", 0},
                        Case{"assert-default-sort-order-id", "default-sort-order-id", 1}}) {
    EXPECT_EQ(CommitError(table, Requirement(c.type, c.key, c.good), Json::array()), ErrorCode::kOk)
        << c.type;
    EXPECT_EQ(CommitError(table, Requirement(c.type, c.key, c.good + 1), Json::array()), ErrorCode::kConflict)
        << c.type;
    EXPECT_EQ(CommitError(table, Json::array({Json{{"type", c.type}}}), Json::array()),
              ErrorCode::kInvalidArgument)
        << c.type;
  }
}

// Java clients and the conformance kit recognise failures by the reference's wording.
TEST(RequirementTest, FailureMessagesUseTheReferenceWording) {
  TableModel table = NewTable(2);
  auto message = [&](const Json& requirements) {
    return ApplyTableCommit(&table, requirements, Json::array(), Options()).status().message();
  };
  EXPECT_EQ(message(Requirement("assert-current-schema-id", "current-schema-id", 1)),
            "Requirement failed: current schema changed: expected id 1 != 0");
  EXPECT_EQ(message(Requirement("assert-last-assigned-field-id", "last-assigned-field-id", 1)),
            "Requirement failed: last assigned field id changed: expected id 1 != 2");
  EXPECT_EQ(message(Requirement("assert-default-spec-id", "default-spec-id", 3)),
            "Requirement failed: default partition spec changed: expected id 3 != 0");
  EXPECT_EQ(message(Json::array({Json{{"type", "assert-table-uuid"}, {"uuid", "other"}}})),
            "Requirement failed: UUID does not match: expected " + table.table_uuid + " != other");
  EXPECT_EQ(message(Json::array({Json{{"type", "assert-create"}}})),
            "Requirement failed: table already exists");
}

// An unknown type is an unsupported operation, as Java's parser reports it; a malformed one is a bad
// request.
TEST(RequirementTest, UnknownRequirementIsUnsupportedAndMalformedIsBadRequest) {
  TableModel table = NewTable(2);
  EXPECT_EQ(CommitError(table, Json::array({Json{{"type", "assert-nothing"}}}), Json::array()),
            ErrorCode::kNotImplemented);
  EXPECT_EQ(CommitError(table, Json::object(), Json::array()), ErrorCode::kInvalidArgument);
  // A requirement other than assert-create on a table that does not exist is stale, not malformed.
  EXPECT_EQ(
      CheckTableRequirements(nullptr, Requirement("assert-current-schema-id", "current-schema-id", 0)).code(),
      ErrorCode::kConflict);
}

TEST(RequirementTest, FailureAppliesNoUpdate) {
  TableModel table = NewTable(2);
  auto outcome =
      ApplyTableCommit(&table, Requirement("assert-current-schema-id", "current-schema-id", 9),
                       Json::array({Json{{"action", "set-location"}, {"location", "s3://x"}}}), Options());
  EXPECT_EQ(outcome.status().code(), ErrorCode::kConflict);
}

// ---- Updates ----

TEST(UpdateTest, UnknownActionIsUnsupportedAndMissingActionIsBadRequest) {
  EXPECT_EQ(CommitError(NewTable(2), Json::array(), Json::array({Json{{"action", "drop-everything"}}})),
            ErrorCode::kNotImplemented);
  EXPECT_EQ(CommitError(NewTable(2), Json::array(), Json::array({Json{{"uuid", "x"}}})),
            ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, AssignUuid) {
  auto outcome =
      MustCommit(NewTable(2), Json::array({Json{{"action", "assign-uuid"}, {"uuid", "new-uuid"}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.table_uuid, "new-uuid");
  EXPECT_FALSE(
      MustCommit(outcome.metadata, Json::array({Json{{"action", "assign-uuid"}, {"uuid", "new-uuid"}}}))
          .changed);
}

TEST(UpdateTest, UpgradeFormatVersion) {
  Json to3 = Json::array({Json{{"action", "upgrade-format-version"}, {"format-version", 3}}});
  TableModel v2 = TableWithSnapshot(2);
  auto upgraded = MustCommit(v2, to3);
  EXPECT_TRUE(upgraded.changed);
  EXPECT_EQ(upgraded.metadata.format_version, 3);
  EXPECT_EQ(upgraded.metadata.next_row_id, 0);
  EXPECT_FALSE(upgraded.metadata.snapshots[0]->json().contains("first-row-id"));  // old snapshots keep none
  EXPECT_EQ(TableMetadataToJson(upgraded.metadata)["next-row-id"], 0);
  EXPECT_FALSE(MustCommit(upgraded.metadata, to3).changed);  // same version: nothing to do
  // No downgrade, nothing past v3.
  EXPECT_EQ(CommitError(upgraded.metadata, Json::array(),
                        Json::array({Json{{"action", "upgrade-format-version"}, {"format-version", 2}}})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(v2, Json::array(),
                        Json::array({Json{{"action", "upgrade-format-version"}, {"format-version", 4}}})),
            ErrorCode::kInvalidArgument);
  // v1 -> v2 works too, and the reserved property is another way to ask.
  auto via_property = MustCommit(
      NewTable(1), Json::array({Json{{"action", "set-properties"}, {"updates", {{"format-version", "2"}}}}}));
  EXPECT_EQ(via_property.metadata.format_version, 2);
  EXPECT_EQ(via_property.metadata.properties.count("format-version"), 0u);
}

TEST(UpdateTest, AddSchemaAndSetCurrentLastAdded) {
  TableModel table = NewTable(2);
  Json schema = testing::ThreeColumnSchema();
  auto outcome = MustCommit(
      table, Json::array({Json{{"action", "add-schema"}, {"schema", schema}, {"last-column-id", 3}},
                          Json{{"action", "set-current-schema"}, {"schema-id", -1}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.schemas.size(), 2u);
  EXPECT_EQ(outcome.metadata.current_schema_id, 1);  // new id assigned, the request's 0 ignored
  EXPECT_EQ(outcome.metadata.last_column_id, 3);
  EXPECT_EQ(outcome.metadata.last_updated_ms, 5000);
  // Re-adding an identical schema reuses its id and changes nothing; "-1" then names no schema,
  // since this commit added none (the reference's rule).
  auto again =
      MustCommit(outcome.metadata, Json::array({Json{{"action", "add-schema"}, {"schema", schema}}}));
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.metadata.schemas.size(), 2u);
  EXPECT_EQ(CommitError(outcome.metadata, Json::array(),
                        Json::array({Json{{"action", "add-schema"}, {"schema", schema}},
                                     Json{{"action", "set-current-schema"}, {"schema-id", -1}}})),
            ErrorCode::kValidationFailed);
  // Switching back to schema 0 (present) works; -1 without an added schema does not.
  EXPECT_EQ(
      MustCommit(outcome.metadata, Json::array({Json{{"action", "set-current-schema"}, {"schema-id", 0}}}))
          .metadata.current_schema_id,
      0);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "set-current-schema"}, {"schema-id", -1}}})),
            ErrorCode::kValidationFailed);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "set-current-schema"}, {"schema-id", 9}}})),
            ErrorCode::kInvalidArgument);
  // The request's last-column-id is ignored, as the reference does: clients send the new schema's
  // highest id, lower after a column drop, and ids are never reused, so the table keeps its maximum.
  Json id_only = {
      {"type", "struct"},
      {"fields", Json::array({Json{{"id", 1}, {"name", "id"}, {"required", true}, {"type", "long"}}})}};
  auto dropped = MustCommit(
      table, Json::array({Json{{"action", "add-schema"}, {"schema", id_only}, {"last-column-id", 1}},
                          Json{{"action", "set-current-schema"}, {"schema-id", -1}}}));
  EXPECT_EQ(dropped.metadata.last_column_id, 2);
  EXPECT_EQ(dropped.metadata.current_schema_id, 1);
  EXPECT_EQ(
      MustCommit(table,
                 Json::array({Json{{"action", "add-schema"}, {"schema", schema}, {"last-column-id", 50}}}))
          .metadata.last_column_id,
      3);
}

TEST(UpdateTest, AddSchemaRefusesV3FeaturesBelowV3) {
  Json schema = testing::ThreeColumnSchema();
  schema["fields"][2]["type"] = "timestamp_ns";
  Json add = Json::array({Json{{"action", "add-schema"}, {"schema", schema}}});
  EXPECT_EQ(CommitError(NewTable(2), Json::array(), add), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(NewTable(1), Json::array(), add), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(NewTable(3), Json::array(), add), ErrorCode::kOk);
  Json with_default = testing::ThreeColumnSchema();
  with_default["fields"][2]["initial-default"] = "2024-01-01T00:00:00";
  EXPECT_EQ(CommitError(NewTable(2), Json::array(),
                        Json::array({Json{{"action", "add-schema"}, {"schema", with_default}}})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(NewTable(3), Json::array(),
                        Json::array({Json{{"action", "add-schema"}, {"schema", with_default}}})),
            ErrorCode::kOk);
}

TEST(UpdateTest, AddSpecAndDefault) {
  TableModel table = NewTable(2);
  Json spec = Json::parse(R"({"spec-id": 0, "fields": [
    {"source-id": 1, "field-id": 1000, "name": "id_part", "transform": "identity"},
    {"source-id": 2, "field-id": 1001, "name": "data_trunc", "transform": "truncate[4]"}]})");
  auto outcome = MustCommit(table, Json::array({Json{{"action", "add-spec"}, {"spec", spec}},
                                                Json{{"action", "set-default-spec"}, {"spec-id", -1}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.default_spec_id, 1);
  EXPECT_EQ(outcome.metadata.partition_specs[1]["fields"][1]["field-id"], 1001);
  EXPECT_EQ(outcome.metadata.last_partition_id, 1001);
  // The same fields again reuse spec 1 and change nothing; "-1" then names no spec this commit added.
  auto again = MustCommit(outcome.metadata, Json::array({Json{{"action", "add-spec"}, {"spec", spec}}}));
  EXPECT_FALSE(again.changed);
  EXPECT_EQ(CommitError(outcome.metadata, Json::array(),
                        Json::array({Json{{"action", "add-spec"}, {"spec", spec}},
                                     Json{{"action", "set-default-spec"}, {"spec-id", -1}}})),
            ErrorCode::kValidationFailed);
  EXPECT_EQ(
      CommitError(table, Json::array(), Json::array({Json{{"action", "set-default-spec"}, {"spec-id", -1}}})),
      ErrorCode::kValidationFailed);
  EXPECT_EQ(
      CommitError(table, Json::array(), Json::array({Json{{"action", "set-default-spec"}, {"spec-id", 5}}})),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "add-spec"}, {"spec", {{"fields", 3}}}}})),
            ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, V1SpecsNeedSequentialFieldIds) {
  Json spec = Json::parse(
      R"({"fields": [{"source-id": 2, "field-id": 1007, "name": "d", "transform": "identity"}]})");
  EXPECT_EQ(
      CommitError(NewTable(1), Json::array(), Json::array({Json{{"action", "add-spec"}, {"spec", spec}}})),
      ErrorCode::kValidationFailed);
  EXPECT_EQ(
      CommitError(NewTable(2), Json::array(), Json::array({Json{{"action", "add-spec"}, {"spec", spec}}})),
      ErrorCode::kOk);
}

TEST(UpdateTest, AddSortOrderAndDefault) {
  TableModel table = NewTable(2);  // has order 1 (id asc)
  Json order = Json::parse(R"({"order-id": 0, "fields": [
    {"source-id": 2, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]})");
  auto outcome =
      MustCommit(table, Json::array({Json{{"action", "add-sort-order"}, {"sort-order", order}},
                                     Json{{"action", "set-default-sort-order"}, {"sort-order-id", -1}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.default_sort_order_id, 2);
  // Unsorted gets order id 0.
  auto unsorted = MustCommit(
      outcome.metadata, Json::array({Json{{"action", "add-sort-order"},
                                          {"sort-order", {{"order-id", 7}, {"fields", Json::array()}}}},
                                     Json{{"action", "set-default-sort-order"}, {"sort-order-id", -1}}}));
  EXPECT_EQ(unsorted.metadata.default_sort_order_id, 0);
  EXPECT_NE(unsorted.metadata.FindSortOrder(0), nullptr);
  // Identical order: reused, nothing changes; "-1" then names nothing this commit added.
  EXPECT_FALSE(
      MustCommit(outcome.metadata, Json::array({Json{{"action", "add-sort-order"}, {"sort-order", order}}}))
          .changed);
  EXPECT_EQ(CommitError(outcome.metadata, Json::array(),
                        Json::array({Json{{"action", "add-sort-order"}, {"sort-order", order}},
                                     Json{{"action", "set-default-sort-order"}, {"sort-order-id", -1}}})),
            ErrorCode::kValidationFailed);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "set-default-sort-order"}, {"sort-order-id", 9}}})),
            ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, AddSnapshotAndMainBranch) {
  TableModel table = NewTable(2, 1000);
  auto outcome =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)}));
  EXPECT_TRUE(outcome.changed);
  const TableModel& after = outcome.metadata;
  EXPECT_EQ(after.current_snapshot_id, 1);
  EXPECT_EQ(after.last_sequence_number, 1);
  // The server's time of the commit; the log records the snapshot at its own time.
  EXPECT_EQ(after.last_updated_ms, 5000);
  ASSERT_EQ(after.snapshot_log.size(), 1u);
  EXPECT_EQ(after.snapshot_log[0], (SnapshotLogEntry{2000, 1}));
  EXPECT_EQ(after.refs.at("main")["type"], "branch");
  // Adding a snapshot without a ref leaves main alone.
  auto branch_only = MustCommit(after, Json::array({AddSnapshot(Snapshot(2, 1, 2, 3000))}));
  EXPECT_EQ(branch_only.metadata.current_snapshot_id, 1);
  EXPECT_EQ(branch_only.metadata.snapshots.size(), 2u);
  // The next version shares the snapshot it kept instead of copying it.
  EXPECT_EQ(branch_only.metadata.snapshots[0].get(), after.snapshots[0].get());
  EXPECT_EQ(branch_only.metadata.snapshots[1]->id(), 2);
  EXPECT_EQ(Json::parse(branch_only.metadata.snapshots[1]->text()), Snapshot(2, 1, 2, 3000));
}

TEST(UpdateTest, AddSnapshotErrors) {
  TableModel table = TableWithSnapshot();
  // Duplicate id.
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(Snapshot(1, std::nullopt, 5, 1))})),
            ErrorCode::kValidationFailed);
  // Stale sequence number: the client must reload.
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(Snapshot(2, 1, 1, 1))})),
            ErrorCode::kConflict);
  // Unknown schema.
  Json unknown_schema = Snapshot(2, 1, 2, 1);
  unknown_schema["schema-id"] = 42;
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(unknown_schema)})),
            ErrorCode::kInvalidArgument);
  // v2 snapshots need a sequence number.
  Json no_sequence = Snapshot(2, 1, 2, 1);
  no_sequence.erase("sequence-number");
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(no_sequence)})),
            ErrorCode::kInvalidArgument);
  // v1 does not check sequence numbers.
  TableModel v1 = TableWithSnapshot(1);
  EXPECT_EQ(CommitError(v1, Json::array(), Json::array({AddSnapshot(Snapshot(2, 1, 0, 1))})), ErrorCode::kOk);
}

TEST(UpdateTest, RowLineageInV3) {
  TableModel table = TableWithSnapshot(3);
  EXPECT_EQ(table.next_row_id, 10);
  Json next = Snapshot(2, 1, 2, 3000);
  next["first-row-id"] = 10;
  next["added-rows"] = 5;
  auto outcome = MustCommit(table, Json::array({AddSnapshot(next)}));  // not on main: still counts
  EXPECT_EQ(outcome.metadata.next_row_id, 15);
  // Stale first-row-id: 409.
  Json stale = Snapshot(3, 1, 3, 3000);
  stale["first-row-id"] = 9;
  stale["added-rows"] = 1;
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(stale)})), ErrorCode::kConflict);
  // Missing first-row-id: 400.
  Json missing = Snapshot(3, 1, 3, 3000);
  missing["added-rows"] = 1;
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(missing)})),
            ErrorCode::kValidationFailed);
  missing["first-row-id"] = nullptr;
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({AddSnapshot(missing)})),
            ErrorCode::kValidationFailed);
  // v2 ignores row lineage fields.
  EXPECT_EQ(
      CommitError(TableWithSnapshot(2), Json::array(), Json::array({AddSnapshot(Snapshot(3, 1, 3, 1))})),
      ErrorCode::kOk);
}

TEST(UpdateTest, SetSnapshotRefBranchesAndTags) {
  TableModel table = TableWithSnapshot();
  Json tag{{"action", "set-snapshot-ref"},
           {"ref-name", "v1"},
           {"type", "tag"},
           {"snapshot-id", 1},
           {"max-ref-age-ms", 1000}};
  auto outcome = MustCommit(table, Json::array({tag}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.refs.at("v1")["type"], "tag");
  EXPECT_EQ(outcome.metadata.refs.at("v1")["max-ref-age-ms"], 1000);
  EXPECT_EQ(outcome.metadata.current_snapshot_id, 1);
  EXPECT_FALSE(MustCommit(outcome.metadata, Json::array({tag})).changed);  // identical ref
  // Setting main to the snapshot it already has changes nothing.
  EXPECT_FALSE(MustCommit(table, Json::array({SetMain(1)})).changed);
  // Unknown snapshot and main as a tag break builder rules (Java: ValidationException); tag retention
  // is malformed (IllegalArgumentException).
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({SetMain(99)})), ErrorCode::kValidationFailed);
  Json bad_tag = tag;
  bad_tag["min-snapshots-to-keep"] = 2;
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({bad_tag})), ErrorCode::kInvalidArgument);
  Json main_tag = tag;
  main_tag["ref-name"] = "main";
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({main_tag})), ErrorCode::kValidationFailed);
  Json bad_type = tag;
  bad_type["type"] = "twig";
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({bad_type})), ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, IntermediateMainHeadsLeaveTheSnapshotLog) {
  TableModel table = NewTable(2, 1000);
  auto outcome = MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1),
                                                AddSnapshot(Snapshot(2, 1, 2, 3000)), SetMain(2)}));
  ASSERT_EQ(outcome.metadata.snapshot_log.size(), 1u);
  EXPECT_EQ(outcome.metadata.snapshot_log[0].snapshot_id, 2);
}

// PyIceberg's delete and Java's transactions commit two main heads at once: only the
// intermediate head leaves the log, the history before it stays (Java's updateSnapshotLog).
TEST(UpdateTest, IntermediateMainHeadKeepsTheHistoryBeforeIt) {
  TableModel table = NewTable(2, 1000);
  table =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)})).metadata;
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(2, 1, 2, 3000)), SetMain(2)})).metadata;
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(3, 2, 3, 4000)), SetMain(3),
                                         AddSnapshot(Snapshot(4, 3, 4, 5000)), SetMain(4)}))
              .metadata;
  auto ids = [](const TableModel& metadata) {
    std::vector<int64_t> out;
    for (const SnapshotLogEntry& entry : metadata.snapshot_log) out.push_back(entry.snapshot_id);
    return out;
  };
  EXPECT_EQ(ids(table), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(table.snapshot_log[0].timestamp_ms, 2000);
  EXPECT_EQ(table.snapshot_log[2].timestamp_ms, 5000);
  // The next ordinary commit keeps all three.
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(5, 4, 5, 6000)), SetMain(5)})).metadata;
  EXPECT_EQ(ids(table), (std::vector<int64_t>{1, 2, 4, 5}));
  // A main head set twice in one commit to snapshots that were already there is no intermediate:
  // both entries stay, as Java logs every main change to a snapshot it did not add.
  table = MustCommit(table, Json::array({SetMain(2), SetMain(5)})).metadata;
  EXPECT_EQ(ids(table), (std::vector<int64_t>{1, 2, 4, 5, 2, 5}));
  // Removing the intermediate snapshot later changes nothing in the log (it has no entry);
  // removing a logged one drops it and what came before it.
  table =
      MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {3}}}})).metadata;
  EXPECT_EQ(ids(table), (std::vector<int64_t>{1, 2, 4, 5, 2, 5}));
  table =
      MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {4}}}})).metadata;
  EXPECT_EQ(ids(table), (std::vector<int64_t>{5, 2, 5}));
}

std::vector<int64_t> LogIds(const TableModel& metadata) {
  std::vector<int64_t> out;
  for (const SnapshotLogEntry& entry : metadata.snapshot_log) out.push_back(entry.snapshot_id);
  return out;
}

// A rollback logs main's move at the time of the commit, not at the older snapshot's time.
TEST(UpdateTest, RollbackIsLoggedAtTheCommitTime) {
  TableModel table = NewTable(2, 1000);
  table =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)})).metadata;
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(2, 1, 2, 3000)), SetMain(2)})).metadata;
  table = MustCommit(table, Json::array({SetMain(1)}), Options(7000)).metadata;
  ASSERT_EQ(table.snapshot_log.size(), 3u);
  EXPECT_EQ(table.snapshot_log[2], (SnapshotLogEntry{7000, 1}));
  EXPECT_EQ(table.last_updated_ms, 7000);
}

// The log is rewritten only by a commit that removes snapshots or supersedes its own main head:
// an entry whose snapshot vanished otherwise (a registered file) stays as the reference keeps it.
TEST(UpdateTest, SnapshotLogIsOnlyRewrittenByRemovalsAndIntermediates) {
  TableModel table = NewTable(2, 1000);
  table =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)})).metadata;
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(2, 1, 2, 3000)), SetMain(2)})).metadata;
  table.snapshot_log.insert(table.snapshot_log.begin() + 1, SnapshotLogEntry{2500, 99});  // names no snapshot
  auto plain =
      MustCommit(table, Json::array({Json{{"action", "set-properties"}, {"updates", {{"k", "v"}}}}}));
  EXPECT_EQ(LogIds(plain.metadata), (std::vector<int64_t>{1, 99, 2}));
  // Intermediate heads without a removal drop the dangling entry but keep the history before it.
  auto intermediate = MustCommit(table, Json::array({AddSnapshot(Snapshot(3, 2, 3, 4000)), SetMain(3),
                                                     AddSnapshot(Snapshot(4, 3, 4, 4500)), SetMain(4)}));
  EXPECT_EQ(LogIds(intermediate.metadata), (std::vector<int64_t>{1, 2, 4}));
  // A removal drops it with the history before it.
  auto removal =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(3, 2, 3, 4000)), SetMain(3),
                                     Json{{"action", "remove-snapshots"}, {"snapshot-ids", {77}}}}));
  EXPECT_EQ(LogIds(removal.metadata), (std::vector<int64_t>{1, 99, 2, 3}));  // nothing was removed
  table.snapshots.push_back(StoredSnapshot::Make(Snapshot(5, 1, 1, 2200)));
  auto removed =
      MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {5}}}}));
  EXPECT_EQ(LogIds(removed.metadata), (std::vector<int64_t>{2}));
}

// After a removal the newest log entry must name the current snapshot (the reference refuses
// the commit otherwise; with an emptied log it fails on the empty list).
TEST(UpdateTest, ARemovalMustLeaveTheCurrentSnapshotLast) {
  TableModel table = NewTable(2, 1000);
  table =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)})).metadata;
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(2, 1, 2, 3000)), SetMain(2)})).metadata;
  table.current_snapshot_id = 1;
  table.refs["main"]["snapshot-id"] = 1;
  const Json remove_two = Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {2}}}});
  // Main was rolled back to 1 after 2: the entry of 2 goes with 2, leaving 1 last.
  table.snapshot_log = {{3000, 2}, {4000, 1}};
  auto kept = ApplyTableCommit(&table, Json::array(), remove_two, Options());
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_EQ(LogIds(kept->metadata), (std::vector<int64_t>{1}));
  // A log whose only entry for 1 comes before 2's loses it with 2's history: refused.
  table.snapshot_log = {{2000, 1}, {3000, 2}};
  auto refused = ApplyTableCommit(&table, Json::array(), remove_two, Options());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "Cannot set invalid snapshot log: latest entry is not the current snapshot");
}

// Clocks of writers may differ by a minute, no more: a snapshot timestamped far from the server's
// clock, or out of order with the history, would leave a file the reference refuses to load.
TEST(UpdateTest, TimestampsBeyondAMinuteOfSkewAreRefused) {
  const int64_t now = 1'700'000'000'000;
  TableModel table = NewTable(2, now - 10'000);
  auto commit = [&](const Json& updates, int64_t at) {
    return ApplyTableCommit(&table, Json::array(), updates, Options(at));
  };
  auto first =
      commit(Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, now - 30'000)), SetMain(1)}), now);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->metadata.last_updated_ms, now);
  // Ten minutes ahead of the server.
  auto ahead =
      commit(Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, now + 600'000)), SetMain(1)}), now);
  ASSERT_FALSE(ahead.ok());
  EXPECT_NE(ahead.status().message().find("before last snapshot log entry"), std::string::npos);
  // Two minutes behind the snapshot before it.
  table = first->metadata;
  auto behind = commit(Json::array({AddSnapshot(Snapshot(2, 1, 2, now - 150'000)), SetMain(2)}), now + 1000);
  ASSERT_FALSE(behind.ok());
  EXPECT_EQ(behind.status().message(), "[BUG] Expected sorted snapshot log entries.");
  // A server clock that went back more than a minute since the last version.
  auto back =
      commit(Json::array({Json{{"action", "set-properties"}, {"updates", {{"k", "v"}}}}}), now - 120'000);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().message().rfind("Invalid update timestamp", 0), 0u) << back.status().message();
  // Within a minute either way is fine.
  EXPECT_TRUE(
      commit(Json::array({AddSnapshot(Snapshot(2, 1, 2, now + 50'000)), SetMain(2)}), now + 1000).ok());
}

// Specs and sort orders bind to the current schema, and the defaults keep binding when the
// schema changes (the reference's checkCompatibility).
TEST(UpdateTest, SpecsAndOrdersMustBindToTheSchema) {
  TableModel table = NewTable(2);  // id long (1), data string (2); partitioned and sorted by id
  auto add_spec = [](Json fields) {
    return Json::array({Json{{"action", "add-spec"}, {"spec", {{"fields", std::move(fields)}}}},
                        Json{{"action", "set-default-spec"}, {"spec-id", -1}}});
  };
  auto field = [](int source, const char* transform) {
    return Json{{"source-id", source}, {"name", std::string("p_") + transform}, {"transform", transform}};
  };
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(9, "identity")}))),
            ErrorCode::kValidationFailed);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(2, "day")}))),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(1, "hour")}))),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(2, "bucket[8]")}))),
            ErrorCode::kOk);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(2, "truncate[3]")}))),
            ErrorCode::kOk);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(9, "void")}))), ErrorCode::kOk);
  // A partition field may take its own source column's name, never another column's.
  auto named = [](int source, const char* name, const char* transform) {
    return Json{{"source-id", source}, {"name", name}, {"transform", transform}};
  };
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({named(1, "id", "bucket[4]")}))),
            ErrorCode::kOk);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({named(1, "data", "bucket[4]")}))),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({named(2, "id", "identity")}))),
            ErrorCode::kInvalidArgument);
  auto failed =
      ApplyTableCommit(&table, Json::array(), add_spec(Json::array({field(2, "month")})), Options());
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "Invalid source type string for transform: month");
  Json order = {{"fields", Json::array({Json{{"source-id", 7},
                                             {"transform", "identity"},
                                             {"direction", "asc"},
                                             {"null-order", "nulls-first"}}})}};
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "add-sort-order"}, {"sort-order", order}}})),
            ErrorCode::kValidationFailed);
  // A new current schema without id (1), which the default spec and order use, is refused.
  Json data_only = {
      {"type", "struct"},
      {"fields", Json::array({Json{{"id", 2}, {"name", "data"}, {"required", false}, {"type", "string"}}})}};
  auto dropped = ApplyTableCommit(&table, Json::array(),
                                  Json::array({Json{{"action", "add-schema"}, {"schema", data_only}},
                                               Json{{"action", "set-current-schema"}, {"schema-id", -1}}}),
                                  Options());
  ASSERT_FALSE(dropped.ok());
  EXPECT_NE(dropped.status().message().find("Cannot find source column for partition field"),
            std::string::npos);
  // Partitioning on a field inside a list is refused; inside a struct it binds.
  Json nested = {
      {"type", "struct"},
      {"fields",
       Json::array(
           {Json{{"id", 1}, {"name", "id"}, {"required", true}, {"type", "long"}},
            Json{{"id", 2}, {"name", "data"}, {"required", false}, {"type", "string"}},
            Json{{"id", 3},
                 {"name", "s"},
                 {"required", false},
                 {"type",
                  {{"type", "struct"},
                   {"fields",
                    Json::array({Json{{"id", 4}, {"name", "x"}, {"required", false}, {"type", "int"}}})}}}},
            Json{
                {"id", 5},
                {"name", "l"},
                {"required", false},
                {"type",
                 {{"type", "list"}, {"element-id", 6}, {"element", "int"}, {"element-required", false}}}}})}};
  table = MustCommit(table, Json::array({Json{{"action", "add-schema"}, {"schema", nested}},
                                         Json{{"action", "set-current-schema"}, {"schema-id", -1}}}))
              .metadata;
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(4, "bucket[4]")}))),
            ErrorCode::kOk);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(6, "identity")}))),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(), add_spec(Json::array({field(3, "identity")}))),
            ErrorCode::kInvalidArgument);
}

// "-1" after re-adding a spec or order that this commit did not add names nothing.
TEST(UpdateTest, LastAddedNamesOnlyWhatThisCommitAdded) {
  TableModel table = NewTable(2);
  Json spec = {{"fields", Json::array({Json{{"source-id", 2}, {"name", "d"}, {"transform", "identity"}}})}};
  table = MustCommit(table, Json::array({Json{{"action", "add-spec"}, {"spec", spec}}})).metadata;
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "add-spec"}, {"spec", spec}},
                                     Json{{"action", "set-default-spec"}, {"spec-id", -1}}})),
            ErrorCode::kValidationFailed);
  // Within one commit, adding it twice still names it.
  TableModel fresh = NewTable(2);
  EXPECT_EQ(MustCommit(fresh, Json::array({Json{{"action", "add-spec"}, {"spec", spec}},
                                           Json{{"action", "add-spec"}, {"spec", spec}},
                                           Json{{"action", "set-default-spec"}, {"spec-id", -1}}}))
                .metadata.default_spec_id,
            1);
}

// Named limits (common/limits.h) keep one client from bloating what every later commit rewrites.
TEST(UpdateTest, PropertiesCommitsAndSchemasHaveLimits) {
  TableModel table = NewTable(2);
  auto set = [](std::string key, std::string value) {
    return Json::array(
        {Json{{"action", "set-properties"}, {"updates", {{std::move(key), std::move(value)}}}}});
  };
  EXPECT_EQ(
      CommitError(table, Json::array(), set("k", std::string(limits::kIcebergPropertyValueBytesMax, 'v'))),
      ErrorCode::kOk);
  EXPECT_EQ(CommitError(table, Json::array(),
                        set("k", std::string(limits::kIcebergPropertyValueBytesMax + 1, 'v'))),
            ErrorCode::kLimitExceeded);
  EXPECT_EQ(
      CommitError(table, Json::array(), set(std::string(limits::kIcebergPropertyKeyBytesMax + 1, 'k'), "v")),
      ErrorCode::kLimitExceeded);
  // Each value within its limit, together past theirs.
  Json many = Json::object();
  for (int i = 0; i < 3; ++i)
    many["k" + std::to_string(i)] = std::string(limits::kIcebergPropertyValueBytesMax, 'v');
  auto together = ApplyTableCommit(
      &table, Json::array(), Json::array({Json{{"action", "set-properties"}, {"updates", many}}}), Options());
  ASSERT_FALSE(together.ok());
  EXPECT_EQ(together.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(together.status().message().find("kIcebergPropertiesBytesMax"), std::string::npos);
  // Requirements and updates of one commit.
  Json updates = Json::array();
  for (uint32_t i = 0; i < limits::kCatalogUpdatesPerCommitMax; ++i) updates.push_back(set("k", "v")[0]);
  EXPECT_EQ(CommitError(table, Json::array(), updates), ErrorCode::kOk);
  updates.push_back(set("k", "v")[0]);
  EXPECT_EQ(CommitError(table, Json::array(), updates), ErrorCode::kLimitExceeded);
  // Fields of one schema, nested ones included.
  Json fields = Json::array();
  for (uint32_t i = 1; i <= limits::kIcebergSchemaFieldsMax + 1; ++i) {
    fields.push_back(
        Json{{"id", i}, {"name", "c" + std::to_string(i)}, {"required", false}, {"type", "int"}});
  }
  Json wide = {{"type", "struct"}, {"fields", fields}};
  EXPECT_EQ(
      CommitError(table, Json::array(), Json::array({Json{{"action", "add-schema"}, {"schema", wide}}})),
      ErrorCode::kLimitExceeded);
  wide["fields"].erase(wide["fields"].size() - 1);
  EXPECT_EQ(
      CommitError(table, Json::array(), Json::array({Json{{"action", "add-schema"}, {"schema", wide}}})),
      ErrorCode::kOk);
}

TEST(UpdateTest, SnapshotLogOutOfSnapshotOrderIsCleanedExactly) {
  TableModel table = NewTable(2, 1000);
  table =
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)})).metadata;
  for (int64_t id = 2; id <= 4; ++id) {
    table =
        MustCommit(table, Json::array({AddSnapshot(Snapshot(id, id - 1, id, 1000 + id * 1000)), SetMain(id)}))
            .metadata;
  }
  // A rollback to 2 logs 2 again, after 4: the log is no longer in the snapshots' order.
  table = MustCommit(table, Json::array({SetMain(2)})).metadata;
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(5, 2, 5, 9000)), SetMain(5)})).metadata;
  auto ids = [](const TableModel& metadata) {
    std::vector<int64_t> out;
    for (const SnapshotLogEntry& entry : metadata.snapshot_log) out.push_back(entry.snapshot_id);
    return out;
  };
  ASSERT_EQ(ids(table), (std::vector<int64_t>{1, 2, 3, 4, 2, 5}));
  // Every entry still names a snapshot: nothing is dropped.
  EXPECT_EQ(
      ids(MustCommit(table, Json::array({Json{{"action", "set-properties"}, {"updates", {{"k", "v"}}}}}))
              .metadata),
      (std::vector<int64_t>{1, 2, 3, 4, 2, 5}));
  // Removing 4 drops it and the history before it.
  EXPECT_EQ(ids(MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {4}}}}))
                    .metadata),
            (std::vector<int64_t>{2, 5}));
  // Removing the oldest leaves the rest.
  EXPECT_EQ(ids(MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {1}}}}))
                    .metadata),
            (std::vector<int64_t>{2, 3, 4, 2, 5}));
}

TEST(UpdateTest, RemoveSnapshotsDropsRefsStatisticsAndLog) {
  TableModel table = TableWithSnapshot();
  table = MustCommit(table, Json::array({AddSnapshot(Snapshot(2, 1, 2, 3000)),
                                         Json{{"action", "set-snapshot-ref"},
                                              {"ref-name", "dev"},
                                              {"type", "branch"},
                                              {"snapshot-id", 2}},
                                         Json{{"action", "set-statistics"},
                                              {"statistics",
                                               {{"snapshot-id", 2},
                                                {"statistics-path", "s3://p"},
                                                {"file-size-in-bytes", 1},
                                                {"file-footer-size-in-bytes", 1},
                                                {"blob-metadata", Json::array()}}}}}))
              .metadata;
  ASSERT_EQ(table.statistics.size(), 1u);
  auto outcome =
      MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {2, 77}}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.snapshots.size(), 1u);
  EXPECT_EQ(outcome.metadata.refs.count("dev"), 0u);
  EXPECT_TRUE(outcome.metadata.statistics.empty());
  EXPECT_EQ(outcome.metadata.current_snapshot_id, 1);
  // Removing the main head clears the current snapshot and its log.
  auto main_gone =
      MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {1}}}}));
  EXPECT_EQ(main_gone.metadata.current_snapshot_id, -1);
  EXPECT_EQ(main_gone.metadata.refs.count("main"), 0u);
  EXPECT_TRUE(main_gone.metadata.snapshot_log.empty());
  // Nothing to remove: nothing changes.
  EXPECT_FALSE(
      MustCommit(table, Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {99}}}})).changed);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "remove-snapshots"}, {"snapshot-ids", {"a"}}}})),
            ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, RemoveSnapshotRef) {
  TableModel table = TableWithSnapshot();
  auto outcome =
      MustCommit(table, Json::array({Json{{"action", "remove-snapshot-ref"}, {"ref-name", "main"}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.current_snapshot_id, -1);
  EXPECT_EQ(outcome.metadata.snapshots.size(), 1u);  // the snapshot stays
  EXPECT_FALSE(MustCommit(table, Json::array({Json{{"action", "remove-snapshot-ref"}, {"ref-name", "nope"}}}))
                   .changed);
}

TEST(UpdateTest, LocationAndProperties) {
  TableModel table = NewTable(2);
  auto outcome =
      MustCommit(table, Json::array({Json{{"action", "set-location"}, {"location", "s3://b/moved"}},
                                     Json{{"action", "set-properties"}, {"updates", {{"k", "v"}}}},
                                     Json{{"action", "remove-properties"}, {"removals", {"owner"}}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.location, "s3://b/moved");
  EXPECT_EQ(outcome.metadata.properties.at("k"), "v");
  EXPECT_EQ(outcome.metadata.properties.count("owner"), 0u);
  // The same values again are no change at all.
  EXPECT_FALSE(MustCommit(outcome.metadata,
                          Json::array({Json{{"action", "set-location"}, {"location", "s3://b/moved"}},
                                       Json{{"action", "set-properties"}, {"updates", {{"k", "v"}}}},
                                       Json{{"action", "remove-properties"}, {"removals", {"owner"}}}}))
                   .changed);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "set-properties"}, {"updates", {{"k", 1}}}}})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "remove-properties"}, {"removals", "k"}}})),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(CommitError(table, Json::array(), Json::array({Json{{"action", "set-location"}}})),
            ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, StatisticsAndPartitionStatistics) {
  TableModel table = TableWithSnapshot();
  Json stats{{"snapshot-id", 1},
             {"statistics-path", "s3://s"},
             {"file-size-in-bytes", 10},
             {"file-footer-size-in-bytes", 2},
             {"blob-metadata", Json::array()}};
  Json partition_stats{{"snapshot-id", 1}, {"statistics-path", "s3://p"}, {"file-size-in-bytes", 3}};
  auto outcome = MustCommit(
      table,
      Json::array({Json{{"action", "set-statistics"}, {"snapshot-id", 1}, {"statistics", stats}},
                   Json{{"action", "set-partition-statistics"}, {"partition-statistics", partition_stats}}}));
  EXPECT_EQ(outcome.metadata.statistics.size(), 1u);
  EXPECT_EQ(outcome.metadata.partition_statistics.size(), 1u);
  stats["file-size-in-bytes"] = 11;  // same snapshot: replaced, not appended
  auto replaced =
      MustCommit(outcome.metadata, Json::array({Json{{"action", "set-statistics"}, {"statistics", stats}}}));
  ASSERT_EQ(replaced.metadata.statistics.size(), 1u);
  EXPECT_EQ(replaced.metadata.statistics[0]["file-size-in-bytes"], 11);
  auto removed = MustCommit(
      replaced.metadata, Json::array({Json{{"action", "remove-statistics"}, {"snapshot-id", 1}},
                                      Json{{"action", "remove-partition-statistics"}, {"snapshot-id", 1}}}));
  EXPECT_TRUE(removed.changed);
  EXPECT_TRUE(removed.metadata.statistics.empty());
  EXPECT_TRUE(removed.metadata.partition_statistics.empty());
  EXPECT_FALSE(
      MustCommit(removed.metadata, Json::array({Json{{"action", "remove-statistics"}, {"snapshot-id", 1}}}))
          .changed);
}

TEST(UpdateTest, RemoveSpecsAndSchemas) {
  TableModel table =
      MustCommit(NewTable(2),
                 Json::array({Json{{"action", "add-schema"}, {"schema", testing::ThreeColumnSchema()}},
                              Json{{"action", "add-spec"}, {"spec", {{"fields", Json::array()}}}}}))
          .metadata;
  ASSERT_EQ(table.schemas.size(), 2u);
  ASSERT_EQ(table.partition_specs.size(), 2u);
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "remove-schemas"}, {"schema-ids", {0}}}})),
            ErrorCode::kInvalidArgument);  // current
  EXPECT_EQ(CommitError(table, Json::array(),
                        Json::array({Json{{"action", "remove-partition-specs"}, {"spec-ids", {0}}}})),
            ErrorCode::kInvalidArgument);  // default
  auto outcome =
      MustCommit(table, Json::array({Json{{"action", "remove-schemas"}, {"schema-ids", {1}}},
                                     Json{{"action", "remove-partition-specs"}, {"spec-ids", {1}}}}));
  EXPECT_TRUE(outcome.changed);
  EXPECT_EQ(outcome.metadata.schemas.size(), 1u);
  EXPECT_EQ(outcome.metadata.partition_specs.size(), 1u);
  EXPECT_EQ(outcome.metadata.last_column_id, 3);  // ids are never reused
  // Ids the table lacks still make a new version, as the reference records every removal; an empty
  // list changes nothing.
  EXPECT_TRUE(
      MustCommit(outcome.metadata, Json::array({Json{{"action", "remove-schemas"}, {"schema-ids", {42}}}}))
          .changed);
  EXPECT_FALSE(MustCommit(outcome.metadata, Json::array({Json{{"action", "remove-partition-specs"},
                                                              {"spec-ids", Json::array()}}}))
                   .changed);
}

TEST(UpdateTest, EncryptionKeys) {
  TableModel table = NewTable(3);
  Json key{{"key-id", "k1"}, {"encrypted-key-metadata", "AAEC"}, {"encrypted-by-id", "master"}};
  auto outcome =
      MustCommit(table, Json::array({Json{{"action", "add-encryption-key"}, {"encryption-key", key}}}));
  EXPECT_TRUE(outcome.changed);
  ASSERT_EQ(outcome.metadata.encryption_keys.size(), 1u);
  EXPECT_EQ(TableMetadataToJson(outcome.metadata)["encryption-keys"][0]["encrypted-by-id"], "master");
  EXPECT_FALSE(MustCommit(outcome.metadata,
                          Json::array({Json{{"action", "add-encryption-key"}, {"encryption-key", key}}}))
                   .changed);
  auto removed = MustCommit(outcome.metadata,
                            Json::array({Json{{"action", "remove-encryption-key"}, {"key-id", "k1"}}}));
  EXPECT_TRUE(removed.metadata.encryption_keys.empty());
  EXPECT_EQ(CommitError(
                table, Json::array(),
                Json::array({Json{{"action", "add-encryption-key"}, {"encryption-key", {{"key-id", "k"}}}}})),
            ErrorCode::kInvalidArgument);
}

TEST(UpdateTest, EnableRowLineageIsANoOp) {
  EXPECT_FALSE(MustCommit(NewTable(3), Json::array({Json{{"action", "enable-row-lineage"}}})).changed);
}

TEST(CommitTest, NoOpCommitWritesNothing) {
  TableModel table = NewTable(2, 1000);
  auto outcome = MustCommit(table, Json::array());
  EXPECT_FALSE(outcome.changed);
  EXPECT_EQ(outcome.metadata.last_updated_ms, 1000);
  EXPECT_TRUE(outcome.metadata.metadata_log.empty());
}

TEST(CommitTest, MetadataLogIsAppendedAndTrimmed) {
  TableModel table = NewTable(2, 1000);
  table.properties["write.metadata.previous-versions-max"] = "2";
  for (int i = 0; i < 4; ++i) {
    const std::string previous = "s3://b/t/metadata/0000" + std::to_string(i) + "-x.metadata.json";
    table =
        MustCommit(table,
                   Json::array({Json{{"action", "set-properties"}, {"updates", {{"n", std::to_string(i)}}}}}),
                   Options(2000 + i, previous))
            .metadata;
  }
  ASSERT_EQ(table.metadata_log.size(), 2u);
  EXPECT_EQ(table.metadata_log[0].metadata_file, "s3://b/t/metadata/00002-x.metadata.json");
  EXPECT_EQ(table.metadata_log[1].metadata_file, "s3://b/t/metadata/00003-x.metadata.json");
  EXPECT_EQ(table.metadata_log[1].timestamp_ms, 2002);  // when the previous version was written
  EXPECT_EQ(table.last_updated_ms, 2003);
}

TEST(CommitTest, StageCreateFinishBuildsFromEmpty) {
  Json updates = Json::parse(R"([
    {"action": "assign-uuid", "uuid": "9d2d2b6e-1111-4000-8000-000000000000"},
    {"action": "upgrade-format-version", "format-version": 1},
    {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
       {"id": 1, "name": "id", "required": true, "type": "long"}]}, "last-column-id": 1},
    {"action": "set-current-schema", "schema-id": -1},
    {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
    {"action": "set-default-spec", "spec-id": -1},
    {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
    {"action": "set-default-sort-order", "sort-order-id": -1},
    {"action": "set-location", "location": "s3://b/ns/t"},
    {"action": "set-properties", "updates": {"created-at": "now"}}])");
  Json requirements = Json::array({Json{{"type", "assert-create"}}});
  auto outcome = ApplyTableCommit(nullptr, requirements, updates, Options(777, ""));
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->changed);
  EXPECT_EQ(outcome->metadata.format_version, 1);  // v1 requested: not a downgrade from the default
  EXPECT_EQ(outcome->metadata.table_uuid, "9d2d2b6e-1111-4000-8000-000000000000");
  EXPECT_EQ(outcome->metadata.current_schema_id, 0);
  EXPECT_EQ(outcome->metadata.last_column_id, 1);
  EXPECT_EQ(outcome->metadata.location, "s3://b/ns/t");
  EXPECT_EQ(outcome->metadata.last_updated_ms, 777);
  EXPECT_TRUE(outcome->metadata.metadata_log.empty());
  EXPECT_TRUE(ParseTableMetadata(TableMetadataToJson(outcome->metadata)).ok());
  // Without a schema there is no table to create.
  EXPECT_EQ(ApplyTableCommit(nullptr, requirements, Json::array(), Options()).status().code(),
            ErrorCode::kInvalidArgument);
  // Without assign-uuid the server picks one.
  Json no_uuid = updates;
  no_uuid.erase(0);
  auto generated = ApplyTableCommit(nullptr, requirements, no_uuid, Options());
  ASSERT_TRUE(generated.ok());
  EXPECT_EQ(generated->metadata.table_uuid.size(), 36u);
}

TEST(CommitTest, JsonApiRoundTrip) {
  const std::string created =
      *CreateTableMetadataJson(R"({"name": "t", "schema": {"type": "struct", "fields": [
        {"id": 1, "name": "a", "required": false, "type": "int"}]}})",
                               "s3://b/t", "u-1", 10);
  CommitOptions options;
  options.now_ms = 20;
  options.previous_metadata_location = "s3://b/t/metadata/00000-u.metadata.json";
  auto result = CommitTableJson(created, R"([{"type": "assert-table-uuid", "uuid": "u-1"}])",
                                R"([{"action": "set-properties", "updates": {"x": "y"}}])", options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->changed);
  Json json = Json::parse(result->metadata_json);
  EXPECT_EQ(json["properties"]["x"], "y");
  EXPECT_EQ(json["metadata-log"][0]["metadata-file"], "s3://b/t/metadata/00000-u.metadata.json");
  EXPECT_EQ(CommitTableJson(created, R"([{"type": "assert-table-uuid", "uuid": "u-2"}])", "[]", options)
                .status()
                .code(),
            ErrorCode::kConflict);
  EXPECT_EQ(CommitTableJson(std::nullopt, R"([{"type": "assert-create"}])", "[", options).status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace serac::iceberg
