// Fuzzes the Iceberg model without I/O: table and view metadata files, create-table and
// create-view requests, and table and view commits (every update and requirement) against fixed
// v2 and v3 tables and a view. The first byte of an input picks what the rest is:
//   '0' a table metadata file     '1' a view metadata file
//   '2' a CreateTableRequest      '3' a CreateViewRequest
//   '4' a table commit {"requirements": [...], "updates": [...]} on a v2 table
//   '5' the same on a v3 table    '6' a view commit on a view
// Beyond crashes: whatever serac writes it must read back to the same text (it never stores a
// file it, or an engine, could not load).
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "iceberg/iceberg.h"

namespace {

using Json = nlohmann::json;
using serac::iceberg::CommitOptions;

constexpr int64_t kNowMs = 1800000000000;  // the server's clock in every commit

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz oracle: %s\n%s\n", what, detail.substr(0, 4096).c_str());
  std::abort();
}

// A written table file reads back to itself.
void CheckTableReadsBack(const std::string& written) {
  auto reread = serac::iceberg::CommitTableJson(written, "[]", "[]", CommitOptions{});
  if (!reread.ok())
    Fail("serac wrote table metadata it cannot read", reread.status().message() + "\n" + written);
  if (reread->metadata_json != written) Fail("table metadata changed on a second read", written);
}

void CheckViewReadsBack(const std::string& written) {
  auto reread = serac::iceberg::CommitViewJson(written, "[]", "[]", kNowMs);
  if (!reread.ok())
    Fail("serac wrote view metadata it cannot read", reread.status().message() + "\n" + written);
  if (reread->metadata_json != written) Fail("view metadata changed on a second read", written);
}

constexpr char kSchema[] =
    R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},)"
    R"({"id":2,"name":"data","required":false,"type":"string"},{"id":3,"name":"ts","required":false,"type":"timestamptz"}]})";

std::string MakeTable(int format_version) {
  const std::string request =
      std::string(R"({"name":"t","schema":)") + kSchema +
      R"(,"partition-spec":{"spec-id":0,"fields":[{"source-id":3,"field-id":1000,"name":"ts_day","transform":"day"}]},)"
      R"("write-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]},)"
      R"("properties":{"format-version":")" +
      std::to_string(format_version) + R"("}})";
  auto created = serac::iceberg::CreateTableMetadataJson(
      request, "s3://lake/db/t", "6f0b6c8c-0000-4000-8000-000000000001", 1700000000000);
  if (!created.ok()) Fail("cannot create the fixed table", created.status().message());
  Json snapshot = {{"snapshot-id", 1},
                   {"sequence-number", 1},
                   {"timestamp-ms", 1700000001000},
                   {"manifest-list", "s3://lake/db/t/metadata/snap-1.avro"},
                   {"summary", {{"operation", "append"}, {"added-data-files", "1"}}},
                   {"schema-id", 0}};
  if (format_version >= 3) {
    snapshot["first-row-id"] = 0;
    snapshot["added-rows"] = 10;
  }
  Json updates = Json::array(
      {Json{{"action", "add-snapshot"}, {"snapshot", snapshot}},
       Json{{"action", "set-snapshot-ref"}, {"ref-name", "main"}, {"type", "branch"}, {"snapshot-id", 1}},
       Json{{"action", "set-snapshot-ref"}, {"ref-name", "tag1"}, {"type", "tag"}, {"snapshot-id", 1}}});
  CommitOptions options;
  options.now_ms = 1700000002000;
  options.previous_metadata_location = "s3://lake/db/t/metadata/00000-a.metadata.json";
  auto committed = serac::iceberg::CommitTableJson(*created, "[]", updates.dump(), options);
  if (!committed.ok()) Fail("cannot commit to the fixed table", committed.status().message());
  return committed->metadata_json;
}

std::string MakeView() {
  const std::string request = std::string(R"({"name":"v","schema":)") + kSchema +
                              R"(,"view-version":{"version-id":1,"timestamp-ms":1700000000000,"schema-id":0,)"
                              R"("summary":{"engine-name":"spark"},"default-namespace":["db"],)"
                              R"("representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]}})";
  auto created = serac::iceberg::CreateViewMetadataJson(request, "s3://lake/db/v",
                                                        "6f0b6c8c-0000-4000-8000-000000000002");
  if (!created.ok()) Fail("cannot create the fixed view", created.status().message());
  return *created;
}

void FuzzTableCommit(const std::string& table, std::string_view text) {
  Json body = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return;
  const std::string requirements = body.contains("requirements") ? body["requirements"].dump() : "[]";
  const std::string updates = body.contains("updates") ? body["updates"].dump() : "[]";
  CommitOptions options;
  options.now_ms = 1800000000000;
  options.previous_metadata_location = "s3://lake/db/t/metadata/00001-b.metadata.json";
  auto committed = serac::iceberg::CommitTableJson(table, requirements, updates, options);
  if (committed.ok()) CheckTableReadsBack(committed->metadata_json);
}

void FuzzViewCommit(const std::string& view, std::string_view text) {
  Json body = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return;
  const std::string requirements = body.contains("requirements") ? body["requirements"].dump() : "[]";
  const std::string updates = body.contains("updates") ? body["updates"].dump() : "[]";
  auto committed = serac::iceberg::CommitViewJson(view, requirements, updates, kNowMs);
  if (committed.ok()) CheckViewReadsBack(committed->metadata_json);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string table_v2 = MakeTable(2);
  static const std::string table_v3 = MakeTable(3);
  static const std::string view = MakeView();
  if (size == 0) return -1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0]) {
    case '0': {
      auto read = serac::iceberg::CommitTableJson(std::string(text), "[]", "[]", CommitOptions{});
      if (read.ok()) CheckTableReadsBack(read->metadata_json);
      return 0;
    }
    case '1': {
      auto read = serac::iceberg::CommitViewJson(text, "[]", "[]", kNowMs);
      if (read.ok()) CheckViewReadsBack(read->metadata_json);
      return 0;
    }
    case '2': {
      auto created = serac::iceberg::CreateTableMetadataJson(text, "s3://lake/db/t",
                                                             "6f0b6c8c-0000-4000-8000-000000000003", 1);
      if (created.ok()) CheckTableReadsBack(*created);
      return 0;
    }
    case '3': {
      auto created = serac::iceberg::CreateViewMetadataJson(text, "s3://lake/db/v",
                                                            "6f0b6c8c-0000-4000-8000-000000000004");
      if (created.ok()) CheckViewReadsBack(*created);
      return 0;
    }
    case '4':
      FuzzTableCommit(table_v2, text);
      return 0;
    case '5':
      FuzzTableCommit(table_v3, text);
      return 0;
    case '6':
      FuzzViewCommit(view, text);
      return 0;
    default:
      return -1;
  }
}
