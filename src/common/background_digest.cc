#include "common/background_digest.h"

#include <utility>

namespace serac {

BackgroundDigest::BackgroundDigest(Consumer consume, size_t stage_bytes)
    : consume_(std::move(consume)), stage_bytes_(stage_bytes == 0 ? 1 : stage_bytes) {
  filling_.reserve(stage_bytes_);
}

BackgroundDigest::~BackgroundDigest() { WaitForWorker(); }

void BackgroundDigest::Update(const char* data, size_t size) {
  while (size > 0) {
    size_t room = stage_bytes_ - filling_.size();
    size_t take = size < room ? size : room;
    filling_.append(data, take);
    data += take;
    size -= take;
    if (filling_.size() == stage_bytes_) HandOver();
  }
}

void BackgroundDigest::Drain() {
  if (!filling_.empty()) HandOver();
  WaitForWorker();
}

void BackgroundDigest::HandOver() {
  WaitForWorker();
  std::swap(filling_, in_flight_);
  filling_.clear();
  if (filling_.capacity() < stage_bytes_) filling_.reserve(stage_bytes_);
  // A thread per staged buffer (a few per MiB hashed) costs far less than the hashing itself and
  // needs no queue: at most one job is ever in flight, which also keeps the updates in order.
  worker_ = std::async(std::launch::async, [this] { consume_(in_flight_.data(), in_flight_.size()); });
}

void BackgroundDigest::WaitForWorker() {
  if (worker_.valid()) worker_.get();
}

}  // namespace serac
