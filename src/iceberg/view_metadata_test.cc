#include <gtest/gtest.h>

#include "iceberg/iceberg.h"
#include "iceberg/metadata_internal.h"
#include "iceberg/test_util_internal.h"

namespace serac::iceberg {
namespace {

Json ViewVersion(int64_t id, const std::string& sql, int64_t timestamp_ms = 100) {
  return Json{{"version-id", id},
              {"schema-id", -1},
              {"timestamp-ms", timestamp_ms},
              {"summary", {{"engine-name", "spark"}}},
              {"representations", {{{"type", "sql"}, {"sql", sql}, {"dialect", "spark"}}}},
              {"default-namespace", {"ns"}}};
}

ViewMetadata NewView() {
  Json body{{"name", "v"},
            {"schema", testing::TwoColumnSchema()},
            {"view-version", ViewVersion(1, "select 1")},
            {"properties", {{"comment", "hi"}}}};
  auto request = ParseCreateViewRequest(body);
  EXPECT_TRUE(request.ok());
  auto metadata = NewViewMetadata(*request, "s3://b/ns/v", "aaaa-bbbb");
  EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
  return *metadata;
}

TEST(ViewTest, CreateSetsCurrentVersionAndLog) {
  ViewMetadata view = NewView();
  EXPECT_EQ(view.view_uuid, "aaaa-bbbb");
  EXPECT_EQ(view.current_version_id, 1);
  ASSERT_EQ(view.versions.size(), 1u);
  EXPECT_EQ(view.versions[0]["schema-id"], 0);  // bound to the schema sent beside it
  ASSERT_EQ(view.version_log.size(), 1u);
  EXPECT_EQ(view.version_log[0], (VersionLogEntry{100, 1}));
  EXPECT_EQ(view.properties.at("comment"), "hi");
  Json json = ViewMetadataToJson(view);
  json["future"] = 1;
  auto parsed = ParseViewMetadata(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(ViewMetadataToJson(*parsed), json);
}

TEST(ViewTest, ReplaceAddsVersionAndSchema) {
  ViewMetadata view = NewView();
  Json requirements = Json::array({Json{{"type", "assert-view-uuid"}, {"uuid", "AAAA-BBBB"}}});
  Json updates =
      Json::array({Json{{"action", "add-schema"}, {"schema", testing::ThreeColumnSchema()}},
                   Json{{"action", "add-view-version"}, {"view-version", ViewVersion(1, "select 2", 200)}},
                   Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}});
  auto outcome = ApplyViewCommit(view, requirements, updates);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->changed);
  EXPECT_EQ(outcome->metadata.current_version_id, 2);  // id 1 taken: next free id
  EXPECT_EQ(outcome->metadata.FindVersion(2)->at("schema-id"), 1);
  ASSERT_EQ(outcome->metadata.version_log.size(), 2u);
  EXPECT_EQ(outcome->metadata.version_log[1], (VersionLogEntry{200, 2}));
  // Re-sending the same version reuses it: nothing changes.
  auto again = ApplyViewCommit(outcome->metadata, requirements, updates);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
}

TEST(ViewTest, RequirementsAndErrors) {
  ViewMetadata view = NewView();
  auto wrong_uuid = ApplyViewCommit(
      view, Json::array({Json{{"type", "assert-view-uuid"}, {"uuid", "other"}}}), Json::array());
  EXPECT_EQ(wrong_uuid.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(wrong_uuid.status().message(),
            "Requirement failed: view UUID does not match: expected " + view.view_uuid + " != other");
  auto table_requirement = ApplyViewCommit(
      view, Json::array({Json{{"type", "assert-current-schema-id"}, {"current-schema-id", 0}}}),
      Json::array());
  EXPECT_EQ(table_requirement.status().code(), ErrorCode::kInvalidArgument);
  auto code = [&](const Json& update) {
    auto outcome = ApplyViewCommit(view, Json::array(), Json::array({update}));
    return outcome.ok() ? ErrorCode::kOk : outcome.status().code();
  };
  EXPECT_EQ(code(Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "set-current-view-version"}, {"view-version-id", 9}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "upgrade-format-version"}, {"format-version", 2}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "assign-uuid"}, {"uuid", "new"}}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "add-snapshot"}}), ErrorCode::kInvalidArgument);
  Json two_spark = ViewVersion(5, "select 3");
  two_spark["schema-id"] = 0;  // an existing schema, so only the duplicate dialect is wrong
  two_spark["representations"].push_back({{"type", "sql"}, {"sql", "select 4"}, {"dialect", "SPARK"}});
  EXPECT_EQ(code(Json{{"action", "add-view-version"}, {"view-version", two_spark}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ApplyViewCommit(view, Json::array(),
                            Json::array({Json{{"action", "add-view-version"}, {"view-version", two_spark}}}))
                .status()
                .message(),
            "Invalid view version: Cannot add multiple queries for dialect spark");
  Json unknown_schema = ViewVersion(5, "select 3");
  unknown_schema["schema-id"] = 8;
  EXPECT_EQ(code(Json{{"action", "add-view-version"}, {"view-version", unknown_schema}}),
            ErrorCode::kInvalidArgument);
}

TEST(ViewTest, SharedUpdates) {
  ViewMetadata view = NewView();
  auto outcome =
      ApplyViewCommit(view, Json::array(),
                      Json::array({Json{{"action", "set-location"}, {"location", "s3://b/elsewhere"}},
                                   Json{{"action", "set-properties"}, {"updates", {{"a", "b"}}}},
                                   Json{{"action", "remove-properties"}, {"removals", {"comment"}}},
                                   Json{{"action", "assign-uuid"}, {"uuid", "aaaa-bbbb"}},
                                   Json{{"action", "upgrade-format-version"}, {"format-version", 1}}}));
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->changed);
  EXPECT_EQ(outcome->metadata.location, "s3://b/elsewhere");
  EXPECT_EQ(outcome->metadata.properties.count("comment"), 0u);
  EXPECT_EQ(outcome->metadata.properties.at("a"), "b");
  auto none = ApplyViewCommit(outcome->metadata, Json::array(),
                              Json::array({Json{{"action", "set-properties"}, {"updates", {{"a", "b"}}}}}));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->changed);
}

