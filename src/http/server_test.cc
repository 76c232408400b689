// Drives a real Server over loopback sockets with hand-written HTTP, so every byte on the wire is
// the test's to check.
#include "http/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "http/response_internal.h"

namespace serac::http {
namespace {

using namespace std::chrono_literals;

std::string Pattern(size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>('a' + (i * 7 + i / 1000) % 26);
  return data;
}

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// A blocking loopback client with a read-ahead buffer, enough HTTP/1.1 to check the server.
class Client {
 public:
  explicit Client(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~Client() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      data.remove_prefix(static_cast<size_t>(sent));
    }
    return true;
  }

  // Appends whatever arrives within `timeout`; false on timeout, EOF or error.
  bool ReadMore(std::chrono::milliseconds timeout = 5s) {
    pollfd waiter{fd_, POLLIN, 0};
    if (::poll(&waiter, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char chunk[65536];
    ssize_t got = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (got <= 0) return false;
    pending_.append(chunk, static_cast<size_t>(got));
    return true;
  }

  bool ReadUntil(std::string_view marker, std::chrono::milliseconds timeout = 5s) {
    while (pending_.find(marker) == std::string::npos) {
      if (!ReadMore(timeout)) return false;
    }
    return true;
  }

  std::optional<Response> ReadResponse(bool head_request = false) {
    if (!ReadUntil("\r\n\r\n")) return std::nullopt;
    size_t head_end = pending_.find("\r\n\r\n");
    std::string head = pending_.substr(0, head_end);
    pending_.erase(0, head_end + 4);
    Response response;
    response.status = std::atoi(head.substr(9, 3).c_str());
    size_t line_start = head.find("\r\n");
    while (line_start != std::string::npos) {
      line_start += 2;
      size_t line_end = head.find("\r\n", line_start);
      std::string line = head.substr(line_start, line_end - line_start);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        response.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      }
      line_start = line_end;
    }
    if (head_request || response.status == 100) return response;
    size_t length = std::strtoull(response.Header("content-length").c_str(), nullptr, 10);
    while (pending_.size() < length) {
      if (!ReadMore()) return std::nullopt;
    }
    response.body = pending_.substr(0, length);
    pending_.erase(0, length);
    return response;
  }

  // True when the server closes the connection within `timeout` (and sent nothing more).
  bool ClosedWithin(std::chrono::milliseconds timeout) {
    pollfd waiter{fd_, POLLIN, 0};
    if (::poll(&waiter, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char byte;
    return ::recv(fd_, &byte, 1, 0) <= 0;
  }

  const std::string& pending() const { return pending_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

std::string Get(std::string_view path, std::string_view extra_headers = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: localhost\r\n" + std::string(extra_headers) +
         "\r\n";
}

std::string Post(std::string_view path, std::string_view body, std::string_view extra = "") {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         std::string(extra) + "\r\n" + std::string(body);
}

// Shared by the handler and the tests that need to see what the handler saw.
struct Observed {
  std::mutex mutex;
  std::promise<Status> body_read_status;
  std::string file_path;
  std::atomic<bool> slow_started{false};
};

void HandleEcho(BodyReader& body, ResponseWriter& writer, RequestOutcome& outcome) {
  outcome.operation = "Echo";
  Result<std::string> data = body.ReadAll(16 * 1024 * 1024);
  if (!data.ok()) {
    writer.SetStatus(data.status().code() == ErrorCode::kLimitExceeded ? 413 : 400);
    (void)writer.Send(std::string(ErrorCodeName(data.status().code())));
    return;
  }
  (void)writer.Send(*data);
}

void HandleStream(const Request& request, ResponseWriter& writer) {
  size_t size = std::strtoull(request.query.substr(2).c_str(), nullptr, 10);  // "n=<size>"
  std::string data = Pattern(size);
  if (!writer.Begin(size).ok()) return;
  for (size_t offset = 0; offset < size; offset += 1000) {
    if (!writer.Write(data.data() + offset, std::min<size_t>(1000, size - offset)).ok()) return;
  }
}

void HandleFile(const Request& request, ResponseWriter& writer, Observed& observed) {
  int fd = ::open(observed.file_path.c_str(), O_RDONLY);
  off_t size = ::lseek(fd, 0, SEEK_END);
  uint64_t offset = request.query == "skip=100" ? 100 : 0;
  if (writer.Begin(size - offset).ok()) (void)writer.SendFile(fd, offset, size - offset);
  ::close(fd);
}

void HandleReadUntilError(BodyReader& body, ResponseWriter& writer, Observed& observed) {
  char buffer[4096];
  Status status;
  while (true) {
    Result<size_t> got = body.Read(buffer, sizeof(buffer));
    if (!got.ok()) {
      status = got.status();
      break;
    }
    if (*got == 0) break;
  }
  observed.body_read_status.set_value(status);
  writer.SetStatus(400);
  (void)writer.Send("bad body");
}

void TestHandler(const Request& request, BodyReader& body, ResponseWriter& writer, RequestOutcome& outcome,
                 Observed& observed) {
  const std::string& path = request.path;
  if (path == "/hello") {
    outcome.operation = "Hello";
    writer.AddHeader("Content-Type", "text/plain");
    (void)writer.Send(request.tls ? "hello tls" : "hello");
  } else if (path == "/echo") {
    HandleEcho(body, writer, outcome);
  } else if (path == "/limited") {
    body.SetLimit(10);
    HandleEcho(body, writer, outcome);
  } else if (path == "/reject") {
    writer.SetStatus(403);
    (void)writer.Send("denied");
  } else if (path == "/head") {
    if (writer.Begin(5).ok()) (void)writer.Write("hello", 5);
  } else if (path == "/stream") {
    HandleStream(request, writer);
  } else if (path == "/file") {
    HandleFile(request, writer, observed);
  } else if (path == "/read-until-error") {
    HandleReadUntilError(body, writer, observed);
  } else if (path == "/slow") {
    observed.slow_started = true;
    std::this_thread::sleep_for(500ms);
    (void)writer.Send("slow done");
  } else if (path == "/headers") {
    std::string joined;
    for (std::string_view value : request.FindHeaders("x-multi")) joined += std::string(value) + ";";
    (void)writer.Send(std::string(request.HeaderOr("X-TEST", "none")) + "|" + joined + "|" + request.query);
  } else if (path == "/inject") {
    writer.AddHeader("X-Evil", "a\r\nSet-Cookie: stolen=1");
    (void)writer.Send("ok");
  }
  // Any other path: the handler returns without responding.
}

// Renders what the server hands its error renderer in the two shapes the tests below look for: the
// http module only passes path, status, code and message on and sends the document it gets back.
// serac's real documents (S3 XML, Iceberg and admin JSON) are server/router.cc's, tested there.
ErrorDocument EchoingErrorDocument(const ServerErrorInfo& error) {
  if (error.path.starts_with("/_iceberg")) {
    return {"application/json",
            "{\"error\":{\"message\":\"" + std::string(error.message) +
                "\",\"type\":\"BadRequestException\",\"code\":" + std::to_string(error.status) + "}}"};
  }
  return {"application/xml", "<Error><Code>" + std::string(error.code) + "</Code><Message>" +
                                 std::string(error.message) + "</Message></Error>"};
}

class ServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions options = {}) {
    options.address = "127.0.0.1";
    options.port = 0;
    if (!options.error_renderer) options.error_renderer = EchoingErrorDocument;
    if (options.request_id_header.empty()) options.request_id_header = "x-amz-request-id";
    server_ = std::make_unique<Server>(
        options,
        [this](const Request& request, BodyReader& body, ResponseWriter& writer, RequestOutcome& outcome) {
          TestHandler(request, body, writer, outcome, observed_);
        },
        &metrics_);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_NE(server_->port(), 0);
  }
  void SetUp() override {}
  // One request first: it starts what a first request starts (the access log's flusher thread),
  // so that thread counts taken afterwards see only what the test itself causes.
  // A new connection's request is answered in full within `limit`: nothing in the test holds up
  // the loop that serves it.
  void ExpectHelloWithin(std::chrono::milliseconds limit) {
    Client client(server_->port());
    const auto asked = std::chrono::steady_clock::now();
    ASSERT_TRUE(client.Send(Get("/hello")));
    std::optional<Response> answer = client.ReadResponse();
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->body, "hello");
    EXPECT_LT(std::chrono::steady_clock::now() - asked, limit);
  }
  void WarmUp() {
    Client warm_up(server_->port());
    ASSERT_TRUE(warm_up.Send(Get("/hello")));
    ASSERT_TRUE(warm_up.ReadResponse());
  }

  Metrics metrics_;
  Observed observed_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, KeepAliveServesTwoRequestsOnOneConnection) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.Send(Get("/hello")));
  std::optional<Response> first = client.ReadResponse();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->body, "hello");
  EXPECT_EQ(first->Header("server"), "serac");
  EXPECT_EQ(first->Header("content-type"), "text/plain");
  EXPECT_FALSE(first->Header("date").empty());
  EXPECT_EQ(first->Header("x-amz-request-id").size(), 16u);
  EXPECT_EQ(first->Header("connection"), "");

