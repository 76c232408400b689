// Table commits carrying JSON that the reference's parsers refuse: serac stores schemas, specs,
// orders, snapshots, statistics and keys as sent and Java engines re-parse them on every load, so
// each such input must be refused with kInvalidArgument and leave the table as it was, while its
// well-formed twin is still accepted.
#include <gtest/gtest.h>

#include <string>

#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/test_util_internal.h"

namespace serac::iceberg {
namespace {

using testing::AddSnapshot;
using testing::MustCommit;
using testing::NewTable;
using testing::SetMain;
using testing::Snapshot;

constexpr int64_t kBeyondInt32 = 4294967296;  // 2^32: read as int32, it would become 0

// Commits `updates` and expects kInvalidArgument with `message` in its text. The commit is all or
// nothing, so `table` itself must come out exactly as it went in.
void ExpectRefused(const TableModel& table, const Json& updates, const std::string& message) {
  const std::string before = TableMetadataToJsonText(table);
  auto outcome = ApplyTableCommit(&table, Json::array(), updates, testing::Options());
  ASSERT_FALSE(outcome.ok()) << updates.dump();
  EXPECT_EQ(outcome.status().code(), ErrorCode::kInvalidArgument) << outcome.status().ToString();
  EXPECT_NE(outcome.status().message().find(message), std::string::npos)
      << "\"" << outcome.status().message() << "\" does not say \"" << message << "\"";
  EXPECT_EQ(TableMetadataToJsonText(table), before);
}

// The update after a property change, so a refusal must also undo what came before it.
Json AfterAChange(const Json& update) {
  return Json::array({Json{{"action", "set-properties"}, {"updates", {{"touched", "yes"}}}}, update});
}

Json AddSchemaUpdate(const Json& schema) { return Json{{"action", "add-schema"}, {"schema", schema}}; }

Json SchemaWithField(const Json& field) {
  Json schema = testing::TwoColumnSchema();
  schema["fields"].push_back(field);
  return schema;
}

// ---- Schemas ----

TEST(SchemaValidationTest, FieldsNeedIdNameRequiredAndType) {
  const TableModel table = NewTable(2);
  Json field = {{"id", 3}, {"name", "c"}, {"required", false}, {"type", "int"}};
  Json no_required = field;
  no_required.erase("required");
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(SchemaWithField(no_required))), "boolean: required");
  Json string_required = field;
  string_required["required"] = "false";
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(SchemaWithField(string_required))), "required");
  Json big_id = field;
  big_id["id"] = kBeyondInt32;
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(SchemaWithField(big_id))), "integer value: id");
  Json no_type = field;
  no_type.erase("type");
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(SchemaWithField(no_type))), "type");
  Json number_doc = field;
  number_doc["doc"] = 5;
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(SchemaWithField(number_doc))), "doc");

  Json null_doc = field;
  null_doc["doc"] = nullptr;
  EXPECT_TRUE(MustCommit(table, Json::array({AddSchemaUpdate(SchemaWithField(null_doc))})).changed);
  EXPECT_TRUE(MustCommit(table, Json::array({AddSchemaUpdate(SchemaWithField(field))})).changed);
}

TEST(SchemaValidationTest, ListsAndMapsNeedTheirRequiredFlags) {
  const TableModel table = NewTable(2);
  Json list = {{"type", "list"}, {"element-id", 4}, {"element", "string"}, {"element-required", false}};
  Json map = {{"type", "map"}, {"key-id", 5},    {"key", "string"},
              {"value-id", 6}, {"value", "int"}, {"value-required", true}};
  for (const char* key : {"element-required", "element-id", "element"}) {
    Json broken = list;
    broken.erase(key);
    ExpectRefused(table,
                  AfterAChange(AddSchemaUpdate(
                      SchemaWithField({{"id", 3}, {"name", "l"}, {"required", false}, {"type", broken}}))),
                  key);
  }
  for (const char* key : {"value-required", "key-id", "key", "value-id", "value"}) {
    Json broken = map;
    broken.erase(key);
    ExpectRefused(table,
                  AfterAChange(AddSchemaUpdate(
                      SchemaWithField({{"id", 3}, {"name", "m"}, {"required", false}, {"type", broken}}))),
                  key);
  }
  Json both = SchemaWithField({{"id", 3}, {"name", "l"}, {"required", false}, {"type", list}});
  both["fields"].push_back({{"id", 7}, {"name", "m"}, {"required", false}, {"type", map}});
  EXPECT_TRUE(MustCommit(table, Json::array({AddSchemaUpdate(both)})).changed);
}

