// Iceberg table and view metadata as typed values: what the catalog stores and serves, what a writer
// reads to add data (the current schema, the default partition spec and sort order, the current
// snapshot and its sequence numbers), what maintenance and scan planning walk. Each TableMetadata
// or ViewMetadata is one immutable version; cheap to copy (the versions of a table share their
// snapshots).
//
// The documents themselves are kept as the clients wrote them, inside the module: fields serac does
// not model (v3 `source-ids`, a snapshot's `key-id`, a column's `initial-default`) survive every round
// trip unchanged, and the documents never leave iceberg/ (only the forward-declared JSON type does, for
// bodies a caller has already parsed). The typed parts below are read from
// them on request; every document was checked on its way in as the reference's parsers check it, so
// reading a typed part of a stored version does not fail.
//
// Errors as iceberg.h describes them (kInvalidArgument, kValidationFailed, kNotImplemented, kConflict).
// Thread-safety: values; const member functions may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "iceberg/iceberg.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {

struct TableModel;  // metadata_internal.h
struct ViewModel;   // metadata_internal.h
struct CreateTableRequest;
struct CreateViewRequest;

inline constexpr char kMainBranch[] = "main";

// ---- Typed parts ----

struct PartitionField {
  std::vector<int32_t> source_ids;  // one column, or several for v3's multi-argument transforms
  int32_t field_id = 0;             // v1 specs without ids get 1000, 1001, ... as Java assigns them
  std::string name;
  std::string transform;  // "identity", "bucket[16]", "truncate[4]", "day", "void", ...
};

struct PartitionSpec {
  int32_t spec_id = 0;
  std::vector<PartitionField> fields;
  bool is_unpartitioned() const { return fields.empty(); }
};

enum class SortDirection : uint8_t { kAscending, kDescending };
enum class NullOrder : uint8_t { kNullsFirst, kNullsLast };

struct SortField {
  std::vector<int32_t> source_ids;
  std::string transform;
  SortDirection direction = SortDirection::kAscending;
  NullOrder null_order = NullOrder::kNullsFirst;
};

struct SortOrder {
  int32_t order_id = 0;  // 0: unsorted
  std::vector<SortField> fields;
};

struct Snapshot {
  int64_t snapshot_id = 0;
  std::optional<int64_t> parent_snapshot_id;
  int64_t sequence_number = 0;  // 0 in v1
  int64_t timestamp_ms = 0;
  std::string manifest_list;           // empty for a v1 snapshot that lists its manifests instead
  std::vector<std::string> manifests;  // v1 only
  // "operation" (append, replace, overwrite, delete) and the writer's counters ("added-records", ...).
  std::map<std::string, std::string> summary;
  std::optional<int32_t> schema_id;
  std::optional<int64_t> first_row_id;  // v3 row lineage
  std::optional<int64_t> added_rows;    // v3 row lineage

  std::string_view operation() const;  // summary["operation"], empty when absent
};

enum class RefType : uint8_t { kBranch, kTag };

struct SnapshotRef {
  int64_t snapshot_id = 0;
  RefType type = RefType::kBranch;
  std::optional<int32_t> min_snapshots_to_keep;  // branches only
  std::optional<int64_t> max_snapshot_age_ms;    // branches only
  std::optional<int64_t> max_ref_age_ms;
};

struct SnapshotLogEntry {
  int64_t timestamp_ms = 0;
  int64_t snapshot_id = 0;
  bool operator==(const SnapshotLogEntry&) const = default;
};

struct MetadataLogEntry {
  int64_t timestamp_ms = 0;
  std::string metadata_file;
  bool operator==(const MetadataLogEntry&) const = default;
};

// Which snapshots a written document lists (the REST `snapshots` query parameter).
enum class SnapshotSelection { kAll, kRefs };  // kRefs: only snapshots some branch or tag points at

// A run of consecutive history entries (snapshots, snapshot-log or metadata-log entries) as text,
// with the digests storage needs to keep it once for every metadata file that repeats it.
struct HistoryChunk {
  std::string text;
  std::string sha256;  // raw 32 bytes
  std::string md5;     // raw 16 bytes
};
// One piece of a metadata file: a shared history chunk, or text of this version alone.
struct MetadataTextPiece {
  std::shared_ptr<const HistoryChunk> chunk;  // set: shared
  std::string text;                           // otherwise
  std::string_view view() const { return chunk ? std::string_view(chunk->text) : std::string_view(text); }
  size_t size() const { return view().size(); }
};
std::string JoinMetadataPieces(const std::vector<MetadataTextPiece>& pieces);
uint64_t MetadataPiecesSize(const std::vector<MetadataTextPiece>& pieces);  // bytes of the joined text

// ---- Tables ----

class TableMetadata {
 public:
  // Reads a table metadata file (format v1 to v3) with the reference parsers' rules.
  static Result<TableMetadata> Parse(std::string_view json);

  int format_version() const;
  const std::string& table_uuid() const;
  const std::string& location() const;
  int64_t last_sequence_number() const;
  int64_t last_updated_ms() const;
  int32_t last_column_id() const;
  int32_t last_partition_id() const;
  int64_t next_row_id() const;  // v3; 0 before
  const std::map<std::string, std::string>& properties() const;
  const std::vector<SnapshotLogEntry>& snapshot_log() const;
  const std::vector<MetadataLogEntry>& metadata_log() const;