  ASSERT_TRUE(client.Send(Get("/hello")));
  std::optional<Response> second = client.ReadResponse();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "hello");
  EXPECT_NE(first->Header("x-amz-request-id"), second->Header("x-amz-request-id"));
}

TEST_F(ServerTest, PipelinedRequestsAreAnsweredInOrder) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Post("/echo", "first") + Post("/echo", "second") + Get("/hello")));
  std::optional<Response> a = client.ReadResponse();
  std::optional<Response> b = client.ReadResponse();
  std::optional<Response> c = client.ReadResponse();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->body, "first");
  EXPECT_EQ(b->body, "second");
  EXPECT_EQ(c->body, "hello");
}

// A long body is read straight into the handler's buffer, past the parser; it must stop at the
// body's end, so that the request pipelined behind it is still read as a request. Sent in one piece
// and in pieces, so that the body's end falls inside a read and between reads.
TEST_F(ServerTest, LongBodyThenPipelinedRequest) {
  StartServer();
  const std::string body = Pattern(3 * 1024 * 1024 + 17);
  for (bool in_pieces : {false, true}) {
    Client client(server_->port());
    const std::string wire = Post("/echo", body) + Get("/hello");
    if (in_pieces) {
      for (size_t offset = 0; offset < wire.size(); offset += 100'000) {
        ASSERT_TRUE(client.Send(std::string_view(wire).substr(offset, 100'000)));
      }
    } else {
      ASSERT_TRUE(client.Send(wire));
    }
    std::optional<Response> echoed = client.ReadResponse();
    ASSERT_TRUE(echoed);
    EXPECT_EQ(echoed->status, 200);
    EXPECT_TRUE(echoed->body == body) << "echoed " << echoed->body.size() << " bytes";
    std::optional<Response> hello = client.ReadResponse();
    ASSERT_TRUE(hello);
    EXPECT_EQ(hello->body, "hello");
  }
}

TEST_F(ServerTest, ConnectionCloseAndHttp10CloseTheConnection) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/hello", "Connection: close\r\n")));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->Header("connection"), "close");
  EXPECT_TRUE(client.ClosedWithin(2s));

  Client old_client(server_->port());
  ASSERT_TRUE(old_client.Send("GET /hello HTTP/1.0\r\n\r\n"));
  response = old_client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "hello");
  EXPECT_TRUE(old_client.ClosedWithin(2s));
}

TEST_F(ServerTest, EchoesContentLengthBody) {
  StartServer();
  Client client(server_->port());
  std::string body = Pattern(300000);
  ASSERT_TRUE(client.Send(Post("/echo", body)));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, body);
}

