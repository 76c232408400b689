// End-to-end tests of CatalogService over the real SQLite MetaStore and local BlobStore, with
// SigV4-signed requests (service s3tables, generic URI encoding) and in-memory HTTP fakes.
#include "catalog/catalog_test_fixture_internal.h"
#include "common/json_reads.h"

namespace serac::catalog {
namespace {

TEST_F(CatalogServiceTest, ConfigNamesThePrefixEndpointsAndStorage) {
  auto response = Call("GET", "/_iceberg/v1/config", "warehouse=lake");
  ASSERT_EQ(response.status(), 200) << response.body;
  EXPECT_EQ(last_operation_, "GetConfig");
  Json config = BodyJson(response);
  EXPECT_EQ(config["overrides"]["prefix"], "lake");
  EXPECT_EQ(config["defaults"]["s3.endpoint"], "http://localhost:9000");
  EXPECT_EQ(config["defaults"]["s3.path-style-access"], "true");
  EXPECT_EQ(config["defaults"]["client.region"], "us-east-1");
  std::vector<std::string> endpoints = config["endpoints"];
  EXPECT_NE(std::find(endpoints.begin(), endpoints.end(), "HEAD /v1/{prefix}/namespaces/{namespace}"),
            endpoints.end());
  EXPECT_NE(std::find(endpoints.begin(), endpoints.end(), "POST /v1/{prefix}/transactions/commit"),
            endpoints.end());

  auto unknown = Call("GET", "/_iceberg/v1/config", "warehouse=nope");
  EXPECT_EQ(unknown.status(), 404);
  EXPECT_EQ(ErrorType(unknown), "NoSuchWarehouseException");
}

TEST_F(CatalogServiceTest, UnsignedWrongKeyAndTamperedBodiesAreRefused) {
  CallOptions unsigned_call;
  unsigned_call.sign = false;
  auto response = Call("GET", "/_iceberg/v1/config", "warehouse=lake", "", unsigned_call);
  EXPECT_EQ(response.status(), 401);
  EXPECT_EQ(ErrorType(response), "NotAuthorizedException");

  CallOptions wrong_secret;
  wrong_secret.secret = "not-the-secret-at-all";
  EXPECT_EQ(Call("GET", "/_iceberg/v1/config", "warehouse=lake", "", wrong_secret).status(), 401);

  // PyIceberg style: no x-amz-content-sha256, so the body hash is part of the signature.
  CallOptions tampered;
  tampered.signed_body = R"({"namespace":["good"]})";
  response = Call("POST", std::string(kBase) + "/namespaces", "", R"({"namespace":["evil"]})", tampered);
  EXPECT_EQ(response.status(), 401) << response.body;
  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces/evil").status(), 404);

  CallOptions java_style;
  java_style.content_sha256_header = true;
  response = Call("POST", std::string(kBase) + "/namespaces", "", R"({"namespace":["java"]})", java_style);
  EXPECT_EQ(response.status(), 200) << response.body;
}

TEST_F(CatalogServiceTest, NamespaceLifecycle) {
  CreateNamespace({"a"});
  CreateNamespace({"a", "b"});
  auto duplicate = Post(std::string(kBase) + "/namespaces", Json{{"namespace", {"a"}}});
  EXPECT_EQ(duplicate.status(), 409);
  EXPECT_EQ(ErrorType(duplicate), "AlreadyExistsException");

  auto top = Call("GET", std::string(kBase) + "/namespaces");
  ASSERT_EQ(top.status(), 200);
  EXPECT_EQ(BodyJson(top)["namespaces"], Json::parse(R"([["a"]])"));
  EXPECT_TRUE(BodyJson(top)["next-page-token"].is_null());
  auto children = Call("GET", std::string(kBase) + "/namespaces", "parent=a%1Fb");
  EXPECT_EQ(BodyJson(children)["namespaces"], Json::array());
  children = Call("GET", std::string(kBase) + "/namespaces", "parent=a");
  EXPECT_EQ(BodyJson(children)["namespaces"], Json::parse(R"([["a","b"]])"));

  auto loaded = Call("GET", std::string(kBase) + "/namespaces/a%1Fb");
  ASSERT_EQ(loaded.status(), 200) << loaded.body;
  EXPECT_EQ(BodyJson(loaded)["namespace"], Json::parse(R"(["a","b"])"));
  EXPECT_EQ(Call("HEAD", std::string(kBase) + "/namespaces/a%1Fb").status(), 204);

  auto both = Post(std::string(kBase) + "/namespaces/a/properties",
                   Json{{"updates", {{"k", "v"}}}, {"removals", {"k"}}});
  EXPECT_EQ(both.status(), 422);
  auto props = Post(std::string(kBase) + "/namespaces/a/properties",
                    Json{{"updates", {{"k", "v"}}}, {"removals", {"gone"}}});
  ASSERT_EQ(props.status(), 200) << props.body;
  EXPECT_EQ(BodyJson(props)["updated"], Json::parse(R"(["k"])"));
  EXPECT_EQ(BodyJson(props)["missing"], Json::parse(R"(["gone"])"));
  EXPECT_EQ(BodyJson(Call("GET", std::string(kBase) + "/namespaces/a"))["properties"]["k"], "v");

  auto not_empty = Call("DELETE", std::string(kBase) + "/namespaces/a");
  EXPECT_EQ(not_empty.status(), 409);
  EXPECT_EQ(ErrorType(not_empty), "NamespaceNotEmptyException");
  EXPECT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/a%1Fb").status(), 204);
  EXPECT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/a").status(), 204);
  auto missing = Call("GET", std::string(kBase) + "/namespaces/a");
  EXPECT_EQ(missing.status(), 404);
  EXPECT_EQ(ErrorType(missing), "NoSuchNamespaceException");
  EXPECT_EQ(Call("HEAD", std::string(kBase) + "/namespaces/a").status(), 404);
}

TEST_F(CatalogServiceTest, NamespacesShowTheirTableLocationUnlessOneIsStored) {
  // Trino stages a table create only when the namespace names a location.
  auto created = Post(std::string(kBase) + "/namespaces", Json{{"namespace", {"a/x"}}});
  ASSERT_EQ(created.status(), 200) << created.body;
  EXPECT_EQ(BodyJson(created)["properties"]["location"], "s3://lake/a_x");
  CreateNamespace({"a/x", "b"});
  auto nested = Call("GET", std::string(kBase) + "/namespaces/a%2Fx%1Fb");
  ASSERT_EQ(nested.status(), 200) << nested.body;
  EXPECT_EQ(BodyJson(nested)["properties"], Json::parse(R"({"location":"s3://lake/a_x/b"})"));

  auto own = Post(std::string(kBase) + "/namespaces",
                  Json{{"namespace", {"own"}}, {"properties", {{"location", "s3://lake/elsewhere"}}}});
  ASSERT_EQ(own.status(), 200) << own.body;
  EXPECT_EQ(BodyJson(own)["properties"]["location"], "s3://lake/elsewhere");
  auto loaded = Call("GET", std::string(kBase) + "/namespaces/own");
  EXPECT_EQ(BodyJson(loaded)["properties"]["location"], "s3://lake/elsewhere");
}

TEST_F(CatalogServiceTest, NamespaceListingPagesOnlyWhenAskedTo) {
  for (const char* name : {"n1", "n2", "n3"}) CreateNamespace({name});
  EXPECT_EQ(BodyJson(Call("GET", std::string(kBase) + "/namespaces"))["namespaces"].size(), 3u);
  auto first = Call("GET", std::string(kBase) + "/namespaces", "pageToken=&pageSize=2");
  ASSERT_EQ(BodyJson(first)["namespaces"].size(), 2u);
  std::string token = BodyJson(first)["next-page-token"];
  auto second =
      Call("GET", std::string(kBase) + "/namespaces", "pageToken=" + UriEncode(token, true) + "&pageSize=2");
  EXPECT_EQ(BodyJson(second)["namespaces"], Json::parse(R"([["n3"]])"));
  EXPECT_TRUE(BodyJson(second)["next-page-token"].is_null());
}

TEST_F(CatalogServiceTest, CreateLoadCommitAndPurgeTable) {
  CreateNamespace({"db"});
  Json created = CreateTable("db", "t");
  const std::string location = created["metadata"]["location"];
  const std::string first_file = created["metadata-location"];
  EXPECT_EQ(location, "s3://lake/db/t");
  EXPECT_EQ(first_file.rfind(location + "/metadata/00000-", 0), 0u);
  EXPECT_EQ(created["config"]["s3.endpoint"], "http://localhost:9000");

  // The metadata file is an object S3 clients can read.
  auto object = stores_.meta->GetObject(kWarehouse, first_file.substr(std::string("s3://lake/").size()));
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  EXPECT_EQ(object->headers.content_type, "application/json");
  EXPECT_EQ(Json::parse(object->inline_data)["table-uuid"], created["metadata"]["table-uuid"]);

  auto listed = Call("GET", std::string(kBase) + "/namespaces/db/tables");
  EXPECT_EQ(BodyJson(listed)["identifiers"], Json::parse(R"([{"namespace":["db"],"name":"t"}])"));
  auto again = Post(std::string(kBase) + "/namespaces/db/tables", Json{{"name", "t"}, {"schema", Schema()}});
  EXPECT_EQ(again.status(), 409);

  auto committed =
      Commit("db", "t", Json::parse(R"([{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}])"),
             AddSnapshotToMain(1, 1));
  ASSERT_EQ(committed.status(), 200) << committed.body;
  EXPECT_EQ(last_operation_, "CommitTable");
  const std::string second_file = BodyJson(committed)["metadata-location"];
  EXPECT_EQ(second_file.rfind(location + "/metadata/00001-", 0), 0u);
  Json loaded = LoadTable("db", "t");
  EXPECT_EQ(loaded["metadata-location"], second_file);
  EXPECT_EQ(loaded["metadata"]["current-snapshot-id"], 1);

  // Dropping with purge removes every object under the table location.
  ASSERT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/db/tables/t", "purgeRequested=True").status(),
            204);
  auto gone = Call("GET", std::string(kBase) + "/namespaces/db/tables/t");
  EXPECT_EQ(gone.status(), 404);
  EXPECT_EQ(ErrorType(gone), "NoSuchTableException");
  meta::ListObjectsQuery query;
  query.bucket = kWarehouse;
  query.prefix = location.substr(std::string("s3://lake/").size());
  auto remaining = stores_.meta->ListObjects(query);
  ASSERT_TRUE(remaining.ok());
  EXPECT_TRUE(remaining->empty());
}

TEST_F(CatalogServiceTest, ALoadAnswersTheStorageSettingsOfTheConfigEndpoint) {
  // The load's head is written without a Json tree; it must say what the config endpoint says.
  CreateNamespace({"db"});
  CreateTable("db", "t");
  Json defaults = BodyJson(Call("GET", "/_iceberg/v1/config", "warehouse=lake"))["defaults"];
  Json loaded = LoadTable("db", "t");
  std::vector<std::string> members;
  for (const auto& [key, value] : loaded.items()) members.push_back(key);
  EXPECT_EQ(members, (std::vector<std::string>{"config", "metadata", "metadata-location"}));
  ASSERT_TRUE(loaded["config"].is_object());
  for (const auto& [key, value] : loaded["config"].items()) EXPECT_EQ(value, defaults[key]) << key;
  EXPECT_EQ(loaded["config"].size(), 5u);
  EXPECT_EQ(loaded["config"]["s3.force-virtual-addressing"], "false");
  EXPECT_EQ(loaded["config"]["s3.region"], "us-east-1");
}

TEST_F(CatalogServiceTest, LargeMetadataIsSentWhole) {
  // Past 64 KiB the metadata goes out as its own write after the head of the response.
  CreateNamespace({"db"});
  CreateTable("db", "big");
  const std::string value(200 * 1024, 'v');
  auto committed = Commit("db", "big", Json::array(),
                          Json::array({Json{{"action", "set-properties"}, {"updates", {{"large", value}}}}}));
  ASSERT_EQ(committed.status(), 200) << committed.body.substr(0, 200);
  Json commit_body = BodyJson(committed);
  EXPECT_EQ(commit_body["metadata"]["properties"]["large"], value);
  Json loaded = LoadTable("db", "big");
  EXPECT_EQ(loaded["metadata"]["properties"]["large"], value);
  EXPECT_EQ(loaded["metadata-location"], commit_body["metadata-location"]);
  EXPECT_TRUE(loaded.contains("config"));
}

TEST_F(CatalogServiceTest, ALoadAfterACommitSendsWhatAFreshServerSends) {
  // Enough snapshots for the history to be cut into shared chunks, and a large table so the
  // document goes out in pieces.
  CreateNamespace({"db"});
  CreateTable("db", "t");
  const std::string value(80 * 1024, 'v');
  ASSERT_EQ(Commit("db", "t", Json::array(),
                   Json::array({Json{{"action", "set-properties"}, {"updates", {{"large", value}}}}}))
                .status(),
            200);
  for (int64_t id = 1; id <= 300; ++id) {
    ASSERT_EQ(Commit("db", "t", Json::array(), AddSnapshotToMain(id, id)).status(), 200) << id;
  }
  const std::string path = std::string(kBase) + "/namespaces/db/tables/t";
  RecordingResponse after_commit = Call("GET", path);  // the commit's own pieces, from the cache
  ASSERT_EQ(after_commit.status(), 200);
  service_ = std::make_unique<CatalogService>(stores_.meta.get(), stores_.blobs.get(), stores_.identity.get(),
                                              CatalogOptions{});
  RecordingResponse fresh = Call("GET", path);  // read from the store and serialised anew
  ASSERT_EQ(fresh.status(), 200);
  EXPECT_EQ(after_commit.body, fresh.body);
  EXPECT_EQ(BodyJson(fresh)["metadata"]["snapshots"].size(), 300u);
}

// A commit that reached the store but whose acknowledgement was lost is answered as "state
// unknown" (the client must not retry it as a failure); one that failed before the store is not.
TEST_F(CatalogServiceTest, ACommitWhoseOutcomeIsUnknownSaysSo) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  stores_.faults->FailNthMutation(1, meta::FaultTiming::kBeforeDelegating);
  auto failed = Commit("db", "t", Json::array(), AddSnapshotToMain(1, 1));
  EXPECT_EQ(failed.status(), 503) << failed.body;
  EXPECT_EQ(BodyJson(failed)["error"]["type"], "ServiceUnavailableException");
  Json unchanged = LoadTable("db", "t")["metadata"];
  EXPECT_TRUE(!unchanged.contains("snapshots") || unchanged["snapshots"].empty()) << unchanged.dump();

  stores_.faults->FailNthMutation(1, meta::FaultTiming::kAfterDelegating);
  auto unknown = Commit("db", "t", Json::array(), AddSnapshotToMain(1, 1));
  EXPECT_EQ(unknown.status(), 500) << unknown.body;
  EXPECT_EQ(BodyJson(unknown)["error"]["type"], "CommitStateUnknownException");
  EXPECT_EQ(LoadTable("db", "t")["metadata"]["current-snapshot-id"], 1);
}

TEST_F(CatalogServiceTest, CommitErrorsLeaveTheTableUnchanged) {
  CreateNamespace({"db"});
  const std::string before = CreateTable("db", "t")["metadata-location"];

  auto malformed = Call("POST", std::string(kBase) + "/namespaces/db/tables/t", "", "{not json");
  EXPECT_EQ(malformed.status(), 400);
  EXPECT_EQ(ErrorType(malformed), "BadRequestException");
  auto unknown = Commit("db", "t", Json::array(), Json::parse(R"([{"action":"no-such-action"}])"));
  EXPECT_EQ(unknown.status(), 406);
  auto stale =
      Commit("db", "t",
             Json::parse(R"([{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}])"),
             AddSnapshotToMain(1, 1));
  EXPECT_EQ(stale.status(), 409);
  EXPECT_EQ(ErrorType(stale), "CommitFailedException");
  EXPECT_EQ(LoadTable("db", "t")["metadata-location"], before);

  auto no_change = Commit("db", "t", Json::array(), Json::array());
  ASSERT_EQ(no_change.status(), 200);
  EXPECT_EQ(BodyJson(no_change)["metadata-location"], before);

  auto missing_ns = Call("GET", std::string(kBase) + "/namespaces/nope/tables/t");
  EXPECT_EQ(missing_ns.status(), 404);
  EXPECT_EQ(ErrorType(missing_ns), "NoSuchTableException");
  auto missing_table = Commit("db", "nope", Json::array(), AddSnapshotToMain(1, 1));
  EXPECT_EQ(missing_table.status(), 404);
  EXPECT_EQ(ErrorType(missing_table), "NoSuchTableException");
}

TEST_F(CatalogServiceTest, LocationsOutsideTheWarehouseAreOverridden) {
  CreateNamespace({"db"});
  // Another bucket, a local path, the warehouse root: the table goes to a place of serac's choosing.
  for (const char* requested : {"s3://other/u", "file:/tmp/db/u", "s3://lake/", "s3://lake"}) {
    SCOPED_TRACE(requested);
    Json created = CreateTable("db", "u", Json{{"location", requested}});
    EXPECT_EQ(created["metadata"]["location"].get<std::string>().rfind("s3://lake/db/u-", 0), 0u) << created;
    ASSERT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/db/tables/u").status(), 204);
  }
  // A location inside the warehouse bucket is honoured.
  Json inside = CreateTable("db", "u", Json{{"location", "s3://lake/custom/u/"}});
  EXPECT_EQ(inside["metadata"]["location"], "s3://lake/custom/u");
  // A commit moving the table out keeps it where it is; moving inside is honoured.
  auto moved_out =
      Commit("db", "u", Json::array(),
             Json::array({Json{{"action", "set-location"}, {"location", "file:/tmp/elsewhere"}}}));
  ASSERT_EQ(moved_out.status(), 200) << moved_out.body;
  EXPECT_EQ(BodyJson(moved_out)["metadata"]["location"], "s3://lake/custom/u");
  auto moved_in = Commit("db", "u", Json::array(),
                         Json::array({Json{{"action", "set-location"}, {"location", "s3://lake/moved"}}}));
  ASSERT_EQ(moved_in.status(), 200) << moved_in.body;
  EXPECT_EQ(BodyJson(moved_in)["metadata"]["location"], "s3://lake/moved");
}

TEST_F(CatalogServiceTest, NamesWithSlashesAreStoredAsGiven) {
  CreateNamespace({"db"});
  Json created = CreateTable("db", "tab/le", Json{{"location", nullptr}});
  const std::string location = created["metadata"]["location"];
  EXPECT_EQ(location.rfind("s3://lake/db/tab_le-", 0), 0u) << location;
  Json loaded = LoadTable("db", "tab%2Fle");
  EXPECT_EQ(loaded["metadata"]["location"], location);
  auto listed = Call("GET", std::string(kBase) + "/namespaces/db/tables");
  EXPECT_EQ(BodyJson(listed)["identifiers"][0]["name"], "tab/le");
  EXPECT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/db/tables/tab%2Fle").status(), 204);
  EXPECT_EQ(Call("HEAD", std::string(kBase) + "/namespaces/db/tables/tab%2Fle").status(), 404);
}

TEST_F(CatalogServiceTest, CommitErrorsUseTheReferenceWording) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  auto stale =
      Commit("db", "t", Json::parse(R"([{"type":"assert-current-schema-id","current-schema-id":4}])"),
             Json::array({Json{{"action", "set-properties"}, {"updates", {{"a", "b"}}}}}));
  EXPECT_EQ(stale.status(), 409);
  EXPECT_EQ(ErrorType(stale), "CommitFailedException");
  EXPECT_EQ(BodyJson(stale)["error"]["message"],
            "Requirement failed: current schema changed: expected id 4 != 0");
  auto exists = Commit("db", "t", Json::parse(R"([{"type":"assert-create"}])"), Json::array());
  EXPECT_EQ(exists.status(), 409);
  EXPECT_EQ(BodyJson(exists)["error"]["message"], "Requirement failed: table already exists");
  // A schema that drops the newest column carries a lower last-column-id: fine, ids are not reused.
  Json id_only = Json::parse(
      R"({"type": "struct", "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]})");
  auto dropped =
      Commit("db", "t", Json::parse(R"([{"type":"assert-current-schema-id","current-schema-id":0}])"),
             Json::array({Json{{"action", "add-schema"}, {"schema", id_only}, {"last-column-id", 1}},
                          Json{{"action", "set-current-schema"}, {"schema-id", -1}}}));
  ASSERT_EQ(dropped.status(), 200) << dropped.body;
  EXPECT_EQ(BodyJson(dropped)["metadata"]["last-column-id"], 2);
}

