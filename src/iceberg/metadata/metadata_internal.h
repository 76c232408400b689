// The Iceberg table and view metadata model as iceberg/ keeps it, for iceberg/*.cc only (it pulls in
// nlohmann/json; every other module uses the typed values of iceberg/metadata/table_metadata.h, which hold
// one of these each, or the string API of iceberg/iceberg.h).
//
// Schemas, partition specs, sort orders, snapshots, refs, statistics, encryption keys and view
// versions are kept as the JSON objects the clients sent. The rules only read the ids they need
// from them, so fields serac does not know yet (v3 `source-ids`, snapshot `key-id`, column
// `initial-default`) survive every round trip unchanged. Every entry point checks them as the
// reference's parsers do (Java engines re-parse every part on each load, so whatever those refuse
// would leave the table or view unloadable for them), ids it will later read included, so code
// behind the entry points may read them without re-checking.
//
// Values of these types are plain data: copy them freely. The one thing they share is snapshots,
// which are immutable once made (see StoredSnapshot), so copies never interfere across threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/json_reads.h"
#include "common/status.h"
#include "iceberg/iceberg.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/metadata/table_update.h"
#include "iceberg/schema/schema.h"

namespace serac::iceberg {

inline constexpr int kTableFormatVersionMin = 1;
inline constexpr int kTableFormatVersionMax = 3;
inline constexpr int kTableFormatVersionDefault = 2;  // what the Java reference creates unless asked
inline constexpr int kRowLineageFormatVersion = 3;    // first version with next-row-id / first-row-id
inline constexpr int kViewFormatVersionMax = 1;
inline constexpr int32_t kPartitionFieldIdStart = 1000;  // partition field ids begin here
inline constexpr int32_t kUnsortedOrderId = 0;
inline constexpr int32_t kFirstSortOrderId = 1;
inline constexpr char kParquetCompressionProperty[] = "write.parquet.compression-codec";
inline constexpr char kParquetCompressionDefault[] = "zstd";  // for new tables, as the reference sets it
inline constexpr char kFormatVersionProperty[] = "format-version";
inline constexpr char kPreviousVersionsMaxProperty[] = "write.metadata.previous-versions-max";
inline constexpr int kPreviousVersionsMaxDefault = 100;
inline constexpr char kMetadataPathProperty[] = "write.metadata.path";
inline constexpr char kViewHistorySizeProperty[] = "version.history.num-entries";
inline constexpr int kViewHistorySizeDefault = 10;

// One snapshot exactly as the client sent it, never changed once made. Every metadata version
// that still lists it points at the same one: a busy table lists thousands of snapshots and each
// commit makes a new version, so copying or re-serialising them all on every commit would cost
// more than the commit itself. Its JSON text is rendered once, when it is made.
class StoredSnapshot {
 public:
  // `json` must already have passed ValidateSnapshot.
  static std::shared_ptr<const StoredSnapshot> Make(Json json);

  const Json& json() const { return json_; }
  int64_t id() const { return id_; }
  const std::string& text() const { return text_; }  // json() written compactly

 private:
  StoredSnapshot(Json json, int64_t id, std::string text);
  Json json_;
  int64_t id_;
  std::string text_;
};
using StoredSnapshotPtr = std::shared_ptr<const StoredSnapshot>;

struct TableModel {
  int format_version = kTableFormatVersionDefault;
  std::string table_uuid;
  std::string location;
  int64_t last_sequence_number = 0;
  int64_t last_updated_ms = 0;
  int32_t last_column_id = 0;
  std::vector<Json> schemas;  // each has "schema-id"
  int32_t current_schema_id = -1;
  std::vector<Json> partition_specs;  // each has "spec-id" and "fields" with "field-id"
  int32_t default_spec_id = 0;
  int32_t last_partition_id = kPartitionFieldIdStart - 1;
  std::map<std::string, std::string> properties;
  int64_t current_snapshot_id = -1;          // -1: no current snapshot
  std::vector<StoredSnapshotPtr> snapshots;  // never null
  std::vector<SnapshotLogEntry> snapshot_log;
  std::vector<MetadataLogEntry> metadata_log;
  std::vector<Json> sort_orders;  // each has "order-id"
  int32_t default_sort_order_id = kUnsortedOrderId;
  std::map<std::string, Json> refs;        // name -> {"snapshot-id", "type", retention...}
  std::vector<Json> statistics;            // each has "snapshot-id"
  std::vector<Json> partition_statistics;  // each has "snapshot-id"
  int64_t next_row_id = 0;                 // meaningful (and written) from v3 on
  std::vector<Json> encryption_keys;       // each has "key-id"
  Json extra_fields = Json::object();      // top-level fields serac does not model, kept verbatim

