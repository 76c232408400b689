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

class DataFileKeyIndex {
 public:
  // The index files in `directory`, made (with its parents) when missing.
  static Result<std::unique_ptr<DataFileKeyIndex>> Open(std::string directory);

  // The positions, ascending, of `data_file`'s rows whose key is one of `keys` (canonical bytes,
  // sorted); nullopt when the file has no index file (or an unreadable one, which then goes).
  Result<std::optional<std::vector<int64_t>>> Find(const iceberg::DataFile& data_file,
                                                   std::span<const std::string> keys);

  // Records every row's key of `data_file` (canonical bytes, position), in any order.
  Status Add(const iceberg::DataFile& data_file, std::vector<std::pair<std::string, int64_t>> keys);

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
