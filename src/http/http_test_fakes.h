// In-memory stand-ins for the HTTP connection, for tests that drive a service's Handle() directly:
// a body served from a string and a response writer that records everything. Test-only.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/encoding.h"
#include "http/http.h"

namespace serac::http::testing {

class StringBody : public http::BodyReader {
 public:
  explicit StringBody(std::string data) : data_(std::move(data)) {}
  Result<size_t> Read(char* buffer, size_t capacity) override {
    size_t n = std::min(capacity, data_.size() - offset_);
    std::copy_n(data_.data() + offset_, n, buffer);
    offset_ += n;
    return n;
  }
  std::optional<uint64_t> content_length() const override { return data_.size(); }
  void SetLimit(uint64_t) override {}

 private:
  std::string data_;
  size_t offset_ = 0;
};

class RecordingResponse : public http::ResponseWriter {
 public:
  void SetStatus(int status) override { status_ = status; }
  void AddHeader(std::string_view name, std::string_view value) override {
    headers.emplace_back(std::string(name), std::string(value));
  }
  Status Send(std::string_view body_bytes) override {
    started_ = true;
    body = body_bytes;
    return Status::Ok();
  }
  Status Begin(uint64_t length) override {
    started_ = true;
    announced = length;
    return Status::Ok();
  }
  Status Write(const char* data, size_t size) override {
    body.append(data, size);
    return Status::Ok();
  }
  Status SendFile(int fd, uint64_t offset, uint64_t length) override {
    std::string chunk(length, '\0');
    ssize_t got = pread(fd, chunk.data(), length, static_cast<off_t>(offset));
    if (got != static_cast<ssize_t>(length)) return Error(ErrorCode::kIoError, "short pread");
    body += chunk;
    return Status::Ok();
  }
  Status SendContinue() override { return Status::Ok(); }
  bool started() const override { return started_; }
  int status() const override { return status_; }
  void CloseAfterResponse() override { closed = true; }

  std::string Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (AsciiEqualsIgnoreCase(n, name)) return v;
    }
    return {};
  }

  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::optional<uint64_t> announced;
  bool closed = false;

 private:
  int status_ = 200;
  bool started_ = false;
};

}  // namespace serac::http::testing
