// Fixtures shared by the iceberg tests.
#pragma once

#include <gtest/gtest.h>

#include "iceberg/metadata/metadata_internal.h"

namespace serac::iceberg::testing {

inline Json TwoColumnSchema() {
  return Json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "data", "required": false, "type": "string"}]})");
}

inline Json ThreeColumnSchema() {
  Json schema = TwoColumnSchema();
  schema["fields"].push_back(Json{{"id", 3}, {"name", "ts"}, {"required", false}, {"type", "timestamp"}});
  return schema;
}

// A table as a create request makes it: identity partition on id, sorted by id.
inline TableModel NewTable(int format_version, int64_t now_ms = 1000) {
  Json body{{"name", "t"},
            {"schema", TwoColumnSchema()},
            {"partition-spec", Json::parse(R"({"spec-id": 0, "fields": [
               {"source-id": 1, "field-id": 1000, "name": "id_part", "transform": "identity"}]})")},
            {"write-order", Json::parse(R"({"order-id": 1, "fields": [
               {"source-id": 1, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}]})")},
            {"properties", {{"format-version", std::to_string(format_version)}, {"owner", "alice"}}}};
  auto request = ParseCreateTableRequest(body);
  EXPECT_TRUE(request.ok()) << request.status().ToString();
  auto metadata = NewTableMetadata(*request, "s3://bucket/t", "6f0b6c8c-0000-4000-8000-000000000001", now_ms);
  EXPECT_TRUE(metadata.ok()) << metadata.status().ToString();
  return *metadata;
}

inline Json Snapshot(int64_t id, std::optional<int64_t> parent, int64_t sequence, int64_t timestamp_ms) {
  Json snapshot{{"snapshot-id", id},
                {"sequence-number", sequence},
                {"timestamp-ms", timestamp_ms},
                {"manifest-list", "s3://bucket/t/metadata/snap-" + std::to_string(id) + ".avro"},
                {"summary", {{"operation", "append"}}},
                {"schema-id", 0}};
  if (parent) snapshot["parent-snapshot-id"] = *parent;
  return snapshot;
}

inline Json AddSnapshot(const Json& snapshot) {
  return Json{{"action", "add-snapshot"}, {"snapshot", snapshot}};
}

inline Json SetMain(int64_t snapshot_id) {
  return Json{
      {"action", "set-snapshot-ref"}, {"ref-name", "main"}, {"type", "branch"}, {"snapshot-id", snapshot_id}};
}

inline CommitOptions Options(int64_t now_ms = 5000,
                             std::string previous = "s3://bucket/t/metadata/00000-a.metadata.json") {
  CommitOptions options;
  options.now_ms = now_ms;
  options.previous_metadata_location = std::move(previous);
  return options;
}

// Applies `updates` with no requirements and expects success.
inline TableCommitOutcome MustCommit(const TableModel& base, const Json& updates,
                                     const CommitOptions& options = Options()) {
  auto outcome = ApplyTableCommit(&base, Json::array(), updates, options);
  EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
  return outcome.ok() ? *outcome : TableCommitOutcome{base, false};
}

inline ErrorCode CommitError(const TableModel& base, const Json& requirements, const Json& updates) {
  auto outcome = ApplyTableCommit(&base, requirements, updates, Options());
  return outcome.ok() ? ErrorCode::kOk : outcome.status().code();
}

}  // namespace serac::iceberg::testing