TEST_F(CatalogServiceTest, StageCreateThenAssertCreate) {
  CreateNamespace({"db"});
  Json staged = CreateTable("db", "s", Json{{"stage-create", true}});
  EXPECT_TRUE(staged["metadata-location"].is_null());
  EXPECT_EQ(Call("HEAD", std::string(kBase) + "/namespaces/db/tables/s").status(), 404);

  const Json& metadata = staged["metadata"];
  Json updates = Json::array({
      Json{{"action", "assign-uuid"}, {"uuid", metadata["table-uuid"]}},
      Json{{"action", "upgrade-format-version"}, {"format-version", 2}},
      Json{{"action", "add-schema"}, {"schema", Schema()}},
      Json{{"action", "set-current-schema"}, {"schema-id", -1}},
      Json{{"action", "add-spec"}, {"spec", Json{{"spec-id", 0}, {"fields", Json::array()}}}},
      Json{{"action", "set-default-spec"}, {"spec-id", -1}},
      Json{{"action", "add-sort-order"}, {"sort-order", Json{{"order-id", 0}, {"fields", Json::array()}}}},
      Json{{"action", "set-default-sort-order"}, {"sort-order-id", -1}},
      Json{{"action", "set-location"}, {"location", metadata["location"]}},
      Json{{"action", "set-properties"}, {"updates", {{"owner", "me"}}}},
  });
  auto finished = Commit("db", "s", Json::parse(R"([{"type":"assert-create"}])"), updates);
  ASSERT_EQ(finished.status(), 200) << finished.body;
  EXPECT_EQ(Call("HEAD", std::string(kBase) + "/namespaces/db/tables/s").status(), 204);
  Json loaded = LoadTable("db", "s");
  EXPECT_EQ(loaded["metadata"]["table-uuid"], metadata["table-uuid"]);
  EXPECT_EQ(loaded["metadata"]["properties"]["owner"], "me");

  auto twice = Commit("db", "s", Json::parse(R"([{"type":"assert-create"}])"), updates);
  EXPECT_EQ(twice.status(), 409);
}

