// Manifests and manifest lists: the Avro files under every snapshot that list a table's data and
// delete files (manifests) and its manifests (the manifest list), for format versions 1 to 3, written
// with the schemas, field ids and header metadata Java Iceberg writes, and read whoever wrote them
// (Java, PyIceberg, DuckDB, serac): fields matched by field id, unknown ones skipped, what an entry
// leaves null inherited from its manifest as the spec says.
//
// Reading is one pass over the Avro blocks that decodes straight into these structs (no generic
// value tree), so planning over a large table is bounded by memory bandwidth, not allocation. An
// entry reused across Next calls keeps its buffers: decoding it allocates nothing.
// Bad input is kInvalidArgument naming the file and what is wrong.
//
// Thread-safety: plain values; a ManifestWriter or ManifestListWriter is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "iceberg/avro/avro.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/schema/partition.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {

enum class FileContent : int32_t { kData = 0, kPositionDeletes = 1, kEqualityDeletes = 2 };
// The REST specification's name of a file's content: "data", "position-deletes", "equality-deletes".
inline const char* FileContentName(FileContent content) {
  switch (content) {
    case FileContent::kData:
      return "data";
    case FileContent::kPositionDeletes:
      return "position-deletes";
    case FileContent::kEqualityDeletes:
      return "equality-deletes";
  }
  return "data";
}
enum class ManifestContent : int32_t { kData = 0, kDeletes = 1 };
enum class EntryStatus : int32_t { kExisting = 0, kAdded = 1, kDeleted = 2 };

// Per-column counters and bounds, keyed by field id in ascending order.
using ColumnCounts = std::vector<std::pair<int32_t, int64_t>>;
using ColumnBounds = std::vector<std::pair<int32_t, std::string>>;  // single-value form

// One data file, position or equality delete file, or deletion vector (the manifest's data_file).
struct DataFile {
  FileContent content = FileContent::kData;
  std::string file_path;
  std::string file_format = "PARQUET";  // as Java writes it: PARQUET, AVRO, ORC, PUFFIN
  PartitionTuple partition;             // the manifest's spec's fields, in order
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;
  ColumnCounts column_sizes;
  ColumnCounts value_counts;
  ColumnCounts null_value_counts;
  ColumnCounts nan_value_counts;
  ColumnBounds lower_bounds;
  ColumnBounds upper_bounds;
  std::optional<std::string> key_metadata;
  std::vector<int64_t> split_offsets;
  std::vector<int32_t> equality_ids;  // equality deletes: the columns compared
  std::optional<int32_t> sort_order_id;
  std::optional<std::string> referenced_data_file;  // position deletes of one file; every DV
  std::optional<int64_t> first_row_id;              // v3 row lineage
  std::optional<int64_t> content_offset;            // DV: the blob's offset in the Puffin file
  std::optional<int64_t> content_size_in_bytes;     // DV: the blob's length
  // The partition spec of `partition`: set by the reader from the manifest (not a manifest field;
  // a writer writes the spec it was made for).
  int32_t spec_id = 0;
};

// A column's metric in a file's metrics (nullptr / nullopt when the file has none for it).
inline const std::string* FindBound(const ColumnBounds& bounds, int32_t field_id) {
  for (const auto& [id, bytes] : bounds) {
    if (id == field_id) return &bytes;
  }
  return nullptr;
}
inline std::optional<int64_t> FindCount(const ColumnCounts& counts, int32_t field_id) {
  for (const auto& [id, count] : counts) {
    if (id == field_id) return count;
  }
  return std::nullopt;
}

// Whether a delete file is a v3 deletion vector (a blob in a Puffin file).
inline bool IsDeletionVector(const DataFile& file) {
  if (file.content != FileContent::kPositionDeletes || file.file_format.size() != 6) return false;
  for (size_t i = 0; i < 6; ++i) {
    if ((file.file_format[i] & ~0x20) != "PUFFIN"[i]) return false;  // any letter case, as Java reads it
  }
  return true;
}

// One manifest entry. Reading fills every field: inherited values are resolved (snapshot id and
// sequence numbers of ADDED entries from the manifest, v3 first row ids from the manifest's).
struct ManifestEntry {
  EntryStatus status = EntryStatus::kAdded;
  std::optional<int64_t> snapshot_id;           // null when written: the manifest's snapshot
  std::optional<int64_t> sequence_number;       // the data sequence number; null: the commit's
  std::optional<int64_t> file_sequence_number;  // null: the commit's
  DataFile file;
};

struct PartitionFieldSummary {
  bool contains_null = false;
  std::optional<bool> contains_nan;  // float and double fields
  std::optional<std::string> lower_bound;
  std::optional<std::string> upper_bound;
};

// One manifest as the manifest list describes it.
struct ManifestFile {
  std::string manifest_path;
  int64_t manifest_length = 0;
  int32_t partition_spec_id = 0;
  ManifestContent content = ManifestContent::kData;
  int64_t sequence_number = 0;      // -1 while unassigned (a new manifest before its commit)
  int64_t min_sequence_number = 0;  // -1 while unassigned
  int64_t added_snapshot_id = 0;
  int32_t added_files_count = 0;
  int32_t existing_files_count = 0;
  int32_t deleted_files_count = 0;
  int64_t added_rows_count = 0;
  int64_t existing_rows_count = 0;
  int64_t deleted_rows_count = 0;
  std::vector<PartitionFieldSummary> partitions;
  std::optional<std::string> key_metadata;
  std::optional<int64_t> first_row_id;  // v3 data manifests
};

