// The public typed model (iceberg/metadata/table_metadata.h), used as other modules use it: JSON text in,
// typed values out, no JSON library.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "iceberg/metadata/table_metadata.h"
#include "iceberg/metadata/table_update.h"

namespace serac::iceberg {
namespace {

constexpr char kCreateBody[] = R"({"name": "events",
  "schema": {"type": "struct", "schema-id": 0, "identifier-field-ids": [1], "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "at", "required": false, "type": "timestamptz"},
    {"id": 3, "name": "tags", "required": false, "type": {"type": "list", "element-id": 4,
      "element": "string", "element-required": false}}]},
  "partition-spec": {"spec-id": 0, "fields": [
    {"source-id": 2, "field-id": 1000, "name": "at_day", "transform": "day"},
    {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"}]},
  "write-order": {"order-id": 1, "fields": [
    {"source-id": 2, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]},
  "properties": {"format-version": "3"}})";

TableMetadata NewEventsTable() {
  auto creation = TableCreation::Parse(kCreateBody);
  EXPECT_TRUE(creation.ok()) << creation.status().ToString();
  EXPECT_EQ(creation->name(), "events");
  EXPECT_FALSE(creation->stage_create());
  auto metadata = creation->NewMetadata("s3://wh/db/events", "00000000-0000-4000-8000-00000000e0e0", 1000);
  EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
  return *metadata;
}

TableChanges Changes(const std::string& requirements, const std::string& updates) {
  auto changes = TableChanges::Parse(requirements, updates);
  EXPECT_TRUE(changes.ok()) << changes.status().ToString();
  return *changes;
}

CommitOptions At(int64_t now_ms) {
  CommitOptions options;
  options.now_ms = now_ms;
  options.previous_metadata_location = "s3://wh/db/events/metadata/00000-a.metadata.json";
  return options;
}

TEST(TypedTableMetadata, ANewTableReadsAsTypedSchemaSpecAndOrder) {
  const TableMetadata table = NewEventsTable();
  EXPECT_EQ(table.format_version(), 3);
  EXPECT_EQ(table.location(), "s3://wh/db/events");
  EXPECT_EQ(table.last_column_id(), 4);
  EXPECT_EQ(table.next_row_id(), 0);
  EXPECT_EQ(table.current_snapshot_id(), -1);
  EXPECT_FALSE(table.CurrentSnapshot().has_value());

  const Schema schema = table.CurrentSchema();
  ASSERT_EQ(schema.fields.size(), 3u);
  EXPECT_EQ(schema.fields[1].type.id, TypeId::kTimestampTz);
  EXPECT_EQ(schema.identifier_field_ids, std::vector<int32_t>{1});
  ASSERT_NE(schema.FindFieldByName("tags.element"), nullptr);

  const PartitionSpec spec = table.DefaultSpec();
  ASSERT_EQ(spec.fields.size(), 2u);
  EXPECT_EQ(spec.fields[0].name, "at_day");
  EXPECT_EQ(spec.fields[0].transform, "day");
  EXPECT_EQ(spec.fields[0].source_ids, std::vector<int32_t>{2});
  EXPECT_EQ(spec.fields[0].field_id, 1000);
  EXPECT_EQ(spec.fields[1].transform, "bucket[16]");
  EXPECT_EQ(table.last_partition_id(), 1001);

  const SortOrder order = table.DefaultSortOrder();
  EXPECT_EQ(order.order_id, 1);
  ASSERT_EQ(order.fields.size(), 1u);
  EXPECT_EQ(order.fields[0].direction, SortDirection::kDescending);
  EXPECT_EQ(order.fields[0].null_order, NullOrder::kNullsLast);
}

TEST(TypedTableMetadata, ACommittedSnapshotReadsBackWithItsRefAndLog) {
  const TableMetadata table = NewEventsTable();
  auto committed =
      CommitTable(&table,
                  Changes(R"([{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null}])",
                          R"([{"action": "add-snapshot", "snapshot": {
                                            "snapshot-id": 7, "sequence-number": 1, "timestamp-ms": 2000,
                                            "manifest-list": "s3://wh/db/events/metadata/snap-7.avro",
                                            "summary": {"operation": "append", "added-records": "5"},
                                            "schema-id": 0, "first-row-id": 0, "added-rows": 5}},
                                          {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                                           "snapshot-id": 7},
                                          {"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag",
                                           "snapshot-id": 7, "max-ref-age-ms": 86400000}])"),
                  At(3000));
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  ASSERT_TRUE(committed->changed);
  const TableMetadata& next = committed->metadata;