TEST_F(CatalogServiceTest, EtagsAndNotModified) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  const std::string path = std::string(kBase) + "/namespaces/db/tables/t";
  auto all = Call("GET", path);
  auto refs = Call("GET", path, "snapshots=refs");
  ASSERT_FALSE(all.Header("ETag").empty());
  EXPECT_NE(all.Header("ETag"), refs.Header("ETag"));
  CallOptions conditional;
  conditional.headers = {{"If-None-Match", all.Header("ETag")}};
  auto not_modified = Call("GET", path, "", "", conditional);
  EXPECT_EQ(not_modified.status(), 304);
  EXPECT_TRUE(not_modified.body.empty());
  conditional.headers = {{"If-None-Match", refs.Header("ETag")}};
  EXPECT_EQ(Call("GET", path, "", "", conditional).status(), 200);
}

TEST_F(CatalogServiceTest, TransactionIsAllOrNothing) {
  CreateNamespace({"db"});
  const std::string t1 = CreateTable("db", "t1")["metadata-location"];
  const std::string t2 = CreateTable("db", "t2")["metadata-location"];
  Json stale = {
      {"table-changes",
       Json::array(
           {Json{{"identifier", {{"namespace", {"db"}}, {"name", "t1"}}},
                 {"requirements", Json::array()},
                 {"updates", AddSnapshotToMain(1, 1, "s3://lake/db/t1")}},
            Json{{"identifier", {{"namespace", {"db"}}, {"name", "t2"}}},
                 {"requirements",
                  Json::parse(R"([{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":99}])")},
                 {"updates", AddSnapshotToMain(2, 1, "s3://lake/db/t2")}}})}};
  auto refused = Post(std::string(kBase) + "/transactions/commit", stale);
  EXPECT_EQ(refused.status(), 409) << refused.body;
  EXPECT_EQ(LoadTable("db", "t1")["metadata-location"], t1);
  EXPECT_EQ(LoadTable("db", "t2")["metadata-location"], t2);

  stale["table-changes"][1]["requirements"] = Json::array();
  auto accepted = Post(std::string(kBase) + "/transactions/commit", stale);
  ASSERT_EQ(accepted.status(), 204) << accepted.body;
  EXPECT_EQ(LoadTable("db", "t1")["metadata"]["current-snapshot-id"], 1);
  EXPECT_EQ(LoadTable("db", "t2")["metadata"]["current-snapshot-id"], 2);
}