TEST(SchemaValidationTest, PrimitiveTypesAreTheReferenceOnes) {
  const TableModel table = NewTable(2);
  auto with_type = [](const Json& type) {
    return SchemaWithField({{"id", 3}, {"name", "c"}, {"required", false}, {"type", type}});
  };
  for (const char* unknown : {"foo", "decimal(x,y)", "integer", "fixed[]", "decimal (10,2)", "struct"}) {
    ExpectRefused(table, AfterAChange(AddSchemaUpdate(with_type(unknown))), "Cannot parse type string");
  }
  // Letter case and the reference's spacing are fine.
  for (const char* known : {"LONG", "Decimal(10, 2)", "decimal( 38 ,0 )", "FIXED[ 16 ]", "TimestampTZ"}) {
    EXPECT_TRUE(MustCommit(table, Json::array({AddSchemaUpdate(with_type(known))})).changed) << known;
  }
  // The v3-only check reads names in any case too.
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(with_type("TIMESTAMP_NS"))), "needs format version 3");
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(with_type("Variant"))), "needs format version 3");
  EXPECT_TRUE(MustCommit(NewTable(3), Json::array({AddSchemaUpdate(with_type("TIMESTAMP_NS"))})).changed);
}

TEST(SchemaValidationTest, IdentifierFieldsAndNames) {
  const TableModel table = NewTable(2);  // 1: id (required long), 2: data (optional string)
  Json optional_identifier = testing::TwoColumnSchema();
  optional_identifier["identifier-field-ids"] = Json::array({2});
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(optional_identifier)), "not a required field");
  Json missing_identifier = testing::TwoColumnSchema();
  missing_identifier["identifier-field-ids"] = Json::array({9});
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(missing_identifier)), "field does not exist");
  Json duplicate_name = SchemaWithField({{"id", 3}, {"name", "data"}, {"required", false}, {"type", "int"}});
  ExpectRefused(table, AfterAChange(AddSchemaUpdate(duplicate_name)), "multiple fields for name data");

  Json identifier = testing::TwoColumnSchema();
  identifier["identifier-field-ids"] = Json::array({1});
  EXPECT_TRUE(MustCommit(table, Json::array({AddSchemaUpdate(identifier)})).changed);
}

TEST(SchemaValidationTest, CreateTableChecksTheSchemaToo) {
  Json schema = testing::TwoColumnSchema();
  schema["fields"][1].erase("required");
  auto request = ParseCreateTableRequest(Json{{"name", "t"}, {"schema", schema}});
  ASSERT_TRUE(request.ok());
  auto created = NewTableMetadata(*request, "s3://b/t", "u", 1);
  EXPECT_EQ(created.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("required"), std::string::npos);
}

// ---- Partition specs ----

Json AddSpecUpdate(const Json& fields) {
  return Json{{"action", "add-spec"}, {"spec", {{"spec-id", 0}, {"fields", fields}}}};
}

TEST(PartitionSpecValidationTest, FieldsNeedSourceNameAndTransform) {
  const TableModel table = NewTable(2);
  const Json field = {{"source-id", 2}, {"field-id", 1001}, {"name", "data_part"}, {"transform", "identity"}};
  for (const char* key : {"source-id", "name", "transform"}) {
    Json broken = field;
    broken.erase(key);
    ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({broken}))), key);
  }
  Json big_source = field;
  big_source["source-id"] = kBeyondInt32;
  ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({big_source}))), "integer value: source-id");
  Json null_field_id = field;
  null_field_id["field-id"] = nullptr;
  ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({null_field_id}))), "field-id");
  // v3 `source-ids` only where serac took them before: a create, not add-spec.
  Json source_ids = field;
  source_ids.erase("source-id");
  source_ids["source-ids"] = Json::array({2});
  ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({source_ids}))), "source-id");

  EXPECT_TRUE(MustCommit(table, Json::array({AddSpecUpdate(Json::array({field}))})).changed);
}

