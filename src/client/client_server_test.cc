// The S3 and REST catalog clients against a real `serac server` process, and against servers that
// lose their answers (the outcome-unknown rule).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "client/api_client.h"
#include "client/catalog_requests.h"
#include "client/rest_catalog.h"
#include "client/s3_client.h"
#include "client/serac_process_test_util.h"

namespace serac::client {
namespace {

using Json = nlohmann::json;
using testing::kRootAccessKey;
using testing::kRootSecretKey;
using testing::SeracProcess;

constexpr uint64_t kMiB = 1024 * 1024;

class ClientServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new SeracProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(server_->running()) << "serac server did not start (" SERAC_BINARY_PATH ")";
  }

  static S3ClientOptions S3Options() {
    S3ClientOptions options;
    options.endpoint = server_->endpoint();
    options.access_key = kRootAccessKey;
    options.secret_key = kRootSecretKey;
    return options;
  }
  // Uploads in parts of 5 MiB from 6 MiB on (the smallest parts S3 takes), so tests need few MiB.
  static S3ClientOptions MultipartOptions() {
    S3ClientOptions options = S3Options();
    options.multipart_threshold_bytes = 6 * kMiB;
    options.part_size_bytes = 5 * kMiB;
    return options;
  }

  static RestCatalogOptions CatalogOptions(const std::string& warehouse) {
    RestCatalogOptions options;
    options.uri = server_->endpoint() + "/_iceberg";
    options.warehouse = warehouse;
    options.access_key = kRootAccessKey;
    options.secret_key = kRootSecretKey;
    return options;
  }

  // A warehouse through serac's own admin API (ApiClient), as `serac warehouse create` makes it.
  static void CreateWarehouse(const std::string& name) {
    Connection connection;
    connection.endpoint = server_->endpoint();
    connection.access_key = kRootAccessKey;
    connection.secret_key = kRootSecretKey;
    Result<std::string> created = ApiClient(connection).Call(CreateWarehouseRequest(name, false));
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  static SeracProcess* server_;
};

SeracProcess* ClientServerTest::server_ = nullptr;

std::string Pattern(size_t size, uint32_t seed) {
  std::string bytes(size, '\0');
  uint32_t state = seed;
  for (char& byte : bytes) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<char>(state >> 24);
  }
  return bytes;
}