TEST_F(CatalogServiceTest, ConcurrentCommitsAreRetriedOnTheServer) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  constexpr int kThreads = 8;
  std::vector<int> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      // Snapshots without a parent carry no stale-sequence check, so every retry can land.
      Json updates = Json::array({Json{{"action", "add-snapshot"}, {"snapshot", Snapshot(100 + i, 1)}},
                                  Json{{"action", "set-snapshot-ref"},
                                       {"ref-name", "branch-" + std::to_string(i)},
                                       {"type", "branch"},
                                       {"snapshot-id", 100 + i}}});
      statuses[i] = Commit("db", "t", Json::array(), updates).status();
    });
  }
  for (auto& thread : threads) thread.join();
  for (int status : statuses) EXPECT_EQ(status, 200);
  Json metadata = LoadTable("db", "t")["metadata"];
  EXPECT_EQ(metadata["snapshots"].size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(metadata["refs"].size(), static_cast<size_t>(kThreads));
}

TEST_F(CatalogServiceTest, RenameAndRegister) {
  CreateNamespace({"db"});
  CreateNamespace({"other"});
  const std::string file = CreateTable("db", "t")["metadata-location"];
  Json rename = {{"source", {{"namespace", {"db"}}, {"name", "t"}}},
                 {"destination", {{"namespace", {"other"}}, {"name", "u"}}}};
  ASSERT_EQ(Post(std::string(kBase) + "/tables/rename", rename).status(), 204);
  EXPECT_EQ(LoadTable("other", "u")["metadata-location"], file);
  auto missing = Post(std::string(kBase) + "/tables/rename", rename);
  EXPECT_EQ(missing.status(), 404);
  EXPECT_EQ(ErrorType(missing), "NoSuchTableException");

  ASSERT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/other/tables/u").status(), 204);
  auto registered = Post(std::string(kBase) + "/namespaces/db/register",
                         Json{{"name", "back"}, {"metadata-location", file}});
  ASSERT_EQ(registered.status(), 200) << registered.body;
  EXPECT_EQ(LoadTable("db", "back")["metadata-location"], file);
  auto conflict = Post(std::string(kBase) + "/namespaces/db/register",
                       Json{{"name", "back"}, {"metadata-location", file}});
  EXPECT_EQ(conflict.status(), 409);
  const std::string metrics = std::string(kBase) + "/namespaces/db/tables/back/metrics";
  const Json report = {{"report-type", "scan-report"},
                       {"table-name", "db.back"},
                       {"snapshot-id", 1},
                       {"metrics", Json::object()}};
  EXPECT_EQ(Post(metrics, report).status(), 204);
  for (const char* required : {"report-type", "table-name", "snapshot-id", "metrics"}) {
    Json incomplete = report;
    incomplete.erase(required);
    EXPECT_EQ(Post(metrics, incomplete).status(), 400) << required;
  }
}