TEST_F(ServerTest, DecodesChunkedBody) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(
      client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n"));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "hello world");
  ASSERT_TRUE(client.Send(Get("/hello")));  // framing fully consumed: the connection is reusable
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "hello");
}

TEST_F(ServerTest, SendsContinueBeforeReadingBody) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(
      client.Send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n"));
  ASSERT_TRUE(client.ReadUntil("\r\n\r\n"));
  EXPECT_EQ(client.pending(), "HTTP/1.1 100 Continue\r\n\r\n");
  std::optional<Response> interim = client.ReadResponse();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(client.Send("payload"));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "payload");
}

TEST_F(ServerTest, RejectionWithoutReadingBodySendsNoContinue) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(
      "PUT /reject HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\nExpect: 100-continue\r\n\r\n"));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
  EXPECT_EQ(response->body, "denied");
  EXPECT_EQ(response->Header("connection"), "close");  // the body never came: cannot reuse
  EXPECT_TRUE(client.ClosedWithin(3s));
}

// Older botocore misreads a keep-alive connection when a final response arrives without the 100
// Continue it asked for, even for an empty body; so an empty declared body always gets one.
TEST_F(ServerTest, EmptyBodyWithExpectGetsContinueBeforeFinalResponse) {
  StartServer();
  Client client(server_->port());
  for (const char* path : {"/echo", "/reject", "/hello"}) {
    ASSERT_TRUE(client.Send(std::string("PUT ") + path +
                            " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n"));
    std::optional<Response> interim = client.ReadResponse();
    ASSERT_TRUE(interim) << path;
    EXPECT_EQ(interim->status, 100) << path;
    std::optional<Response> final_response = client.ReadResponse();
    ASSERT_TRUE(final_response) << path;
    EXPECT_NE(final_response->status, 100) << path;
    EXPECT_EQ(final_response->Header("connection"), "") << path;  // the connection stays usable
  }
  ASSERT_TRUE(client.Send(Get("/hello")));
  std::optional<Response> next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "hello");
  EXPECT_EQ(client.pending(), "");  // exactly one interim response per request
}