TEST(PartitionSpecValidationTest, NamesAreNonEmptyAndUnique) {
  const TableModel table = NewTable(2);
  const Json a = {{"source-id", 2}, {"name", "x"}, {"transform", "identity"}};
  const Json b = {{"source-id", 1}, {"name", "x"}, {"transform", "bucket[4]"}};
  ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({a, b}))),
                "Cannot use partition name more than once: x");
  Json empty = a;
  empty["name"] = "";
  ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({empty}))), "Cannot use empty partition name");
  Json renamed = b;
  renamed["name"] = "y";
  EXPECT_TRUE(MustCommit(table, Json::array({AddSpecUpdate(Json::array({a, renamed}))})).changed);
}

TEST(PartitionSpecValidationTest, FieldIdsOnAllFieldsOrNone) {
  const TableModel table = NewTable(2);
  const Json with_id = {{"source-id", 2}, {"field-id", 1001}, {"name", "x"}, {"transform", "identity"}};
  const Json without_id = {{"source-id", 1}, {"name", "y"}, {"transform", "bucket[4]"}};
  ExpectRefused(table, AfterAChange(AddSpecUpdate(Json::array({with_id, without_id}))),
                "Cannot parse spec with missing field IDs: 1 missing of 2 fields.");
  Json without_both = with_id;
  without_both.erase("field-id");
  EXPECT_TRUE(
      MustCommit(table, Json::array({AddSpecUpdate(Json::array({without_both, without_id}))})).changed);
}

TEST(PartitionSpecValidationTest, CreateTableChecksTheSpec) {
  auto create = [](const Json& spec) {
    auto request = ParseCreateTableRequest(
        Json{{"name", "t"}, {"schema", testing::TwoColumnSchema()}, {"partition-spec", spec}});
    EXPECT_TRUE(request.ok());
    return NewTableMetadata(*request, "s3://b/t", "u", 1);
  };
  const Json twice = {{"fields",
                       {{{"source-id", 1}, {"name", "p"}, {"transform", "identity"}},
                        {{"source-id", 2}, {"name", "p"}, {"transform", "identity"}}}}};
  EXPECT_EQ(create(twice).status().code(), ErrorCode::kInvalidArgument);
  const Json no_transform = {{"fields", {{{"source-id", 1}, {"name", "p"}}}}};
  EXPECT_EQ(create(no_transform).status().code(), ErrorCode::kInvalidArgument);
  // A create still takes v3 `source-ids`, as it did.
  const Json multi = {{"fields", {{{"source-ids", {1, 2}}, {"name", "p"}, {"transform", "bucket[4]"}}}}};
  EXPECT_TRUE(create(multi).ok()) << create(multi).status().ToString();
}

// ---- Sort orders ----

Json AddOrderUpdate(const Json& field) {
  return Json{{"action", "add-sort-order"},
              {"sort-order", {{"order-id", 0}, {"fields", Json::array({field})}}}};
}

TEST(SortOrderValidationTest, FieldsNeedAllFourMembers) {
  const TableModel table = NewTable(2);
  const Json field = {
      {"transform", "identity"}, {"source-id", 2}, {"direction", "desc"}, {"null-order", "nulls-last"}};
  for (const char* key : {"transform", "source-id", "direction", "null-order"}) {
    Json broken = field;
    broken.erase(key);
    ExpectRefused(table, AfterAChange(AddOrderUpdate(broken)), key);
  }
  Json up = field;
  up["direction"] = "up";
  ExpectRefused(table, AfterAChange(AddOrderUpdate(up)), "Invalid sort direction: up");
  Json nulls_middle = field;
  nulls_middle["null-order"] = "nulls-middle";
  ExpectRefused(table, AfterAChange(AddOrderUpdate(nulls_middle)), "Unexpected null order: nulls-middle");
  ExpectRefused(table,
                AfterAChange(Json{{"action", "add-sort-order"},
                                  {"sort-order", {{"fields", Json::array({Json::object()})}}}}),
                "transform");

  Json upper_case = field;
  upper_case["direction"] = "DESC";
  upper_case["null-order"] = "NULLS-LAST";
  EXPECT_TRUE(MustCommit(table, Json::array({AddOrderUpdate(upper_case)})).changed);
  EXPECT_TRUE(MustCommit(table, Json::array({AddOrderUpdate(field)})).changed);
}

