// Typed commits: every requirement and update the REST protocol has, read from its JSON (as the
// catalog's route reads it) and written back (as the REST client sends it) unchanged; the typed
// constructors writers use; and the one commit loop driving a ChangeMaker through lost races and
// lost answers.
#include "iceberg/metadata/table_update.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "iceberg/write/memory_table_catalog.h"
#include "iceberg/write/table_catalog.h"

namespace serac::iceberg {
namespace {

using Json = nlohmann::json;

constexpr char kEveryRequirement[] = R"([
  {"type": "assert-create"},
  {"type": "assert-table-uuid", "uuid": "6f0b6c8c-0000-4000-8000-000000000001"},
  {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 7},
  {"type": "assert-ref-snapshot-id", "ref": "audit", "snapshot-id": null},
  {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 3},
  {"type": "assert-current-schema-id", "current-schema-id": 1},
  {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1000},
  {"type": "assert-default-spec-id", "default-spec-id": 0},
  {"type": "assert-default-sort-order-id", "default-sort-order-id": 0}])";

constexpr char kEveryUpdate[] = R"([
  {"action": "assign-uuid", "uuid": "6f0b6c8c-0000-4000-8000-000000000001"},
  {"action": "upgrade-format-version", "format-version": 3},
  {"action": "add-schema", "last-column-id": 2, "schema": {"type": "struct", "schema-id": 1, "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "note", "required": false, "type": "string", "initial-default": "none"}]}},
  {"action": "set-current-schema", "schema-id": -1},
  {"action": "add-spec", "spec": {"spec-id": 1, "fields": [
      {"source-id": 1, "field-id": 1000, "name": "id_bucket", "transform": "bucket[16]"}]}},
  {"action": "set-default-spec", "spec-id": -1},
  {"action": "add-sort-order", "sort-order": {"order-id": 1, "fields": [
      {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]}},
  {"action": "set-default-sort-order", "sort-order-id": -1},
  {"action": "add-snapshot", "snapshot": {"snapshot-id": 7, "sequence-number": 1, "timestamp-ms": 1700000000000,
      "manifest-list": "s3://b/t/metadata/snap-7.avro", "summary": {"operation": "append"}, "schema-id": 1,
      "key-id": "k1"}},
  {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": 7,
      "min-snapshots-to-keep": 2, "max-snapshot-age-ms": 1000, "max-ref-age-ms": 5000},
  {"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag", "snapshot-id": 7},
  {"action": "remove-snapshots", "snapshot-ids": [3, 4]},
  {"action": "remove-snapshot-ref", "ref-name": "old"},
  {"action": "set-location", "location": "s3://b/t2"},
  {"action": "set-properties", "updates": {"a": "1", "b": "2"}},
  {"action": "remove-properties", "removals": ["c"]},
  {"action": "set-statistics", "statistics": {"snapshot-id": 7, "statistics-path": "s3://b/t/s.puffin",
      "file-size-in-bytes": 10, "file-footer-size-in-bytes": 5, "blob-metadata": []}},
  {"action": "remove-statistics", "snapshot-id": 7},
  {"action": "set-partition-statistics", "partition-statistics": {"snapshot-id": 7,
      "statistics-path": "s3://b/t/p.parquet", "file-size-in-bytes": 10}},
  {"action": "remove-partition-statistics", "snapshot-id": 7},
  {"action": "remove-partition-specs", "spec-ids": [2]},
  {"action": "remove-schemas", "schema-ids": [0]},
  {"action": "add-encryption-key", "encryption-key": {"key-id": "k1", "encrypted-key-metadata": "AAAA"}},
  {"action": "remove-encryption-key", "key-id": "k0"},
  {"action": "enable-row-lineage"}])";

TEST(TableUpdates, EveryKindIsWrittenAsItWasRead) {
  auto changes = TableChanges::Parse(kEveryRequirement, kEveryUpdate);
  ASSERT_TRUE(changes.ok()) << changes.status().ToString();
  EXPECT_EQ(changes->requirements.size(), 9u);
  EXPECT_EQ(changes->updates.size(), 25u);
  EXPECT_TRUE(changes->asserts_create());
  EXPECT_EQ(Json::parse(changes->RequirementsJson()), Json::parse(kEveryRequirement));
  EXPECT_EQ(Json::parse(changes->UpdatesJson()), Json::parse(kEveryUpdate));
}

TEST(TableUpdates, MalformedMembersAreRefusedWhereTheRequestIsRead) {
  EXPECT_EQ(TableChanges::Parse("[]", R"([{"action": "set-current-schema"}])").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableChanges::Parse("[]", R"([{"action": "add-snapshot", "snapshot": 7}])").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableChanges::Parse("[]", R"([{"action": "set-snapshot-ref", "ref-name": "x", "type": "leaf",
                                          "snapshot-id": 1}])")
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableChanges::Parse(R"([{"type": "assert-nothing"}])", "[]").status().code(),
            ErrorCode::kNotImplemented);
  EXPECT_EQ(TableChanges::Parse(R"([{"type": "assert-table-uuid"}])", "[]").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableChanges::Parse("[]", "{}").status().code(), ErrorCode::kInvalidArgument);
}