TEST(ViewTest, OldVersionsAreTrimmed) {
  ViewMetadata view = NewView();
  view.properties["version.history.num-entries"] = "2";
  for (int i = 2; i <= 4; ++i) {
    Json version = ViewVersion(i, "select " + std::to_string(i), i * 100);
    version["schema-id"] = 0;  // no schema added in this commit, so -1 would be refused
    auto outcome =
        ApplyViewCommit(view, Json::array(),
                        Json::array({Json{{"action", "add-view-version"}, {"view-version", version}},
                                     Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}}));
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    view = outcome->metadata;
  }
  ASSERT_EQ(view.versions.size(), 2u);
  EXPECT_EQ(view.versions[0]["version-id"], 3);
  EXPECT_EQ(view.current_version_id, 4);
  ASSERT_EQ(view.version_log.size(), 2u);
  EXPECT_EQ(view.version_log[0].version_id, 3);
}

TEST(ViewTest, JsonApi) {
  Json body{
      {"name", "v"}, {"schema", testing::TwoColumnSchema()}, {"view-version", ViewVersion(1, "select 1")}};
  auto created = CreateViewMetadataJson(body.dump(), "s3://b/v", "u");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto committed = CommitViewJson(*created, R"([{"type": "assert-view-uuid", "uuid": "u"}])",
                                  R"([{"action": "set-properties", "updates": {"k": "v"}}])");
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_TRUE(committed->changed);
  EXPECT_EQ(Json::parse(committed->metadata_json)["properties"]["k"], "v");
  EXPECT_EQ(CreateViewMetadataJson(R"({"name": "v"})", "l", "u").status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace serac::iceberg
