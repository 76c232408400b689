// A local index of the keys of a table's data files, for finding rows by key without reading the
// data files again (serac sync's position deletes and DVs): one index file per data file, made the
// first time the file's key columns are read whole (DeleteRowsByKey), never changed after (a data
// file never changes), written to a temporary name and renamed, so that any index file there is
// whole. Each holds the file's keys sorted, each with its row position, and a Bloom filter of them;
// a lookup maps it, tests each key against the filter, and binary-searches the keys that pass.
// Index files of data files no longer live go (Retain). Keys are RowKeys' canonical bytes.
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "iceberg/manifest/manifest.h"

namespace serac::parquet {

// Index files bigger than this are not made (their data file is read instead): positions and key
// offsets are 32-bit.
inline constexpr uint64_t kKeyIndexFileBytesMax = 2ull << 30;

// Every row's key of one data file, in the data file's order, as an index file is made from: the
// keys' bytes one after another, where each ends, and each row's position. About 8 bytes a row
// beside the keys' own (a string and a position per row took 40, and 72 for a 16-byte key).
class KeyPositions {
 public:
  void Add(std::string_view key, int64_t position) {
    fits_ = fits_ && position >= 0 && position <= UINT32_MAX && bytes_.size() + key.size() <= UINT32_MAX;
    if (!fits_) return;  // too big for an index file: kept no longer
    bytes_.append(key);
    ends_.push_back(static_cast<uint32_t>(bytes_.size()));
    positions_.push_back(static_cast<uint32_t>(position));
  }
  size_t size() const { return positions_.size(); }
  std::string_view key(size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return std::string_view(bytes_).substr(begin, ends_[i] - begin);
  }
  uint32_t position(size_t i) const { return positions_[i]; }
  uint64_t key_bytes() const { return bytes_.size(); }
  // False once a position or the keys' bytes passed what an index file's 32-bit fields hold.
  bool fits() const { return fits_; }

 private:
  std::string bytes_;
  std::vector<uint32_t> ends_;
  std::vector<uint32_t> positions_;
  bool fits_ = true;
};

class DataFileKeyIndex {
 public:
  // The index files in `directory`, made (with its parents) when missing.
  static Result<std::unique_ptr<DataFileKeyIndex>> Open(std::string directory);

  // The positions, ascending, of `data_file`'s rows whose key is one of `keys` (canonical bytes,
  // sorted); nullopt when the file has no index file (or an unreadable one, which then goes).
  Result<std::optional<std::vector<int64_t>>> Find(const iceberg::DataFile& data_file,
                                                   std::span<const std::string> keys);

  // Records every row's key of `data_file` (canonical bytes, position), in any order.
  Status Add(const iceberg::DataFile& data_file, const KeyPositions& keys);

  // Removes the index files of data files not among `live_paths`.
  void Retain(const std::set<std::string>& live_paths);

  size_t indexed_files() const { return names_.size(); }
  const std::string& directory() const { return directory_; }

 private:
  explicit DataFileKeyIndex(std::string directory) : directory_(std::move(directory)) {}
  static std::string NameOf(const std::string& data_file_path);
  std::string directory_;
  std::set<std::string> names_;  // index files present (their names)
};

}  // namespace serac::parquet
