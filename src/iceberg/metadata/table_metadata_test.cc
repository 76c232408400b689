#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>

#include "common/hash.h"
#include "common/random.h"
#include "iceberg/iceberg.h"
#include "iceberg/metadata/metadata_internal.h"
#include "iceberg/test_util_internal.h"

namespace serac::iceberg {
namespace {

using testing::NewTable;
using testing::TwoColumnSchema;

TEST(CreateTableTest, AssignsFreshIdsAndRebindsSpecAndOrder) {
  Json body = Json::parse(R"({"name": "t",
    "schema": {"type": "struct", "schema-id": 5, "identifier-field-ids": [7], "fields": [
      {"id": 7, "name": "id", "required": true, "type": "long"},
      {"id": 3, "name": "loc", "required": false, "type": {"type": "struct", "fields": [
        {"id": 9, "name": "lat", "required": false, "type": "double"}]}},
      {"id": 4, "name": "ts", "required": false, "type": "timestamptz"}]},
    "partition-spec": {"spec-id": 4, "fields": [
      {"source-id": 4, "field-id": 1050, "name": "ts_day", "transform": "day"},
      {"source-id": 9, "field-id": 1051, "name": "lat_bucket", "transform": "bucket[4]"}]},
    "write-order": {"order-id": 9, "fields": [
      {"source-id": 9, "transform": "identity", "direction": "desc", "null-order": "nulls-last"}]},
    "properties": {"owner": "bob"}})");
  auto request = ParseCreateTableRequest(body);
  ASSERT_TRUE(request.ok());
  EXPECT_FALSE(request->stage_create);
  auto metadata = NewTableMetadata(*request, "s3://b/t", "uuid-1", 123);
  ASSERT_TRUE(metadata.ok()) << metadata.status().ToString();
  EXPECT_EQ(metadata->format_version, 2);
  EXPECT_EQ(metadata->last_updated_ms, 123);
  EXPECT_EQ(metadata->last_column_id, 4);  // id, loc, ts = 1..3, loc.lat = 4
  const Json& schema = metadata->schemas.at(0);
  EXPECT_EQ(schema["schema-id"], 0);
  EXPECT_EQ(schema["identifier-field-ids"], Json::array({1}));
  EXPECT_EQ(schema["fields"][1]["type"]["fields"][0]["id"], 4);
  const Json& spec = metadata->partition_specs.at(0);
  EXPECT_EQ(spec["spec-id"], 0);
  EXPECT_EQ(spec["fields"][0]["source-id"], 3);
  EXPECT_EQ(spec["fields"][0]["field-id"], 1000);
  EXPECT_EQ(spec["fields"][1]["source-id"], 4);
  EXPECT_EQ(spec["fields"][1]["field-id"], 1001);
  EXPECT_EQ(metadata->last_partition_id, 1001);
  ASSERT_EQ(metadata->sort_orders.size(), 1u);
  EXPECT_EQ(metadata->sort_orders[0]["order-id"], 1);
  EXPECT_EQ(metadata->sort_orders[0]["fields"][0]["source-id"], 4);
  EXPECT_EQ(metadata->default_sort_order_id, 1);
  EXPECT_EQ(metadata->current_snapshot_id, -1);
  EXPECT_EQ(metadata->properties.at("owner"), "bob");
}

TEST(CreateTableTest, DefaultsAndFormatVersionProperty) {
  Json body{{"name", "t"},
            {"schema", TwoColumnSchema()},
            {"stage-create", true},
            {"properties", {{"format-version", "3"}}}};
  auto request = ParseCreateTableRequest(body);
  ASSERT_TRUE(request.ok());
  EXPECT_TRUE(request->stage_create);
  auto metadata = NewTableMetadata(*request, "s3://b/t", "u", 1);
  ASSERT_TRUE(metadata.ok());
  EXPECT_EQ(metadata->format_version, 3);
  EXPECT_EQ(metadata->properties.count("format-version"), 0u);  // reserved: never stored
  EXPECT_EQ(metadata->next_row_id, 0);
  EXPECT_EQ(metadata->last_partition_id, 999);
  EXPECT_EQ(metadata->default_sort_order_id, 0);
  EXPECT_TRUE(metadata->partition_specs.at(0)["fields"].empty());
  Json json = TableMetadataToJson(*metadata);
  EXPECT_EQ(json["next-row-id"], 0);

  body["properties"]["format-version"] = "4";
  EXPECT_EQ(NewTableMetadata(*ParseCreateTableRequest(body), "s3://b/t", "u", 1).status().code(),
            ErrorCode::kInvalidArgument);
}

// A new table gets the reference's persisted defaults, and its properties are checked as the
// reference checks them at create.
TEST(CreateTableTest, NewTablePropertiesAreDefaultedAndChecked) {
  auto create = [](Json properties) {
    Json body{{"name", "t"}, {"schema", TwoColumnSchema()}, {"properties", std::move(properties)}};
    return NewTableMetadata(*ParseCreateTableRequest(body), "s3://b/t", "u", 1);
  };
  auto plain = create(Json::object());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->properties.at("write.parquet.compression-codec"), "zstd");
  auto snappy = create({{"write.parquet.compression-codec", "snappy"}});
  ASSERT_TRUE(snappy.ok());
  EXPECT_EQ(snappy->properties.at("write.parquet.compression-codec"), "snappy");
  EXPECT_TRUE(create({{"write.metadata.metrics.column.data", "counts"}}).ok());
  EXPECT_EQ(create({{"write.metadata.metrics.column.nope", "counts"}}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(create({{"commit.retry.num-retries", "0"}, {"commit.retry.min-wait-ms", "+100"}}).ok());
  for (const char* bad : {"-1", "x", "", "2147483648", "1.5"}) {
    EXPECT_EQ(create({{"commit.retry.num-retries", bad}}).status().code(), ErrorCode::kInvalidArgument)
        << bad;
  }
}

TEST(CreateTableTest, RejectsBadRequests) {
  Json v3_type = Json::parse(R"({"name": "t", "schema": {"type": "struct", "fields": [
    {"id": 1, "name": "v", "required": false, "type": "variant"}]}})");
  EXPECT_EQ(NewTableMetadata(*ParseCreateTableRequest(v3_type), "l", "u", 1).status().code(),
            ErrorCode::kInvalidArgument);
  v3_type["properties"] = {{"format-version", "3"}};
  EXPECT_TRUE(NewTableMetadata(*ParseCreateTableRequest(v3_type), "l", "u", 1).ok());
  Json bad_source{{"name", "t"},
                  {"schema", TwoColumnSchema()},
                  {"partition-spec",
                   Json::parse(R"({"fields": [{"source-id": 42, "name": "p", "transform": "identity"}]})")}};
  EXPECT_EQ(NewTableMetadata(*ParseCreateTableRequest(bad_source), "l", "u", 1).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseCreateTableRequest(Json::parse(R"({"schema": {}})")).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      ParseCreateTableRequest(Json{{"name", "t"}, {"schema", TwoColumnSchema()}, {"properties", {{"a", 1}}}})
          .status()
          .code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(CreateTableMetadataJson("{not json", "l", "u", 1).status().code(), ErrorCode::kInvalidArgument);
}

