// The SQLite catalog store's cache of catalog rows (sqlite_meta_store.cc), apart so that its
// rules can be tested on their own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/limits.h"
#include "common/status.h"
#include "meta/catalog_store.h"

namespace serac::meta::sqlite {

// Catalog rows as last read (warehouses, tables and views), for the lookups that every catalog
// request starts with. An entry is served only while no write that could change it has committed
// since it was read: readers take the generation before they read, writers move it after they
// commit, so a row read before a commit can never be served after that commit was acknowledged.
// Table and view rows change with every catalog write but commits, which change only the rows
// they swap: those are changed in the cache too, under a per-row sequence that keeps a reader
// who read before the commit from putting the old row back. Warehouse rows change only when a
// warehouse is created or removed, so commits leave those cached.
class CatalogReadCache {
 public:
  void WriteCommitted() { entities_.Invalidate(); }
  // A write that changed only one entity's row, as `change` does to it (returning false when the
  // row is gone): the cached row is changed the same way and every other row stays cached.
  void EntityWritten(const EntityId& id, const std::function<bool(EntityRecord&)>& change) {
    entities_.Update(EntityKey(id), change);
  }
  void WarehouseWriteCommitted() {
    warehouses_.Invalidate();
    entities_.Invalidate();
  }

  // The cached row, else `read()`'s, kept when it succeeded.
  Result<EntityRecord> Entity(const EntityId& id, const std::function<Result<EntityRecord>()>& read) {
    return ReadThrough(entities_, EntityKey(id), read);
  }
  Result<WarehouseRecord> Warehouse(const std::string& name,
                                    const std::function<Result<WarehouseRecord>()>& read) {
    return ReadThrough(warehouses_, name, read);
  }

 private:
  template <typename Record>
  class Rows {
   public:
    uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
    uint64_t sequence() const { return sequence_.load(std::memory_order_acquire); }
    void Invalidate() { generation_.fetch_add(1, std::memory_order_acq_rel); }

    // After a committed write to one row: changes the cached row in place, and keeps readers that
    // began before the write from putting back what they read.
    void Update(const std::string& key, const std::function<bool(Record&)>& change) {
      std::lock_guard<std::mutex> lock(mutex_);
      const uint64_t sequence = sequence_.fetch_add(1, std::memory_order_acq_rel) + 1;
      if (written_.size() >= limits::kCatalogEntityCacheEntriesMax) {
        written_.clear();
        forgotten_before_ = sequence;  // who began before this may have read any row stale
      }
      written_[key] = sequence;
      auto found = entries_.find(key);
      if (found == entries_.end()) return;
      if (found->second.generation != generation() || !change(found->second.record)) entries_.erase(found);
    }

    std::optional<Record> Get(const std::string& key, uint64_t now) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = entries_.find(key);
      if (found == entries_.end() || found->second.generation != now) return std::nullopt;
      return found->second.record;
    }
    void Put(const std::string& key, const Record& record, uint64_t read_generation, uint64_t read_sequence) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (read_sequence < forgotten_before_) return;
      if (auto written = written_.find(key); written != written_.end() && written->second > read_sequence)
        return;
      // The bound is set for tables and views; warehouses, far fewer, share it.
      if (entries_.size() >= limits::kCatalogEntityCacheEntriesMax) entries_.clear();
      entries_[key] = Entry{record, read_generation};
    }

   private:
    struct Entry {
      Record record;
      uint64_t generation = 0;
    };
    std::atomic<uint64_t> generation_{0};
    std::atomic<uint64_t> sequence_{0};  // counts Update()s
    std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;  // guarded by mutex_
    std::unordered_map<std::string, uint64_t>
        written_;                    // key -> sequence of its last Update(); guarded by mutex_
    uint64_t forgotten_before_ = 0;  // guarded by mutex_
  };

  template <typename Record>
  Result<Record> ReadThrough(Rows<Record>& rows, const std::string& key,
                             const std::function<Result<Record>()>& read) {
    const uint64_t before_read = rows.generation();
    const uint64_t sequence_before_read = rows.sequence();
    if (std::optional<Record> cached = rows.Get(key, before_read)) return std::move(*cached);
    Result<Record> result = read();
    if (result.ok()) rows.Put(key, *result, before_read, sequence_before_read);
    return result;
  }

  static std::string EntityKey(const EntityId& id) {
    std::string key = id.warehouse;
    for (const std::string& level : id.levels) key.append(1, '\x1f').append(level);
    key.append(1, '\0').append(id.name).append(1, '\0').append(
        1, static_cast<char>('0' + static_cast<int>(id.kind)));
    return key;
  }

  Rows<EntityRecord> entities_;
  Rows<WarehouseRecord> warehouses_;
};

}  // namespace serac::meta::sqlite
