// Drives http::Send against a real http::Server on a loopback port (plain and TLS).
#include "http/client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "http/server.h"

namespace serac::http {
namespace {

using namespace std::chrono_literals;

// Echoes what it received; /sleep stalls, /big answers with `big_body_bytes` bytes.
void EchoHandler(const Request& request, BodyReader& body, ResponseWriter& response, RequestOutcome&) {
  if (request.path == "/sleep") std::this_thread::sleep_for(1500ms);
  Result<std::string> received = body.ReadAll(1 << 20);
  response.SetStatus(request.path == "/missing" ? 404 : 200);
  response.AddHeader("X-Method", request.method);
  response.AddHeader("X-Target", request.target);
  response.AddHeader("X-Host", request.HeaderOr("Host"));
  response.AddHeader("X-Custom", request.HeaderOr("X-Custom"));
  if (request.path == "/big") {
    (void)response.Send(std::string(100000, 'b'));
    return;
  }
  (void)response.Send(received.ok() ? *received : "read failed");
}

class ClientTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options = {}) {
    options.address = "127.0.0.1";
    options.port = 0;
    options.access_log = false;
    server_ = std::make_unique<Server>(options, EchoHandler, nullptr);
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  std::string Url(std::string_view path, bool tls = false) const {
    return std::string(tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(server_->port()) +
           std::string(path);
  }

  std::unique_ptr<Server> server_;
};

TEST(ParseUrlTest, SplitsTheParts) {
  Result<Url> url = ParseUrl("http://example.com:8080/a/b%20c?x=1&y");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_FALSE(url->tls);
  EXPECT_EQ(url->host, "example.com");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->path, "/a/b%20c");
  EXPECT_EQ(url->query, "x=1&y");
  EXPECT_EQ(url->HostHeader(), "example.com:8080");
  EXPECT_EQ(url->Target(), "/a/b%20c?x=1&y");
}

TEST(ParseUrlTest, DefaultsPortAndPath) {
  Result<Url> url = ParseUrl("HTTPS://example.com");
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->path, "/");
  EXPECT_EQ(url->HostHeader(), "example.com");
}

TEST(ParseUrlTest, Ipv6Literal) {
  Result<Url> url = ParseUrl("http://[::1]:9000/_iceberg");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 9000);
  EXPECT_EQ(url->HostHeader(), "[::1]:9000");
}

TEST(ParseUrlTest, RejectsWhatItCannotSend) {
  for (const char* bad :
       {"ftp://host/", "host:9000", "http://", "http://user@host/", "http://host:0/", "http://host:70000/",
        "http://host:/", "http://[::1/", "http://host/#frag", "http://host:9x/"}) {
    Result<Url> url = ParseUrl(bad);
    EXPECT_FALSE(url.ok()) << bad;
    if (!url.ok()) {
      EXPECT_EQ(url.status().code(), ErrorCode::kInvalidArgument) << bad;
    }
  }
}

TEST_F(ClientTest, GetReturnsStatusHeadersAndBody) {
  StartServer();
  ClientRequest request;
  request.url = Url("/missing?a=b%2F");
  request.headers.push_back({"X-Custom", "value 1"});
  Result<ClientResponse> response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 404);
  ASSERT_NE(response->FindHeader("x-method"), nullptr);
  EXPECT_EQ(*response->FindHeader("x-method"), "GET");
  EXPECT_EQ(*response->FindHeader("X-Target"), "/missing?a=b%2F");
  EXPECT_EQ(*response->FindHeader("X-Host"), "127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_EQ(*response->FindHeader("X-Custom"), "value 1");
  EXPECT_EQ(response->FindHeader("X-Absent"), nullptr);
}

TEST_F(ClientTest, PostSendsBodyAndGivenHost) {
  StartServer();
  ClientRequest request;
  request.method = "POST";
  request.url = Url("/echo");
  request.headers.push_back({"Host", "signed.example:1234"});
  request.body = std::string(300000, 'x') + "end";
  Result<ClientResponse> response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, request.body);
  EXPECT_EQ(*response->FindHeader("X-Host"), "signed.example:1234");
}

TEST_F(ClientTest, EmptyDeleteAndHead) {
  StartServer();
  ClientRequest request;
  request.method = "DELETE";
  request.url = Url("/thing");
  Result<ClientResponse> response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(*response->FindHeader("X-Method"), "DELETE");
  EXPECT_EQ(response->body, "");
  request.method = "HEAD";
  response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "");
}

TEST_F(ClientTest, BodyOverLimitIsRefused) {
  StartServer();
  ClientRequest request;
  request.url = Url("/big");
  request.response_body_bytes_max = 1000;
  Result<ClientResponse> response = Send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), ErrorCode::kLimitExceeded);
  request.response_body_bytes_max = 100000;
  response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body.size(), 100000u);
}

TEST_F(ClientTest, SlowServerTimesOut) {
  StartServer();
  ClientRequest request;
  request.url = Url("/sleep");
  request.timeout = 200ms;
  auto started = std::chrono::steady_clock::now();
  Result<ClientResponse> response = Send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), ErrorCode::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1200ms);
}

// A port nobody listens on: bind one, read its number, close it.
uint16_t UnusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(ClientErrorTest, ConnectionRefusedNamesTheEndpoint) {
  ClientRequest request;
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(UnusedPort());
  request.url = endpoint + "/x";
  Result<ClientResponse> response = Send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(response.status().message().find(endpoint), std::string::npos) << response.status().message();
}

class TlsClientTest : public ClientTest {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("serac_http_client_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
    std::string command =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
        "-subj /CN=localhost -addext subjectAltName=DNS:localhost -keyout " +
        (directory_ / "key.pem").string() + " -out " + (directory_ / "cert.pem").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);
    ServerOptions options;
    options.tls_cert_file = (directory_ / "cert.pem").string();
    options.tls_key_file = (directory_ / "key.pem").string();
    StartServer(options);
  }
  void TearDown() override {
    ClientTest::TearDown();
    std::filesystem::remove_all(directory_);
  }
  std::filesystem::path directory_;
};

TEST_F(TlsClientTest, UntrustedCertificateIsRefused) {
  ClientRequest request;
  request.url = Url("/hello", true);
  Result<ClientResponse> response = Send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(response.status().message().find("TLS handshake"), std::string::npos)
      << response.status().message();
}

TEST_F(TlsClientTest, TrustedCaFileVerifies) {
  ClientRequest request;
  request.method = "POST";
  request.url = "https://localhost:" + std::to_string(server_->port()) + "/hello";
  request.tls_ca_file = (directory_ / "cert.pem").string();
  request.body = "over tls";
  Result<ClientResponse> response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "over tls");
}

TEST_F(TlsClientTest, HostNameMustMatchCertificate) {
  ClientRequest request;
  // The certificate names only localhost, so a trusted certificate still fails for 127.0.0.1.
  request.url = Url("/hello", true);
  request.tls_ca_file = (directory_ / "cert.pem").string();
  Result<ClientResponse> response = Send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(response.status().message().find("mismatch"), std::string::npos) << response.status().message();
}

TEST_F(TlsClientTest, MissingCaFileIsAnError) {
  ClientRequest request;
  request.url = Url("/hello", true);
  request.tls_ca_file = (directory_ / "absent.pem").string();
  Result<ClientResponse> response = Send(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(TlsClientTest, InsecureSkipsVerification) {
  ClientRequest request;
  request.url = Url("/hello", true);
  request.tls_insecure = true;
  Result<ClientResponse> response = Send(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
}

}  // namespace
}  // namespace serac::http
