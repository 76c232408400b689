// The fixture of CatalogService's end-to-end tests: the real SQLite MetaStore and local BlobStore,
// an IdentityService whose root key signs by default, SigV4-signed (service s3tables, generic URI
// encoding) or bearer requests, and in-memory HTTP fakes. Included by the catalog's test files only.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "auth/identity.h"
#include "auth/service_test_stores.h"
#include "auth/sigv4.h"
#include "catalog/catalog_service.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "common/random.h"
#include "http/http_test_fakes.h"

namespace serac::catalog {
namespace {  // each test file gets its own copy

constexpr std::string_view kAccessKey = "CATALOGKEY";
constexpr std::string_view kSecretKey = "catalogsecret/abcdefghijklmnopqrstuvwx";
constexpr char kWarehouse[] = "lake";
constexpr char kBase[] = "/_iceberg/v1/lake";

using http::testing::RecordingResponse;
using http::testing::StringBody;

[[maybe_unused]] Json BodyJson(const RecordingResponse& response) {
  return response.body.empty() ? Json() : Json::parse(response.body);
}
[[maybe_unused]] std::string ErrorType(const RecordingResponse& response) {
  return BodyJson(response)["error"]["type"].get<std::string>();
}

struct CallOptions {
  std::vector<http::Header> headers;
  bool sign = true;
  bool content_sha256_header = false;  // PyIceberg omits it on requests with a body
  std::string signed_body;             // sign this instead of the sent body (tampering)
  std::string access_key = std::string(kAccessKey);
  std::string secret = std::string(kSecretKey);
  std::string bearer;  // sent as "Authorization: Bearer", unsigned, when not empty
};

[[maybe_unused]] Json Schema() {
  return Json::parse(R"({"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "data", "required": false, "type": "string"}]})");
}

// A snapshot of the table at `location` (the fixture's CreateTable puts table NAME of namespace NS
// at s3://lake/NS/NAME): its manifest list, like every file of a table, is below that location.
[[maybe_unused]] Json Snapshot(int64_t id, int64_t sequence, const std::string& location = "s3://lake/db/t") {
  return Json{{"snapshot-id", id},
              {"sequence-number", sequence},
              {"timestamp-ms", 1700000000000 + id},
              {"manifest-list", location + "/metadata/snap-" + std::to_string(id) + ".avro"},
              {"summary", {{"operation", "append"}}},
              {"schema-id", 0}};
}

[[maybe_unused]] Json AddSnapshotToMain(int64_t id, int64_t sequence,
                                        const std::string& location = "s3://lake/db/t") {
  return Json::array(
      {Json{{"action", "add-snapshot"}, {"snapshot", Snapshot(id, sequence, location)}},
       Json{{"action", "set-snapshot-ref"}, {"ref-name", "main"}, {"type", "branch"}, {"snapshot-id", id}}});
}

class CatalogServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stores_.Open("catalog_service_test",
                 auth::Credentials{std::string(kAccessKey), std::string(kSecretKey), ""}, identity_options_);
    if (HasFatalFailure()) return;
    service_ = std::make_unique<CatalogService>(stores_.meta.get(), stores_.blobs.get(),
                                                stores_.identity.get(), CatalogOptions{});
    ASSERT_EQ(Call("POST", "/_iceberg/v1/warehouses", "", R"({"name":"lake"})").status(), 200);
  }
  void TearDown() override {
    service_.reset();  // before the stores it points into
  }

  RecordingResponse Call(const std::string& method, const std::string& path, const std::string& query = "",
                         const std::string& body = "", CallOptions options = {}) {
    std::vector<http::Header> headers = {{"Host", "localhost:9000"}};
    for (auto& header : options.headers) headers.push_back(header);
    if (!body.empty()) headers.push_back({"Content-Length", std::to_string(body.size())});
    if (!options.bearer.empty()) {
      headers.push_back({"Authorization", "Bearer " + options.bearer});
    } else if (options.sign) {
      auth::SignOptions sign;
      sign.service = "s3tables";
      sign.uri_encoding = auth::UriEncoding::kGeneric;
      sign.now = Now();
      sign.payload_sha256_hex = Sha256Hex(options.signed_body.empty() ? body : options.signed_body);
      sign.send_content_sha256_header = options.content_sha256_header || body.empty();
      auth::SignRequest(method, path, query, headers, {options.access_key, options.secret, ""}, sign);
    }
    http::Request request;
    request.method = method;
    request.path = path;
    request.query = query;
    request.target = path + (query.empty() ? "" : "?" + query);
    request.headers = headers;
    request.request_id = "REQ";
    StringBody reader(body);
    RecordingResponse response;
    http::RequestOutcome outcome;
    service_->Handle(request, reader, response, outcome);
    last_operation_ = outcome.operation;
    return response;
  }

  RecordingResponse Post(const std::string& path, const Json& body, const std::string& query = "") {
    return Call("POST", path, query, body.dump());
  }

  void CreateNamespace(const Json& levels) {
    auto response = Post(std::string(kBase) + "/namespaces", Json{{"namespace", levels}});
    ASSERT_EQ(response.status(), 200) << response.body;
  }

  // At s3://lake/NS/NAME unless `extra` names a location (null: the catalog's default one).
  Json CreateTable(const std::string& ns, const std::string& name, Json extra = Json::object()) {
    Json body = {{"name", name}, {"schema", Schema()}, {"location", "s3://lake/" + ns + "/" + name}};
    body.update(extra);
    if (body["location"].is_null()) body.erase("location");
    auto response = Post(std::string(kBase) + "/namespaces/" + ns + "/tables", body);
    EXPECT_EQ(response.status(), 200) << response.body;
    return BodyJson(response);
  }

  Json LoadTable(const std::string& ns, const std::string& name) {
    auto response = Call("GET", std::string(kBase) + "/namespaces/" + ns + "/tables/" + name);
    EXPECT_EQ(response.status(), 200) << response.body;
    return BodyJson(response);
  }

  RecordingResponse Commit(const std::string& ns, const std::string& name, const Json& requirements,
                           const Json& updates) {
    return Post(std::string(kBase) + "/namespaces/" + ns + "/tables/" + name,
                Json{{"requirements", requirements}, {"updates", updates}});
  }

  auth::IdentityOptions identity_options_;
  auth::testing::ServiceTestStores stores_;
  std::unique_ptr<CatalogService> service_;
  std::string last_operation_;
};

}  // namespace
}  // namespace serac::catalog
