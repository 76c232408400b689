// CatalogStore: the Iceberg catalog's state in the MetaStore — warehouses, namespaces, and the
// tables and views in them, each with its current metadata file location. The metadata files
// themselves are objects in the warehouse bucket (written through the object index, so S3 clients
// can read them); this store only holds the pointer, swapped by compare-and-swap.
//
// Same guarantees as MetaStore: each mutating call is one transaction, durable when it returns OK.
// Reached through MetaStore::catalog(); shares the MetaStore's database so that, for example,
// DeleteBucket can refuse a bucket that is a warehouse in the same transaction.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace serac::meta {

struct WarehouseRecord {
  std::string name;  // also the bucket name
  int64_t created_ms = 0;
};

// A namespace is a non-empty list of levels ("a", "b" for a.b); levels are any UTF-8 without 0x1F.
using NamespaceLevels = std::vector<std::string>;

struct NamespaceRecord {
  std::string warehouse;
  NamespaceLevels levels;
  std::map<std::string, std::string> properties;
  int64_t created_ms = 0;
};

enum class EntityKind : uint8_t { kTable, kView };

// A table or a view. Tables and views share one name space inside a namespace.
struct EntityRecord {
  std::string warehouse;
  NamespaceLevels levels;
  std::string name;
  EntityKind kind = EntityKind::kTable;
  std::string uuid;               // table-uuid / view-uuid
  std::string location;           // base location (s3://warehouse/...), unique per entity
  std::string metadata_location;  // current metadata file (s3://warehouse/.../NNNNN-uuid.metadata.json)
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

struct EntityId {
  std::string warehouse;
  NamespaceLevels levels;
  std::string name;
  EntityKind kind = EntityKind::kTable;
};

// One compare-and-swap of an entity's metadata location.
struct MetadataSwap {
  EntityId id;
  std::string expected_metadata_location;
  std::string new_metadata_location;
  // Empty: the entity keeps its location. Else the location it moves to (a commit's
  // set-location), checked as a create's is.
  std::string new_location;
};

struct ObjectRecord;  // meta_store.h

// One durable step of a catalog commit (see CatalogStore::CommitMetadata). Users include
// meta_store.h, which completes ObjectRecord.
struct MetadataCommit {
  std::vector<ObjectRecord> new_files;  // the new metadata files, as objects; never replace one
  std::vector<EntityRecord> created;    // entities of stage-created tables that appear now
  std::vector<MetadataSwap> swaps;      // existing entities moving to their new metadata file
  // Metadata files trimmed from the history, as (bucket, key); ones already gone are skipped.
  std::vector<std::pair<std::string, std::string>> removed_files;
  // Called, when set, on the committing thread once the commit is visible to readers and before
  // it is known durable, so that the caller can let the next commit of the same table start from
  // it. It is called if and only if the commit happened (always before CommitMetadata returns
  // OK); when it was called, an error from CommitMetadata means the outcome is unknown.
  std::function<void()> on_visible;
};

struct NamespacePropertiesChange {
  std::map<std::string, std::string> updates;
  std::vector<std::string> removals;
};

struct NamespacePropertiesReport {
  std::vector<std::string> updated;
  std::vector<std::string> removed;
  std::vector<std::string> missing;
};

// Table maintenance (the maintenance API of AIStor Tables and S3 Tables): one type's settings for
// a warehouse (the default of its tables) or for one table (an override), kept as the API's JSON,
// which the catalog checks; the store only keeps it.
struct MaintenanceSetting {
  std::string warehouse;
  std::string table_uuid;  // empty: the warehouse's default
  std::string type;        // icebergCompaction, icebergSnapshotManagement, icebergUnreferencedFileRemoval
  std::string json;        // {"status": "enabled", "settings": {...}}
  int64_t updated_ms = 0;
};

// One maintenance job of one table: when it ran, how it ended, what it did (the catalog's JSON of
// figures and the error, if any).
struct MaintenanceJobRecord {
  int64_t id = 0;  // assigned when first saved; ascending in the order jobs were saved
  std::string warehouse;
  std::string table_uuid;
  std::string type;
  int64_t started_ms = 0;
  int64_t ended_ms = 0;  // 0 while it runs
  std::string status;    // running, succeeded, failed
  std::string json;
};

struct EntityCounts {
  uint64_t tables = 0;
  uint64_t views = 0;
};

class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  // Warehouses. Create makes the bucket too; with bucket_may_exist an existing (possibly
  // non-empty) bucket becomes a warehouse ("upgrade-existing"). kAlreadyExists if the warehouse
  // exists, or the bucket exists and !bucket_may_exist.
  virtual Status CreateWarehouse(const WarehouseRecord& warehouse, bool bucket_may_exist) = 0;
  virtual Result<WarehouseRecord> GetWarehouse(const std::string& name) = 0;  // kNotFound
  // Names > start_after, ascending, at most limit.
  virtual Result<std::vector<WarehouseRecord>> ListWarehouses(const std::string& start_after,
                                                              uint32_t limit) = 0;
  // kNotEmpty while namespaces exist, unless force (then every namespace, table and view entry is
  // removed too). Unless preserve_bucket, the bucket and all its objects are removed as well (their
  // blobs go to the GC queue).
  virtual Status DeleteWarehouse(const std::string& name, bool force, bool preserve_bucket) = 0;

