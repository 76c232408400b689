#include "catalog/idempotency.h"

#include "common/limits.h"

namespace serac::catalog {

IdempotencyStore::IdempotencyStore(std::chrono::seconds lifetime) : lifetime_(lifetime) {}

bool IdempotencyStore::IsFinal(int status) {
  if (status >= 200 && status < 300) return true;
  // A retry may get another answer to these: new credentials, a permission granted, less load.
  return status >= 400 && status < 500 && status != 401 && status != 403 && status != 408 && status != 419 &&
         status != 429;
}

void IdempotencyStore::EraseLocked(std::map<std::string, Entry>::iterator it) {
  bytes_ -= it->second.bytes;
  order_.erase(it->second.age);
  entries_.erase(it);
}

void IdempotencyStore::ExpireLocked(Clock::time_point now) {
  while (!order_.empty()) {
    auto it = entries_.find(order_.front());
    if (!it->second.done || it->second.expires > now) break;
    EraseLocked(it);
  }
}

IdempotencyStore::Claim IdempotencyStore::Begin(const std::string& scope, const std::string& fingerprint,
                                                RecordedResponse& replay) {
  std::unique_lock lock(mutex_);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::seconds(limits::kIdempotentDuplicateWaitSeconds);
  while (true) {
    const Clock::time_point now = Clock::now();
    ExpireLocked(now);
    auto it = entries_.find(scope);
    if (it == entries_.end()) break;
    Entry& entry = it->second;
    if (entry.fingerprint != fingerprint) return Claim::kMismatch;
    if (entry.done) {
      if (entry.expires <= now) {
        EraseLocked(it);
        break;
      }
      replay = entry.response;
      return Claim::kReplay;
    }
    if (finished_.wait_until(lock, deadline) == std::cv_status::timeout) return Claim::kBusy;
  }
  // The oldest finished answers make room; running requests are few (one per connection).
  while (entries_.size() >= limits::kIdempotencyKeysMax && !order_.empty()) {
    auto oldest = entries_.find(order_.front());
    if (!oldest->second.done) break;
    EraseLocked(oldest);
  }
  order_.push_back(scope);
  Entry entry;
  entry.fingerprint = fingerprint;
  entry.age = std::prev(order_.end());
  entry.bytes = scope.size() + fingerprint.size();
  bytes_ += entry.bytes;
  entries_.emplace(scope, std::move(entry));
  return Claim::kRun;
}

void IdempotencyStore::Finish(const std::string& scope, const RecordedResponse& response) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(scope);
  if (it == entries_.end()) return;
  uint64_t bytes = scope.size() + it->second.fingerprint.size() + response.body.size();
  for (const auto& [name, value] : response.headers) bytes += name.size() + value.size();
  if (!IsFinal(response.status) || bytes > limits::kIdempotentAnswerBytesMax) {
    // Not kept: a retry runs the request again (a commit's requirements still refuse a repeat).
    EraseLocked(it);
  } else {
    Entry& entry = it->second;
    bytes_ += bytes - entry.bytes;
    entry.bytes = bytes;
    entry.done = true;
    entry.response = response;
    entry.expires = Clock::now() + lifetime_;
    // Finished answers age from when they finished, oldest first.
    order_.erase(entry.age);
    order_.push_back(scope);
    entry.age = std::prev(order_.end());
    while (bytes_ > limits::kIdempotentAnswersBytesMax && !order_.empty()) {
      auto oldest = entries_.find(order_.front());
      if (!oldest->second.done) break;
      EraseLocked(oldest);
    }
  }
  finished_.notify_all();
}

void RecordingResponseWriter::SetStatus(int status) {
  if (recording_) recorded_.status = status;
  inner_.SetStatus(status);
}

void RecordingResponseWriter::AddHeader(std::string_view name, std::string_view value) {
  if (recording_) recorded_.headers.emplace_back(name, value);
  inner_.AddHeader(name, value);
}

Status RecordingResponseWriter::Send(std::string_view body) {
  if (recording_) recorded_.body.assign(body);
  return inner_.Send(body);
}

Status RecordingResponseWriter::Write(const char* data, size_t size) {
  if (recording_) recorded_.body.append(data, size);
  return inner_.Write(data, size);
}

Status RecordingResponseWriter::WriteGathered(std::span<const std::string_view> pieces) {
  if (recording_) {
    for (std::string_view piece : pieces) recorded_.body += piece;
  }
  return inner_.WriteGathered(pieces);
}

Status RecordingResponseWriter::SendFile(int fd, uint64_t offset, uint64_t length) {
  // No catalog answer is a file; one that were could not be replayed, so it is not kept.
  if (recording_) recorded_.status = 500;
  return inner_.SendFile(fd, offset, length);
}

}  // namespace serac::catalog
