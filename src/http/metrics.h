// Prometheus metrics: requests by operation and status, bytes in and out, latency histograms,
// open connections. Thread-safe; updates are lock-free on the hot path where possible.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace serac::http {

class Metrics {
 public:
  Metrics();
  ~Metrics();
  void RecordRequest(std::string_view operation, int status, uint64_t bytes_in, uint64_t bytes_out,
                     double seconds);
  void ConnectionOpened();
  void ConnectionClosed();
  // A connection refused at accept: the server's limit (`per_client` false) or the client
  // address's (limits::kConnectionsPerClientMax).
  void ConnectionRefused(bool per_client);
  // A connection closed because its client was too slow: a request head, a body that stalled or
  // came slower than limits::kRequestBodyRateMin, a response it did not read.
  void ClientTimedOut();
  // Prometheus text exposition format 0.0.4.
  std::string Render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace serac::http
