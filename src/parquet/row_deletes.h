// Deleting rows by key: the rows of a local key file (Parquet, CSV or JSON lines; its columns, matched
// to the table's by name, are the key), found in a table's Parquet data files (read through FileIO,
// only the key columns), and the delete files that remove them: position delete files
// (`file_path`, `pos`, field ids 2147483546 and 2147483545, sorted, one per data file with its
// partition and referenced_data_file) and equality delete files (the key columns with the table's
// field ids, partitioned as the table is, equality_ids set). DVs are written by iceberg/scan/table_files.h
// from the positions found here.
//
// Keys compare as Iceberg's equality deletes do: value for value after conversion to the table's
// types, null equal to null.
// Thread-safety: RowKeys is immutable once read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/schema/schema.h"
#include "parquet/key_index.h"
#include "parquet/parquet_files.h"

namespace serac::parquet {

class RowKeys {
 public:
  // kInvalidArgument naming the file, row and column for a value that does not fit the table's
  // type, a column the table lacks, or a key column that is not a top-level primitive.
  static Result<RowKeys> Read(const std::string& path, InputFormat format, const iceberg::Schema& schema);
  // The rows of a table's equality delete file (read through `io`) as keys: its equality columns
  // (equality_ids) only, by their names in `schema`.
  static Result<RowKeys> ReadEqualityDeletes(iceberg::FileIO& io, const iceberg::DataFile& delete_file,
                                             const iceberg::Schema& schema);

  // Keys given as values (serac sync): each row one Datum per column of `key_schema` (top-level
  // primitive columns of the table, with its ids and types); lists are not keys.
  static Result<RowKeys> FromRows(iceberg::Schema key_schema, const std::vector<Row>& rows);

  // The key columns as the table has them (ids, types), in the key file's order.
  const iceberg::Schema& key_schema() const { return key_schema_; }
  std::vector<int32_t> field_ids() const;
  size_t size() const { return keys_.size() + integer_keys_.size() + bytes_keys_.size(); }

  // Whether a data file may hold one of the keys, by its bounds of the first key column (false
  // only when none of the keys' values lies between them): files of other key ranges go unread.
  bool MayBeIn(const iceberg::DataFile& data_file) const;

  // The positions, ascending, of the rows of a Parquet data file whose key equals a key row. With
  // `every_key`, every row's key (canonical bytes, see CanonicalKeys) with its position as well.
  Result<std::vector<int64_t>> FindIn(iceberg::FileIO& io, const iceberg::DataFile& data_file,
                                      KeyPositions* every_key = nullptr) const;

  // The keys as DataFileKeyIndex keeps them, sorted: one integer column as 8 big-endian bytes of
  // the value with its sign bit flipped (so that they sort as numbers), one string, binary or
  // uuid column as its bytes, other keys as their value-by-value encoding. The ones a data file's
  // bounds may hold (narrowed by its bounds for one integer column; else all of them). Empty for
  // keys that are not indexable().
  std::span<const std::string> CanonicalKeysFor(const iceberg::DataFile& data_file) const;
  // Keys of FromRows: their canonical bytes follow from the key columns' types alone, as an
  // index file's do (Read's keep their value-by-value encoding whatever the types).
  bool indexable() const { return indexable_; }

 private:
  Result<std::vector<int64_t>> FindInFile(iceberg::FileIO& io, const iceberg::DataFile& data_file,
                                          KeyPositions* every_key) const;
  static Result<RowKeys> ReadColumns(const std::string& path, InputFormat format,
                                     const iceberg::Schema& schema, iceberg::FileIO* io,
                                     const std::vector<int32_t>* only_field_ids);
  void MakeCanonicalKeys();
  std::vector<std::string> canonical_keys_;
  bool indexable_ = false;

