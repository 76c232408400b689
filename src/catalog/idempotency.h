// The Iceberg REST specification's Idempotency-Key: a client that sends the same key again on a
// mutation (a retry after a lost answer) gets the first request's answer, and the change is applied
// once. Answers are kept per principal and key for the lifetime /v1/config advertises
// (idempotency-key-lifetime), within named bounds of entries and bytes; only final answers are
// kept (2xx and 4xx but those that a retry may change: 401, 403, 408, 419, 429), never 5xx, as
// the specification says. A duplicate that arrives while the first is running waits for its answer.
// Kept in memory: a server restart forgets the keys (a commit retried across one is still refused
// by its requirements if it was applied).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http/http.h"

namespace serac::catalog {

// An answer as it was sent, to be sent again.
struct RecordedResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class IdempotencyStore {
 public:
  using Clock = std::chrono::steady_clock;

  explicit IdempotencyStore(std::chrono::seconds lifetime);

  enum class Claim {
    kRun,       // first with this key: run the request, then Finish
    kReplay,    // answered before: `replay` holds the answer
    kMismatch,  // the key was first used for a different request (method, path or body)
    kBusy,      // a request with this key is still running after the wait
  };
  // `scope` is the principal and the key; `fingerprint` what the request is.
  Claim Begin(const std::string& scope, const std::string& fingerprint, RecordedResponse& replay);
  // The answer of a request Begin let run: kept when final, else the key forgotten. Wakes waiters.
  void Finish(const std::string& scope, const RecordedResponse& response);

  static bool IsFinal(int status);
  std::chrono::seconds lifetime() const { return lifetime_; }

 private:
  struct Entry {
    std::string fingerprint;
    bool done = false;
    RecordedResponse response;
    Clock::time_point expires;
    uint64_t bytes = 0;
    std::list<std::string>::iterator age;  // position in order_
  };
  void ExpireLocked(Clock::time_point now);
  void EraseLocked(std::map<std::string, Entry>::iterator it);

  const std::chrono::seconds lifetime_;
  std::mutex mutex_;
  std::condition_variable finished_;
  std::map<std::string, Entry> entries_;
  std::list<std::string> order_;  // oldest first
  uint64_t bytes_ = 0;
};

// A ResponseWriter that passes everything to `inner` and, once Record() is called, keeps a copy of
// the status, headers and body for the IdempotencyStore.
class RecordingResponseWriter final : public http::ResponseWriter {
 public:
  explicit RecordingResponseWriter(http::ResponseWriter& inner) : inner_(inner) {}
  void Record() { recording_ = true; }
  const RecordedResponse& recorded() const { return recorded_; }

  void SetStatus(int status) override;
  void AddHeader(std::string_view name, std::string_view value) override;
  Status Send(std::string_view body) override;
  Status Begin(uint64_t content_length) override { return inner_.Begin(content_length); }
  Status Write(const char* data, size_t size) override;
  Status WriteGathered(std::span<const std::string_view> pieces) override;
  Status SendFile(int fd, uint64_t offset, uint64_t length) override;
  Status SendContinue() override { return inner_.SendContinue(); }
  bool started() const override { return inner_.started(); }
  int status() const override { return inner_.status(); }
  void CloseAfterResponse() override { inner_.CloseAfterResponse(); }

 private:
  http::ResponseWriter& inner_;
  bool recording_ = false;
  RecordedResponse recorded_;
};

}  // namespace serac::catalog