TEST_F(CatalogServiceTest, ViewLifecycle) {
  CreateNamespace({"db"});
  Json version = {
      {"version-id", 1},
      {"schema-id", 0},
      {"timestamp-ms", 1700000000000},
      {"summary", {{"engine-name", "spark"}}},
      {"representations", Json::array({Json{{"type", "sql"}, {"sql", "select 1"}, {"dialect", "spark"}}})},
      {"default-namespace", {"db"}}};
  auto created = Post(
      std::string(kBase) + "/namespaces/db/views",
      Json{{"name", "v"}, {"schema", Schema()}, {"view-version", version}, {"properties", Json::object()}});
  ASSERT_EQ(created.status(), 200) << created.body;
  const std::string uuid = BodyJson(created)["metadata"]["view-uuid"];
  EXPECT_EQ(Call("HEAD", std::string(kBase) + "/namespaces/db/views/v").status(), 204);
  auto clash = Post(std::string(kBase) + "/namespaces/db/tables", Json{{"name", "v"}, {"schema", Schema()}});
  EXPECT_EQ(clash.status(), 409);
  EXPECT_EQ(BodyJson(clash)["error"]["message"], "View with same name already exists: db.v");

  Json next = version;
  next["version-id"] = 2;
  next["representations"][0]["sql"] = "select 2";
  auto replaced = Post(
      std::string(kBase) + "/namespaces/db/views/v",
      Json{
          {"requirements", Json::array({Json{{"type", "assert-view-uuid"}, {"uuid", uuid}}})},
          {"updates", Json::array({Json{{"action", "add-view-version"}, {"view-version", next}},
                                   Json{{"action", "set-current-view-version"}, {"view-version-id", -1}}})}});
  ASSERT_EQ(replaced.status(), 200) << replaced.body;
  auto loaded = Call("GET", std::string(kBase) + "/namespaces/db/views/v");
  EXPECT_EQ(BodyJson(loaded)["metadata"]["current-version-id"], 2);
  EXPECT_EQ(BodyJson(Call("GET", std::string(kBase) + "/namespaces/db/views"))["identifiers"].size(), 1u);
  EXPECT_EQ(Call("DELETE", std::string(kBase) + "/namespaces/db/views/v").status(), 204);
  auto gone = Call("GET", std::string(kBase) + "/namespaces/db/views/v");
  EXPECT_EQ(gone.status(), 404);
  EXPECT_EQ(ErrorType(gone), "NoSuchViewException");
}