TEST(S3LocationTest, ParsesWhatEnginesWrite) {
  auto location = ParseS3Location("s3://wh/db/t/metadata/00001-x.metadata.json");
  ASSERT_TRUE(location.ok());
  EXPECT_EQ(location->bucket, "wh");
  EXPECT_EQ(location->key, "db/t/metadata/00001-x.metadata.json");
  EXPECT_EQ(ParseS3Location("s3a://b/k")->key, "k");
  for (const char* bad : {"", "s3://", "s3://bucket", "s3://bucket/", "s3:///key", "http://b/k", "b/k"}) {
    EXPECT_EQ(ParseS3Location(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

TEST_F(ClientServerTest, PutGetHeadListDelete) {
  auto s3 = S3Client::Make(S3Options());
  ASSERT_TRUE(s3.ok()) << s3.status().ToString();
  ASSERT_TRUE(s3->CreateBucket("objects").ok());
  EXPECT_EQ(s3->CreateBucket("objects").code(), ErrorCode::kAlreadyExists);

  const std::string body = Pattern(100000, 1);
  auto put = s3->PutObject("objects", "dir/a b+c.bin", body);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->parts, 0u);
  EXPECT_FALSE(put->etag.empty());
  EXPECT_EQ(*s3->GetObject("objects", "dir/a b+c.bin"), body);
  EXPECT_EQ(*s3->GetObject("objects", "dir/a b+c.bin", std::make_pair(uint64_t{10}, uint64_t{19})),
            body.substr(10, 10));
  auto head = s3->HeadObject("objects", "dir/a b+c.bin");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, body.size());
  EXPECT_EQ(head->etag, put->etag);

  // Create-only writes: the second one is refused and the first object stays.
  ASSERT_TRUE(s3->PutObject("objects", "once", "first", true).ok());
  EXPECT_EQ(s3->PutObject("objects", "once", "second", true).status().code(), ErrorCode::kPreconditionFailed);
  EXPECT_EQ(*s3->GetObject("objects", "once"), "first");

  for (int i = 0; i < 5; ++i) ASSERT_TRUE(s3->PutObject("objects", "list/" + std::to_string(i), "x").ok());
  std::vector<std::string> keys;
  std::string token;
  int pages = 0;
  do {
    auto page = s3->ListObjects("objects", "list/", token, 2);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const ObjectInfo& object : page->objects) keys.push_back(object.key);
    token = page->next_continuation_token;
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(keys, (std::vector<std::string>{"list/0", "list/1", "list/2", "list/3", "list/4"}));

  ASSERT_TRUE(s3->DeleteObject("objects", "dir/a b+c.bin").ok());
  EXPECT_TRUE(s3->DeleteObject("objects", "dir/a b+c.bin").ok());  // already gone: still OK
  EXPECT_EQ(s3->GetObject("objects", "dir/a b+c.bin").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(s3->HeadObject("objects", "dir/a b+c.bin").status().code(), ErrorCode::kNotFound);
  auto missing_bucket = s3->GetObject("no-such-bucket", "k");
  EXPECT_EQ(missing_bucket.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing_bucket.status().message().find("NoSuchBucket"), std::string::npos)
      << missing_bucket.status().message();
}

TEST_F(ClientServerTest, LargeBodiesGoUpInParts) {
  auto s3 = S3Client::Make(MultipartOptions());
  ASSERT_TRUE(s3.ok());
  ASSERT_TRUE(s3->CreateBucket("parts").ok());
  const std::string body = Pattern(12 * kMiB + 7, 2);
  auto put = s3->PutObject("parts", "big.bin", body);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  EXPECT_EQ(put->parts, 3u);
  EXPECT_NE(put->etag.find("-3"), std::string::npos) << put->etag;  // a multipart ETag
  EXPECT_EQ(*s3->GetObject("parts", "big.bin"), body);
  // Create-only applies to the completed upload too.
  EXPECT_EQ(s3->PutObject("parts", "big.bin", body, true).status().code(), ErrorCode::kPreconditionFailed);
}

// An object written in pieces of uneven sizes, over more parts than go up at once (so the bodies
// of parts sent carry later ones), arrives whole and in order.
TEST_F(ClientServerTest, AnUploadWrittenInPiecesArrivesWhole) {
  auto s3 = S3Client::Make(MultipartOptions());
  ASSERT_TRUE(s3.ok());
  ASSERT_TRUE(s3->CreateBucket("pieces").ok());
  const std::string body = Pattern(47 * kMiB + 13, 3);
  S3Upload upload(*s3, "pieces", "pieced.bin", false);
  size_t offset = 0;
  for (size_t piece = 1; offset < body.size(); ++piece) {
    const size_t size = std::min(body.size() - offset, piece % 7 == 0 ? 6 * kMiB + 1 : 300 * 1024 + piece);
    ASSERT_TRUE(upload.Write(std::string_view(body).substr(offset, size)).ok());
    offset += size;
  }
  auto closed = upload.Close();
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  EXPECT_EQ(closed->parts, 10u);  // 47 MiB in parts of 5 MiB
  auto read = s3->GetObject("pieces", "pieced.bin");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->size(), body.size());
  EXPECT_TRUE(*read == body);
}

TEST_F(ClientServerTest, WrongKeysAndBadOptionsAreRefused) {
  S3ClientOptions options = S3Options();
  options.secret_key = "wrong";
  auto s3 = S3Client::Make(options);
  ASSERT_TRUE(s3.ok());
  auto refused = s3->PutObject("objects", "k", "x");
  EXPECT_EQ(refused.status().code(), ErrorCode::kAccessDenied);
  EXPECT_NE(refused.status().message().find("SignatureDoesNotMatch"), std::string::npos)
      << refused.status().message();

  options = S3Options();
  options.part_size_bytes = kMiB;
  EXPECT_EQ(S3Client::Make(options).status().code(), ErrorCode::kInvalidArgument);
  options = S3Options();
  options.endpoint = "ftp://x";
  EXPECT_EQ(S3Client::Make(options).status().code(), ErrorCode::kInvalidArgument);
  options = S3Options();
  options.access_key.clear();
  EXPECT_EQ(S3Client::Make(options).status().code(), ErrorCode::kInvalidArgument);
}

constexpr const char* kSchema =
    R"({"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true},)"
    R"({"id":2,"name":"data","type":"string","required":false}]})";

