// One keep-alive HTTP/1.1 connection to a loopback server, for the benchmarks' load generators
// (load_client.cc, catalog_load_client.cc): plain blocking sockets, one per client thread, so the
// generator costs little CPU next to the server it measures. Header-only so load_client.cc can be
// compiled on its own by bench/s3_bench.py. Not thread-safe: one thread per connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

struct HttpResponse {
  int status = 0;           // 0 when the exchange failed; `error` says why
  uint64_t body_bytes = 0;  // the body's length, kept or not
  std::string body;         // only when the connection keeps bodies
  std::string error;
};

struct HttpConnectionOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  int timeout_seconds = 0;            // send/receive timeout; 0 = none
  bool keep_body = false;             // false: bodies are counted and dropped
  uint64_t body_bytes_max = 1 << 26;  // larger kept bodies fail the exchange
};

class HttpConnection {
 public:
  explicit HttpConnection(HttpConnectionOptions options)
      : options_(std::move(options)), buffer_(kReceiveBufferBytes) {}
  ~HttpConnection() { Close(); }
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `head` (request line and headers, ending in an empty line) and `body`, and reads the
  // response. Reconnects when the previous response closed the connection.
  HttpResponse Exchange(std::string_view head, std::string_view body) {
    HttpResponse response;
    if (fd_ < 0 && !Connect()) {
      response.error = "connect failed: " + std::string(std::strerror(errno));
      return response;
    }
    bool keep_alive = true;
    if (!SendAll(head) || !SendAll(body)) {
      // The server may have answered early (say, 403) and closed; its status explains more.
      response.error = ReadResponse(&response, &keep_alive)
                           ? "HTTP status " + std::to_string(response.status) + " before the body was sent"
                           : "send failed";
      response.status = 0;
      Close();
      return response;
    }
    if (!ReadResponse(&response, &keep_alive)) {
      response.status = 0;
      Close();
      return response;
    }
    if (!keep_alive) Close();
    return response;
  }

 private:
  static constexpr size_t kReceiveBufferBytes = 256 * 1024;
  static constexpr size_t kResponseHeaderBytesMax = 64 * 1024;

  bool Connect() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(options_.port);
    inet_pton(AF_INET, options_.host.c_str(), &address.sin_addr);
    if (options_.timeout_seconds > 0) {
      timeval timeout{options_.timeout_seconds, 0};
      setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    }
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      int saved = errno;
      Close();
      errno = saved;
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

  bool SendAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t sent = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent <= 0) return false;
      data.remove_prefix(static_cast<size_t>(sent));
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
      const char* begin = buffer_.data() + consumed_;
      const void* newline = std::memchr(begin, '\n', filled_ - consumed_);
      if (newline != nullptr) {
        size_t length = static_cast<size_t>(static_cast<const char*>(newline) - begin);
        line->assign(begin, length);
        if (!line->empty() && line->back() == '\r') line->pop_back();
        consumed_ += length + 1;
        return true;
      }
      if (filled_ - consumed_ > kResponseHeaderBytesMax || !Fill()) return false;
    }
  }

  // Takes `length` body bytes, keeping them in response->body when bodies are kept.
  bool TakeBody(uint64_t length, HttpResponse* response) {
    if (options_.keep_body && response->body.size() + length > options_.body_bytes_max) return false;
    if (options_.keep_body) {
      // What is buffered, then straight from the socket into the body: one copy, no regrowth.
      std::string& body = response->body;
      size_t at = body.size();
      body.resize(at + length);
      const uint64_t buffered = std::min<uint64_t>(length, filled_ - consumed_);
      std::memcpy(body.data() + at, buffer_.data() + consumed_, buffered);
      consumed_ += buffered;
      at += buffered;
      while (at < body.size()) {
        ssize_t received = recv(fd_, body.data() + at, body.size() - at, 0);
        if (received <= 0) return false;
        at += static_cast<size_t>(received);
      }
      response->body_bytes += length;
      return true;
    }
    while (length > 0) {
      if (consumed_ == filled_ && !Fill()) return false;
      uint64_t take = std::min<uint64_t>(length, filled_ - consumed_);
      consumed_ += take;
      length -= take;
      response->body_bytes += take;
    }
    return true;
  }

  static bool StartsWithLower(const std::string& line, std::string_view prefix) {
    if (line.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(line[i])) != prefix[i]) return false;
    }
    return true;
  }

  static bool ContainsLower(const std::string& line, std::string_view word) {
    std::string lower(line);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower.find(word) != std::string::npos;
  }

  bool ReadResponse(HttpResponse* response, bool* keep_alive) {
    std::string line;
    if (!ReadLine(&line) || line.size() < 12 || line.compare(0, 5, "HTTP/") != 0) {
      response->error = "bad status line";
      return false;
    }
    response->status = std::atoi(line.c_str() + 9);
    std::optional<uint64_t> content_length;
    bool chunked = false;
    while (ReadLine(&line) && !line.empty()) {
      if (StartsWithLower(line, "content-length:"))
        content_length = std::strtoull(line.c_str() + 15, nullptr, 10);
      if (StartsWithLower(line, "transfer-encoding:") && ContainsLower(line, "chunked")) chunked = true;
      if (StartsWithLower(line, "connection:") && ContainsLower(line, "close")) *keep_alive = false;
    }
    if (!line.empty()) {
      response->error = "truncated headers";
      return false;
    }
    if (chunked) return ReadChunked(response);
    if (!content_length && response->status != 204 && response->status != 304) {
      *keep_alive = false;  // the body runs until the server closes
      while (Fill()) {
        uint64_t available = filled_ - consumed_;
        if (!TakeBody(available, response)) break;
      }
      return true;
    }
    if (!TakeBody(content_length.value_or(0), response)) {
      response->error = "truncated body";
      return false;
    }
    return true;
  }

  bool ReadChunked(HttpResponse* response) {
    std::string line;
    while (ReadLine(&line)) {
      uint64_t size = std::strtoull(line.c_str(), nullptr, 16);
      if (size == 0) {
        while (ReadLine(&line) && !line.empty()) {
        }  // trailers
        return true;
      }
      if (!TakeBody(size, response) || !ReadLine(&line)) break;
    }
    response->error = "bad chunked body";
    return false;
  }

  const HttpConnectionOptions options_;
  std::vector<char> buffer_;
  size_t filled_ = 0;
  size_t consumed_ = 0;
  int fd_ = -1;
};

}  // namespace bench