TEST_F(CatalogServiceTest, ViewCommitWithNullListsChangesNothing) {
  CreateNamespace({"db"});
  Json version = {
      {"version-id", 1},
      {"schema-id", 0},
      {"timestamp-ms", 1700000000000},
      {"summary", {{"engine-name", "spark"}}},
      {"representations", Json::array({Json{{"type", "sql"}, {"sql", "select 1"}, {"dialect", "spark"}}})},
      {"default-namespace", Json::array({"db"})}};
  auto created = Post(std::string(kBase) + "/namespaces/db/views",
                      Json{{"name", "v"}, {"schema", Schema()}, {"view-version", version}});
  ASSERT_EQ(created.status(), 200) << created.body;
  const std::string file = BodyJson(created)["metadata-location"];
  // Null requirements or updates are none, as the reference reads a commit.
  auto nulls = Post(std::string(kBase) + "/namespaces/db/views/v",
                    Json{{"requirements", nullptr}, {"updates", nullptr}});
  ASSERT_EQ(nulls.status(), 200) << nulls.body;
  EXPECT_EQ(BodyJson(nulls)["metadata-location"], file);
  auto set =
      Post(std::string(kBase) + "/namespaces/db/views/v",
           Json{{"requirements", nullptr},
                {"updates", Json::array({Json{{"action", "set-properties"}, {"updated", {{"k", "v"}}}}})}});
  ASSERT_EQ(set.status(), 200) << set.body;
  EXPECT_EQ(BodyJson(set)["metadata"]["properties"]["k"], "v");
  // A version the reference could not parse is refused, and the view stays as it was.
  Json no_dialect = version;
  no_dialect["version-id"] = 2;
  no_dialect["representations"][0].erase("dialect");
  auto refused = Post(
      std::string(kBase) + "/namespaces/db/views/v",
      Json{{"updates", Json::array({Json{{"action", "add-view-version"}, {"view-version", no_dialect}}})}});
  EXPECT_EQ(refused.status(), 400);
  EXPECT_EQ(BodyJson(Call("GET", std::string(kBase) + "/namespaces/db/views/v"))["metadata-location"],
            BodyJson(set)["metadata-location"]);
}

