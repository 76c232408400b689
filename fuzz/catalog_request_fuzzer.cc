// Fuzzes every Iceberg REST catalog request body and path: configuration, namespaces, tables
// (create, stage-create, register, commit with every update and requirement, rename, drop),
// multi-table transactions, views, OAuth2 token forms and the warehouse admin API, served by the
// real CatalogService over a real SQLite MetaStore and local BlobStore in a temporary directory.
// The store starts with a warehouse "lake", a namespace "db", tables "t2" (format v2) and "t3"
// (v3) with a snapshot each, and a view "v"; inputs that drop or break them are repaired every
// few thousand inputs. Error answers must be Iceberg's JSON error (OAuth2's for the token route).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "catalog/catalog_service.h"
#include "fuzz_checks.h"
#include "fuzz_request.h"
#include "fuzz_stores.h"
#include "http/http_test_fakes.h"

namespace serac::fuzz {
namespace {

using Json = nlohmann::json;

struct CatalogFixture {
  FuzzStores stores{"catalog"};
  catalog::CatalogService service{stores.meta.get(), stores.blobs.get(), stores.identity.get(), {}};
  uint64_t inputs = 0;

  http::testing::RecordingResponse Send(const std::string& text) {
    ParsedInput input;
    http::testing::RecordingResponse response;
    if (!ParseInput(reinterpret_cast<const uint8_t*>(text.data()), text.size(), input)) return response;
    SignAsRoot(input, "s3tables", auth::UriEncoding::kGeneric);
    http::testing::StringBody body(input.body);
    http::RequestOutcome outcome;
    service.Handle(input.request, body, response, outcome);
    return response;
  }

  // The starting state; each request fails harmlessly when its object already exists.
  void Seed() {
    Send("POST /_iceberg/v1/warehouses\n\n{\"name\":\"lake\"}");
    Send("POST /_iceberg/v1/lake/namespaces\n\n{\"namespace\":[\"db\"]}");
    const std::string schema =
        R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"},)"
        R"({"id":2,"name":"data","required":false,"type":"string"}]})";
    for (int version : {2, 3}) {
      const std::string name = "t" + std::to_string(version);
      // At s3://lake/db/NAME: the seeds' manifest lists are below it, as every file of a table is.
      Send("POST /_iceberg/v1/lake/namespaces/db/tables\n\n{\"name\":\"" + name + "\",\"schema\":" + schema +
           ",\"location\":\"s3://lake/db/" + name + "\",\"properties\":{\"format-version\":\"" +
           std::to_string(version) + "\"}}");
      Json snapshot = {{"snapshot-id", 1000 + version},
                       {"sequence-number", 1},
                       {"timestamp-ms", 1700000000000},
                       {"manifest-list", "s3://lake/db/" + name + "/metadata/snap-1.avro"},
                       {"summary", {{"operation", "append"}}},
                       {"schema-id", 0}};
      if (version == 3) {
        snapshot["first-row-id"] = 0;
        snapshot["added-rows"] = 10;
      }
      Json commit = {{"requirements", Json::array()},
                     {"updates", Json::array({Json{{"action", "add-snapshot"}, {"snapshot", snapshot}},
                                              Json{{"action", "set-snapshot-ref"},
                                                   {"ref-name", "main"},
                                                   {"type", "branch"},
                                                   {"snapshot-id", 1000 + version}}})}};
      Send("POST /_iceberg/v1/lake/namespaces/db/tables/" + name + "\n\n" + commit.dump());
    }
    Send("POST /_iceberg/v1/lake/namespaces/db/views\n\n{\"name\":\"v\",\"schema\":" + schema +
         R"(,"view-version":{"version-id":1,"timestamp-ms":1700000000000,"schema-id":0,)"
         R"("summary":{"engine-name":"spark"},"default-namespace":["db"],"representations":)"
         R"([{"type":"sql","sql":"select * from t2","dialect":"spark"}]}})");
  }
};

CatalogFixture& Fixture() {
  static CatalogFixture fixture;  // destroyed at exit, which removes its directory
  static const bool seeded = (fixture.Seed(), true);
  (void)seeded;
  return fixture;
}

void CheckCatalogAnswer(const ParsedInput& input, const http::testing::RecordingResponse& response) {
  CheckAnswered(response);
  if (response.status() < 400 || response.body.empty()) return;
  Json body = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) Fail("an error answer that is not a JSON object", response);
  if (input.request.path.find("/oauth/tokens") != std::string::npos) {
    if (!body.contains("error")) Fail("an OAuth2 error without \"error\"", response);
    return;
  }
  auto error = body.find("error");
  if (error == body.end() || !error->is_object() || !(*error)["message"].is_string() ||
      !(*error)["type"].is_string() || !(*error)["code"].is_number_integer() ||
      (*error)["code"].get<int>() != response.status()) {
    Fail("an error answer that is not an IcebergErrorResponse", response);
  }
}

}  // namespace
}  // namespace serac::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace serac::fuzz;
  CatalogFixture& fixture = Fixture();
  if (++fixture.inputs % 4096 == 0) fixture.Seed();
  ParsedInput input;
  if (!ParseInput(data, size, input)) return -1;  // not a request: keep it out of the corpus
  if (input.request.path.rfind("/_iceberg", 0) != 0) return -1;
  SignAsRoot(input, "s3tables", serac::auth::UriEncoding::kGeneric);
  serac::http::testing::StringBody body(input.body);
  serac::http::testing::RecordingResponse response;
  serac::http::RequestOutcome outcome;
  fixture.service.Handle(input.request, body, response, outcome);
  CheckCatalogAnswer(input, response);
  return 0;
}