  std::optional<Snapshot> current = next.CurrentSnapshot();
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->snapshot_id, 7);
  EXPECT_FALSE(current->parent_snapshot_id.has_value());
  EXPECT_EQ(current->sequence_number, 1);
  EXPECT_EQ(current->manifest_list, "s3://wh/db/events/metadata/snap-7.avro");
  EXPECT_EQ(current->operation(), "append");
  EXPECT_EQ(current->summary.at("added-records"), "5");
  EXPECT_EQ(current->first_row_id, 0);
  EXPECT_EQ(current->added_rows, 5);
  EXPECT_EQ(next.next_row_id(), 5);
  EXPECT_EQ(next.last_sequence_number(), 1);
  EXPECT_EQ(next.snapshot_count(), 1u);

  const std::map<std::string, SnapshotRef> refs = next.Refs();
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs.at(kMainBranch).type, RefType::kBranch);
  EXPECT_EQ(refs.at("v1").type, RefType::kTag);
  EXPECT_EQ(refs.at("v1").max_ref_age_ms, 86400000);
  EXPECT_EQ(next.snapshot_log(), (std::vector<SnapshotLogEntry>{{2000, 7}}));
  EXPECT_EQ(next.metadata_log().back().metadata_file, "s3://wh/db/events/metadata/00000-a.metadata.json");

  // The text round-trips to the same typed values; the original is untouched.
  auto reread = TableMetadata::Parse(next.ToJsonText());
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_EQ(reread->ToJsonText(), next.ToJsonText());
  EXPECT_EQ(JoinMetadataPieces(next.ToJsonPieces()), next.ToJsonText());
  EXPECT_FALSE(table.CurrentSnapshot().has_value());

  // A requirement that no longer holds is a conflict.
  auto stale = CommitTable(
      &next, Changes(R"([{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": null}])", "[]"),
      At(4000));
  EXPECT_EQ(stale.status().code(), ErrorCode::kConflict);
  // Nothing to change: the same version back, nothing to write.
  auto unchanged = CommitTable(&next, Changes("[]", "[]"), At(4000));
  ASSERT_TRUE(unchanged.ok());
  EXPECT_FALSE(unchanged->changed);
  EXPECT_EQ(unchanged->metadata.last_updated_ms(), next.last_updated_ms());
}

