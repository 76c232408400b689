// The typed schema (schema.h): every type of the spec parsed, looked up and written back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "iceberg/schema/schema.h"

namespace serac::iceberg {
namespace {

using Json = nlohmann::json;

constexpr const char* kEveryType = R"json({
  "type": "struct", "schema-id": 3, "identifier-field-ids": [1],
  "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long", "doc": "primary key"},
    {"id": 2, "name": "price", "required": false, "type": "decimal(10, 2)"
},
    {"id": 3, "name": "digest", "required": false, "type": "fixed[16]"},
    {"id": 4, "name": "at", "required": false, "type": "timestamptz_ns"},
    {"id": 5, "name": "tags", "required": false,
     "type": {"type": "list", "element-id": 6, "element": "string", "element-required": true}},
    {"id": 7, "name": "attrs", "required": false,
     "type": {"type": "map", "key-id": 8, "key": "string", "value-id": 9,
              "value": {"type": "struct", "fields": [
                {"id": 10, "name": "n", "required": false, "type": "int", "initial-default": 42,
                 "write-default": 7}]},
              "value-required": false}},
    {"id": 11, "name": "shape", "required": false, "type": "geometry(srid:4326)"},
    {"id": 12, "name": "flag", "required": false, "type": "BOOLEAN"},
    {"id": 13, "name": "v", "required": false, "type": "variant"}
  ]
})json";

TEST(SchemaModelTest, ParsesEveryKindOfType) {
  Result<Schema> parsed = ParseSchema(kEveryType);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Schema& schema = *parsed;
  EXPECT_EQ(schema.schema_id, 3);
  EXPECT_EQ(schema.identifier_field_ids, std::vector<int32_t>{1});
  ASSERT_EQ(schema.fields.size(), 9u);
  EXPECT_EQ(schema.fields[0].type.id, TypeId::kLong);
  EXPECT_TRUE(schema.fields[0].required);
  EXPECT_EQ(schema.fields[0].doc, "primary key");
  EXPECT_EQ(schema.fields[1].type.id, TypeId::kDecimal);
  EXPECT_EQ(schema.fields[1].type.precision, 10);
  EXPECT_EQ(schema.fields[1].type.scale, 2);
  EXPECT_EQ(schema.fields[2].type.length, 16);
  EXPECT_EQ(schema.fields[3].type.id, TypeId::kTimestampTzNs);
  EXPECT_EQ(schema.fields[4].type.id, TypeId::kList);
  EXPECT_EQ(schema.fields[4].type.fields[0].id, 6);
  EXPECT_TRUE(schema.fields[4].type.fields[0].required);
  EXPECT_EQ(schema.fields[5].type.id, TypeId::kMap);
  EXPECT_EQ(schema.fields[5].type.fields[1].type.id, TypeId::kStruct);
  EXPECT_EQ(schema.fields[6].type.id, TypeId::kGeometry);
  EXPECT_EQ(schema.fields[6].type.Name(), "geometry(srid:4326)");
  EXPECT_EQ(schema.fields[7].type.id, TypeId::kBoolean);  // type names are case-insensitive
  EXPECT_EQ(schema.fields[8].type.id, TypeId::kVariant);
  EXPECT_FALSE(schema.fields[5].type.is_primitive());
  EXPECT_TRUE(schema.fields[1].type.is_primitive());
  EXPECT_EQ(schema.HighestFieldId(), 13);
}

TEST(SchemaModelTest, FindsFieldsByIdAndByPath) {
  Result<Schema> schema = ParseSchema(kEveryType);
  ASSERT_TRUE(schema.ok());
  ASSERT_NE(schema->FindField(10), nullptr);
  EXPECT_EQ(schema->FindField(10)->name, "n");
  EXPECT_EQ(schema->FindField(10)->initial_default_json, "42");
  EXPECT_EQ(schema->FindField(10)->write_default_json, "7");
  EXPECT_EQ(schema->FindField(99), nullptr);
  ASSERT_NE(schema->FindFieldByName("attrs.value.n"), nullptr);
  EXPECT_EQ(schema->FindFieldByName("attrs.value.n")->id, 10);
  EXPECT_EQ(schema->FindFieldByName("tags.element")->id, 6);
  EXPECT_EQ(schema->FindFieldByName("attrs.key")->id, 8);
  EXPECT_EQ(schema->FindFieldByName("ID"), nullptr);  // case-sensitive
  EXPECT_EQ(schema->FindFieldByName("id.x"), nullptr);
  EXPECT_EQ(schema->FindFieldByName(""), nullptr);
}

TEST(SchemaModelTest, WritesBackWhatItRead) {
  Result<Schema> schema = ParseSchema(kEveryType);
  ASSERT_TRUE(schema.ok());
  Json written = Json::parse(SchemaToJson(*schema));
  Json expected = Json::parse(kEveryType);
  expected["fields"][7]["type"] = "boolean";  // written in the spec's spelling
  EXPECT_EQ(written, expected) << written.dump(2);
  Result<Schema> again = ParseSchema(SchemaToJson(*schema));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(SchemaToJson(*again), SchemaToJson(*schema));
}

// A field without "required", a decimal beyond 38 digits, two fields with one id, a list where
// a struct must be, not an object, not JSON, a required field of type unknown.
constexpr const char* kRefused[] = {
    R"json({"type": "struct", "fields": [{"id": 1, "name": "a", "type": "long"}]})json",
    R"json({"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "decimal(39, 2)"}]})json",
    R"json({"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "int"},
                                        {"id": 1, "name": "b", "required": true, "type": "int"}]})json",
    R"json({"type": "list", "fields": []})json",
    R"json([])json",
    R"json({not json)json",
    R"json({"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "unknown"}]})json",
};

TEST(SchemaModelTest, RefusesWhatTheCatalogRefuses) {
  for (const char* bad : kRefused) {
    Result<Schema> refused = ParseSchema(bad);
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace serac::iceberg