TEST(TableMetadataJsonTest, RoundTripPreservesUnknownFields) {
  TableModel metadata = NewTable(3);
  metadata.last_sequence_number = 1;  // the snapshot's below
  metadata.schemas[0]["fields"][0]["initial-default"] = 0;
  metadata.partition_specs[0]["fields"][0]["source-ids"] = Json::array({1, 2});
  Json snapshot = testing::Snapshot(10, std::nullopt, 1, 2000);
  snapshot["key-id"] = "k1";
  snapshot["first-row-id"] = 0;
  snapshot["added-rows"] = 5;
  metadata.snapshots.push_back(StoredSnapshot::Make(snapshot));
  metadata.refs["main"] = Json{{"snapshot-id", 10}, {"type", "branch"}};
  metadata.current_snapshot_id = 10;
  metadata.encryption_keys.push_back(Json{{"key-id", "k1"}, {"encrypted-key-metadata", "AAEC"}, {"x", 1}});
  metadata.extra_fields["future-field"] = Json{{"a", 1}};
  metadata.metadata_log.push_back({5, "s3://b/t/metadata/00000-x.metadata.json"});
  metadata.snapshot_log.push_back({2000, 10});

  const std::string text = TableMetadataToJson(metadata).dump();
  auto parsed = ParseTableMetadata(Json::parse(text));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(TableMetadataToJson(*parsed).dump(), text);
  EXPECT_EQ(parsed->snapshots[0]->json()["key-id"], "k1");
  EXPECT_EQ(parsed->schemas[0]["fields"][0]["initial-default"], 0);
  EXPECT_EQ(parsed->partition_specs[0]["fields"][0]["source-ids"], Json::array({1, 2}));
  EXPECT_EQ(parsed->extra_fields["future-field"]["a"], 1);
  EXPECT_EQ(parsed->encryption_keys[0]["x"], 1);
  EXPECT_EQ(parsed->metadata_log, metadata.metadata_log);
  EXPECT_EQ(parsed->snapshot_log, metadata.snapshot_log);
}