// What a commit names that its table's metadata did not: the catalog confines these to the
// table's location.
TEST(TypedTableMetadata, TheLocationsACommitAddsAreListed) {
  const TableMetadata table = NewEventsTable();
  EXPECT_TRUE(table.LocationsAddedSince(&table).empty());
  auto snapshot = [](int id, int parent) {
    return R"({"action": "add-snapshot", "snapshot": {"snapshot-id": )" + std::to_string(id) +
           (parent != 0 ? R"(, "parent-snapshot-id": )" + std::to_string(parent) : std::string()) +
           R"(, "sequence-number": )" + std::to_string(id) + R"(, "timestamp-ms": )" +
           std::to_string(2000 + id) + R"(, "manifest-list": "s3://wh/db/events/metadata/snap-)" +
           std::to_string(id) +
           R"(.avro", "summary": {"operation": "append"}, "schema-id": 0, "first-row-id": )" +
           std::to_string(10 * (id - 1)) + R"(, "added-rows": 10}})";
  };
  auto first =
      CommitTable(&table, Changes("[]", "[" + snapshot(1, 0) + "," + snapshot(2, 1) + "]"), At(3000));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::vector<TableMetadata::NamedLocation> added = first->metadata.LocationsAddedSince(&table);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].what, "snapshot 1's manifest list");
  EXPECT_EQ(added[1].location, "s3://wh/db/events/metadata/snap-2.avro");
  EXPECT_EQ(first->metadata.LocationsAddedSince(nullptr).size(), 2u);
  // Only what is new: the snapshots both versions share are not named again, also when the last
  // snapshot of the older version is gone, and changed write paths and statistics are named.
  auto second = CommitTable(
      &first->metadata,
      Changes("[]", "[" + snapshot(3, 2) + R"(, {"action": "remove-snapshots", "snapshot-ids": [2]},
                                    {"action": "set-properties", "updates": {"write.data.path": "s3://wh/x"}},
                                    {"action": "set-statistics", "statistics": {"snapshot-id": 3,
                                      "statistics-path": "s3://wh/db/events/metadata/3.stats",
                                      "file-size-in-bytes": 1, "file-footer-size-in-bytes": 1,
                                      "blob-metadata": []}}])"),
      At(4000));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  added = second->metadata.LocationsAddedSince(&first->metadata);
  std::vector<std::string> named;
  for (const TableMetadata::NamedLocation& location : added)
    named.push_back(location.what + " " + location.location);
  EXPECT_EQ(named,
            (std::vector<std::string>{"property write.data.path s3://wh/x",
                                      "snapshot 3's manifest list s3://wh/db/events/metadata/snap-3.avro",
                                      "statistics file s3://wh/db/events/metadata/3.stats"}));
}

TEST(TypedTableMetadata, AVersionOneFileGetsTheIdsJavaImplies) {
  auto v1 =
      TableMetadata::Parse(R"({"format-version": 1, "table-uuid": "00000000-0000-4000-8000-000000000001",
    "location": "s3://wh/old", "last-updated-ms": 10, "last-column-id": 2,
    "schema": {"type": "struct", "fields": [
      {"id": 1, "name": "id", "required": true, "type": "long"},
      {"id": 2, "name": "region", "required": false, "type": "string"}]},
    "partition-spec": [{"source-id": 2, "name": "region", "transform": "identity"},
                       {"source-id": 1, "name": "id_bucket", "transform": "bucket[4]"}],
    "properties": {}, "current-snapshot-id": 3,
    "snapshots": [{"snapshot-id": 3, "timestamp-ms": 10, "manifests": ["s3://wh/old/m1.avro"]}]})");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  const PartitionSpec spec = v1->DefaultSpec();
  ASSERT_EQ(spec.fields.size(), 2u);
  EXPECT_EQ(spec.fields[0].field_id, 1000);
  EXPECT_EQ(spec.fields[1].field_id, 1001);
  EXPECT_EQ(v1->DefaultSortOrder().fields.size(), 0u);  // unsorted
  std::optional<Snapshot> snapshot = v1->CurrentSnapshot();
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->sequence_number, 0);
  EXPECT_TRUE(snapshot->manifest_list.empty());
  EXPECT_EQ(snapshot->manifests, std::vector<std::string>{"s3://wh/old/m1.avro"});
  EXPECT_EQ(snapshot->operation(), "");
  EXPECT_EQ(v1->CurrentSchema().FindFieldByName("region")->id, 2);
}

TEST(TypedTableMetadata, MovingATableChangesOnlyItsLocation) {
  const TableMetadata table = NewEventsTable();
  const TableMetadata moved = table.WithLocation("s3://wh/db/events-2");
  EXPECT_EQ(moved.location(), "s3://wh/db/events-2");
  EXPECT_EQ(table.location(), "s3://wh/db/events");
  EXPECT_EQ(moved.table_uuid(), table.table_uuid());
  EXPECT_EQ(moved.NewFileLocation("", "f"), "s3://wh/db/events-2/metadata/00000-f.metadata.json");
}