TEST(SortOrderValidationTest, CreateTableChecksTheWriteOrder) {
  auto create = [](const Json& order) {
    auto request = ParseCreateTableRequest(
        Json{{"name", "t"}, {"schema", testing::TwoColumnSchema()}, {"write-order", order}});
    EXPECT_TRUE(request.ok());
    return NewTableMetadata(*request, "s3://b/t", "u", 1);
  };
  Json field = {
      {"transform", "identity"}, {"source-id", 1}, {"direction", "asc"}, {"null-order", "nulls-first"}};
  EXPECT_TRUE(create({{"order-id", 1}, {"fields", Json::array({field})}}).ok());
  field.erase("direction");
  auto refused = create({{"order-id", 1}, {"fields", Json::array({field})}});
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("direction"), std::string::npos);
}

// ---- Snapshots ----

TEST(SnapshotValidationTest, ManifestListOrManifestsAndStringSummary) {
  const TableModel table = NewTable(2);
  Json no_list = Snapshot(1, std::nullopt, 1, 2000);
  no_list.erase("manifest-list");
  ExpectRefused(table, AfterAChange(AddSnapshot(no_list)), "manifests");
  Json number_summary = Snapshot(1, std::nullopt, 1, 2000);
  number_summary["summary"]["added-files"] = 3;
  ExpectRefused(table, AfterAChange(AddSnapshot(number_summary)), "added-files");
  Json null_summary = Snapshot(1, std::nullopt, 1, 2000);
  null_summary["summary"] = nullptr;
  ExpectRefused(table, AfterAChange(AddSnapshot(null_summary)), "summary");
  Json big_schema = Snapshot(1, std::nullopt, 1, 2000);
  big_schema["schema-id"] = kBeyondInt32;
  ExpectRefused(table, AfterAChange(AddSnapshot(big_schema)), "integer value: schema-id");
  Json number_key = Snapshot(1, std::nullopt, 1, 2000);
  number_key["key-id"] = 7;
  ExpectRefused(table, AfterAChange(AddSnapshot(number_key)), "key-id");
  Json null_parent = Snapshot(1, std::nullopt, 1, 2000);
  null_parent["parent-snapshot-id"] = nullptr;
  ExpectRefused(table, AfterAChange(AddSnapshot(null_parent)), "parent-snapshot-id");

  // What the specification's Snapshot schema adds for a snapshot a client sends: from v2 on a
  // manifest list that names a file, a summary with its operation, and a parent other than itself.
  Json manifests = no_list;
  manifests["manifests"] = Json::array({"s3://bucket/t/metadata/m1.avro"});
  ExpectRefused(table, AfterAChange(AddSnapshot(manifests)), "manifest-list");
  manifests.erase("sequence-number");  // v1 has none
  EXPECT_TRUE(MustCommit(NewTable(1), Json::array({AddSnapshot(manifests), SetMain(1)})).changed);
  Json empty_list = Snapshot(1, std::nullopt, 1, 2000);
  empty_list["manifest-list"] = "";
  ExpectRefused(table, AfterAChange(AddSnapshot(empty_list)), "manifest-list must not be empty");
  Json no_operation = Snapshot(1, std::nullopt, 1, 2000);
  no_operation["summary"].erase("operation");
  ExpectRefused(table, AfterAChange(AddSnapshot(no_operation)), "operation");
  Json own_parent = Snapshot(1, std::nullopt, 1, 2000);
  own_parent["parent-snapshot-id"] = 1;
  ExpectRefused(table, AfterAChange(AddSnapshot(own_parent)), "its own parent");
  Json null_key = Snapshot(1, std::nullopt, 1, 2000);
  null_key["key-id"] = nullptr;
  ExpectRefused(table, AfterAChange(AddSnapshot(null_key)), "key-id");
  EXPECT_TRUE(
      MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)})).changed);
}

TEST(SnapshotValidationTest, RowLineageFieldsInEveryFormatVersion) {
  for (int version : {1, 2, 3}) {
    const TableModel table = NewTable(version);
    const int64_t sequence = version == 1 ? 0 : 1;
    Json negative = Snapshot(1, std::nullopt, sequence, 2000);
    negative["first-row-id"] = -5;
    negative["added-rows"] = 1;
    ExpectRefused(table, AfterAChange(AddSnapshot(negative)),
                  "Invalid first-row-id (cannot be negative): -5");
    Json no_added_rows = Snapshot(1, std::nullopt, sequence, 2000);
    no_added_rows["first-row-id"] = 0;
    ExpectRefused(table, AfterAChange(AddSnapshot(no_added_rows)),
                  "Invalid added-rows (required when first-row-id is set): null");
    Json twin = no_added_rows;
    twin["added-rows"] = 4;
    EXPECT_TRUE(MustCommit(table, Json::array({AddSnapshot(twin), SetMain(1)})).changed) << "v" << version;
  }
}