TEST(TableMetadataJsonTest, VersionSpecificFields) {
  Json v1 = TableMetadataToJson(NewTable(1));
  EXPECT_FALSE(v1.contains("last-sequence-number"));
  EXPECT_FALSE(v1.contains("next-row-id"));
  EXPECT_TRUE(v1.contains("schema"));
  EXPECT_TRUE(v1.contains("partition-spec"));
  Json v2 = TableMetadataToJson(NewTable(2));
  EXPECT_EQ(v2["last-sequence-number"], 0);
  EXPECT_FALSE(v2.contains("next-row-id"));
  EXPECT_FALSE(v2.contains("schema"));
  Json v3 = TableMetadataToJson(NewTable(3));
  EXPECT_EQ(v3["next-row-id"], 0);
  // v2 requires last-sequence-number.
  v2.erase("last-sequence-number");
  EXPECT_EQ(ParseTableMetadata(v2).status().code(), ErrorCode::kInvalidArgument);
  Json v4 = TableMetadataToJson(NewTable(2));
  v4["format-version"] = 4;
  EXPECT_EQ(ParseTableMetadata(v4).status().code(), ErrorCode::kInvalidArgument);
}

TEST(TableMetadataJsonTest, ParsesLegacyV1) {
  Json legacy = Json::parse(R"({"format-version": 1, "location": "s3://b/old", "last-updated-ms": 1,
    "last-column-id": 2,
    "schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "required": true, "type": "int"},
                                           {"id": 2, "name": "b", "required": false, "type": "string"}]},
    "partition-spec": [{"source-id": 1, "name": "a", "transform": "identity"}],
    "properties": {}, "current-snapshot-id": 7,
    "snapshots": [{"snapshot-id": 7, "timestamp-ms": 1, "manifest-list": "m"}]})");
  auto parsed = ParseTableMetadata(legacy);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->current_schema_id, 0);
  EXPECT_EQ(parsed->partition_specs[0]["fields"][0]["field-id"], 1000);
  EXPECT_EQ(parsed->last_partition_id, 1000);
  EXPECT_EQ(parsed->default_sort_order_id, 0);
  EXPECT_EQ(parsed->refs.at("main")["snapshot-id"], 7);  // implied by current-snapshot-id
}