TEST(TypedTableMetadata, BadInputIsRefusedWithTheReason) {
  EXPECT_EQ(TableMetadata::Parse("{").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableMetadata::Parse(R"({"format-version": 9})").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableCreation::Parse(R"({"name": "t"})").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(TableChanges::Parse("{}", "[]").status().code(), ErrorCode::kInvalidArgument);
  // An unknown action is refused where the request is read, before anything is applied.
  auto unknown = TableChanges::Parse("[]", R"([{"action": "no-such-action"}])");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotImplemented);
}

TEST(TypedTableMetadata, AStageCreateIsFinishedFromNothing) {
  const TableChanges changes =
      Changes(R"([{"type": "assert-create"}])",
              R"([{"action": "assign-uuid", "uuid": "00000000-0000-4000-8000-0000000000aa"},
                  {"action": "upgrade-format-version", "format-version": 2},
                  {"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": [
                    {"id": 1, "name": "id", "required": true, "type": "long"}]}, "last-column-id": 1},
                  {"action": "set-current-schema", "schema-id": -1},
                  {"action": "add-spec", "spec": {"spec-id": 0, "fields": []}},
                  {"action": "set-default-spec", "spec-id": -1},
                  {"action": "add-sort-order", "sort-order": {"order-id": 0, "fields": []}},
                  {"action": "set-default-sort-order", "sort-order-id": -1},
                  {"action": "set-location", "location": "s3://wh/db/staged"}])");
  EXPECT_TRUE(changes.asserts_create());
  auto created = CommitTable(nullptr, changes, At(2000));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->metadata.table_uuid(), "00000000-0000-4000-8000-0000000000aa");
  EXPECT_EQ(created->metadata.location(), "s3://wh/db/staged");
  EXPECT_TRUE(created->metadata.DefaultSpec().is_unpartitioned());
}

TEST(TypedViewMetadata, AViewIsCreatedAndReplaced) {
  auto creation = ViewCreation::Parse(R"({"name": "recent", "location": "s3://wh/db/recent",
    "schema": {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": false, "type": "long"}]},
    "view-version": {"version-id": 1, "schema-id": 0, "timestamp-ms": 1000, "default-namespace": ["db"],
      "summary": {"engine-name": "spark"},
      "representations": [{"type": "sql", "sql": "SELECT id FROM events", "dialect": "spark"}]},
    "properties": {"comment": "last day"}})");
  ASSERT_TRUE(creation.ok()) << creation.status().ToString();
  EXPECT_EQ(creation->name(), "recent");
  auto view = creation->NewMetadata("s3://wh/db/recent", "00000000-0000-4000-8000-0000000000bb");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->view_uuid(), "00000000-0000-4000-8000-0000000000bb");
  EXPECT_EQ(view->current_version_id(), 1);
  EXPECT_EQ(view->properties().at("comment"), "last day");

  auto replaced =
      CommitView(*view, R"([{"type": "assert-view-uuid", "uuid": "00000000-0000-4000-8000-0000000000bb"}])",
                 R"([{"action": "set-properties", "updates": {"comment": "last week"}}])", 2000);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_TRUE(replaced->changed);
  EXPECT_EQ(replaced->metadata.properties().at("comment"), "last week");
  auto reread = ViewMetadata::Parse(replaced->metadata.ToJsonText());
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_EQ(reread->properties().at("comment"), "last week");

  auto wrong_view = CommitView(*view, R"([{"type": "assert-view-uuid", "uuid": "other"}])", "[]", 2000);
  EXPECT_EQ(wrong_view.status().code(), ErrorCode::kConflict);
}

}  // namespace
}  // namespace serac::iceberg