TEST_F(ServerTest, SmallUnreadBodyIsDrainedAndConnectionKept) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Post("/reject", std::string(1000, 'x')) + Get("/hello")));
  std::optional<Response> rejected = client.ReadResponse();
  std::optional<Response> next = client.ReadResponse();
  ASSERT_TRUE(rejected && next);
  EXPECT_EQ(rejected->status, 403);
  EXPECT_EQ(rejected->Header("connection"), "");
  EXPECT_EQ(next->body, "hello");
}

TEST_F(ServerTest, LargeUnreadBodyClosesConnectionButResponseArrives) {
  StartServer();
  Client client(server_->port());
  std::string body(4 * 1024 * 1024, 'x');
  std::thread sender([&] { (void)client.Send(Post("/reject", body)); });
  std::optional<Response> response = client.ReadResponse();
  sender.join();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 403);
  EXPECT_EQ(response->Header("connection"), "close");
  EXPECT_TRUE(client.ClosedWithin(5s));
}

TEST_F(ServerTest, ConnectionsBeyondLimitGet503) {
  ServerOptions options;
  options.connections_max = 1;
  StartServer(options);
  Client first(server_->port());
  ASSERT_TRUE(first.Send(Get("/hello")));
  ASSERT_TRUE(first.ReadResponse());
  Client second(server_->port());
  std::optional<Response> refused = second.ReadResponse();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(refused->body.find("<Code>ServiceUnavailable</Code>"), std::string::npos);
}

TEST_F(ServerTest, OversizeHeaderGets431) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/bucket/key", "X-Big: " + std::string(20000, 'a') + "\r\n")));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
  EXPECT_NE(response->body.find("<Code>RequestHeaderSectionTooLarge</Code>"), std::string::npos);
  EXPECT_EQ(response->Header("content-type"), "application/xml");
  EXPECT_EQ(response->Header("connection"), "close");
}

TEST_F(ServerTest, TooManyHeadersGets431WithIcebergJsonUnderIcebergPath) {
  StartServer();
  Client client(server_->port());
  std::string headers;
  for (int i = 0; i < 150; ++i) headers += "X-H" + std::to_string(i) + ": v\r\n";
  ASSERT_TRUE(client.Send(Get("/_iceberg/v1/config", headers)));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 431);
  EXPECT_EQ(response->Header("content-type"), "application/json");
  EXPECT_NE(response->body.find("\"code\":431"), std::string::npos);
  EXPECT_NE(response->body.find("\"type\":\"BadRequestException\""), std::string::npos);
}

// Only one final "chunked" or a Content-Length frames a request body; anything else would let the
// body be read as a next request, so it is refused and the connection closed (RFC 9112 §6).
TEST_F(ServerTest, AmbiguousTransferEncodingIsRefusedAndClosesTheConnection) {
  StartServer();
  const std::string smuggled = "0\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
  struct Case {
    std::string transfer_encoding;
    int status;
  };
  for (const Case& c : {Case{"gzip", 501}, Case{"chunked, gzip", 501}, Case{"gzip, chunked", 501},
                        Case{"chunked, chunked", 400}, Case{"identity", 501}}) {
    Client client(server_->port());
    ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + c.transfer_encoding +
                            "\r\n\r\n" + smuggled));
    std::optional<Response> response = client.ReadResponse();
    ASSERT_TRUE(response) << c.transfer_encoding;
    EXPECT_EQ(response->status, c.status) << c.transfer_encoding;
    EXPECT_TRUE(client.ClosedWithin(3s)) << c.transfer_encoding << ": the body must not be read as a request";
  }
  Client both(server_->port());
  ASSERT_TRUE(
      both.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
                "5\r\nhello\r\n0\r\n\r\n"));
  std::optional<Response> response = both.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_TRUE(both.ClosedWithin(3s));
}

// Errors the server answers itself take the dialect of the path: OAuth2's on the token endpoint,
// the admin API's under /_serac.
TEST_F(ServerTest, OverlongTargetGets414) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/bucket/" + std::string(9000, 'k'))));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 414);
  EXPECT_EQ(response->Header("connection"), "close");
}

TEST_F(ServerTest, MalformedRequestGets400AndClose) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send("GET /x HTTP/1.1\r\nBad Header Line\r\n\r\n"));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_NE(response->body.find("<Code>BadRequest</Code>"), std::string::npos);
  EXPECT_TRUE(client.ClosedWithin(3s));
}

TEST_F(ServerTest, HandlerWithoutResponseGets500) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/nothing")));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  EXPECT_NE(response->body.find("<Code>InternalError</Code>"), std::string::npos);
}