  const Json* FindSchema(int32_t schema_id) const;
  const Json* FindSpec(int32_t spec_id) const;
  const Json* FindSortOrder(int32_t order_id) const;
  const Json* FindSnapshot(int64_t snapshot_id) const;
};

// ---- JSON reads (json_util.cc; the generic ones are common/json_reads.h). ----
// A client's value as messages show it: written compactly and cut short.
std::string ShownJson(const Json& value);
// Reads with the reference parsers' rules (its JsonUtil), failing with their wording, which names
// the field: whatever these accept, Java engines can load again.
Result<int32_t> RequiredInt32(const Json& object, const char* key);                 // getInt
Result<std::optional<int32_t>> OptionalInt32(const Json& object, const char* key);  // null = absent
Result<bool> RequiredBool(const Json& object, const char* key);
Status CheckOptionalString(const Json& object, const char* key);  // a string, null or absent
// A string or absent: what the REST specification's request schemas allow for an optional string,
// whose responses could not hold a null stored from a request.
Status CheckStringOrAbsent(const Json& object, const char* key);
Status CheckStringMap(const Json& object, const char* key);   // present: {"k": "v"} only
Status CheckStringList(const Json& object, const char* key);  // present: ["a", ...] only
Status CheckInt32List(const Json& object, const char* key);   // present: [1, ...], each an int32
bool IsBase64(std::string_view text);                         // as java.util.Base64 decodes it
// The properties a set-properties update sets and a remove-properties update removes, under their
// keys or, when those are absent, the legacy "updated" / "removed".
Result<std::map<std::string, std::string>> PropertyUpdates(const Json& update);
Result<std::vector<std::string>> PropertyRemovals(const Json& update);

// ---- Schemas (schema.cc). ----
// Checks a schema as the reference parses and builds one: every field's members and their types,
// known primitive type names (any letter case), defaults that parse for their type, unique full
// names and ids, identifier fields; and the nesting depth.
Status ValidateSchema(const Json& schema);
// Highest field id anywhere in the schema, nested struct, list element and map key/value ids too.
int32_t HighestFieldId(const Json& schema);
// Rejects types and defaults that need format v3 (timestamp_ns, variant, geometry, initial-default...).
Status CheckSchemaCompatibleWithFormat(const Json& schema, int format_version);
// Gives every field a fresh id from 1 upward in the reference order (a struct's own fields first,
// then their children; list element before its children; map key, value, then their children).
// `id_map` receives old id -> new id.
Json ReassignFieldIds(const Json& schema, std::map<int64_t, int64_t>* id_map);
// The typed schema of a JSON schema that passed ValidateSchema, and back (SchemaToJson's tree).
Schema SchemaFromJson(const Json& schema);
Json SchemaToJsonTree(const Schema& schema);
// Same content, ignoring the schema id (what "re-adding an identical schema" means).
bool SameSchema(const Json& a, const Json& b);
// What SameSchema compares, as text: equal keys for the schemas it finds the same (so that a
// commit finds a schema's twin by a lookup, not by comparing it with every schema).
std::string SchemaContentKey(const Json& schema);

// The ids of a list of items (schemas, partition specs, sort orders, view versions) by a key of
// their content, built from the list on first use and kept as items are added, and the next free
// id: a commit adding n items to a table of m then costs O(n + m), not O(n·m) as comparing each new
// item with every stored one would. Not thread-safe (one commit).
class ContentIds {
 public:
  using KeyOf = std::string (*)(const Json& item);
  // `id_key`: the member holding an item's id; `first_id`: the next id of an empty list;
  // `last_wins`: which of several items with one key the lookup finds (the reference's loops).
  ContentIds(const char* id_key, KeyOf key_of, int32_t first_id, bool last_wins)
      : id_key_(id_key), key_of_(key_of), first_id_(first_id), last_wins_(last_wins) {}

