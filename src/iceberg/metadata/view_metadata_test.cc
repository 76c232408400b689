#include <gtest/gtest.h>

#include "iceberg/iceberg.h"
#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/test_util_internal.h"

namespace serac::iceberg {
namespace {

constexpr int64_t kNowMs = 1800000000000;  // the server's clock in these commits

Json ViewVersion(int64_t id, const std::string& sql, int64_t timestamp_ms = 100) {
  return Json{{"version-id", id},
              {"schema-id", -1},
              {"timestamp-ms", timestamp_ms},
              {"summary", {{"engine-name", "spark"}}},
              {"representations", {{{"type", "sql"}, {"sql", sql}, {"dialect", "spark"}}}},
              {"default-namespace", {"ns"}}};
}

ViewModel NewView() {
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
  ViewModel view = NewView();
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

// A version the commit adds is logged at its own time; going back to an older one is logged at
// the server's time of the commit (the reference's rule).
TEST(ViewTest, MovingBackToAnOlderVersionIsLoggedAtTheCommitTime) {
  ViewModel view = NewView();
  Json second = ViewVersion(2, "select 2", 200);
  second["schema-id"] = 0;
  auto replaced =
      ApplyViewCommit(view, Json::array(),
                      Json::array({Json{{"action", "add-view-version"}, {"view-version", second}},
                                   Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}}),
                      kNowMs);
  ASSERT_TRUE(replaced.ok()) << replaced.status().ToString();
  EXPECT_EQ(replaced->metadata.version_log.back(), (VersionLogEntry{200, 2}));
  auto back = ApplyViewCommit(
      replaced->metadata, Json::array(),
      Json::array({Json{{"action", "set-current-view-version"}, {"view-version-id", 1}}}), kNowMs);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->metadata.version_log.back(), (VersionLogEntry{kNowMs, 1}));
}

TEST(ViewTest, ReplaceAddsVersionAndSchema) {
  ViewModel view = NewView();
  Json requirements = Json::array({Json{{"type", "assert-view-uuid"}, {"uuid", "AAAA-BBBB"}}});
  Json updates =
      Json::array({Json{{"action", "add-schema"}, {"schema", testing::ThreeColumnSchema()}},
                   Json{{"action", "add-view-version"}, {"view-version", ViewVersion(1, "select 2", 200)}},
                   Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}});
  auto outcome = ApplyViewCommit(view, requirements, updates, kNowMs);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->changed);
  EXPECT_EQ(outcome->metadata.current_version_id, 2);  // id 1 taken: next free id
  EXPECT_EQ(outcome->metadata.FindVersion(2)->at("schema-id"), 1);
  ASSERT_EQ(outcome->metadata.version_log.size(), 2u);
  EXPECT_EQ(outcome->metadata.version_log[1], (VersionLogEntry{200, 2}));
  // Re-sending the same version reuses it: nothing changes.
  auto again = ApplyViewCommit(outcome->metadata, requirements, updates, kNowMs);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
}