TEST(SnapshotValidationTest, V1SnapshotsHaveSequenceNumberZero) {
  const TableModel table = NewTable(1);
  ExpectRefused(table, AfterAChange(AddSnapshot(Snapshot(1, std::nullopt, 7, 2000))),
                "Sequence number must be 0 in v1: 7");
  EXPECT_TRUE(MustCommit(table, Json::array({AddSnapshot(Snapshot(1, std::nullopt, 0, 2000))})).changed);
  Json without = Snapshot(1, std::nullopt, 0, 2000);
  without.erase("sequence-number");
  EXPECT_TRUE(MustCommit(table, Json::array({AddSnapshot(without)})).changed);
}

// ---- Statistics ----

Json StatisticsFile(int64_t snapshot_id) {
  return Json{{"snapshot-id", snapshot_id},
              {"statistics-path", "s3://bucket/t/metadata/stats.puffin"},
              {"file-size-in-bytes", 400},
              {"file-footer-size-in-bytes", 100},
              {"blob-metadata",
               {{{"type", "apache-datasketches-theta-v1"},
                 {"snapshot-id", snapshot_id},
                 {"sequence-number", 1},
                 {"fields", {1}},
                 {"properties", {{"ndv", "3"}}}}}}};
}

TEST(StatisticsValidationTest, SetStatisticsNeedsTheWholeFile) {
  const TableModel table =
      MustCommit(NewTable(2), Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)}))
          .metadata;
  auto set = [](const Json& file) {
    return Json{{"action", "set-statistics"}, {"snapshot-id", 1}, {"statistics", file}};
  };
  ExpectRefused(table, AfterAChange(set({{"snapshot-id", 1}})), "statistics-path");
  for (const char* key :
       {"statistics-path", "file-size-in-bytes", "file-footer-size-in-bytes", "blob-metadata"}) {
    Json broken = StatisticsFile(1);
    broken.erase(key);
    ExpectRefused(table, AfterAChange(set(broken)),
                  key == std::string("blob-metadata") ? "blob metadata" : key);
  }
  for (const char* key : {"type", "snapshot-id", "sequence-number", "fields"}) {
    Json broken = StatisticsFile(1);
    broken["blob-metadata"][0].erase(key);
    ExpectRefused(table, AfterAChange(set(broken)), key);
  }
  Json big_field = StatisticsFile(1);
  big_field["blob-metadata"][0]["fields"] = Json::array({kBeyondInt32});
  ExpectRefused(table, AfterAChange(set(big_field)), "fields");
  Json number_property = StatisticsFile(1);
  number_property["blob-metadata"][0]["properties"]["ndv"] = 3;
  ExpectRefused(table, AfterAChange(set(number_property)), "ndv");

  Json no_properties = StatisticsFile(1);
  no_properties["blob-metadata"][0].erase("properties");
  EXPECT_TRUE(MustCommit(table, Json::array({set(no_properties)})).changed);
  EXPECT_TRUE(MustCommit(table, Json::array({set(StatisticsFile(1))})).changed);
}

TEST(StatisticsValidationTest, SetPartitionStatisticsNeedsPathAndSize) {
  const TableModel table =
      MustCommit(NewTable(2), Json::array({AddSnapshot(Snapshot(1, std::nullopt, 1, 2000)), SetMain(1)}))
          .metadata;
  const Json file = {
      {"snapshot-id", 1}, {"statistics-path", "s3://bucket/t/metadata/p.parquet"}, {"file-size-in-bytes", 9}};
  for (const char* key : {"statistics-path", "file-size-in-bytes"}) {
    Json broken = file;
    broken.erase(key);
    ExpectRefused(
        table, AfterAChange(Json{{"action", "set-partition-statistics"}, {"partition-statistics", broken}}),
        key);
  }
  EXPECT_TRUE(MustCommit(table, Json::array({Json{{"action", "set-partition-statistics"},
                                                  {"partition-statistics", file}}}))
                  .changed);
}

// ---- Encryption keys ----

