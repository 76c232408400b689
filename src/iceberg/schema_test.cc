#include <gtest/gtest.h>

#include "common/limits.h"
#include "iceberg/metadata_internal.h"

namespace serac::iceberg {
namespace {

// Old ids deliberately scrambled so a reassignment that keeps them cannot pass.
Json NestedSchema() {
  return Json::parse(R"({"type": "struct", "schema-id": 7, "identifier-field-ids": [10], "fields": [
    {"id": 10, "name": "id", "required": true, "type": "long"},
    {"id": 20, "name": "point", "required": false, "type": {"type": "struct", "fields": [
      {"id": 21, "name": "x", "required": true, "type": "double"},
      {"id": 22, "name": "y", "required": true, "type": "double"}]}},
    {"id": 30, "name": "tags", "required": false,
     "type": {"type": "list", "element-id": 31, "element": "string", "element-required": false}},
    {"id": 40, "name": "props", "required": false,
     "type": {"type": "map", "key-id": 41, "key": "string", "value-id": 42, "value-required": true,
              "value": {"type": "struct", "fields": [{"id": 43, "name": "a", "required": false, "type": "int",
                                                      "write-default": 5}]}}},
    {"id": 50, "name": "last", "required": false, "type": "string", "doc": "kept"}]})");
}

TEST(SchemaTest, HighestFieldIdLooksIntoNestedTypes) {
  ASSERT_TRUE(ValidateSchema(NestedSchema()).ok());
  EXPECT_EQ(HighestFieldId(NestedSchema()), 50);
  Json only_nested = Json::parse(R"({"type": "struct", "fields": [
    {"id": 1, "name": "m", "required": false,
     "type": {"type": "map", "key-id": 2, "key": "string", "value-id": 99, "value": "int", "value-required": false}}]})");
  EXPECT_EQ(HighestFieldId(only_nested), 99);
}

TEST(SchemaTest, ReassignFollowsReferenceOrder) {
  std::map<int64_t, int64_t> ids;
  Json fresh = ReassignFieldIds(NestedSchema(), &ids);
  const Json& fields = fresh["fields"];
  // Top-level fields first, 1..5.
  EXPECT_EQ(fields[0]["id"], 1);
  EXPECT_EQ(fields[1]["id"], 2);
  EXPECT_EQ(fields[2]["id"], 3);
  EXPECT_EQ(fields[3]["id"], 4);
  EXPECT_EQ(fields[4]["id"], 5);
  // Then children in field order: point.x, point.y, tags.element, props.key, props.value, value.a.
  EXPECT_EQ(fields[1]["type"]["fields"][0]["id"], 6);
  EXPECT_EQ(fields[1]["type"]["fields"][1]["id"], 7);
  EXPECT_EQ(fields[2]["type"]["element-id"], 8);
  EXPECT_EQ(fields[3]["type"]["key-id"], 9);
  EXPECT_EQ(fields[3]["type"]["value-id"], 10);
  EXPECT_EQ(fields[3]["type"]["value"]["fields"][0]["id"], 11);
  EXPECT_EQ(HighestFieldId(fresh), 11);
  EXPECT_EQ(fresh["identifier-field-ids"], Json::array({1}));
  EXPECT_EQ(ids.at(43), 11);
  EXPECT_EQ(ids.at(31), 8);
  // Fields serac does not model survive.
  EXPECT_EQ(fields[4]["doc"], "kept");
  EXPECT_EQ(fields[3]["type"]["value"]["fields"][0]["write-default"], 5);
}

TEST(SchemaTest, RejectsMalformedSchemas) {
  EXPECT_EQ(ValidateSchema(Json::parse(R"({"type": "struct"})")).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      ValidateSchema(Json::parse(R"({"type": "struct", "fields": [{"name": "x", "type": "int"}]})")).code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(ValidateSchema(Json::parse(R"({"type": "struct", "fields": [
      {"id": 1, "name": "l", "type": {"type": "list", "element": "int"}}]})"))
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ValidateSchema(Json::parse(R"({"type": "struct", "fields": [
      {"id": 1, "name": "u", "type": {"type": "union"}}]})"))
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ValidateSchema(Json::array()).code(), ErrorCode::kInvalidArgument);
}

TEST(SchemaTest, NestingDepthIsLimited) {
  Json type = "int";
  for (uint32_t i = 0; i < limits::kIcebergTypeNestingDepthMax + 5; ++i) {
    type = Json{{"type", "list"}, {"element-id", i + 2}, {"element", type}, {"element-required", false}};
  }
  Json schema{{"type", "struct"},
              {"fields", {{{"id", 1}, {"name", "deep"}, {"required", false}, {"type", type}}}}};
  EXPECT_EQ(ValidateSchema(schema).code(), ErrorCode::kLimitExceeded);
}

TEST(SchemaTest, V3OnlyTypesAndDefaultsNeedV3) {
  for (const char* type : {"timestamp_ns", "timestamptz_ns", "variant", "unknown", "geometry(OGC:CRS84)",
                           "geography(OGC:CRS84, spherical)"}) {
    Json schema{
        {"type", "struct"},
        {"fields",
         {{{"id", 1},
           {"name", "c"},
           {"required", false},
           {"type",
            {{"type", "list"}, {"element-id", 2}, {"element", type}, {"element-required", false}}}}}}};
    ASSERT_TRUE(ValidateSchema(schema).ok());
    EXPECT_EQ(CheckSchemaCompatibleWithFormat(schema, 2).code(), ErrorCode::kInvalidArgument) << type;
    EXPECT_EQ(CheckSchemaCompatibleWithFormat(schema, 1).code(), ErrorCode::kInvalidArgument) << type;
    EXPECT_TRUE(CheckSchemaCompatibleWithFormat(schema, 3).ok()) << type;
  }
  Json with_default = Json::parse(R"({"type": "struct", "fields": [
    {"id": 1, "name": "c", "required": false, "type": "int", "initial-default": 3}]})");
  EXPECT_EQ(CheckSchemaCompatibleWithFormat(with_default, 2).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(CheckSchemaCompatibleWithFormat(with_default, 3).ok());
  Json null_default = Json::parse(R"({"type": "struct", "fields": [
    {"id": 1, "name": "c", "required": false, "type": "int", "initial-default": null, "write-default": 4}]})");
  EXPECT_TRUE(CheckSchemaCompatibleWithFormat(null_default, 2).ok());
}

TEST(SchemaTest, SameSchemaIgnoresSchemaIdOnly) {
  Json a = NestedSchema();
  Json b = NestedSchema();
  b["schema-id"] = 3;
  EXPECT_TRUE(SameSchema(a, b));
  b["fields"][0]["name"] = "other";
  EXPECT_FALSE(SameSchema(a, b));
}

}  // namespace
}  // namespace serac::iceberg