TEST(ViewTest, RequirementsAndErrors) {
  ViewModel view = NewView();
  auto wrong_uuid = ApplyViewCommit(
      view, Json::array({Json{{"type", "assert-view-uuid"}, {"uuid", "other"}}}), Json::array(), kNowMs);
  EXPECT_EQ(wrong_uuid.status().code(), ErrorCode::kConflict);
  EXPECT_EQ(wrong_uuid.status().message(),
            "Requirement failed: view UUID does not match: expected " + view.view_uuid + " != other");
  auto table_requirement = ApplyViewCommit(
      view, Json::array({Json{{"type", "assert-current-schema-id"}, {"current-schema-id", 0}}}),
      Json::array(), kNowMs);
  EXPECT_EQ(table_requirement.status().code(), ErrorCode::kInvalidArgument);
  auto code = [&](const Json& update) {
    auto outcome = ApplyViewCommit(view, Json::array(), Json::array({update}), kNowMs);
    return outcome.ok() ? ErrorCode::kOk : outcome.status().code();
  };
  EXPECT_EQ(code(Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "set-current-view-version"}, {"view-version-id", 9}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "upgrade-format-version"}, {"format-version", 2}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(Json{{"action", "assign-uuid"}, {"uuid", "new"}}), ErrorCode::kInvalidArgument);
  // A table's update on a view is unsupported there, as Java's builder answers it.
  EXPECT_EQ(code(Json{{"action", "add-snapshot"}}), ErrorCode::kNotImplemented);
  Json two_spark = ViewVersion(5, "select 3");
  two_spark["schema-id"] = 0;  // an existing schema, so only the duplicate dialect is wrong
  two_spark["representations"].push_back({{"type", "sql"}, {"sql", "select 4"}, {"dialect", "SPARK"}});
  EXPECT_EQ(code(Json{{"action", "add-view-version"}, {"view-version", two_spark}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ApplyViewCommit(view, Json::array(),
                            Json::array({Json{{"action", "add-view-version"}, {"view-version", two_spark}}}),
                            kNowMs)
                .status()
                .message(),
            "Invalid view version: Cannot add multiple queries for dialect spark");
  Json unknown_schema = ViewVersion(5, "select 3");
  unknown_schema["schema-id"] = 8;
  EXPECT_EQ(code(Json{{"action", "add-view-version"}, {"view-version", unknown_schema}}),
            ErrorCode::kInvalidArgument);
}

TEST(ViewTest, SharedUpdates) {
  ViewModel view = NewView();
  auto outcome =
      ApplyViewCommit(view, Json::array(),
                      Json::array({Json{{"action", "set-location"}, {"location", "s3://b/elsewhere"}},
                                   Json{{"action", "set-properties"}, {"updates", {{"a", "b"}}}},
                                   Json{{"action", "remove-properties"}, {"removals", {"comment"}}},
                                   Json{{"action", "assign-uuid"}, {"uuid", "aaaa-bbbb"}},
                                   Json{{"action", "upgrade-format-version"}, {"format-version", 1}}}),
                      kNowMs);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->changed);
  EXPECT_EQ(outcome->metadata.location, "s3://b/elsewhere");
  EXPECT_EQ(outcome->metadata.properties.count("comment"), 0u);
  EXPECT_EQ(outcome->metadata.properties.at("a"), "b");
  auto none =
      ApplyViewCommit(outcome->metadata, Json::array(),
                      Json::array({Json{{"action", "set-properties"}, {"updates", {{"a", "b"}}}}}), kNowMs);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->changed);
}

TEST(ViewTest, OldVersionsAreTrimmed) {
  ViewModel view = NewView();
  view.properties["version.history.num-entries"] = "2";
  for (int i = 2; i <= 4; ++i) {
    Json version = ViewVersion(i, "select " + std::to_string(i), i * 100);
    version["schema-id"] = 0;  // no schema added in this commit, so -1 would be refused
    auto outcome =
        ApplyViewCommit(view, Json::array(),
                        Json::array({Json{{"action", "add-view-version"}, {"view-version", version}},
                                     Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}}),
                        kNowMs);
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    view = outcome->metadata;
  }
  ASSERT_EQ(view.versions.size(), 2u);
  EXPECT_EQ(view.versions[0]["version-id"], 3);
  EXPECT_EQ(view.current_version_id, 4);
  ASSERT_EQ(view.version_log.size(), 2u);
  EXPECT_EQ(view.version_log[0].version_id, 3);
}

// An add-view-version of `version` (on schema 0) and whether it was refused with kInvalidArgument,
// leaving the view as it was, with `message` in the refusal.
void ExpectVersionRefused(const ViewModel& view, Json version, const std::string& message) {
  version["schema-id"] = 0;
  const Json before = ViewMetadataToJson(view);
  auto outcome =
      ApplyViewCommit(view, Json::array(),
                      Json::array({Json{{"action", "set-properties"}, {"updates", {{"touched", "yes"}}}},
                                   Json{{"action", "add-view-version"}, {"view-version", version}},
                                   Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}}),
                      kNowMs);
  ASSERT_FALSE(outcome.ok()) << version.dump();
  EXPECT_EQ(outcome.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(outcome.status().message().find(message), std::string::npos) << outcome.status().message();
  EXPECT_EQ(ViewMetadataToJson(view), before);
}