// A metadata file as register-table reads it: what the reference's parser refuses, serac refuses
// too, rather than register a table Java engines cannot load.
TEST(TableMetadataJsonTest, ReadingRefusesWhatTheReferenceRefuses) {
  TableModel table = NewTable(2);
  table.last_sequence_number = 1;
  table.snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(1, std::nullopt, 1, 2000)));
  table.refs["main"] = Json{{"snapshot-id", 1}, {"type", "branch"}};
  table.current_snapshot_id = 1;
  table.statistics.push_back(Json{{"snapshot-id", 1},
                                  {"statistics-path", "s3://bucket/t/metadata/s.puffin"},
                                  {"file-size-in-bytes", 10},
                                  {"file-footer-size-in-bytes", 5},
                                  {"blob-metadata", Json::array()}});
  table.partition_statistics.push_back(Json{{"snapshot-id", 1},
                                            {"statistics-path", "s3://bucket/t/metadata/p.parquet"},
                                            {"file-size-in-bytes", 10}});
  table.encryption_keys.push_back(Json{{"key-id", "k"}, {"encrypted-key-metadata", "AAEC"}});
  const Json good = TableMetadataToJson(table);
  ASSERT_TRUE(ParseTableMetadata(good).ok()) << ParseTableMetadata(good).status().ToString();

  auto refused = [&](const std::function<void(Json&)>& change, const std::string& message) {
    Json file = good;
    change(file);
    auto parsed = ParseTableMetadata(file);
    ASSERT_FALSE(parsed.ok()) << message;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(message), std::string::npos) << parsed.status().message();
  };
  refused([](Json& f) { f["schemas"][0]["fields"][1].erase("required"); }, "required");
  refused([](Json& f) { f["schemas"][0]["fields"][1]["type"] = "varchar"; }, "varchar");
  refused([](Json& f) { f["partition-specs"][0]["fields"][0].erase("source-id"); }, "source-id");
  refused([](Json& f) { f["partition-specs"][0]["fields"].push_back(f["partition-specs"][0]["fields"][0]); },
          "more than once");
  refused([](Json& f) { f["sort-orders"][0]["fields"][0].erase("null-order"); }, "null-order");
  refused([](Json& f) { f["snapshots"][0].erase("manifest-list"); }, "manifests");
  refused([](Json& f) { f["snapshots"][0]["sequence-number"] = 2; }, "greater than last sequence number 1");
  refused([](Json& f) { f["statistics"][0].erase("file-footer-size-in-bytes"); },
          "file-footer-size-in-bytes");
  refused([](Json& f) { f["partition-statistics"][0].erase("statistics-path"); }, "statistics-path");
  refused([](Json& f) { f["encryption-keys"][0]["encrypted-key-metadata"] = "%%%"; }, "Base64");
  // Ids the reference reads as int32: 2^32 must not read as schema 0.
  refused([](Json& f) { f["current-schema-id"] = 4294967296; }, "current-schema-id");
  refused([](Json& f) { f["default-spec-id"] = 4294967296; }, "default-spec-id");
  refused([](Json& f) { f["default-sort-order-id"] = 4294967297; }, "default-sort-order-id");
  refused([](Json& f) { f["last-column-id"] = 4294967298; }, "last-column-id");

  // A v1 table's snapshots have sequence number 0, whatever the file says of the last one.
  Json v1 = TableMetadataToJson(NewTable(1));
  v1["snapshots"] = Json::array({testing::Snapshot(1, std::nullopt, 0, 2000)});
  EXPECT_TRUE(ParseTableMetadata(v1).ok());
  v1["snapshots"][0]["sequence-number"] = 3;
  v1["last-sequence-number"] = 3;
  EXPECT_EQ(ParseTableMetadata(v1).status().code(), ErrorCode::kInvalidArgument);
}

TEST(TableMetadataJsonTest, NullCurrentSnapshotAndRefsSelection) {
  Json json = TableMetadataToJson(NewTable(2));
  json["current-snapshot-id"] = nullptr;
  auto parsed = ParseTableMetadata(json);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->current_snapshot_id, -1);
  parsed->snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(1, std::nullopt, 1, 10)));
  parsed->snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(2, 1, 2, 20)));
  parsed->refs["main"] = Json{{"snapshot-id", 2}, {"type", "branch"}};
  EXPECT_EQ(TableMetadataToJson(*parsed, SnapshotSelection::kAll)["snapshots"].size(), 2u);
  Json refs_only = TableMetadataToJson(*parsed, SnapshotSelection::kRefs);
  ASSERT_EQ(refs_only["snapshots"].size(), 1u);
  EXPECT_EQ(refs_only["snapshots"][0]["snapshot-id"], 2);
}

TEST(TableMetadataJsonTest, TextEqualsTheJsonDocument) {
  auto metadata = ParseTableMetadata(TableMetadataToJson(NewTable(2)));
  ASSERT_TRUE(metadata.ok());
  for (SnapshotSelection selection : {SnapshotSelection::kAll, SnapshotSelection::kRefs}) {
    EXPECT_EQ(Json::parse(TableMetadataToJsonText(*metadata, selection)),
              TableMetadataToJson(*metadata, selection));
  }
  metadata->snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(1, std::nullopt, 1, 10)));
  metadata->snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(2, 1, 2, 20)));
  metadata->snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(3, 2, 3, 30)));
  metadata->refs["main"] = Json{{"snapshot-id", 3}, {"type", "branch"}};
  metadata->refs["tag"] = Json{{"snapshot-id", 1}, {"type", "tag"}};
  // The logs are written as text apart from the rest: names that need escaping survive.
  metadata->metadata_log.push_back({5, "s3://b/t/metadata/00000-\"quoted\" \\ caf\u00e9.metadata.json"});
  metadata->metadata_log.push_back({6, "s3://b/t/metadata/00001-x.metadata.json"});
  metadata->snapshot_log.push_back({10, 1});
  metadata->snapshot_log.push_back({-1, 2});
  for (SnapshotSelection selection : {SnapshotSelection::kAll, SnapshotSelection::kRefs}) {
    Json from_text = Json::parse(TableMetadataToJsonText(*metadata, selection));
    EXPECT_EQ(from_text["metadata-log"][0]["metadata-file"], metadata->metadata_log[0].metadata_file);
    EXPECT_EQ(from_text["snapshot-log"].size(), 2u);
    EXPECT_EQ(from_text, TableMetadataToJson(*metadata, selection));
    EXPECT_EQ(from_text["snapshots"].size(), selection == SnapshotSelection::kAll ? 3u : 2u);
  }
}