Json ViewBody(const std::string& name, Json representations) {
  Json version = {{"version-id", 1},
                  {"schema-id", 0},
                  {"timestamp-ms", 1700000000000},
                  {"summary", {{"engine-name", "trino"}}},
                  {"representations", std::move(representations)},
                  {"default-namespace", {"db"}}};
  return Json{
      {"name", name}, {"schema", Schema()}, {"view-version", version}, {"properties", Json::object()}};
}

Json SqlFor(const std::string& dialect) {
  return Json{{"type", "sql"}, {"sql", "select 1"}, {"dialect", dialect}};
}

TEST_F(CatalogServiceTest, NameClashesAndInvalidViewsUseTheReferenceWording) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  const std::string views = std::string(kBase) + "/namespaces/db/views";
  auto over_table = Post(views, ViewBody("t", Json::array({SqlFor("trino")})));
  EXPECT_EQ(over_table.status(), 409);
  EXPECT_EQ(BodyJson(over_table)["error"]["message"], "Table with same name already exists: db.t");
  // A view location may be anything (views have no files there); it is kept as given.
  Json with_location = ViewBody("v", Json::array({SqlFor("trino")}));
  with_location["location"] = "file:/tmp/somewhere/v";
  auto created = Post(views, with_location);
  ASSERT_EQ(created.status(), 200) << created.body;
  EXPECT_EQ(BodyJson(created)["metadata"]["location"], "file:/tmp/somewhere/v");
  EXPECT_EQ(BodyJson(created)["metadata-location"].get<std::string>().rfind("s3://lake/db/v-", 0), 0u);
  auto again = Post(views, ViewBody("v", Json::array({SqlFor("trino")})));
  EXPECT_EQ(again.status(), 409);
  EXPECT_EQ(BodyJson(again)["error"]["message"], "View already exists: db.v");

  auto twice = Post(views, ViewBody("w", Json::array({SqlFor("trino"), SqlFor("trino")})));
  EXPECT_EQ(twice.status(), 400);
  EXPECT_EQ(ErrorType(twice), "IllegalArgumentException");
  EXPECT_EQ(BodyJson(twice)["error"]["message"],
            "Invalid view version: Cannot add multiple queries for dialect trino");

  Json rename = {{"source", {{"namespace", {"db"}}, {"name", "v"}}},
                 {"destination", {{"namespace", {"db"}}, {"name", "t"}}}};
  auto onto_table = Post(std::string(kBase) + "/views/rename", rename);
  EXPECT_EQ(onto_table.status(), 409);
  EXPECT_EQ(BodyJson(onto_table)["error"]["message"], "Cannot rename db.v to db.t. Table already exists");
  CreateTable("db", "t2");
  rename["source"]["name"] = "t2";
  rename["destination"]["name"] = "v";
  auto onto_view = Post(std::string(kBase) + "/tables/rename", rename);
  EXPECT_EQ(BodyJson(onto_view)["error"]["message"], "Cannot rename db.t2 to db.v. View already exists");
}