  iceberg::Schema key_schema_;
  std::unordered_set<std::string> keys_;
  std::vector<iceberg::Datum> first_values_;  // the first key column's values, sorted (MayBeIn)
  // FromRows of one integer-like key column (int, long, date, time, timestamps): its values,
  // sorted, instead of keys_ (FindIn reads the column's numbers without encoding a key per row).
  std::vector<int64_t> integer_keys_;
  bool IntegerKey() const;
  // FromRows of one string, binary, uuid or fixed key column: its values, looked up by the views
  // FindIn reads from the column.
  struct BytesHash {
    using is_transparent = void;
    size_t operator()(std::string_view bytes) const { return std::hash<std::string_view>{}(bytes); }
  };
  std::unordered_set<std::string, BytesHash, std::equal_to<>> bytes_keys_;
  bool BytesKey() const;
};

// The positions a position delete file (file_path, pos; read through `io`) deletes, by data file
// path, each ascending.
Result<std::map<std::string, std::vector<int64_t>>> ReadPositionDeletes(iceberg::FileIO& io,
                                                                        const iceberg::DataFile& delete_file);

// The rows of data files that their delete files remove, as readers and compaction apply them:
// a deletion vector's positions, a position delete file's positions of the data file, and the rows
// whose equality columns equal a row of an equality delete file. Each position or equality delete
// file is read once however many data files it applies to. Which delete files apply to a data file
// is the caller's to decide (iceberg/scan/scan_planning.h decides it as Java's DeleteFileIndex).
// Thread-safety: one thread at a time.
class DeletedRows {
 public:
  // Equality delete files are read by field id in `schema` (the one the data is read in).
  DeletedRows(iceberg::FileIO& io, iceberg::Schema schema) : io_(io), schema_(std::move(schema)) {}

  // The positions of the rows of `data` that `deletes` remove: sorted, without repeats.
  Result<std::vector<int64_t>> Of(const iceberg::DataFile& data,
                                  const std::vector<const iceberg::DataFile*>& deletes);

  // Position and equality delete files read so far (DVs not counted).
  int64_t files_read() const { return static_cast<int64_t>(position_files_.size() + equality_files_.size()); }
  // The data files a position delete file names, once read; nullptr if it was not.
  const std::map<std::string, std::vector<int64_t>>* PositionsOf(const std::string& path) const;
  bool EqualityFileRead(const std::string& path) const { return equality_files_.count(path) > 0; }

 private:
  iceberg::FileIO& io_;
  const iceberg::Schema schema_;
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> position_files_;
  std::map<std::string, RowKeys> equality_files_;
};

// Position deletes of rows found by key: one position delete file per data file (format v2), or
// deletion vectors (v3), each merged with the data file's DV, which it then replaces.
enum class PositionDeletes : uint8_t { kFiles, kDeletionVectors };
struct RowDeletes {
  std::vector<iceberg::DataFile> added;     // position delete files or DVs
  std::vector<iceberg::DataFile> replaced;  // DVs merged into the new ones: the commit removes them
  std::vector<std::string> written;         // what was written (to delete if nothing is committed)
  uint64_t rows = 0;                        // rows found (DVs: only those not deleted already)
};
// The delete files that remove the rows whose key is one of `keys` from `files`' live data files
// (read only where MayBeIn), written under `data_location`. With `index`, rows are found in the
// index files of the data files that have one; the others are read and get one.
Result<RowDeletes> DeleteRowsByKey(iceberg::FileIO& io, const RowKeys& keys, const iceberg::TableFiles& files,
                                   PositionDeletes kind, const WriteOptions& options,
                                   const std::string& data_location, DataFileKeyIndex* index = nullptr);

// One position delete file at `location` for `positions` (ascending) of `data_file`.
Result<iceberg::DataFile> WritePositionDeletes(iceberg::FileIO& io, const std::string& location,
                                               const iceberg::DataFile& data_file,
                                               const std::vector<int64_t>& positions,
                                               const WriteOptions& options);

// Equality delete files of the key file's rows under `data_location`, partitioned by `spec`, whose
// source columns must all be key columns (kInvalidArgument naming the one that is not).
Result<std::vector<iceberg::DataFile>> WriteEqualityDeletes(iceberg::FileIO& io, const std::string& key_path,
                                                            InputFormat format, const RowKeys& keys,
                                                            const iceberg::PartitionSpec& spec,
                                                            const WriteOptions& options,
                                                            const std::string& data_location);

}  // namespace serac::parquet
