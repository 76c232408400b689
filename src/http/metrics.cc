// Prometheus counters for the HTTP edge. One mutex guards the per-operation table; the totals and
// the connection gauge are plain atomics so the hot path takes the lock once per request.
#include "http/metrics.h"

#include <array>
#include <cstdio>
#include <map>
#include <mutex>

namespace serac::http {
namespace {

constexpr std::array<double, 13> kDurationBucketsSeconds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                            0.25,  0.5,    1,     2.5,  5,     10};

struct OperationStats {
  std::map<int, uint64_t> requests_by_status;
  std::array<uint64_t, kDurationBucketsSeconds.size()> bucket_counts{};  // non-cumulative
  uint64_t duration_count = 0;
  double duration_sum_seconds = 0;
};

// Label values are handler-chosen operation names, but escape anyway so output stays parseable.
std::string EscapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatDouble(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.15g", value);
  return text;
}

}  // namespace

struct Metrics::Impl {
  mutable std::mutex mutex;
  std::map<std::string, OperationStats, std::less<>> operations;  // guarded by mutex
  std::atomic<uint64_t> received_bytes{0};
  std::atomic<uint64_t> sent_bytes{0};
  std::atomic<int64_t> open_connections{0};
  std::atomic<uint64_t> refused_at_capacity{0};
  std::atomic<uint64_t> refused_per_client{0};
  std::atomic<uint64_t> client_timeouts{0};

  void RenderRequests(std::string& out) const;
  void RenderDurations(std::string& out) const;
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::RecordRequest(std::string_view operation, int status, uint64_t bytes_in, uint64_t bytes_out,
                            double seconds) {
  impl_->received_bytes.fetch_add(bytes_in, std::memory_order_relaxed);
  impl_->sent_bytes.fetch_add(bytes_out, std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < kDurationBucketsSeconds.size() && seconds > kDurationBucketsSeconds[bucket]) {
    ++bucket;
  }
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->operations.find(operation);
  if (it == impl_->operations.end()) {
    it = impl_->operations.emplace(std::string(operation), OperationStats{}).first;
  }
  OperationStats& stats = it->second;
  ++stats.requests_by_status[status];
  if (bucket < stats.bucket_counts.size()) ++stats.bucket_counts[bucket];
  ++stats.duration_count;
  stats.duration_sum_seconds += seconds;
}

void Metrics::ConnectionOpened() { impl_->open_connections.fetch_add(1, std::memory_order_relaxed); }
void Metrics::ConnectionClosed() { impl_->open_connections.fetch_sub(1, std::memory_order_relaxed); }
void Metrics::ConnectionRefused(bool per_client) {
  (per_client ? impl_->refused_per_client : impl_->refused_at_capacity)
      .fetch_add(1, std::memory_order_relaxed);
}
void Metrics::ClientTimedOut() { impl_->client_timeouts.fetch_add(1, std::memory_order_relaxed); }

void Metrics::Impl::RenderRequests(std::string& out) const {
  out += "# HELP serac_http_requests_total HTTP requests by operation and status.\n";
  out += "# TYPE serac_http_requests_total counter\n";
  for (const auto& [operation, stats] : operations) {
    for (const auto& [status, count] : stats.requests_by_status) {
      out += "serac_http_requests_total{operation=\"" + EscapeLabel(operation) + "\",status=\"" +
             std::to_string(status) + "\"} " + std::to_string(count) + "\n";
    }
  }
}

void Metrics::Impl::RenderDurations(std::string& out) const {
  out += "# HELP serac_http_request_duration_seconds Time from request head to response end.\n";
  out += "# TYPE serac_http_request_duration_seconds histogram\n";
  for (const auto& [operation, stats] : operations) {
    std::string label = "operation=\"" + EscapeLabel(operation) + "\"";
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kDurationBucketsSeconds.size(); ++i) {
      cumulative += stats.bucket_counts[i];
      out += "serac_http_request_duration_seconds_bucket{" + label + ",le=\"" +
             FormatDouble(kDurationBucketsSeconds[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "serac_http_request_duration_seconds_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(stats.duration_count) + "\n";
    out += "serac_http_request_duration_seconds_sum{" + label + "} " +
           FormatDouble(stats.duration_sum_seconds) + "\n";
    out += "serac_http_request_duration_seconds_count{" + label + "} " +
           std::to_string(stats.duration_count) + "\n";
  }
}

std::string Metrics::Render() const {
  std::string out;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->RenderRequests(out);
    impl_->RenderDurations(out);
  }
  out += "# HELP serac_http_received_bytes_total Request body bytes received.\n";
  out += "# TYPE serac_http_received_bytes_total counter\n";
  out += "serac_http_received_bytes_total " + std::to_string(impl_->received_bytes.load()) + "\n";
  out += "# HELP serac_http_sent_bytes_total Response body bytes sent.\n";
  out += "# TYPE serac_http_sent_bytes_total counter\n";
  out += "serac_http_sent_bytes_total " + std::to_string(impl_->sent_bytes.load()) + "\n";
  out += "# HELP serac_http_open_connections Client connections currently open.\n";
  out += "# TYPE serac_http_open_connections gauge\n";
  out += "serac_http_open_connections " + std::to_string(impl_->open_connections.load()) + "\n";
  out += "# HELP serac_http_refused_connections_total Connections refused at accept, by the limit reached.\n";
  out += "# TYPE serac_http_refused_connections_total counter\n";
  out += "serac_http_refused_connections_total{limit=\"server\"} " +
         std::to_string(impl_->refused_at_capacity.load()) + "\n";
  out += "serac_http_refused_connections_total{limit=\"client_address\"} " +
         std::to_string(impl_->refused_per_client.load()) + "\n";
  out += "# HELP serac_http_client_timeouts_total Connections closed because the client was too slow.\n";
  out += "# TYPE serac_http_client_timeouts_total counter\n";
  out += "serac_http_client_timeouts_total " + std::to_string(impl_->client_timeouts.load()) + "\n";
  return out;
}

}  // namespace serac::http