  int32_t current_schema_id() const;
  Schema CurrentSchema() const;
  std::vector<Schema> Schemas() const;
  std::optional<Schema> FindSchema(int32_t schema_id) const;
  int32_t default_spec_id() const;
  PartitionSpec DefaultSpec() const;
  std::vector<PartitionSpec> Specs() const;
  std::optional<PartitionSpec> FindSpec(int32_t spec_id) const;
  int32_t default_sort_order_id() const;
  SortOrder DefaultSortOrder() const;
  std::vector<SortOrder> SortOrders() const;
  int64_t current_snapshot_id() const;  // -1: no snapshot yet
  std::optional<Snapshot> CurrentSnapshot() const;
  std::optional<Snapshot> FindSnapshot(int64_t snapshot_id) const;
  std::vector<Snapshot> Snapshots() const;  // in the document's order
  size_t snapshot_count() const;
  std::map<std::string, SnapshotRef> Refs() const;

  // The statistics and partition statistics files this version lists.
  std::vector<std::string> StatisticsFiles() const;

  // The same version at another table location (the catalog keeps a table's files in its warehouse).
  TableMetadata WithLocation(std::string location) const;

  // A place this version says the table's files are or go: what names it ("snapshot 42's manifest
  // list", "property write.data.path", ...) and the location.
  struct NamedLocation {
    std::string what;
    std::string location;
    int64_t manifest_list_of = -1;  // for a snapshot's manifest list: that snapshot's id
  };
  // Every such place, besides location() itself, that this version names and `before` (null:
  // none) does not: each snapshot's manifest list (a v1 snapshot's manifests), statistics and
  // partition statistics files, and the write.data.path, write.metadata.path,
  // write.object-storage.path and write.folder-storage.path properties. Snapshots both versions
  // share are not looked at again.
  std::vector<NamedLocation> LocationsAddedSince(const TableMetadata* before) const;

  // The metadata file's text, every snapshot or only those a ref points at. Never throws: invalid
  // UTF-8 is replaced.
  std::string ToJsonText(SnapshotSelection selection = SnapshotSelection::kAll) const;
  // The same text (every snapshot) cut into pieces so that the history a version shares with the
  // one before it comes as the same chunks (iceberg/metadata/metadata_pieces.cc says how): storage keeps
  // each chunk once, and a commit hashes only the new ones.
  std::vector<MetadataTextPiece> ToJsonPieces() const;
  // "<write.metadata.path or location/metadata>/NNNNN-<file_uuid>.metadata.json", NNNNN one more than
  // the number that starts the file name of `previous_metadata_location`.
  std::string NewFileLocation(std::string_view previous_metadata_location, std::string_view file_uuid) const;

  // The version as the module keeps it (iceberg/ only).
  explicit TableMetadata(std::shared_ptr<const TableModel> model);
  const TableModel& model() const { return *model_; }

 private:
  std::shared_ptr<const TableModel> model_;
};

// The body of a CreateTableRequest, checked as the reference parses it.
class TableCreation {
 public:
  static Result<TableCreation> Parse(std::string_view body_json);
  // The same from a body the caller has already parsed (each request body is parsed once).
  static Result<TableCreation> FromJson(const nlohmann::json& body);

  const std::string& name() const;
  const std::optional<std::string>& location() const;  // the client's wish; the catalog decides
  bool stage_create() const;
  // The new table's first metadata (server-assigned ids, format version from the properties).
  Result<TableMetadata> NewMetadata(std::string_view location, std::string_view table_uuid,
                                    int64_t now_ms) const;

  explicit TableCreation(std::shared_ptr<const CreateTableRequest> request);

 private:
  std::shared_ptr<const CreateTableRequest> request_;
};

// ---- Views ----

class ViewMetadata {
 public:
  static Result<ViewMetadata> Parse(std::string_view json);

  const std::string& view_uuid() const;
  int format_version() const;
  const std::string& location() const;
  int32_t current_version_id() const;
  const std::map<std::string, std::string>& properties() const;

  std::string ToJsonText() const;

  explicit ViewMetadata(std::shared_ptr<const ViewModel> model);
  const ViewModel& model() const { return *model_; }

 private:
  std::shared_ptr<const ViewModel> model_;
};

// The body of a CreateViewRequest, checked as the reference parses it.
class ViewCreation {
 public:
  static Result<ViewCreation> Parse(std::string_view body_json);
  static Result<ViewCreation> FromJson(const nlohmann::json& body);  // an already parsed body

  const std::string& name() const;
  const std::optional<std::string>& location() const;
  Result<ViewMetadata> NewMetadata(std::string_view location, std::string_view view_uuid) const;

  explicit ViewCreation(std::shared_ptr<const CreateViewRequest> request);

 private:
  std::shared_ptr<const CreateViewRequest> request_;
};

struct ViewCommitResult {
  ViewMetadata metadata;
  bool changed = false;
};

// Applies one view commit (requirements and updates, JSON arrays) at the server's time `now_ms`.
Result<ViewCommitResult> CommitView(const ViewMetadata& current, std::string_view requirements_json,
                                    std::string_view updates_json, int64_t now_ms);
// The same with the arrays already parsed.
Result<ViewCommitResult> CommitView(const ViewMetadata& current, const nlohmann::json& requirements,
                                    const nlohmann::json& updates, int64_t now_ms);

}  // namespace serac::iceberg