inline constexpr int64_t kUnassignedSequenceNumber = -1;

// ---- Writing ----

struct ManifestWriterOptions {
  int format_version = 2;
  ManifestContent content = ManifestContent::kData;
  // The snapshot that writes the manifest: entries added without a snapshot id inherit it (v1
  // writes it into every entry, which has no null there).
  int64_t snapshot_id = 0;
  avro::Codec codec = avro::Codec::kDeflate;
};

// Writes one manifest for one partition spec. Entries are appended in order; Finish returns the
// file's bytes and its ManifestFile (counts, partition summaries, sequence numbers known so far).
class ManifestWriter {
 public:
  static Result<ManifestWriter> Make(const Schema& schema, const PartitionSpec& spec,
                                     ManifestWriterOptions options);

  // An entry as it is to be stored. ADDED entries may leave snapshot id and sequence numbers null
  // (inherited at commit); EXISTING and DELETED entries must carry their sequence numbers.
  Status Add(const ManifestEntry& entry);

  struct Written {
    std::string bytes;
    ManifestFile manifest;  // manifest_path as given, manifest_length the size of `bytes`
  };
  Result<Written> Finish(std::string manifest_path);

  uint64_t entries() const { return entries_; }
  uint64_t approximate_size() const;

  struct State;
  ManifestWriter(std::unique_ptr<State> state);
  ManifestWriter(ManifestWriter&&) noexcept;
  ManifestWriter& operator=(ManifestWriter&&) noexcept;
  ~ManifestWriter();

 private:
  std::unique_ptr<State> state_;
  uint64_t entries_ = 0;
};

struct ManifestListWriterOptions {
  int format_version = 2;
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;  // the commit's; replaces the -1 of manifests this commit wrote
  int64_t first_row_id = 0;     // v3: the snapshot's first-row-id (the table's next-row-id)
  avro::Codec codec = avro::Codec::kDeflate;
};

struct WrittenManifestList {
  std::string bytes;
  // v3: rows given ids (the snapshot's added-rows): each data manifest without a first_row_id got
  // the running row id, which then advanced by its existing and added rows.
  int64_t assigned_rows = 0;
};

// The manifest list of a snapshot: every manifest of it, in order.
Result<WrittenManifestList> WriteManifestList(const std::vector<ManifestFile>& manifests,
                                              const ManifestListWriterOptions& options);

// ---- Reading ----

struct ManifestContents {
  int format_version = 1;
  ManifestContent content = ManifestContent::kData;
  int32_t partition_spec_id = 0;
  std::string schema_json;          // header "schema" (empty when absent)
  std::string partition_spec_json;  // header "partition-spec": the spec's fields
  std::vector<ManifestEntry> entries;
};

// Reads a manifest. `manifest` is its entry in the manifest list (for what entries inherit);
// `manifest.manifest_path` names the file in errors. With `inherit` false, entries are as written
// (a manifest looked at on its own, without its manifest list).
Result<ManifestContents> ReadManifest(std::string_view bytes, const ManifestFile& manifest,
                                      bool inherit = true);

// Reads a manifest one entry at a time into an entry the caller keeps (its buffers reused), so a
// scan over many manifests allocates almost nothing per entry. ReadManifest is this, collected.
class ManifestReader {
 public:
  static Result<ManifestReader> Open(std::string_view bytes, const ManifestFile& manifest,
                                     bool inherit = true);
  const ManifestContents& header() const;  // everything but the entries
  // Decodes the next entry into `entry`; false at the end of the file. `bytes` must outlive the reader.
  Result<bool> Next(ManifestEntry& entry);

  struct State;
  explicit ManifestReader(std::unique_ptr<State> state);
  ManifestReader(ManifestReader&&) noexcept;
  ManifestReader& operator=(ManifestReader&&) noexcept;
  ~ManifestReader();

 private:
  std::unique_ptr<State> state_;
};

// The table schema and partition spec a manifest's header names, and the partition tuple's type
// (for showing partition values and bounds); kInvalidArgument when the header lacks or garbles them.
struct ManifestHeaderTypes {
  Schema schema;
  PartitionSpec spec;
  Type partition_type;
};
Result<ManifestHeaderTypes> ReadManifestHeaderTypes(const ManifestContents& contents);

// Reads a manifest list.
Result<std::vector<ManifestFile>> ReadManifestList(std::string_view bytes, std::string_view path);

// The Avro schema Java writes for a manifest entry of `partition_type` in `format_version` (what
// ManifestWriter writes; for tests and tools).
avro::SchemaPtr ManifestEntrySchema(int format_version, const Type& partition_type);
avro::SchemaPtr ManifestListSchema(int format_version);
// An Iceberg struct type as Java's AvroSchemaUtil converts it: records named "r<field id>",
// optional fields as ["null", T] with a null default, lists with element ids, maps with non-string
// keys as arrays of "k<key id>_v<value id>" records.
avro::SchemaPtr ToAvroSchema(const Type& struct_type, const std::string& record_name);

// The spec's fields as the "partition-spec" header holds them: [{"name", "transform", "source-id",
// "field-id"}, ...].
std::string PartitionFieldsJson(const PartitionSpec& spec);

}  // namespace serac::iceberg
