// A thread-safe cache of immutable values by string key, bounded both in entries and in bytes
// (what each value costs, as the caller estimates it); the least recently used entries go first.
// Values are shared: a reader keeps what it got even after the entry is evicted.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace serac {

template <typename V>
class LruCache {
 public:
  LruCache(size_t entries_max, uint64_t bytes_max) : entries_max_(entries_max), bytes_max_(bytes_max) {}

  std::shared_ptr<const V> Get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->value;
  }

  void Erase(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return;
    bytes_ -= it->second->bytes;
    order_.erase(it->second);
    index_.erase(it);
  }

  // Replaces any value under `key`. A value larger than the whole byte budget is not kept. The
  // values it replaces or evicts are returned rather than released under the lock (readers wait
  // on it), so that a caller on a request's path may keep them until it has answered: freeing a
  // large parsed document takes a while.
  std::vector<std::shared_ptr<const V>> Put(const std::string& key, std::shared_ptr<const V> value,
                                            uint64_t bytes) {
    std::vector<std::shared_ptr<const V>> released;
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      bytes_ -= it->second->bytes;
      released.push_back(std::move(it->second->value));
      order_.erase(it->second);
      index_.erase(it);
    }
    if (bytes > bytes_max_) {
      released.push_back(std::move(value));
      return released;
    }
    order_.push_front(Entry{key, std::move(value), bytes});
    index_[key] = order_.begin();
    bytes_ += bytes;
    while (order_.size() > entries_max_ || bytes_ > bytes_max_) {
      bytes_ -= order_.back().bytes;
      released.push_back(std::move(order_.back().value));
      index_.erase(order_.back().key);
      order_.pop_back();
    }
    return released;
  }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const V> value;
    uint64_t bytes = 0;
  };
  const size_t entries_max_;
  const uint64_t bytes_max_;
  std::mutex mutex_;
  std::list<Entry> order_;  // guarded by mutex_; most recently used first
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;  // guarded by mutex_
  uint64_t bytes_ = 0;                                                          // guarded by mutex_
};

}  // namespace serac
