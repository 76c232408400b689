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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

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

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kReceiveBufferBytes = 256 * 1024;
constexpr size_t kResponseHeaderBytesMax = 64 * 1024;

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

class Connection {
 public:
  explicit Connection(const Config& config) : config_(config), buffer_(kReceiveBufferBytes) {}
  ~Connection() { Close(); }

  // One request/response exchange; returns the response body size or an error text.
  bool Exchange(const std::string& head, std::string* error, int* status, uint64_t* body_bytes) {
    if (fd_ < 0 && !Connect(error)) return false;
    if (!SendAll(head.data(), head.size()) || !SendAll(config_.body.data(), config_.body.size())) {
      // The server may have answered early (say, 403) and closed; its status explains more.
      bool keep_alive = true;
      std::string ignored;
      *error = ReadResponse(&ignored, status, body_bytes, &keep_alive)
                   ? "HTTP status " + std::to_string(*status) + " before the body was sent"
                   : "send failed";
      Close();
      return false;
    }
    bool keep_alive = true;
    if (!ReadResponse(error, status, body_bytes, &keep_alive)) {
      Close();
      return false;
    }
    if (!keep_alive) Close();
    return true;
  }

 private:
  bool Connect(std::string* error) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(config_.port);
    inet_pton(AF_INET, config_.host.c_str(), &address.sin_addr);
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      *error = "connect failed";
      Close();
      return false;
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    filled_ = consumed_ = 0;
    return true;
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  bool SendAll(const char* data, size_t length) {
    while (length > 0) {
      ssize_t sent = send(fd_, data, length, MSG_NOSIGNAL);
      if (sent <= 0) return false;
      data += sent;
      length -= static_cast<size_t>(sent);
    }
    return true;
  }

  // Makes at least one more byte available in buffer_[consumed_, filled_).
  bool Fill() {
    if (consumed_ == filled_) consumed_ = filled_ = 0;
    if (filled_ == buffer_.size()) {
      std::copy(buffer_.begin() + static_cast<long>(consumed_), buffer_.begin() + static_cast<long>(filled_),
                buffer_.begin());
      filled_ -= consumed_;
      consumed_ = 0;
    }
    ssize_t received = recv(fd_, buffer_.data() + filled_, buffer_.size() - filled_, 0);
    if (received <= 0) return false;
    filled_ += static_cast<size_t>(received);
    return true;
  }

  bool ReadLine(std::string* line) {
    line->clear();
    while (true) {
      for (size_t i = consumed_; i < filled_; ++i) {
        if (buffer_[i] == '\n') {
          line->assign(buffer_.data() + consumed_, i - consumed_);
          if (!line->empty() && line->back() == '\r') line->pop_back();
          consumed_ = i + 1;
          return true;
        }
      }
      if (filled_ - consumed_ > kResponseHeaderBytesMax || !Fill()) return false;
    }
  }

  bool Discard(uint64_t length) {
    while (length > 0) {
      if (consumed_ == filled_ && !Fill()) return false;
      uint64_t take = std::min<uint64_t>(length, filled_ - consumed_);
      consumed_ += take;
      length -= take;
    }
    return true;
  }

  static std::string Lower(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  }

  bool ReadResponse(std::string* error, int* status, uint64_t* body_bytes, bool* keep_alive) {
    std::string line;
    if (!ReadLine(&line) || line.size() < 12 || line.compare(0, 5, "HTTP/") != 0) {
      *error = "bad status line";
      return false;
    }
    *status = std::atoi(line.c_str() + 9);
    std::optional<uint64_t> content_length;
    bool chunked = false;
    while (ReadLine(&line) && !line.empty()) {
      std::string lower = Lower(line);
      if (lower.rfind("content-length:", 0) == 0) content_length = std::strtoull(lower.c_str() + 15, nullptr, 10);
      if (lower.rfind("transfer-encoding:", 0) == 0 && lower.find("chunked") != std::string::npos) chunked = true;
      if (lower.rfind("connection:", 0) == 0 && lower.find("close") != std::string::npos) *keep_alive = false;
    }
    if (!line.empty()) {
      *error = "truncated headers";
      return false;
    }
    if (chunked) return ReadChunked(error, body_bytes);
    *body_bytes = content_length.value_or(0);
    if (!content_length && *status != 204 && *status != 304) *keep_alive = false;  // body until close
    if (!Discard(*body_bytes)) {
      *error = "truncated body";
      return false;
    }
    return true;
  }

  bool ReadChunked(std::string* error, uint64_t* body_bytes) {
    *body_bytes = 0;
    std::string line;
    while (ReadLine(&line)) {
      uint64_t size = std::strtoull(line.c_str(), nullptr, 16);
      if (size == 0) {
        while (ReadLine(&line) && !line.empty()) {
        }  // trailers
        return true;
      }
      if (!Discard(size) || !ReadLine(&line)) break;
      *body_bytes += size;
    }
    *error = "bad chunked body";
    return false;
  }

  const Config& config_;
  std::vector<char> buffer_;
  size_t filled_ = 0;
  size_t consumed_ = 0;
  int fd_ = -1;
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
  std::printf("ops=%llu bytes=%llu seconds=%.3f ops_per_s=%.2f mib_per_s=%.1f p50_ms=%.3f p99_ms=%.3f errors=%llu",
              static_cast<unsigned long long>(ops), static_cast<unsigned long long>(bytes), elapsed,
              static_cast<double>(ops) / elapsed, static_cast<double>(bytes) / elapsed / (1024.0 * 1024.0),
              Percentile(latencies, 0.50), Percentile(latencies, 0.99), static_cast<unsigned long long>(errors));
  if (!first_error.empty()) std::printf(" first_error=%s", first_error.c_str());
  std::printf("\n");
  return 0;
}
