// Fuzzes the HTTP/1.1 server: request lines, header fields and their limits, Content-Length and
// chunked framing (chunk sizes, extensions, trailers), Expect: 100-continue and pipelined
// requests. The input is sent as it is over a loopback connection to a real http::Server in this
// process, whose handler reads the whole body; the fuzzer then reads until the server closes.
// Beyond crashes: whatever the server sends must begin with an HTTP/1.1 status line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/limits.h"
#include "http/metrics.h"
#include "http/server.h"
#include "server/router.h"

namespace {

struct LoopbackServer {
  serac::http::Metrics metrics;
  std::unique_ptr<serac::http::Server> server;

  LoopbackServer() {
    serac::http::ServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.access_log = false;
    // serac's own error documents, so that fuzzed paths and messages go through their escaping.
    options.error_renderer = serac::server::ServerErrorDocument;
    options.request_id_header = "x-amz-request-id";
    options.header_read_timeout = std::chrono::milliseconds(500);
    options.body_stall_timeout = std::chrono::milliseconds(500);
    options.idle_timeout = std::chrono::milliseconds(500);
    options.response_stall_timeout = std::chrono::milliseconds(500);
    options.shutdown_grace_period = std::chrono::milliseconds(100);
    server = std::make_unique<serac::http::Server>(
        options,
        [](const serac::http::Request& request, serac::http::BodyReader& body,
           serac::http::ResponseWriter& response, serac::http::RequestOutcome&) {
          auto all = body.ReadAll(serac::limits::kJsonRequestBodyBytesMax);
          response.SetStatus(all.ok() ? 200 : 400);
          (void)response.Send(all.ok() ? request.method + " " + std::to_string(all->size())
                                       : all.status().message());
        },
        &metrics);
    if (!server->Start().ok()) {
      std::fprintf(stderr, "fuzz set-up failed: cannot start the HTTP server\n");
      std::abort();
    }
  }
  ~LoopbackServer() { server->Shutdown(); }
};

int Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Connections the server still serves, from its metrics. An input is done only when its
// connection thread has finished: the leak check that follows an input must not see the objects a
// thread is still tearing down.
int64_t OpenConnections(const serac::http::Metrics& metrics) {
  const std::string text = metrics.Render();
  constexpr std::string_view kGauge = "\nserac_http_open_connections ";
  const size_t at = text.find(kGauge);
  return at == std::string::npos ? 0 : std::strtoll(text.c_str() + at + kGauge.size(), nullptr, 10);
}

void WaitForConnectionsToClose(const serac::http::Metrics& metrics) {
  for (int i = 0; i < 5000 && OpenConnections(metrics) > 0; ++i) usleep(200);
  // The gauge drops just before the connection's thread exits; give the exit (thread-local
  // storage, the thread's own state) time to finish too.
  usleep(1000);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static LoopbackServer loopback;
  const int fd = Connect(loopback.server->port());
  if (fd < 0) return 0;
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on a bad head
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string answer;
  char buffer[16384];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  WaitForConnectionsToClose(loopback.metrics);
  if (!answer.empty() && answer.rfind("HTTP/1.1 ", 0) != 0) {
    std::fprintf(stderr, "fuzz oracle: an answer that is not HTTP/1.1\n%s\n", answer.substr(0, 512).c_str());
    std::abort();
  }
  return 0;
}