  std::optional<int32_t> Find(const std::vector<Json>& items, const Json& item) {
    Build(items);
    auto it = ids_.find(key_of_(item));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  int32_t NextId(const std::vector<Json>& items) {
    Build(items);
    return next_id_;
  }
  // `item` (with its id) was appended to the list.
  void Added(const std::vector<Json>& items, const Json& item) {
    Build(items);
    Note(item);
  }
  // Items were removed: the index is built again on its next use.
  void Forget() {
    built_ = false;
    ids_.clear();
  }

 private:
  void Build(const std::vector<Json>& items) {
    if (built_) return;
    built_ = true;
    next_id_ = first_id_;
    for (const Json& item : items) Note(item);
  }
  void Note(const Json& item) {
    const int32_t id = item.at(id_key_).get<int32_t>();
    next_id_ = std::max(next_id_, id + 1);
    auto [it, inserted] = ids_.emplace(key_of_(item), id);
    if (!inserted && last_wins_) it->second = id;
  }

  const char* id_key_;
  KeyOf key_of_;
  int32_t first_id_;
  bool last_wins_;
  bool built_ = false;
  int32_t next_id_ = 0;
  std::unordered_map<std::string, int32_t> ids_;
};

// ---- Table metadata (table_metadata.cc). ----
// Checks of the JSON parts serac stores as sent: they refuse whatever the reference's parsers
// (SnapshotParser, SortOrderParser, PartitionSpecParser, StatisticsFileParser, ...) refuse, since
// Java engines re-parse every part on each load, and make the ids the rules read safe to read.
Status ValidateSnapshot(const Json& snapshot);
// ValidateSnapshot, and the format version's rule for a snapshot added to the table.
Status ValidateAddedSnapshot(const Json& snapshot, int format_version);
Status ValidateRef(const Json& ref);
// Where a partition or sort field names its source columns: an int32 `source-id`, as the reference
// parses it, or also v3's `source-ids` (multi-argument transforms; the reference cannot parse
// them yet), which serac accepts where it did before: a create's partition spec, and on reading
// the files it wrote.
enum class SourceColumns { kSourceId, kSourceIdOrIds };
Status ValidateSortOrder(const Json& order, SourceColumns sources = SourceColumns::kSourceId);
// "fields" with unique non-empty names; "field-id" on every field or on none.
Status ValidatePartitionSpecFields(const Json& spec, SourceColumns sources = SourceColumns::kSourceId);
Status ValidateStatisticsFile(const Json& file);
Status ValidatePartitionStatisticsFile(const Json& file);
Status ValidateEncryptionKey(const Json& key);
Result<TableModel> ParseTableMetadata(const Json& json);
Json TableMetadataToJson(const TableModel& metadata, SnapshotSelection selection = SnapshotSelection::kAll);
// The same document as text, written without copying the snapshots (a table may hold thousands,
// and every commit and uncached load writes them all). Never throws: invalid UTF-8 is replaced.
std::string TableMetadataToJsonText(const TableModel& metadata,
                                    SnapshotSelection selection = SnapshotSelection::kAll);

// Parts of that text: the fields before the history, without the closing brace, and one entry
// of each log.
std::string TableMetadataHeadText(const TableModel& metadata);
void AppendMetadataLogEntryText(const MetadataLogEntry& entry, std::string& text);
void AppendSnapshotLogEntryText(const SnapshotLogEntry& entry, std::string& text);

// The whole document of TableMetadataToJsonText(metadata) (every snapshot), cut so that the
// history a version shares with the one before it comes as the same chunks. Runs of entries end
// where an entry's content says so (content-defined, so dropping old snapshots only changes the
// runs around them), and each table's last cut is kept with its chunks (limits::kCatalogHistoryCut*)
// so a commit hashes only new runs. Joining the pieces gives exactly TableMetadataToJsonText.
std::vector<MetadataTextPiece> TableMetadataToJsonPieces(const TableModel& metadata);

// ---- Create (table_create.cc). ----
struct CreateTableRequest {
  std::string name;
  std::optional<std::string> location;  // the client's wish; the catalog decides
  Json schema;
  std::optional<Json> partition_spec;
  std::optional<Json> write_order;
  std::map<std::string, std::string> properties;
  bool stage_create = false;
};
Result<CreateTableRequest> ParseCreateTableRequest(const Json& body);
Result<TableModel> NewTableMetadata(const CreateTableRequest& request, std::string_view location,
                                    std::string_view table_uuid, int64_t now_ms);

// ---- Commit (table_update.cc, table_requirements.cc, table_updates.cc). ----
// Requirement failures are kConflict (409 CommitFailedException); malformed input is
// kInvalidArgument (400). `current` null means the table does not exist yet (finishing a
// stage-create): the updates then build it from empty metadata, as the reference does.
Status CheckTableRequirements(const TableModel* current, const std::vector<TableRequirement>& requirements);
struct TableCommitOutcome {
  TableModel metadata;
  bool changed = false;  // false: the commit changes nothing and nothing needs to be written
};
Result<TableCommitOutcome> ApplyTableCommit(const TableModel* current, const TableChanges& changes,
                                            const CommitOptions& options);
// The same from the request's JSON arrays, read as the catalog's route reads them (the JSON-text
// API of iceberg.h, and tests).
Status CheckTableRequirements(const TableModel* current, const Json& requirements);
Result<TableCommitOutcome> ApplyTableCommit(const TableModel* current, const Json& requirements,
                                            const Json& updates, const CommitOptions& options);
// The parsing and writing of table_update.h (table_update.cc): one requirement or update.
Result<TableRequirement> ParseTableRequirement(Json& requirement);
Result<TableUpdate> ParseTableUpdate(Json& update);
Json TableRequirementToJson(const TableRequirement& requirement);
Json TableUpdateToJson(const TableUpdate& update);

// ---- Views (view_metadata.cc). ----
struct VersionLogEntry {
  int64_t timestamp_ms = 0;
  int32_t version_id = 0;
  bool operator==(const VersionLogEntry&) const = default;
};

struct ViewModel {
  std::string view_uuid;
  int format_version = 1;
  std::string location;
  std::vector<Json> schemas;  // each has "schema-id"
  int32_t current_version_id = -1;
  std::vector<Json> versions;  // each has "version-id", "schema-id", "timestamp-ms"
  std::vector<VersionLogEntry> version_log;
  std::map<std::string, std::string> properties;
  Json extra_fields = Json::object();

  const Json* FindVersion(int32_t version_id) const;
};

Result<ViewModel> ParseViewMetadata(const Json& json);
Json ViewMetadataToJson(const ViewModel& metadata);
struct CreateViewRequest {
  std::string name;
  std::optional<std::string> location;
  Json schema;
  Json view_version;
  std::map<std::string, std::string> properties;
};
Result<CreateViewRequest> ParseCreateViewRequest(const Json& body);
Result<ViewModel> NewViewMetadata(const CreateViewRequest& request, std::string_view location,
                                  std::string_view view_uuid);
struct ViewCommitOutcome {
  ViewModel metadata;
  bool changed = false;
};
// `now_ms` is the server's clock: the version log records a move back to an older version then.
Result<ViewCommitOutcome> ApplyViewCommit(const ViewModel& current, const Json& requirements,
                                          const Json& updates, int64_t now_ms);

// ---- Metadata files (metadata_file.cc). ----
// "<write.metadata.path or location/metadata>/NNNNN-<uuid>.metadata.json".
std::string NewTableMetadataFileLocation(const TableModel& metadata,
                                         std::string_view previous_metadata_location,
                                         std::string_view file_uuid);

}  // namespace serac::iceberg