TEST_F(ClientServerTest, CatalogCreateLoadCommitDrop) {
  CreateWarehouse("lake");
  auto catalog = RestCatalog::Connect(CatalogOptions("lake"));
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  RestCatalog& lake = **catalog;
  EXPECT_EQ(lake.path_base(), "/v1/lake/");

  ASSERT_TRUE(lake.CreateNamespace({"db"}, {{"owner", "client-test"}}).ok());
  EXPECT_EQ(lake.CreateNamespace({"db"}).code(), ErrorCode::kAlreadyExists);
  EXPECT_TRUE(*lake.NamespaceExists({"db"}));
  EXPECT_FALSE(*lake.NamespaceExists({"nope"}));

  TableCreation create;
  create.name = "events";
  create.schema_json = kSchema;
  create.partition_spec_json =
      R"({"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"b","transform":"bucket[4]"}]})";
  create.properties = {{"format-version", "2"}};
  auto created = lake.CreateTable({"db"}, create);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_NE(created->metadata_location.find("s3://lake/"), std::string::npos) << created->metadata_location;
  EXPECT_EQ(lake.CreateTable({"db"}, create).status().code(), ErrorCode::kAlreadyExists);

  auto loaded = lake.LoadTable({{"db"}, "events"});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->metadata_location, created->metadata_location);
  const Json metadata = Json::parse(loaded->metadata_json);
  EXPECT_EQ(metadata["format-version"], 2);
  const std::string uuid = metadata["table-uuid"];

  TableCommit commit;
  commit.table = {{"db"}, "events"};
  commit.requirements_json = Json::array({Json{{"type", "assert-table-uuid"}, {"uuid", uuid}}}).dump();
  commit.updates_json = R"([{"action":"set-properties","updates":{"written-by":"client"}}])";
  auto committed = lake.CommitTable(commit);
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  EXPECT_NE(committed->metadata_location, created->metadata_location);
  EXPECT_EQ(Json::parse(committed->metadata_json)["properties"]["written-by"], "client");

  // A requirement that no longer holds is a conflict, with the catalog's message and type.
  commit.requirements_json =
      R"([{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}])";
  auto stale = lake.CommitTable(commit);
  EXPECT_EQ(stale.status().code(), ErrorCode::kConflict);
  EXPECT_NE(stale.status().message().find("CommitFailedException"), std::string::npos)
      << stale.status().message();
  commit.updates_json = "{}";
  EXPECT_EQ(lake.CommitTable(commit).status().code(), ErrorCode::kInvalidArgument);

  // Two tables in one transaction.
  create.name = "other";
  ASSERT_TRUE(lake.CreateTable({"db"}, create).ok());
  TableCommit first{{{"db"}, "events"}, "[]", R"([{"action":"set-properties","updates":{"tx":"1"}}])"};
  TableCommit second{{{"db"}, "other"}, "[]", R"([{"action":"set-properties","updates":{"tx":"1"}}])"};
  ASSERT_TRUE(lake.CommitTransaction({first, second}).ok());
  EXPECT_EQ(Json::parse(lake.LoadTable({{"db"}, "other"})->metadata_json)["properties"]["tx"], "1");
  EXPECT_EQ(Json::parse(lake.LoadTable({{"db"}, "events"})->metadata_json)["properties"]["tx"], "1");

  auto names = lake.ListTables({"db"});
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"events", "other"}));

  ASSERT_TRUE(lake.DropTable({{"db"}, "other"}, true).ok());
  auto gone = lake.LoadTable({{"db"}, "other"});
  EXPECT_EQ(gone.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(gone.status().message().find("NoSuchTableException"), std::string::npos)
      << gone.status().message();
}

