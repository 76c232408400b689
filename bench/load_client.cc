// Load client for the S3 benchmark's large-object cells, where an operation takes seconds and a
// fixed window (wrk's model) would count only a handful of them. Here every operation started
// before the deadline is allowed to finish ("drain"), and throughput is operations divided by the
// time until the last one finished.
//
// One thread and one keep-alive connection per client; each cycles through a file of request
// targets (path + query, e.g. presigned URLs without scheme and host). Plain HTTP/1.1, loopback.
//
//   load_client HOST PORT METHOD TARGETS_FILE BODY_BYTES CLIENTS SECONDS
//   prints: ops=N bytes=N seconds=F ops_per_s=F mib_per_s=F p50_ms=F p99_ms=F errors=N [first_error=...]
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_http_connection.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string host;
  uint16_t port = 0;
  std::string method;
  std::vector<std::string> targets;
  std::string body;
  int clients = 0;
  Clock::time_point deadline;
};

struct ClientResult {
  uint64_t ops = 0;
  uint64_t payload_bytes = 0;
  uint64_t errors = 0;
  std::string first_error;
  std::vector<double> latencies_ms;
  Clock::time_point last_finish;
};

// One client's keep-alive connection; PUT bodies are the shared payload.
class Connection {
 public:
  explicit Connection(const Config& config)
      : config_(config), http_(bench::HttpConnectionOptions{config.host, config.port, 0, false, 0}) {}

  // One request/response exchange; false with `error` set when it failed.
  bool Exchange(const std::string& head, std::string* error, int* status, uint64_t* body_bytes) {
    bench::HttpResponse response = http_.Exchange(head, config_.body);
    *status = response.status;
    *body_bytes = response.body_bytes;
    if (response.status != 0) return true;
    *error = response.error;
    return false;
  }

 private:
  const Config& config_;
  bench::HttpConnection http_;
};

void RunClient(const Config& config, int index, ClientResult* result) {
  Connection connection(config);
  std::vector<std::string> heads;
  for (const std::string& target : config.targets) {
    std::string head = config.method + " " + target + " HTTP/1.1\r\nHost: " + config.host + ":" +
                       std::to_string(config.port) + "\r\n";
    if (!config.body.empty() || config.method == "PUT")
      head += "Content-Length: " + std::to_string(config.body.size()) + "\r\n";
    heads.push_back(head + "\r\n");
  }
  size_t next = static_cast<size_t>(index) * 7919 % heads.size();
  while (Clock::now() < config.deadline) {
    Clock::time_point started = Clock::now();
    std::string error;
    int status = 0;
    uint64_t body_bytes = 0;
    bool exchanged = connection.Exchange(heads[next], &error, &status, &body_bytes);
    next = (next + 1) % heads.size();
    Clock::time_point finished = Clock::now();
    if (exchanged && (status < 200 || status > 299)) error = "HTTP status " + std::to_string(status);
    if (!error.empty()) {
      if (result->errors++ == 0) result->first_error = error;
      if (!exchanged) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    result->ops++;
    result->payload_bytes += config.method == "GET" ? body_bytes : config.body.size();
    result->latencies_ms.push_back(std::chrono::duration<double, std::milli>(finished - started).count());
    result->last_finish = finished;
  }
}

double Percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(fraction * static_cast<double>(sorted.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s HOST PORT METHOD TARGETS_FILE BODY_BYTES CLIENTS SECONDS\n", argv[0]);
    return 2;
  }
  Config config;
  config.host = argv[1];
  config.port = static_cast<uint16_t>(std::atoi(argv[2]));
  config.method = argv[3];
  std::ifstream targets(argv[4]);
  for (std::string line; std::getline(targets, line);)
    if (!line.empty()) config.targets.push_back(line);
  const uint64_t body_bytes = std::strtoull(argv[5], nullptr, 10);
  config.clients = std::atoi(argv[6]);
  const int seconds = std::atoi(argv[7]);
  if (config.targets.empty() || config.clients <= 0 || seconds <= 0 || config.port == 0) {
    std::fprintf(stderr, "load_client: bad arguments or empty targets file\n");
    return 2;
  }
  const std::string pattern = "serac-bench-payload-";
  config.body.reserve(body_bytes);
  while (config.body.size() < body_bytes)
    config.body.append(pattern, 0, std::min<uint64_t>(pattern.size(), body_bytes - config.body.size()));

  std::vector<ClientResult> results(static_cast<size_t>(config.clients));
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  config.deadline = start + std::chrono::seconds(seconds);
  for (int i = 0; i < config.clients; ++i) threads.emplace_back(RunClient, std::cref(config), i, &results[i]);
  for (std::thread& t : threads) t.join();

  uint64_t ops = 0, bytes = 0, errors = 0;
  std::string first_error;
  Clock::time_point end = start;
  std::vector<double> latencies;
  for (const ClientResult& r : results) {
    ops += r.ops;
    bytes += r.payload_bytes;
    errors += r.errors;
    if (first_error.empty()) first_error = r.first_error;
    if (r.ops > 0) end = std::max(end, r.last_finish);
    latencies.insert(latencies.end(), r.latencies_ms.begin(), r.latencies_ms.end());
  }
  std::sort(latencies.begin(), latencies.end());
  const double elapsed = std::max(1e-9, std::chrono::duration<double>(end - start).count());
  std::printf(
      "ops=%llu bytes=%llu seconds=%.3f ops_per_s=%.2f mib_per_s=%.1f p50_ms=%.3f p99_ms=%.3f errors=%llu",
      static_cast<unsigned long long>(ops), static_cast<unsigned long long>(bytes), elapsed,
      static_cast<double>(ops) / elapsed, static_cast<double>(bytes) / elapsed / (1024.0 * 1024.0),
      Percentile(latencies, 0.50), Percentile(latencies, 0.99), static_cast<unsigned long long>(errors));
  if (!first_error.empty()) std::printf(" first_error=%s", first_error.c_str());
  std::printf("\n");
  return 0;
}