TEST_F(CatalogServiceTest, StageCreateWhoseNameAViewTookFailsAtOnce) {
  CreateNamespace({"db"});
  Json staged = CreateTable("db", "x", Json{{"stage-create", true}});
  ASSERT_EQ(Post(std::string(kBase) + "/namespaces/db/views", ViewBody("x", Json::array({SqlFor("spark")})))
                .status(),
            200);
  Json updates =
      Json::array({Json{{"action", "assign-uuid"}, {"uuid", staged["metadata"]["table-uuid"]}},
                   Json{{"action", "add-schema"}, {"schema", Schema()}},
                   Json{{"action", "set-current-schema"}, {"schema-id", -1}},
                   Json{{"action", "set-location"}, {"location", staged["metadata"]["location"]}}});
  auto finished = Commit("db", "x", Json::parse(R"([{"type":"assert-create"}])"), updates);
  EXPECT_EQ(finished.status(), 409) << finished.body;
  EXPECT_EQ(ErrorType(finished), "AlreadyExistsException");
  EXPECT_EQ(BodyJson(finished)["error"]["message"], "View with same name already exists: db.x");
}

TEST_F(CatalogServiceTest, WarehouseAdminAndPrefixLessRoutes) {
  // With one warehouse, prefix-less routes (ClickHouse's DROP) address it.
  auto created = Post("/_iceberg/v1/namespaces", Json{{"namespace", {"p"}}});
  ASSERT_EQ(created.status(), 200) << created.body;
  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces/p").status(), 200);

  ASSERT_EQ(Post("/_iceberg/v1/warehouses", Json{{"name", "second"}}).status(), 200);
  EXPECT_EQ(Post("/_iceberg/v1/warehouses", Json{{"name", "second"}}).status(), 409);
  EXPECT_EQ(Post("/_iceberg/v1/warehouses", Json{{"name", "Bad_Name"}}).status(), 400);
  auto listed = Call("GET", "/_iceberg/v1/warehouses", "pageSize=1");
  ASSERT_EQ(listed.status(), 200);
  EXPECT_EQ(BodyJson(listed)["warehouses"], Json::parse(R"(["lake"])"));
  EXPECT_FALSE(BodyJson(listed)["next-page-token"].is_null());
  EXPECT_EQ(Call("GET", "/_iceberg/v1/warehouses/second").status(), 200);
  EXPECT_EQ(Call("GET", "/_iceberg/v1/namespaces").status(), 400);  // now ambiguous

  auto not_empty = Call("DELETE", "/_iceberg/v1/warehouses/lake");
  EXPECT_EQ(not_empty.status(), 409);
  EXPECT_EQ(Call("DELETE", "/_iceberg/v1/warehouses/lake", "force=true").status(), 204);
  auto gone = Call("GET", "/_iceberg/v1/warehouses/lake");
  EXPECT_EQ(gone.status(), 404);
  EXPECT_EQ(ErrorType(gone), "NoSuchWarehouseException");
  EXPECT_EQ(Call("GET", std::string(kBase) + "/namespaces").status(), 404);
}

}  // namespace
}  // namespace serac::catalog