// A table with `count` snapshots and as many log entries, as successive appends leave it.
TableModel TableWithHistory(int64_t count) {
  TableModel metadata = NewTable(2);
  for (int64_t i = 1; i <= count; ++i) {
    std::optional<int64_t> parent;
    if (i > 1) parent = (i - 1) * 7919;
    metadata.snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(i * 7919, parent, i, 1000 + i)));
    metadata.snapshot_log.push_back({1000 + i, i * 7919});
    metadata.metadata_log.push_back(
        {1000 + i, "s3://b/t/metadata/" + std::to_string(i) + "-u.metadata.json"});
  }
  return metadata;
}

std::set<std::string> ChunkDigests(const std::vector<MetadataTextPiece>& pieces) {
  std::set<std::string> digests;
  for (const MetadataTextPiece& piece : pieces) {
    if (piece.chunk) digests.insert(piece.chunk->sha256);
  }
  return digests;
}

size_t InlineBytes(const std::vector<MetadataTextPiece>& pieces) {
  size_t bytes = 0;
  for (const MetadataTextPiece& piece : pieces) bytes += piece.chunk ? 0 : piece.text.size();
  return bytes;
}

TEST(TableMetadataPiecesTest, JoinedPiecesAreExactlyTheText) {
  for (int64_t count : {0, 1, 31, 200, 1500}) {
    TableModel metadata = TableWithHistory(count);
    std::vector<MetadataTextPiece> pieces = TableMetadataToJsonPieces(metadata);
    EXPECT_EQ(JoinMetadataPieces(pieces), TableMetadataToJsonText(metadata)) << count << " snapshots";
    for (const MetadataTextPiece& piece : pieces) {
      if (!piece.chunk) continue;
      const Sha256Digest sha256 = Sha256(piece.chunk->text);
      const Md5Digest md5 = Md5(piece.chunk->text);
      EXPECT_EQ(piece.chunk->sha256,
                std::string(reinterpret_cast<const char*>(sha256.data()), sha256.size()));
      EXPECT_EQ(piece.chunk->md5, std::string(reinterpret_cast<const char*>(md5.data()), md5.size()));
    }
  }
}

TEST(TableMetadataPiecesTest, AnAppendSharesTheWholeHistoryAndWritesLittle) {
  TableModel before = TableWithHistory(1500);
  std::vector<MetadataTextPiece> first = TableMetadataToJsonPieces(before);
  const size_t total = JoinMetadataPieces(first).size();
  TableModel after = before;
  after.snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(1501 * 7919, 1500 * 7919, 1501, 2501)));
  after.snapshot_log.push_back({2501, 1501 * 7919});
  after.metadata_log.push_back({2501, "s3://b/t/metadata/1501-u.metadata.json"});
  std::vector<MetadataTextPiece> second = TableMetadataToJsonPieces(after);
  EXPECT_EQ(JoinMetadataPieces(second), TableMetadataToJsonText(after));

  // Every chunk of the first version is in the second, at most one more chunk is new, and the
  // text written for the second version alone is a small part of the file.
  std::set<std::string> old_digests = ChunkDigests(first);
  std::set<std::string> new_digests = ChunkDigests(second);
  ASSERT_GT(old_digests.size(), 20u);
  for (const std::string& digest : old_digests) EXPECT_TRUE(new_digests.count(digest));
  EXPECT_LE(new_digests.size(), old_digests.size() + 3);
  EXPECT_LT(InlineBytes(second) * 5, total) << InlineBytes(second) << " of " << total << " bytes inline";
  // The same metadata cut again gives the very same chunk objects (from the cache, not rehashed).
  std::vector<MetadataTextPiece> again = TableMetadataToJsonPieces(after);
  ASSERT_EQ(again.size(), second.size());
  for (size_t i = 0; i < again.size(); ++i) EXPECT_EQ(again[i].chunk, second[i].chunk);
}