  // Namespaces. Create: kAlreadyExists; kNotFound if the warehouse or (for nested) the parent is
  // missing; kValidationFailed if its default location is at or below a table's or view's.
  virtual Status CreateNamespace(const NamespaceRecord& ns) = 0;
  virtual Result<NamespaceRecord> GetNamespace(const std::string& warehouse,
                                               const NamespaceLevels& levels) = 0;
  // Direct children of `parent` (empty = top level), in byte order of their last level, with
  // last level > start_after, at most limit. kNotFound if parent is non-empty and missing.
  virtual Result<std::vector<NamespaceRecord>> ListNamespaces(const std::string& warehouse,
                                                              const NamespaceLevels& parent,
                                                              const std::string& start_after,
                                                              uint32_t limit) = 0;
  virtual Result<NamespacePropertiesReport> UpdateNamespaceProperties(
      const std::string& warehouse, const NamespaceLevels& levels,
      const NamespacePropertiesChange& change) = 0;
  // kNotEmpty while it holds tables, views or child namespaces.
  virtual Status DropNamespace(const std::string& warehouse, const NamespaceLevels& levels) = 0;

  // Tables and views. Create: kAlreadyExists if a table OR view has the name; kNotFound if the
  // namespace is missing; kValidationFailed (naming the other) if the location is not a key of the
  // warehouse's bucket or overlaps another entity's or a namespace's default location
  // (meta/catalog_locations.h), or the uuid is another entity's in the warehouse. Register and a
  // commit's created entities and location changes are checked the same way.
  virtual Status CreateEntity(const EntityRecord& entity) = 0;
  virtual Result<EntityRecord> GetEntity(const EntityId& id) = 0;  // kNotFound
  // Names > start_after of one kind in one namespace, ascending, at most limit. kNotFound if the
  // namespace is missing.
  virtual Result<std::vector<EntityRecord>> ListEntities(const std::string& warehouse,
                                                         const NamespaceLevels& levels, EntityKind kind,
                                                         const std::string& start_after, uint32_t limit) = 0;
  // How many tables and views a warehouse holds, in every namespace (kNotFound for no such
  // warehouse). One aggregate query: for an overview, not for every request.
  virtual Result<EntityCounts> CountEntities(const std::string& warehouse) = 0;
  // Removes the entry and returns it (the caller purges files if asked). kNotFound.
  virtual Result<EntityRecord> DropEntity(const EntityId& id) = 0;
  // kNotFound (source or target namespace), kAlreadyExists (target name taken by either kind).
  virtual Status RenameEntity(const EntityId& from, const NamespaceLevels& to_levels,
                              const std::string& to_name) = 0;
  // Registers or replaces (overwrite) an entity pointing at an existing metadata file.
  virtual Status RegisterEntity(const EntityRecord& entity, bool overwrite) = 0;
  // All swaps happen or none: kConflict if any entity's current location differs from expected
  // (the message names it), kNotFound if any entity is missing. updated_ms is set to now.
  virtual Status SwapMetadataLocations(const std::vector<MetadataSwap>& swaps) = 0;

  // A whole commit in one transaction, so it costs one durable write: the new metadata files are
  // stored, the created entities appear, the swaps happen and the trimmed files go — or nothing
  // changes. Errors as CreateEntity and SwapMetadataLocations; kPreconditionFailed when a new
  // file's key already exists.
  virtual Status CommitMetadata(const MetadataCommit& commit) = 0;

  // Maintenance settings, keyed by (warehouse, table_uuid, type): Put inserts or replaces
  // (kNotFound when the warehouse is missing; kLimitExceeded past limits::kMaintenanceSettingBytesMax);
  // Delete is kNotFound when there is none; List gives a
  // warehouse's (table_uuid empty) or a table's settings in type order. A warehouse's settings and
  // jobs go with it (DeleteWarehouse), a table's with its entry (DropEntity); a rename keeps them.
  virtual Status PutMaintenanceSetting(const MaintenanceSetting& setting) = 0;
  virtual Status DeleteMaintenanceSetting(const std::string& warehouse, const std::string& table_uuid,
                                          const std::string& type) = 0;
  virtual Result<std::vector<MaintenanceSetting>> ListMaintenanceSettings(const std::string& warehouse,
                                                                          const std::string& table_uuid) = 0;
  // Saves a job: a new record when job.id is 0 (its id returned, never reused), else the record
  // with that id and the same warehouse, table and type replaced (kNotFound when there is none). At most
  // limits::kMaintenanceJobsKeptPerTable records are kept per table and type: saving a new one drops the
  // oldest beyond that.
  virtual Result<int64_t> SaveMaintenanceJob(const MaintenanceJobRecord& job) = 0;
  // A table's jobs of one type (empty: every type), newest first, at most `limit`.
  virtual Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobs(const std::string& warehouse,
                                                                        const std::string& table_uuid,
                                                                        const std::string& type,
                                                                        uint32_t limit) = 0;
};

}  // namespace serac::meta
