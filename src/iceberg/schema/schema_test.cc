#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "common/limits.h"
#include "iceberg/metadata/metadata_internal.h"

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

Json WithField(const Json& field) {
  return Json{{"type", "struct"}, {"schema-id", 0}, {"fields", Json::array({field})}};
}

Json FieldOfType(const Json& type, bool required = false) {
  return Json{{"id", 1}, {"name", "c"}, {"required", required}, {"type", type}};
}

// The message of ValidateSchema's refusal, or "" when it accepts.
std::string Refusal(const Json& schema) {
  Status status = ValidateSchema(schema);
  EXPECT_TRUE(status.ok() || status.code() == ErrorCode::kInvalidArgument) << status.ToString();
  return status.ok() ? "" : status.message();
}

TEST(SchemaTest, PrimitiveNamesFollowTheReference) {
  for (const char* name : {"boolean",
                           "INT",
                           "Long",
                           "float",
                           "double",
                           "date",
                           "time",
                           "timestamp",
                           "timestamptz",
                           "timestamp_ns",
                           "timestamptz_ns",
                           "string",
                           "uuid",
                           "binary",
                           "unknown",
                           "variant",
                           "fixed[16]",
                           "fixed[ 3 ]",
                           "decimal(9,2)",
                           "DECIMAL( 38 , 10 )",
                           "geometry",
                           "geometry(srid:4326)",
                           "Geometry ( OGC:CRS84 )",
                           "geography",
                           "geography(OGC:CRS84)",
                           "geography(OGC:CRS84, spherical)",
                           "GEOGRAPHY(a b,KARNEY )"}) {
    EXPECT_EQ(Refusal(WithField(FieldOfType(name))), "") << name;
  }
  const std::pair<const char*, const char*> refused[] = {
      {"foo", "Cannot parse type string to primitive: foo"},
      {"decimal(x,y)", "Cannot parse type string to primitive"},
      {"decimal(39,0)", "Decimals with precision larger than 38 are not supported: 39"},
      {"decimal(10)", "Cannot parse type string to primitive"},
      {"decimal (10,2)", "Cannot parse type string to primitive"},
      {"fixed(16)", "Cannot parse type string to primitive"},
      {"fixed[99999999999]", "Cannot parse type string to primitive"},
      {"geometry()", "Invalid CRS: (empty string)"},
      {"geometry(a))", "Cannot parse type string to primitive"},
      {"geography( , spherical)", "Invalid CRS: (empty string)"},
      {"geography(OGC:CRS84, flat)", "Invalid edge interpolation algorithm: flat"},
      {"geography(OGC:CRS84, )", "Invalid edge interpolation algorithm"},
      {"geography(a, b, c)", "Cannot parse type string to primitive"},
      {"list", "Cannot parse type string to primitive"},
  };
  for (const auto& [name, message] : refused) {
    EXPECT_NE(Refusal(WithField(FieldOfType(name))).find(message), std::string::npos) << name;
  }
  EXPECT_NE(Refusal(WithField(FieldOfType(Json{{"type", "Struct"}, {"fields", Json::array()}})))
                .find("Cannot parse type from json"),
            std::string::npos);
  EXPECT_NE(Refusal(WithField(FieldOfType(5))).find("Cannot parse type from json"), std::string::npos);
}

TEST(SchemaTest, FieldMembersHaveTheReferenceTypes) {
  EXPECT_EQ(Refusal(WithField(FieldOfType("int"))), "");
  Json field = FieldOfType("int");
  field.erase("required");
  EXPECT_EQ(Refusal(WithField(field)), "Cannot parse missing boolean: required");
  field["required"] = nullptr;
  EXPECT_EQ(Refusal(WithField(field)), "Cannot parse to a boolean value: required: null");
  field = FieldOfType("int");
  field["id"] = 2147483648;
  EXPECT_EQ(Refusal(WithField(field)), "Cannot parse to an integer value: id: 2147483648");
  field = FieldOfType("int");
  field["doc"] = Json::array();
  EXPECT_EQ(Refusal(WithField(field)), "Cannot parse to a string value: doc: []");
  Json schema = WithField(FieldOfType("int"));
  schema["schema-id"] = -2147483649;
  EXPECT_NE(Refusal(schema).find("schema-id"), std::string::npos);
  schema = WithField(FieldOfType("int"));
  schema["identifier-field-ids"] = Json::array({"1"});
  EXPECT_NE(Refusal(schema).find("identifier-field-ids"), std::string::npos);
}

TEST(SchemaTest, UnknownTypeIsNeverRequired) {
  EXPECT_EQ(Refusal(WithField(FieldOfType("unknown"))), "");
  EXPECT_EQ(Refusal(WithField(FieldOfType("unknown", true))),
            "Cannot create required field with unknown type: c");
  Json list{{"type", "list"}, {"element-id", 2}, {"element", "unknown"}, {"element-required", true}};
  EXPECT_NE(Refusal(WithField(FieldOfType(list))).find("unknown type: element"), std::string::npos);
  // A map's key is always required.
  Json map{{"type", "map"}, {"key-id", 2},    {"key", "unknown"},
           {"value-id", 3}, {"value", "int"}, {"value-required", false}};
  EXPECT_NE(Refusal(WithField(FieldOfType(map))).find("unknown type: key"), std::string::npos);
}