TEST_F(ClientServerTest, CatalogAuthModes) {
  CreateWarehouse("authlake");
  RestCatalogOptions options = CatalogOptions("authlake");
  options.auth = RestCatalogOptions::Auth::kOAuth2;
  auto oauth = RestCatalog::Connect(options);
  ASSERT_TRUE(oauth.ok()) << oauth.status().ToString();
  ASSERT_TRUE((*oauth)->CreateNamespace({"viaoauth"}).ok());
  EXPECT_TRUE(*(*oauth)->NamespaceExists({"viaoauth"}));

  options.secret_key = "wrong";
  EXPECT_EQ(RestCatalog::Connect(options).status().code(), ErrorCode::kAccessDenied);
  options = CatalogOptions("authlake");
  options.secret_key = "wrong";
  EXPECT_EQ(RestCatalog::Connect(options).status().code(), ErrorCode::kAccessDenied);
  options = CatalogOptions("authlake");
  options.auth = RestCatalogOptions::Auth::kNone;
  EXPECT_EQ(RestCatalog::Connect(options).status().code(), ErrorCode::kAccessDenied);
  options.auth = RestCatalogOptions::Auth::kBearer;
  EXPECT_EQ(RestCatalog::Connect(options).status().code(), ErrorCode::kInvalidArgument);  // no token given
  options.bearer_token = "not-a-token";
  EXPECT_EQ(RestCatalog::Connect(options).status().code(), ErrorCode::kAccessDenied);
  EXPECT_EQ(RestCatalog::Connect(CatalogOptions("no-such-warehouse")).status().code(), ErrorCode::kNotFound);
}

// A server that reads each request and closes the connection without a word, counting requests.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(fd_, 8);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int connection = accept(fd_, nullptr, nullptr);
        if (connection < 0 || stopping_) {
          if (connection >= 0) close(connection);
          return;
        }
        char buffer[65536];
        (void)recv(connection, buffer, sizeof buffer, 0);
        ++requests_;
        close(connection);
      }
    });
  }
  ~SilentServer() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_ = false;
  std::atomic<int> requests_ = 0;
  std::thread thread_;
};

// A 502 from a proxy in front of the catalog stands for the same thing.
TEST_F(ClientServerTest, LostAnswersToWritesAreOutcomeUnknown) {
  CreateWarehouse("lost");
  auto catalog = RestCatalog::Connect(CatalogOptions("lost"));
  ASSERT_TRUE(catalog.ok());
  ASSERT_TRUE((*catalog)->CreateNamespace({"db"}).ok());
  TableCreation create;
  create.name = "t";
  create.schema_json = kSchema;
  ASSERT_TRUE((*catalog)->CreateTable({"db"}, create).ok());

  SilentServer silent;
  S3ClientOptions s3_options = S3Options();
  s3_options.endpoint = silent.endpoint();
  auto s3 = S3Client::Make(s3_options);
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->PutObject("b", "k", "x").status().code(), ErrorCode::kOutcomeUnknown);
  // A read has no outcome to lose: it stays a transport error.
  EXPECT_EQ(s3->GetObject("b", "k").status().code(), ErrorCode::kUnavailable);

  // Nothing listening at all: the request never left, so the outcome is known (nothing happened).
  S3ClientOptions closed = S3Options();
  closed.endpoint = "http://127.0.0.1:1";
  EXPECT_EQ(S3Client::Make(closed)->PutObject("b", "k", "x").status().code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace serac::client