TEST(TableMetadataPiecesTest, ExpiringOldSnapshotsKeepsTheLaterChunks) {
  TableModel before = TableWithHistory(1500);
  std::set<std::string> old_digests = ChunkDigests(TableMetadataToJsonPieces(before));
  TableModel after = before;
  // Drop 40 snapshots (and their log entries) from the middle, as expire_snapshots may.
  after.snapshots.erase(after.snapshots.begin() + 700, after.snapshots.begin() + 740);
  after.snapshot_log.erase(after.snapshot_log.begin() + 700, after.snapshot_log.begin() + 740);
  std::vector<MetadataTextPiece> pieces = TableMetadataToJsonPieces(after);
  EXPECT_EQ(JoinMetadataPieces(pieces), TableMetadataToJsonText(after));
  size_t reused = 0;
  std::set<std::string> new_digests = ChunkDigests(pieces);
  for (const std::string& digest : new_digests) reused += old_digests.count(digest);
  EXPECT_GE(reused + 6, new_digests.size()) << "only the runs around the removed entries change";
}

// The digests of the chunks in order and the count of inline pieces, to compare two cuts.
std::vector<std::string> PieceIdentities(const std::vector<MetadataTextPiece>& pieces) {
  std::vector<std::string> identities;
  for (const MetadataTextPiece& piece : pieces)
    identities.push_back(piece.chunk ? piece.chunk->sha256 : "inline");
  return identities;
}

TEST(TableMetadataPiecesTest, ACutFromTheTablesLastCutEqualsAFreshOne) {
  // Cutting a table reuses its last cut (by table uuid) for the entries both versions share. Each
  // version below is cut after the one before it, then again under a uuid never cut before: the
  // chunks must be the same (the inline text differs only in the uuid).
  TableModel version = TableWithHistory(1500);
  version.table_uuid = "11111111-0000-4000-8000-000000000001";
  auto check = [](const TableModel& metadata, const char* what) {
    std::vector<MetadataTextPiece> pieces = TableMetadataToJsonPieces(metadata);
    EXPECT_EQ(JoinMetadataPieces(pieces), TableMetadataToJsonText(metadata)) << what;
    TableModel fresh = metadata;
    fresh.table_uuid = RandomUuid();
    EXPECT_EQ(PieceIdentities(pieces), PieceIdentities(TableMetadataToJsonPieces(fresh))) << what;
  };
  check(version, "first cut");
  for (int64_t i = 1501; i <= 1600; ++i) {
    version.snapshots.push_back(
        StoredSnapshot::Make(testing::Snapshot(i * 7919, (i - 1) * 7919, i, 1000 + i)));
    version.snapshot_log.push_back({1000 + i, i * 7919});
    version.metadata_log.push_back({1000 + i, "s3://b/t/metadata/" + std::to_string(i) + "-u.metadata.json"});
    if (i % 10 == 0) check(version, "after appends");
  }
  version.snapshots.erase(version.snapshots.begin() + 300, version.snapshots.begin() + 340);
  version.snapshot_log.erase(version.snapshot_log.begin(), version.snapshot_log.begin() + 340);
  version.metadata_log.erase(version.metadata_log.begin(), version.metadata_log.end() - 100);
  check(version, "after expiring snapshots and trimming the logs");
  version.snapshots.resize(700);
  version.snapshot_log.resize(700);
  check(version, "after dropping the newest");
  // A window sliding over the history: each version adds one entry and drops the oldest.
  for (int64_t i = 1601; i <= 1640; ++i) {
    version.snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(i * 7919, std::nullopt, i, 1000 + i)));
    version.snapshot_log.push_back({1000 + i, i * 7919});
    version.metadata_log.push_back({1000 + i, "s3://b/t/metadata/" + std::to_string(i) + "-u.metadata.json"});
    version.snapshots.erase(version.snapshots.begin());
    version.snapshot_log.erase(version.snapshot_log.begin());
    version.metadata_log.erase(version.metadata_log.begin());
    if (i % 7 == 0) check(version, "after sliding the window");
  }
}

