#include "server/router.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "objects/objects_test_fakes.h"

namespace serac::server {
namespace {

class FakeBody : public http::BodyReader {
 public:
  explicit FakeBody(std::optional<uint64_t> length = 0) : length_(length) {}
  Result<size_t> Read(char*, size_t) override { return size_t{0}; }
  std::optional<uint64_t> content_length() const override { return length_; }
  void SetLimit(uint64_t) override {}

 private:
  std::optional<uint64_t> length_;
};

class FakeResponse : public http::ResponseWriter {
 public:
  int status_code = 200;
  std::vector<http::Header> headers;
  std::string body;
  bool sent = false;
  bool close_after = false;

  void SetStatus(int status) override { status_code = status; }
  void AddHeader(std::string_view name, std::string_view value) override {
    headers.push_back({std::string(name), std::string(value)});
  }
  Status Send(std::string_view data) override {
    body = data;
    sent = true;
    return Status::Ok();
  }
  Status Begin(uint64_t) override { return Status::Ok(); }
  Status Write(const char*, size_t) override { return Status::Ok(); }
  Status SendFile(int, uint64_t, uint64_t) override { return Status::Ok(); }
  Status SendContinue() override { return Status::Ok(); }
  bool started() const override { return sent; }
  int status() const override { return status_code; }
  void CloseAfterResponse() override { close_after = true; }

  std::string Header(std::string_view name) const {
    for (const auto& header : headers) {
      if (header.name == name) return header.value;
    }
    return "";
  }
};

class RouterTest : public ::testing::Test {
 protected:
  Router MakeRouter(std::string domain = "") {
    return Router(
        &meta_, &metrics_,
        [this](const http::Request& request, http::BodyReader&, http::ResponseWriter& response,
               http::RequestOutcome& outcome) {
          s3_paths_.push_back(request.path);
          outcome.operation = "S3";
          response.SetStatus(299);
          (void)response.Send("s3");
        },
        RouterOptions{std::move(domain)});
  }

  FakeResponse Call(const Router& router, std::string method, std::string path,
                    std::string host = "127.0.0.1:9000", std::optional<uint64_t> body_length = 0) {
    http::Request request;
    request.method = std::move(method);
    request.path = std::move(path);
    request.target = request.path;
    request.headers.push_back({"Host", std::move(host)});
    FakeBody body(body_length);
    FakeResponse response;
    outcome_ = http::RequestOutcome();
    router.Handle(request, body, response, outcome_);
    return response;
  }

