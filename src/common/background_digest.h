// Hashing of a large request body on a second thread, so that MD5 and the checksum of an upload
// run beside receiving and writing it instead of after each chunk. Bytes are copied into one of
// two staging buffers; while the worker hashes one, the caller fills the other. The order of
// updates is preserved, so the result is the same digest as hashing inline.
// Not thread-safe: one caller thread drives Update and Drain.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <string>

namespace serac {

class BackgroundDigest {
 public:
  // `consume` is called on a worker thread with consecutive pieces of the input, one at a time,
  // in order. It must not throw.
  using Consumer = std::function<void(const char* data, size_t size)>;

  BackgroundDigest(Consumer consume, size_t stage_bytes);
  ~BackgroundDigest();  // waits for the worker; a body abandoned half-way just stops being hashed
  BackgroundDigest(const BackgroundDigest&) = delete;
  BackgroundDigest& operator=(const BackgroundDigest&) = delete;

  void Update(const char* data, size_t size);
  // Hands over what is staged and waits until every byte was consumed. Update may follow.
  void Drain();

 private:
  void HandOver();
  void WaitForWorker();

  Consumer consume_;
  size_t stage_bytes_;
  std::string filling_;    // bytes not yet handed to the worker
  std::string in_flight_;  // the buffer the worker is reading; untouched until it is done
  std::future<void> worker_;
};

}  // namespace serac
