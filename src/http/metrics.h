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
  // Prometheus text exposition format 0.0.4.
  std::string Render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace serac::http