TEST(TableMetadataPiecesTest, DroppingTheOldestEntriesKeepsTheLaterChunkObjects) {
  // A metadata log trimmed to its maximum loses its oldest entry on every commit, as expiring the
  // oldest snapshots does: the runs after the first are the same text, taken from the last cut
  // rather than written and hashed again.
  TableModel before = TableWithHistory(1500);
  before.table_uuid = "11111111-0000-4000-8000-000000000002";
  before.metadata_log.erase(before.metadata_log.begin(), before.metadata_log.end() - 400);
  std::vector<MetadataTextPiece> first = TableMetadataToJsonPieces(before);
  TableModel after = before;
  after.snapshots.push_back(StoredSnapshot::Make(testing::Snapshot(1501 * 7919, 1500 * 7919, 1501, 2501)));
  after.snapshot_log.push_back({2501, 1501 * 7919});
  after.metadata_log.push_back({2501, "s3://b/t/metadata/1501-u.metadata.json"});
  after.snapshots.erase(after.snapshots.begin(), after.snapshots.begin() + 3);
  after.snapshot_log.erase(after.snapshot_log.begin(), after.snapshot_log.begin() + 3);
  after.metadata_log.erase(after.metadata_log.begin());
  std::vector<MetadataTextPiece> second = TableMetadataToJsonPieces(after);
  EXPECT_EQ(JoinMetadataPieces(second), TableMetadataToJsonText(after));
  std::map<std::string, const HistoryChunk*> earlier;
  for (const MetadataTextPiece& piece : first) {
    if (piece.chunk) earlier[piece.chunk->sha256] = piece.chunk.get();
  }
  size_t kept = 0;
  for (const MetadataTextPiece& piece : second) {
    if (!piece.chunk) continue;
    auto found = earlier.find(piece.chunk->sha256);
    if (found == earlier.end()) continue;
    EXPECT_EQ(found->second, piece.chunk.get()) << "a chunk of the same text was made again";
    ++kept;
  }
  // All but the first run of each array (and the newest, which may close) are kept.
  EXPECT_GE(kept + 6, ChunkDigests(second).size());
  EXPECT_GT(kept, 20u);
}

TEST(TableMetadataPiecesTest, ThePieceCountGrowsFarSlowerThanTheHistory) {
  // Each piece costs the object index a lookup and a use count per version, so a history four
  // times as long must not cost four times the pieces.
  const size_t at_1500 = TableMetadataToJsonPieces(TableWithHistory(1500)).size();
  const size_t at_6000 = TableMetadataToJsonPieces(TableWithHistory(6000)).size();
  EXPECT_LE(at_1500, 60u);
  EXPECT_LE(at_6000, at_1500 * 2) << at_1500 << " pieces at 1500 snapshots";
}

TEST(MetadataFileTest, NamesFollowThePreviousNumber) {
  EXPECT_EQ(MetadataFileName("", "abc"), "00000-abc.metadata.json");
  EXPECT_EQ(MetadataFileName("s3://b/t/metadata/00000-x.metadata.json", "abc"), "00001-abc.metadata.json");
  EXPECT_EQ(MetadataFileName("s3://b/t/metadata/00041-x-y.metadata.json", "abc"), "00042-abc.metadata.json");
  EXPECT_EQ(MetadataFileName("s3://b/t/metadata/123456-x.metadata.json", "abc"), "123457-abc.metadata.json");
  EXPECT_EQ(MetadataFileName("s3://b/t/metadata/v3.metadata.json", "abc"), "00000-abc.metadata.json");
  TableModel metadata = NewTable(2);
  metadata.location = "s3://b/t/";
  EXPECT_EQ(NewTableMetadataFileLocation(metadata, "s3://b/t/metadata/00007-x.metadata.json", "u"),
            "s3://b/t/metadata/00008-u.metadata.json");
  metadata.properties["write.metadata.path"] = "s3://b/elsewhere/";
  EXPECT_EQ(NewTableMetadataFileLocation(metadata, "", "u"), "s3://b/elsewhere/00000-u.metadata.json");
}

}  // namespace
}  // namespace serac::iceberg