TEST(EncryptionKeyValidationTest, KeyMetadataIsBase64) {
  const TableModel table = NewTable(3);
  auto add = [](const Json& key) { return Json{{"action", "add-encryption-key"}, {"encryption-key", key}}; };
  const Json key = {{"key-id", "k1"}, {"encrypted-key-metadata", "AAEC"}};
  for (const char* bad : {"%%%", "A", "AA=", "AAEC=", "AA==AA", "AA\nEC"}) {
    Json broken = key;
    broken["encrypted-key-metadata"] = bad;
    ExpectRefused(table, AfterAChange(add(broken)), "encrypted-key-metadata");
  }
  Json number_by = key;
  number_by["encrypted-by-id"] = 5;
  ExpectRefused(table, AfterAChange(add(number_by)), "encrypted-by-id");
  Json null_by = number_by;  // the specification's EncryptedKey has no null here
  null_by["encrypted-by-id"] = nullptr;
  ExpectRefused(table, AfterAChange(add(null_by)), "encrypted-by-id");
  Json number_property = key;
  number_property["properties"] = {{"a", 1}};
  ExpectRefused(table, AfterAChange(add(number_property)), "a");

  // Padding is optional, as java.util.Base64 decodes.
  for (const char* good : {"AAEC", "AAE=", "AA==", "AAE", "AA", ""}) {
    Json twin = key;
    twin["encrypted-key-metadata"] = good;
    twin["encrypted-by-id"] = "kek";
    twin["properties"] = {{"a", "1"}};
    EXPECT_TRUE(MustCommit(table, Json::array({add(twin)})).changed) << good;
  }
}

// ---- Ids the reference reads as int32 ----

TEST(Int32IdValidationTest, IdsBeyondInt32AreRefusedNotTruncated) {
  const TableModel table = NewTable(2);
  ExpectRefused(table, AfterAChange(Json{{"action", "set-current-schema"}, {"schema-id", kBeyondInt32}}),
                "Cannot parse to an integer value: schema-id: 4294967296");
  ExpectRefused(table, AfterAChange(Json{{"action", "set-default-spec"}, {"spec-id", kBeyondInt32}}),
                "spec-id");
  ExpectRefused(table,
                AfterAChange(Json{{"action", "set-default-sort-order"}, {"sort-order-id", kBeyondInt32 + 1}}),
                "sort-order-id");
  ExpectRefused(table, AfterAChange(Json{{"action", "set-current-schema"}, {"schema-id", -kBeyondInt32}}),
                "schema-id");
  Json spec = {{"spec-id", kBeyondInt32}, {"fields", Json::array()}};
  ExpectRefused(table, AfterAChange(Json{{"action", "add-spec"}, {"spec", spec}}), "spec-id");
  EXPECT_FALSE(
      MustCommit(table, Json::array({Json{{"action", "set-current-schema"}, {"schema-id", 0}}})).changed);
}

// ---- Legacy property keys ----

TEST(PropertyUpdateTest, LegacyKeysAreReadWhenTheNewOnesAreAbsent) {
  const TableModel table = NewTable(2);
  auto set = MustCommit(table, Json::array({Json{{"action", "set-properties"}, {"updated", {{"a", "1"}}}}}));
  EXPECT_EQ(set.metadata.properties.at("a"), "1");
  auto removed = MustCommit(
      set.metadata, Json::array({Json{{"action", "remove-properties"}, {"removed", Json::array({"a"})}}}));
  EXPECT_EQ(removed.metadata.properties.count("a"), 0u);
  // With both keys the new one wins, as the reference reads it.
  auto both = MustCommit(
      table, Json::array(
                 {Json{{"action", "set-properties"}, {"updates", {{"b", "2"}}}, {"updated", {{"c", "3"}}}}}));
  EXPECT_EQ(both.metadata.properties.count("b"), 1u);
  EXPECT_EQ(both.metadata.properties.count("c"), 0u);
  ExpectRefused(table, Json::array({Json{{"action", "set-properties"}, {"updated", {{"a", 1}}}}}), "a");
  ExpectRefused(table, Json::array({Json{{"action", "remove-properties"}, {"removed", Json::array({1})}}}),
                "removed");
  ExpectRefused(table, Json::array({Json{{"action", "set-properties"}}}), "updates");
}

}  // namespace
}  // namespace serac::iceberg