TEST(ViewTest, VersionsNeedWhatTheReferenceParses) {
  const ViewModel view = NewView();
  const Json good = ViewVersion(2, "select 2", 200);
  for (const char* key : {"summary", "default-namespace", "representations", "timestamp-ms"}) {
    Json broken = good;
    broken.erase(key);
    ExpectVersionRefused(view, broken, key);
  }
  Json number_summary = good;
  number_summary["summary"]["engine-version"] = 3;
  ExpectVersionRefused(view, number_summary, "engine-version");
  Json number_namespace = good;
  number_namespace["default-namespace"] = Json::array({"ns", 1});
  ExpectVersionRefused(view, number_namespace, "default-namespace");
  Json nul_namespace = good;
  nul_namespace["default-namespace"] = Json::array({std::string("a\0b", 3)});
  ExpectVersionRefused(view, nul_namespace, "null-byte");
  Json number_catalog = good;
  number_catalog["default-catalog"] = 5;
  ExpectVersionRefused(view, number_catalog, "default-catalog");
  Json no_type = good;
  no_type["representations"][0].erase("type");
  ExpectVersionRefused(view, no_type, "type");
  for (const char* key : {"sql", "dialect"}) {
    Json broken = good;
    broken["representations"][0].erase(key);
    ExpectVersionRefused(view, broken, key);
    broken["representations"][0]["type"] = "SQL";  // the type is read in any case
    ExpectVersionRefused(view, broken, key);
  }
  Json big_id = good;
  big_id["version-id"] = 4294967297;
  ExpectVersionRefused(view, big_id, "version-id");

  // The reference's parser takes a null catalog and representations of other types, but the
  // specification's ViewVersion has neither, and a load returning them would fail its schema.
  Json null_catalog = good;
  null_catalog["default-catalog"] = nullptr;
  ExpectVersionRefused(view, null_catalog, "default-catalog");
  Json other_type = good;
  other_type["representations"].push_back({{"type", "other"}});
  ExpectVersionRefused(view, other_type, "sql");
  Json empty_type = good;
  empty_type["representations"] = Json::array({{{"type", ""}, {"sql", nullptr}, {"dialect", ""}}});
  ExpectVersionRefused(view, empty_type, "sql");

  // The well-formed twin: no catalog.
  Json twin = good;
  twin["schema-id"] = 0;
  twin.erase("default-catalog");
  auto outcome =
      ApplyViewCommit(view, Json::array(),
                      Json::array({Json{{"action", "add-view-version"}, {"view-version", twin}},
                                   Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}}),
                      kNowMs);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->metadata.current_version_id, 2);
}

TEST(ViewTest, CreateChecksTheVersionToo) {
  Json version = ViewVersion(1, "select 1");
  version["representations"][0].erase("dialect");
  auto request = ParseCreateViewRequest(
      Json{{"name", "v"}, {"schema", testing::TwoColumnSchema()}, {"view-version", version}});
  ASSERT_TRUE(request.ok());
  auto created = NewViewMetadata(*request, "s3://b/ns/v", "u");
  EXPECT_EQ(created.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("dialect"), std::string::npos);
}

TEST(ViewTest, IdsBeyondInt32AndLegacyPropertyKeys) {
  const ViewModel view = NewView();
  // 2^32 - 1 read as int32 would be -1, "the version added in this commit".
  auto beyond = ApplyViewCommit(
      view, Json::array(),
      Json::array({Json{{"action", "set-current-view-version"}, {"view-version-id", 4294967295}}}), kNowMs);
  EXPECT_EQ(beyond.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(beyond.status().message().find("view-version-id"), std::string::npos);
  auto legacy = ApplyViewCommit(
      view, Json::array(),
      Json::array({Json{{"action", "set-properties"}, {"updated", {{"a", "1"}}}},
                   Json{{"action", "remove-properties"}, {"removed", Json::array({"comment"})}}}),
      kNowMs);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  EXPECT_EQ(legacy->metadata.properties.at("a"), "1");
  EXPECT_EQ(legacy->metadata.properties.count("comment"), 0u);
}

TEST(ViewTest, ReadingRefusesWhatTheReferenceRefuses) {
  const Json good = ViewMetadataToJson(NewView());
  ASSERT_TRUE(ParseViewMetadata(good).ok());
  Json no_summary = good;
  no_summary["versions"][0].erase("summary");
  EXPECT_EQ(ParseViewMetadata(no_summary).status().code(), ErrorCode::kInvalidArgument);
  Json schema_without_required = good;
  schema_without_required["schemas"][0]["fields"][0].erase("required");
  EXPECT_EQ(ParseViewMetadata(schema_without_required).status().code(), ErrorCode::kInvalidArgument);
  Json big_current = good;
  big_current["current-version-id"] = 4294967297;  // read as int32: 1, the current version
  EXPECT_EQ(ParseViewMetadata(big_current).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ViewTest, JsonApi) {
  Json body{
      {"name", "v"}, {"schema", testing::TwoColumnSchema()}, {"view-version", ViewVersion(1, "select 1")}};
  auto created = CreateViewMetadataJson(body.dump(), "s3://b/v", "u");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto committed = CommitViewJson(*created, R"([{"type": "assert-view-uuid", "uuid": "u"}])",
                                  R"([{"action": "set-properties", "updates": {"k": "v"}}])", kNowMs);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_TRUE(committed->changed);
  EXPECT_EQ(Json::parse(committed->metadata_json)["properties"]["k"], "v");
  EXPECT_EQ(CreateViewMetadataJson(R"({"name": "v"})", "l", "u").status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace serac::iceberg
