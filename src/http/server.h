// The HTTP/1.1 server: keep-alive, Expect: 100-continue, chunked bodies, TLS, timeouts, limits,
// graceful shutdown, access log and metrics. Event loops (two per core) multiplex every connection
// while it waits, so idle and slow-heading connections hold no thread (bounded by
// limits::kConnectionsMax, and per client address by limits::kConnectionsPerClientMax). A request
// runs on the loop thread that read its head; a loop whose threads are all blocked gets spare
// threads (limits::kRequestThreadsMax), so a slow disk or client never stalls another connection.
// A watchdog closes connections whose deadline passed: request heads, bodies (which must also keep
// limits::kRequestBodyRateMin on average), responses the client does not read.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/limits.h"
#include "common/status.h"
#include "http/http.h"
#include "http/metrics.h"

namespace serac::http {

struct ServerOptions {
  std::string address = "0.0.0.0";
  uint16_t port = 9000;       // 0 picks a free port; see Server::port()
  std::string tls_cert_file;  // PEM; TLS is on when both files are set
  std::string tls_key_file;
  bool access_log = true;
  ErrorRenderer error_renderer;  // empty: PlainTextErrorDocument
  // The response header that carries each request's id (e.g. "x-amz-request-id"); empty: the id
  // is only logged. A handler that sets the header itself keeps its value.
  std::string request_id_header;
  // Limits, overridable so tests need not wait a minute; production uses the defaults.
  uint32_t connections_max = limits::kConnectionsMax;
  uint32_t connections_per_client_max = limits::kConnectionsPerClientMax;  // 0: no cap per address
  uint32_t event_loops = 0;  // 0: two per core (at most limits::kEventLoopsMax)
  uint32_t request_threads_max = limits::kRequestThreadsMax;
  std::chrono::milliseconds idle_timeout = limits::kIdleConnectionTimeout;
  std::chrono::milliseconds header_read_timeout = limits::kHeaderReadTimeout;
  std::chrono::milliseconds body_stall_timeout = limits::kBodyStallTimeout;
  std::chrono::milliseconds body_grace_period = limits::kRequestBodyGracePeriod;
  uint64_t body_rate_min = limits::kRequestBodyRateMin;  // bytes per second, on average
  std::chrono::milliseconds body_duration_max = limits::kRequestBodyDurationMax;
  std::chrono::milliseconds response_stall_timeout = limits::kResponseStallTimeout;
  std::chrono::milliseconds shutdown_grace_period = limits::kShutdownGracePeriod;
};

class Server {
 public:
  Server(ServerOptions options, Handler handler, Metrics* metrics);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens; after OK, port() is valid.
  Status Start();
  uint16_t port() const;
  // Blocks until Shutdown() has completed.
  void Wait();
  // Stops accepting, lets in-flight requests finish (up to limits::kShutdownGracePeriod), closes
  // idle connections. Safe to call from a signal-watching thread.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace serac::http