TableMetadata NewTable() {
  auto creation = TableCreation::Parse(R"({"name": "t", "schema": {"type": "struct", "schema-id": 0,
      "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]},
      "properties": {"format-version": "3"}})");
  EXPECT_TRUE(creation.ok()) << creation.status().ToString();
  auto metadata =
      creation->NewMetadata("s3://b/t", "6f0b6c8c-0000-4000-8000-000000000001", 1'700'000'000'000);
  EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
  return std::move(metadata).value();
}

TEST(TableUpdates, TypedConstructorsMakeDocumentsTheCatalogAccepts) {
  MemoryTableCatalog catalog(NewTable());
  Schema schema = catalog.metadata().CurrentSchema();
  NestedField note;
  note.id = 2;
  note.name = "note";
  note.type.id = TypeId::kString;
  schema.fields.push_back(note);
  TableChanges evolve;
  evolve.requirements = {AssertCurrentSchemaId{0}, AssertLastAssignedFieldId{1}};
  evolve.updates = {AddSchema::Of(schema, 2), SetCurrentSchema{kLastAdded}};
  ASSERT_TRUE(catalog.CommitTable({}, evolve).ok());
  EXPECT_EQ(catalog.metadata().CurrentSchema().fields.size(), 2u);
  EXPECT_EQ(catalog.metadata().last_column_id(), 2);

  Snapshot snapshot;
  snapshot.snapshot_id = 42;
  snapshot.sequence_number = 1;
  snapshot.timestamp_ms = ToUnixMillis(Now());
  snapshot.manifest_list = "s3://b/t/metadata/snap-42.avro";
  snapshot.summary = {{"operation", "append"}};
  snapshot.schema_id = catalog.metadata().current_schema_id();
  snapshot.first_row_id = 0;
  snapshot.added_rows = 0;
  TableChanges append;
  append.requirements = {AssertRefSnapshotId{kMainBranch, std::nullopt}};
  append.updates = {AddSnapshot::Of(snapshot, 3), SetSnapshotRef{kMainBranch, {.snapshot_id = 42}}};
  ASSERT_TRUE(catalog.CommitTable({}, append).ok());
  ASSERT_TRUE(catalog.metadata().CurrentSnapshot().has_value());
  EXPECT_EQ(catalog.metadata().CurrentSnapshot()->snapshot_id, 42);
  // The requirement now fails: main is no longer absent.
  EXPECT_EQ(catalog.CommitTable({}, append).code(), ErrorCode::kConflict);
}

// A change that sets one property, counting what the loop asks of it.
class PropertyChange final : public ChangeMaker {
 public:
  Result<TableChanges> Prepare(const TableMetadata& base, int64_t) override {
    ++prepares;
    TableChanges changes;
    if (nothing) return changes;
    changes.requirements = {AssertTableUuid{base.table_uuid()}};
    changes.updates = {SetProperties{{{"written-by", "loop"}}}};
    return changes;
  }
  bool Landed(const TableMetadata& table) const override {
    return table.properties().count("written-by") != 0;
  }
  void Finish(bool did_land) override {
    finished = true;
    landed = did_land;
  }
  int prepares = 0;
  bool nothing = false;
  bool finished = false;
  bool landed = false;
};

// Loses the first commit to a race, or applies it and loses the answer.
class FlakyCatalog final : public TableCatalog {
 public:
  FlakyCatalog(TableMetadata metadata, ErrorCode first) : inner_(std::move(metadata)), first_(first) {}
  Result<TableMetadata> LoadTable(const TableRef& table) override { return inner_.LoadTable(table); }
  Status CommitTable(const TableRef& table, const TableChanges& changes) override {
    ++commits;
    if (commits > 1) return inner_.CommitTable(table, changes);
    if (first_ == ErrorCode::kOutcomeUnknown) {
      SERAC_RETURN_IF_ERROR(inner_.CommitTable(table, changes));
      return Error(ErrorCode::kOutcomeUnknown, "the answer was lost");
    }
    return Error(first_, "lost the race");
  }
  int commits = 0;

 private:
  MemoryTableCatalog inner_;
  ErrorCode first_;
};

TEST(CommitLoop, ALostRacePreparesAgainAndALostAnswerIsFound) {
  FlakyCatalog raced(NewTable(), ErrorCode::kConflict);
  PropertyChange change;
  ASSERT_TRUE(CommitChange(raced, {}, change).ok());
  EXPECT_EQ(change.prepares, 2);
  EXPECT_EQ(raced.commits, 2);
  EXPECT_TRUE(change.finished && change.landed);

  FlakyCatalog lost(NewTable(), ErrorCode::kOutcomeUnknown);
  PropertyChange found;
  ASSERT_TRUE(CommitChange(lost, {}, found).ok());
  EXPECT_EQ(found.prepares, 1);  // found in the table: never applied twice
  EXPECT_EQ(lost.commits, 1);
  EXPECT_TRUE(found.finished && found.landed);

  FlakyCatalog untouched(NewTable(), ErrorCode::kConflict);
  PropertyChange nothing;
  nothing.nothing = true;
  ASSERT_TRUE(CommitChange(untouched, {}, nothing).ok());
  EXPECT_EQ(untouched.commits, 0);
  EXPECT_TRUE(nothing.finished && !nothing.landed);
}

}  // namespace
}  // namespace serac::iceberg