TEST(SchemaTest, FullNamesAndIdsAreUnique) {
  // "a.b" at the top clashes with field b of struct a, as the reference joins names with dots.
  Json schema = Json::parse(R"({"type": "struct", "fields": [
    {"id": 1, "name": "a", "required": false, "type": {"type": "struct", "fields": [
      {"id": 2, "name": "b", "required": false, "type": "int"}]}},
    {"id": 3, "name": "a.b", "required": false, "type": "int"}]})");
  EXPECT_EQ(Refusal(schema), "Invalid schema: multiple fields for name a.b: 2 and 3");
  schema["fields"][1]["name"] = "a_b";
  EXPECT_EQ(Refusal(schema), "");
  schema["fields"][1]["id"] = 2;
  EXPECT_EQ(Refusal(schema), "Invalid schema: multiple fields for id 2: a.b and a_b");
  // A list's element is named "element", so a sibling struct field of that name is fine.
  EXPECT_EQ(Refusal(NestedSchema()), "");
}

TEST(SchemaTest, IdentifierFieldsFollowTheReferenceRules) {
  Json schema = NestedSchema();  // 10 id (required long), 20 point (optional struct of required doubles) ...
  auto with_identifiers = [&](Json ids) {
    Json copy = schema;
    copy["identifier-field-ids"] = std::move(ids);
    return Refusal(copy);
  };
  EXPECT_EQ(with_identifiers(Json::array({10})), "");
  EXPECT_EQ(with_identifiers(nullptr), "");
  EXPECT_NE(with_identifiers(Json::array({99})).find("field does not exist"), std::string::npos);
  EXPECT_NE(with_identifiers(Json::array({20})).find("not a primitive type field"), std::string::npos);
  EXPECT_NE(with_identifiers(Json::array({50})).find("not a required field"), std::string::npos);
  EXPECT_NE(with_identifiers(Json::array({21})).find("must not be float or double field"), std::string::npos);
  EXPECT_NE(with_identifiers(Json::array({41})).find("must not be nested in props"), std::string::npos);
  Json required_struct = Json::parse(R"({"type": "struct", "fields": [
    {"id": 1, "name": "s", "required": true, "type": {"type": "struct", "fields": [
      {"id": 2, "name": "k", "required": true, "type": "string"}]}},
    {"id": 3, "name": "o", "required": false, "type": {"type": "struct", "fields": [
      {"id": 4, "name": "k", "required": true, "type": "string"}]}}],
    "identifier-field-ids": [2]})");
  EXPECT_EQ(Refusal(required_struct), "");
  required_struct["identifier-field-ids"] = Json::array({4});
  EXPECT_NE(Refusal(required_struct).find("must not be nested in an optional field o"), std::string::npos);
}

TEST(SchemaTest, DefaultsMustParseForTheirType) {
  const std::pair<const char*, Json> accepted[] = {
      {"int", 5},
      {"long", 9007199254740993},
      {"boolean", true},
      {"double", 1.5},
      {"float", 2e3},
      {"string", "x"},
      {"date", "2024-02-29"},
      {"time", "12:30"},
      {"time", "12:30:01.123456"},
      {"timestamp", "2024-01-01T00:00:00"},
      {"timestamptz", "2024-01-01T00:00:00.5+00:00"},
      {"timestamptz_ns", "2024-01-01T00:00:00Z"},
      {"uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"},
      {"fixed[2]", "0aFF"},
      {"binary", "00"},
      {"decimal(9,2)", "3.14"},
      {"decimal(9,2)", "-1.00"},
  };
  for (const auto& [type, value] : accepted) {
    Json field = FieldOfType(type);
    field["write-default"] = value;
    EXPECT_EQ(Refusal(WithField(field)), "") << type << " " << value.dump();
  }
  const std::pair<const char*, Json> refused[] = {
      {"int", 2147483648},
      {"int", "5"},
      {"double", 1},
      {"boolean", "true"},
      {"date", "2023-02-29"},
      {"date", "20240101"},
      {"time", "24:00"},
      {"timestamp", "2024-01-01 00:00:00"},
      {"timestamptz", "2024-01-01T00:00:00+01:00"},
      {"timestamptz", "2024-01-01T00:00:00"},
      {"uuid", "f79c3e09677c4bbda4793f349cb785e7"},
      {"fixed[2]", "0a"},
      {"binary", "0g"},
      {"decimal(9,2)", "3.1"},
      {"decimal(9,2)", 3.14},
      {"variant", "x"},
      {"unknown", 1},
  };
  for (const auto& [type, value] : refused) {
    Json field = FieldOfType(type);
    field["initial-default"] = value;
    EXPECT_NE(Refusal(WithField(field)).find("Cannot parse initial-default of field c"), std::string::npos)
        << type << " " << value.dump();
  }
  // Nested types take no default but null.
  Json list{{"type", "list"}, {"element-id", 2}, {"element", "int"}, {"element-required", false}};
  Json field = FieldOfType(list);
  field["write-default"] = Json::array({1});
  EXPECT_NE(Refusal(WithField(field)).find("write-default"), std::string::npos);
  field["write-default"] = nullptr;
  EXPECT_EQ(Refusal(WithField(field)), "");
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
                           "geography(OGC:CRS84, spherical)", "TIMESTAMP_NS", "Variant", "GEOMETRY"}) {
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