  objects::testing::FakeMetaStore meta_;
  http::Metrics metrics_;
  std::vector<std::string> s3_paths_;
  http::RequestOutcome outcome_;
};

TEST_F(RouterTest, LivenessAlwaysAnswers) {
  Router router = MakeRouter();
  meta_.fail_everything = true;
  FakeResponse response = Call(router, "GET", "/_serac/health/live");
  EXPECT_EQ(response.status_code, 200);
  EXPECT_EQ(outcome_.operation, "HealthLive");
  EXPECT_TRUE(s3_paths_.empty());
}

TEST_F(RouterTest, ReadinessFollowsTheMetaStore) {
  Router router = MakeRouter();
  EXPECT_EQ(Call(router, "GET", "/_serac/health/ready").status_code, 200);
  meta_.fail_everything = true;
  EXPECT_EQ(Call(router, "GET", "/_serac/health/ready").status_code, 503);
  EXPECT_EQ(outcome_.operation, "HealthReady");
}

TEST_F(RouterTest, MetricsUsePrometheusTextFormat) {
  Router router = MakeRouter();
  metrics_.RecordRequest("PutObject", 200, 10, 0, 0.01);
  FakeResponse response = Call(router, "GET", "/_serac/metrics");
  EXPECT_EQ(response.status_code, 200);
  EXPECT_EQ(response.Header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(response.body, metrics_.Render());
  EXPECT_NE(response.body.find("PutObject"), std::string::npos);
}

TEST_F(RouterTest, ANamedNodeSaysWhoAnsweredAndAnUnreachableBlobStoreIsNotReady) {
  RouterOptions options;
  options.node_name = "node-2";
  Status blobs = Status::Ok();
  options.blobs_reachable = [&blobs] { return blobs; };
  Router router(
      &meta_, &metrics_,
      [](const http::Request&, http::BodyReader&, http::ResponseWriter& response, http::RequestOutcome&) {
        (void)response.Send("s3");
      },
      options);
  FakeResponse s3 = Call(router, "GET", "/bucket/key");
  EXPECT_EQ(s3.Header("x-serac-node"), "node-2");
  FakeResponse metrics = Call(router, "GET", "/_serac/metrics");
  EXPECT_NE(metrics.body.find("serac_node_info{node=\"node-2\"} 1"), std::string::npos) << metrics.body;
  EXPECT_EQ(Call(router, "GET", "/_serac/health/ready").status_code, 200);
  blobs = Error(ErrorCode::kUnavailable, "upstream refused the connection");
  EXPECT_EQ(Call(router, "GET", "/_serac/health/ready").status_code, 503);
}

TEST_F(RouterTest, UnknownSeracPathsAndWrongMethodsAre404Json) {
  Router router = MakeRouter();
  for (const char* path : {"/_serac", "/_serac/", "/_serac/nope", "/_serac/health/live/extra"}) {
    FakeResponse response = Call(router, "GET", path);
    EXPECT_EQ(response.status_code, 404) << path;
    EXPECT_EQ(response.Header("Content-Type"), "application/json") << path;
  }
  EXPECT_EQ(Call(router, "DELETE", "/_serac/health/live").status_code, 404);
  EXPECT_TRUE(s3_paths_.empty());
}

TEST_F(RouterTest, IcebergIsNotImplementedYet) {
  Router router = MakeRouter();
  FakeResponse response = Call(router, "GET", "/_iceberg/v1/config");
  EXPECT_EQ(response.status_code, 501);
  EXPECT_EQ(response.body, kIcebergNotAvailableJson);
  EXPECT_EQ(response.Header("Content-Type"), "application/json");
  EXPECT_EQ(Call(router, "GET", "/_iceberg").status_code, 501);
  EXPECT_TRUE(s3_paths_.empty());
}

TEST_F(RouterTest, EverythingElseGoesToS3) {
  Router router = MakeRouter();
  for (const char* path : {"/", "/bucket", "/bucket/_serac/health/live", "/_seracx", "/_icebergs/x"}) {
    EXPECT_EQ(Call(router, "GET", path).status_code, 299) << path;
  }
  EXPECT_EQ(s3_paths_.size(), 5u);
}

TEST_F(RouterTest, VirtualHostRequestsAlwaysGoToS3) {
  Router router = MakeRouter("S3.Example.com");
  // In virtual-host style "/_serac/metrics" is the key "_serac/metrics" in bucket "b".
  EXPECT_EQ(Call(router, "GET", "/_serac/metrics", "b.s3.example.com:9000").status_code, 299);
  EXPECT_EQ(Call(router, "GET", "/_iceberg/v1/config", "B.S3.EXAMPLE.COM.").status_code, 299);
  // The bare domain is path style.
  EXPECT_EQ(Call(router, "GET", "/_serac/metrics", "s3.example.com:9000").status_code, 200);
  EXPECT_EQ(Call(router, "GET", "/_serac/metrics", "evils3.example.com").status_code, 200);
  EXPECT_EQ(s3_paths_.size(), 2u);
}

TEST_F(RouterTest, AdminPathsGoToTheAdminHandlerWithTheirBody) {
  std::vector<std::string> admin_paths;
  RouterOptions options;
  options.admin = [&admin_paths](const http::Request& request, http::BodyReader&,
                                 http::ResponseWriter& response, http::RequestOutcome& outcome) {
    admin_paths.push_back(request.path);
    outcome.operation = "Admin";
    response.SetStatus(298);
    (void)response.Send("admin");
  };
  Router router(
      &meta_, &metrics_,
      [this](const http::Request& request, http::BodyReader&, http::ResponseWriter& response,
             http::RequestOutcome&) {
        s3_paths_.push_back(request.path);
        response.SetStatus(299);
        (void)response.Send("s3");
      },
      std::move(options));
  FakeResponse created = Call(router, "POST", "/_serac/admin/v1/users", "h", 20);
  EXPECT_EQ(created.status_code, 298);
  EXPECT_FALSE(created.close_after);  // the admin handler reads the body itself
  EXPECT_EQ(Call(router, "GET", "/_serac/admin").status_code, 298);
  EXPECT_EQ(Call(router, "GET", "/_serac/adminx").status_code, 404);  // not under the prefix
  EXPECT_EQ(Call(router, "GET", "/_serac/health/live").status_code, 200);
  EXPECT_EQ(admin_paths, (std::vector<std::string>{"/_serac/admin/v1/users", "/_serac/admin"}));
  EXPECT_TRUE(s3_paths_.empty());
}

TEST_F(RouterTest, AdminPathsAre404WithoutAnAdminHandler) {
  Router router = MakeRouter();
  EXPECT_EQ(Call(router, "GET", "/_serac/admin/v1/users").status_code, 404);
  EXPECT_TRUE(s3_paths_.empty());
}

TEST_F(RouterTest, ClosesTheConnectionInsteadOfReadingAnUnexpectedBody) {
  Router router = MakeRouter();
  EXPECT_FALSE(Call(router, "GET", "/_serac/health/live").close_after);
  EXPECT_TRUE(Call(router, "GET", "/_serac/health/live", "h", 100).close_after);
  EXPECT_TRUE(Call(router, "POST", "/_iceberg/v1/namespaces", "h", 5).close_after);
}

}  // namespace
}  // namespace serac::server

namespace serac::server {
namespace {

// The documents for errors the HTTP server answers by itself, in the dialect of each path's owner.
TEST(ServerErrorDocumentTest, EachPathGetsItsOwnersDialect) {
  http::ServerErrorInfo error{.path = "/bucket/key",
                              .status = 431,
                              .code = "RequestHeaderSectionTooLarge",
                              .message = "Your request's headers are <too> large.",
                              .request_id = "ABC123"};
  http::ErrorDocument s3 = ServerErrorDocument(error);
  EXPECT_EQ(s3.content_type, "application/xml");
  EXPECT_NE(s3.body.find("<Code>RequestHeaderSectionTooLarge</Code>"), std::string::npos) << s3.body;
  EXPECT_NE(s3.body.find("<Message>Your request&apos;s headers are &lt;too&gt; large.</Message>"),
            std::string::npos)
      << s3.body;
  EXPECT_NE(s3.body.find("<RequestId>ABC123</RequestId>"), std::string::npos) << s3.body;

  error.path = "/_iceberg/v1/config";
  http::ErrorDocument iceberg = ServerErrorDocument(error);
  EXPECT_EQ(iceberg.content_type, "application/json");
  nlohmann::json parsed = nlohmann::json::parse(iceberg.body);
  EXPECT_EQ(parsed["error"]["type"], "BadRequestException");
  EXPECT_EQ(parsed["error"]["code"], 431);
  EXPECT_EQ(parsed["error"]["message"], "Your request's headers are <too> large.");
  error.status = 503;
  EXPECT_EQ(nlohmann::json::parse(ServerErrorDocument(error).body)["error"]["type"],
            "ServiceUnavailableException");
  error.path = "/_serac/health/ready";  // serac's own endpoints answer as the catalog does
  EXPECT_EQ(nlohmann::json::parse(ServerErrorDocument(error).body)["error"]["code"], 503);

  error.path = "/_iceberg/v1/oauth/tokens";  // RFC 6749's shape, which OAuth2 clients parse
  parsed = nlohmann::json::parse(ServerErrorDocument(error).body);
  EXPECT_EQ(parsed["error"], "temporarily_unavailable");
  EXPECT_EQ(parsed["error_description"], "Your request's headers are <too> large.");
  error.status = 400;
  EXPECT_EQ(nlohmann::json::parse(ServerErrorDocument(error).body)["error"], "invalid_request");

  error.path = "/_serac/admin/v1/users";
  parsed = nlohmann::json::parse(ServerErrorDocument(error).body);
  EXPECT_EQ(parsed["error"]["code"], "RequestHeaderSectionTooLarge");
  EXPECT_EQ(parsed["error"]["message"], "Your request's headers are <too> large.");
}

// Moved here from http/server_test.cc with the dialect choice it checks: a head with too many
// headers (431) on the token endpoint and on the admin API.
TEST(ServerErrorDocumentTest, ServerErrorsSpeakThePathsDialect) {
  http::ServerErrorInfo error{.path = "/_iceberg/v1/oauth/tokens",
                              .status = 431,
                              .code = "RequestHeaderSectionTooLarge",
                              .message = "too many headers",
                              .request_id = "R"};
  std::string body = ServerErrorDocument(error).body;
  EXPECT_EQ(body.rfind("{\"error\":\"invalid_request\",\"error_description\":", 0), 0u) << body;
  error.path = "/_serac/admin/v1/users";
  body = ServerErrorDocument(error).body;
  EXPECT_EQ(body.rfind("{\"error\":{\"code\":\"RequestHeaderSectionTooLarge\",\"message\":", 0), 0u) << body;
}

}  // namespace
}  // namespace serac::server