TEST_F(ServerTest, HeadSendsLengthButNoBody) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send("HEAD /head HTTP/1.1\r\nHost: x\r\n\r\n" + Get("/hello")));
  std::optional<Response> head = client.ReadResponse(/*head_request=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->Header("content-length"), "5");
  // Had the body leaked, this next parse would start at "hello" instead of a status line.
  std::optional<Response> next = client.ReadResponse();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "hello");
}

TEST_F(ServerTest, StreamsLargeResponse) {
  StartServer();
  Client client(server_->port());
  constexpr size_t kSize = 5 * 1000 * 1000 + 17;
  ASSERT_TRUE(client.Send(Get("/stream?n=" + std::to_string(kSize))));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->Header("content-length"), std::to_string(kSize));
  EXPECT_TRUE(response->body == Pattern(kSize));
}

TEST_F(ServerTest, SendFileCopiesFileRanges) {
  StartServer();
  std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("serac_http_sendfile_" + std::to_string(::getpid()));
  std::string content = Pattern(3 * 1000 * 1000 + 5);
  std::ofstream(file, std::ios::binary) << content;
  observed_.file_path = file.string();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/file") + Get("/file?skip=100")));
  std::optional<Response> whole = client.ReadResponse();
  std::optional<Response> tail = client.ReadResponse();
  std::filesystem::remove(file);
  ASSERT_TRUE(whole && tail);
  EXPECT_TRUE(whole->body == content);
  EXPECT_TRUE(tail->body == content.substr(100));
}

TEST_F(ServerTest, ClientDisconnectMidBodyFailsReadAndServerKeepsServing) {
  StartServer();
  std::future<Status> seen = observed_.body_read_status.get_future();
  {
    Client client(server_->port());
    ASSERT_TRUE(client.Send("PUT /read-until-error HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                            std::string(1000, 'x')));
    std::this_thread::sleep_for(100ms);
  }  // the client goes away mid-body
  ASSERT_EQ(seen.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(seen.get().code(), ErrorCode::kIncompleteBody);
  Client other(server_->port());
  ASSERT_TRUE(other.Send(Get("/hello")));
  std::optional<Response> response = other.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "hello");
}

TEST_F(ServerTest, BodyLimitRefusesLargerBody) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Post("/limited", std::string(100, 'x'))));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(response->body, "LimitExceeded");
}

TEST_F(ServerTest, StalledBodyTimesOut) {
  ServerOptions options;
  options.body_stall_timeout = 200ms;
  StartServer(options);
  std::future<Status> seen = observed_.body_read_status.get_future();
  Client client(server_->port());
  ASSERT_TRUE(client.Send("PUT /read-until-error HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"));
  ASSERT_EQ(seen.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(seen.get().code(), ErrorCode::kTimeout);
}

// A body that trickles in (a byte at a time, never stalling long enough for the stall timeout)
// is cut off once it falls behind the slowest average rate a body may arrive at.
TEST_F(ServerTest, TricklingBodyMissesItsDeadline) {
  ServerOptions options;
  options.body_grace_period = 300ms;
  options.body_rate_min = 1000;  // bytes per second
  StartServer(options);
  std::future<Status> seen = observed_.body_read_status.get_future();
  Client client(server_->port());
  ASSERT_TRUE(client.Send("PUT /read-until-error HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"));
  const auto started = std::chrono::steady_clock::now();
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop && client.Send("x")) std::this_thread::sleep_for(50ms);  // 20 bytes/s
  });
  ASSERT_EQ(seen.wait_for(10s), std::future_status::ready);
  stop = true;
  trickle.join();
  Status status = seen.get();
  EXPECT_EQ(status.code(), ErrorCode::kTimeout);
  EXPECT_NE(status.message().find("kRequestBodyRateMin"), std::string::npos) << status.message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  server_->Shutdown();
  server_->Wait();
  EXPECT_NE(metrics_.Render().find("serac_http_client_timeouts_total 1\n"), std::string::npos)
      << metrics_.Render();
}

TEST_F(ServerTest, ABodyAtAUsableRateIsNeverCutOff) {
  ServerOptions options;
  options.body_grace_period = 100ms;
  options.body_rate_min = 1000;
  StartServer(options);
  Client client(server_->port());
  std::string body;
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n"));
  for (int i = 0; i < 8; ++i) {  // 500 bytes every 50 ms: 10,000 bytes/s
    ASSERT_TRUE(client.Send(std::string(500, 'a' + i)));
    body += std::string(500, 'a' + i);
    std::this_thread::sleep_for(50ms);
  }
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, body);
}

TEST_F(ServerTest, OneClientAddressCannotTakeEveryConnection) {
  ServerOptions options;
  options.connections_per_client_max = 2;
  StartServer(options);
  Client first(server_->port());
  Client second(server_->port());
  ASSERT_TRUE(first.Send(Get("/hello")));
  ASSERT_TRUE(first.ReadResponse());
  ASSERT_TRUE(second.Send(Get("/hello")));
  ASSERT_TRUE(second.ReadResponse());
  {
    Client third(server_->port());
    std::optional<Response> refused = third.ReadResponse();
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 503);
    EXPECT_NE(refused->body.find("kConnectionsPerClientMax"), std::string::npos) << refused->body;
  }
  // A connection that closes gives its place back.
  first.Close();
  for (int attempt = 0;; ++attempt) {
    Client again(server_->port());
    if (again.Send(Get("/hello"))) {
      std::optional<Response> response = again.ReadResponse();
      if (response && response->status == 200) break;
    }
    ASSERT_LT(attempt, 100) << "the closed connection's place never came back";
    std::this_thread::sleep_for(20ms);
  }
  server_->Shutdown();
  server_->Wait();
  EXPECT_NE(metrics_.Render().find("serac_http_refused_connections_total{limit=\"client_address\"} "),
            std::string::npos);
}

TEST_F(ServerTest, IdleConnectionIsClosed) {
  ServerOptions options;
  options.idle_timeout = 200ms;
  StartServer(options);
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/hello")));
  ASSERT_TRUE(client.ReadResponse());
  auto before = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ClosedWithin(3s));
  EXPECT_GE(std::chrono::steady_clock::now() - before, 150ms);
}

TEST_F(ServerTest, SlowHeaderIsClosed) {
  ServerOptions options;
  options.header_read_timeout = 200ms;
  StartServer(options);
  Client client(server_->port());
  ASSERT_TRUE(client.Send("GET /hello HTTP/1.1\r\nHost: x\r\n"));  // never finished
  EXPECT_TRUE(client.ClosedWithin(3s));
  server_->Shutdown();
  server_->Wait();
  EXPECT_NE(metrics_.Render().find("serac_http_client_timeouts_total 1\n"), std::string::npos);
}

// A client that asks for a large response and never reads it holds its request's thread only until
// the response stall timeout, is counted, and never stalls the other connections of its loop.
TEST_F(ServerTest, AReaderThatNeverReadsIsCutOffAndCounted) {
  ServerOptions options;
  options.event_loops = 1;
  options.response_stall_timeout = 300ms;
  StartServer(options);
  Client stuck(server_->port());
  ASSERT_TRUE(stuck.Send(Get("/stream?n=100000000")));  // 100 MB, far beyond the socket buffers
  std::this_thread::sleep_for(50ms);
  ExpectHelloWithin(250ms);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (metrics_.Render().find("serac_http_client_timeouts_total 1\n") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_NE(metrics_.Render().find("serac_http_client_timeouts_total 1\n"), std::string::npos);
}

// The process's thread count, from /proc.
int ThreadCount() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("Threads:")) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

// Threads of an earlier server may still be ending (detached spares): the count once it has held
// still for a while.
int SettledThreadCount() {
  int count = ThreadCount();
  for (int unchanged = 0; unchanged < 5;) {
    std::this_thread::sleep_for(20ms);
    const int now = ThreadCount();
    unchanged = now == count ? unchanged + 1 : 0;
    count = now;
  }
  return count;
}

// Polls until the thread count is at most `most`, for up to five seconds (a spare lingers up to
// kSpareThreadIdleTime once its loop is quiet); the count it ended at.
int ThreadCountOnceAtMost(int most) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (ThreadCount() > most && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  return ThreadCount();
}

// Waiting is done by the event loop: idle keep-alive connections and heads that never finish hold
// no thread, and the one loop still answers at once.
TEST_F(ServerTest, WaitingConnectionsHoldNoThread) {
  ServerOptions options;
  options.event_loops = 1;
  StartServer(options);
  WarmUp();
  const int threads_before = SettledThreadCount();
  std::vector<std::unique_ptr<Client>> waiting;
  for (int i = 0; i < 100; ++i) {
    auto idle = std::make_unique<Client>(server_->port());
    ASSERT_TRUE(idle->Send(Get("/hello")));
    ASSERT_TRUE(idle->ReadResponse());
    waiting.push_back(std::move(idle));
    auto heading = std::make_unique<Client>(server_->port());
    ASSERT_TRUE(heading->Send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: "));
    waiting.push_back(std::move(heading));
  }
  // A spare the balancer added while the loop was busy leaves after kSpareThreadIdleTime; a thread
  // held by a waiting connection never would.
  EXPECT_LE(ThreadCountOnceAtMost(threads_before), threads_before);
  ExpectHelloWithin(1s);
  // A head that arrives late is still served.
  ASSERT_TRUE(waiting.back()->Send("1\r\n\r\n"));
  std::optional<Response> late = waiting.back()->ReadResponse();
  ASSERT_TRUE(late);
  EXPECT_EQ(late->body, "hello");
}

// Bodies that never come hold only their own requests' threads: the loop goes on through spare
// threads, every one of them is cut off at the stall timeout and counted, and the spares leave.
TEST_F(ServerTest, BodiesThatNeverComeAreCutOffWithoutStallingTheLoop) {
  ServerOptions options;
  options.event_loops = 1;
  options.body_stall_timeout = 400ms;
  StartServer(options);
  WarmUp();
  const int threads_before = SettledThreadCount();
  constexpr int kBodiless = 20;
  std::vector<std::unique_ptr<Client>> bodiless;
  for (int i = 0; i < kBodiless; ++i) {
    bodiless.push_back(std::make_unique<Client>(server_->port()));
    ASSERT_TRUE(bodiless.back()->Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nabc"));
  }
  std::this_thread::sleep_for(50ms);
  ExpectHelloWithin(250ms);
  for (auto& client : bodiless) EXPECT_TRUE(client->ClosedWithin(3s));
  server_->Shutdown();
  server_->Wait();
  EXPECT_NE(metrics_.Render().find("serac_http_client_timeouts_total " + std::to_string(kBodiless) + "\n"),
            std::string::npos);
  EXPECT_LE(ThreadCountOnceAtMost(threads_before), threads_before);
}

// A handler that blocks (disk, database, a slow client) does not stall the other connections of
// its loop: a spare thread takes them, and leaves again once the loop is quiet.
TEST_F(ServerTest, ABlockedHandlerDoesNotStallItsLoop) {
  ServerOptions options;
  options.event_loops = 1;
  StartServer(options);
  WarmUp();
  const int threads_before = SettledThreadCount();
  Client busy(server_->port());
  ASSERT_TRUE(busy.Send(Get("/slow")));  // sleeps 500 ms on the loop's thread
  while (!observed_.slow_started) std::this_thread::sleep_for(1ms);
  ExpectHelloWithin(250ms);
  std::optional<Response> slow = busy.ReadResponse();
  ASSERT_TRUE(slow);
  EXPECT_EQ(slow->body, "slow done");
  EXPECT_LE(ThreadCountOnceAtMost(threads_before), threads_before);
}

TEST_F(ServerTest, GracefulShutdownFinishesInFlightRequest) {
  StartServer();
  Client busy(server_->port());
  Client idle(server_->port());
  ASSERT_TRUE(idle.Send(Get("/hello")));
  ASSERT_TRUE(idle.ReadResponse());
  ASSERT_TRUE(busy.Send(Get("/slow")));
  while (!observed_.slow_started) std::this_thread::sleep_for(5ms);
  server_->Shutdown();
  EXPECT_TRUE(idle.ClosedWithin(2s));  // idle connections go at once
  std::optional<Response> response = busy.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "slow done");
  EXPECT_EQ(response->Header("connection"), "close");
  busy.Close();
  server_->Wait();
  Client late(server_->port());
  EXPECT_FALSE(late.connected());
}

TEST_F(ServerTest, HeaderLookupsAndQuery) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(
      Get("/headers?list-type=2&prefix=a%2Fb", "x-test:  spaced  \r\nX-Multi: 1\r\nx-multi: 2\r\n")));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "spaced|1;2;|list-type=2&prefix=a%2Fb");
}

TEST_F(ServerTest, HandlerHeadersCannotSplitTheResponse) {
  StartServer();
  Client client(server_->port());
  ASSERT_TRUE(client.Send(Get("/inject")));
  std::optional<Response> response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->Header("set-cookie"), "");
  EXPECT_EQ(response->body, "ok");
}

TEST_F(ServerTest, MetricsCountRequestsAndBytes) {
  StartServer();
  {
    Client client(server_->port());
    ASSERT_TRUE(client.Send(Post("/echo", "12345") + Get("/hello")));
    ASSERT_TRUE(client.ReadResponse());
    ASSERT_TRUE(client.ReadResponse());
  }
  server_->Shutdown();
  server_->Wait();
  std::string text = metrics_.Render();
  EXPECT_NE(text.find("serac_http_requests_total{operation=\"Echo\",status=\"200\"} 1"), std::string::npos);
  EXPECT_NE(text.find("serac_http_requests_total{operation=\"Hello\",status=\"200\"} 1"), std::string::npos);
  EXPECT_NE(text.find("serac_http_request_duration_seconds_count{operation=\"Echo\"} 1"), std::string::npos);
  EXPECT_NE(text.find("serac_http_request_duration_seconds_bucket{operation=\"Echo\",le=\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("serac_http_received_bytes_total 5\n"), std::string::npos);
  EXPECT_NE(text.find("serac_http_sent_bytes_total 10\n"), std::string::npos);
  EXPECT_NE(text.find("serac_http_open_connections 0\n"), std::string::npos);
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  Metrics metrics;
  metrics.RecordRequest("Op", 200, 0, 0, 0.0005);
  metrics.RecordRequest("Op", 404, 0, 0, 0.2);
  metrics.ConnectionOpened();
  std::string text = metrics.Render();
  EXPECT_NE(text.find("le=\"0.001\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("le=\"0.25\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("le=\"0.1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("status=\"404\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("serac_http_open_connections 1\n"), std::string::npos);
}

TEST(AccessLogTest, NeverContainsTheQuery) {
  std::string line = internal::FormatAccessLog({.remote_address = "127.0.0.1:1",
                                                .method = "GET",
                                                .path = "/b/k",
                                                .status = 200,
                                                .request_id = "ID",
                                                .operation = "GetObject",
                                                .principal = "AKID"});
  EXPECT_EQ(line.find('?'), std::string::npos);
  EXPECT_NE(line.find("path=/b/k "), std::string::npos);
  EXPECT_NE(line.find("principal=AKID"), std::string::npos);
}

TEST(AccessLogTest, DurationInTenthsOfAMillisecond) {
  auto duration_of = [](double ms) {
    std::string line = internal::FormatAccessLog({.method = "GET", .path = "/", .duration_ms = ms});
    size_t start = line.find(" ms=") + 4;
    return line.substr(start, line.find(' ', start) - start);
  };
  EXPECT_EQ(duration_of(12.345), "12.3");
  EXPECT_EQ(duration_of(0.04), "0.0");
  EXPECT_EQ(duration_of(0.96), "1.0");
  EXPECT_EQ(duration_of(1500), "1500.0");
}

// ----- TLS ----------------------------------------------------------------------------------

class TlsServerTest : public ServerTest {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() / ("serac_http_tls_" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory_);
    std::string command =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
        "-nodes -subj /CN=localhost -days 1 -keyout " +
        (directory_ / "key.pem").string() + " -out " + (directory_ / "cert.pem").string() + " 2>/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::filesystem::path directory_;
};

// Sends `request` over TLS and returns everything the server sends until it closes.
std::string TlsExchange(uint16_t port, const std::string& request) {
  SSL_CTX* context = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(context);
  std::string received;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) == 1 && SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
      char chunk[4096];
      int got;
      while ((got = SSL_read(ssl, chunk, sizeof(chunk))) > 0) received.append(chunk, got);
    }
  }
  SSL_free(ssl);
  SSL_CTX_free(context);
  ::close(fd);
  return received;
}

TEST_F(TlsServerTest, ServesRequestsOverTls) {
  ServerOptions options;
  options.tls_cert_file = (directory_ / "cert.pem").string();
  options.tls_key_file = (directory_ / "key.pem").string();
  StartServer(options);
  std::string received = TlsExchange(server_->port(), Post("/echo", "secret", "Connection: close\r\n") +
                                                          Get("/hello", "Connection: close\r\n"));
  EXPECT_EQ(received.rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
  EXPECT_NE(received.find("\r\n\r\nsecret"), std::string::npos);
  EXPECT_EQ(received.find("hello"), std::string::npos);  // the connection closed after the first
  received = TlsExchange(server_->port(), Get("/hello", "Connection: close\r\n"));
  EXPECT_NE(received.find("\r\n\r\nhello tls"), std::string::npos);
}

TEST_F(TlsServerTest, SendFileOverTlsCopiesThroughBuffer) {
  ServerOptions options;
  options.tls_cert_file = (directory_ / "cert.pem").string();
  options.tls_key_file = (directory_ / "key.pem").string();
  StartServer(options);
  std::string content = Pattern(700 * 1000 + 3);
  observed_.file_path = (directory_ / "data.bin").string();
  std::ofstream(observed_.file_path, std::ios::binary) << content;
  std::string received = TlsExchange(server_->port(), Get("/file?skip=100", "Connection: close\r\n"));
  size_t body_start = received.find("\r\n\r\n");
  ASSERT_NE(body_start, std::string::npos);
  EXPECT_TRUE(received.substr(body_start + 4) == content.substr(100));
}

TEST_F(TlsServerTest, MissingKeyFailsStart) {
  ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.tls_cert_file = (directory_ / "cert.pem").string();
  options.tls_key_file = (directory_ / "missing.pem").string();
  Server server(
      options, [](const Request&, BodyReader&, ResponseWriter&, RequestOutcome&) {}, nullptr);
  EXPECT_FALSE(server.Start().ok());
}

}  // namespace
}  // namespace serac::http
