#include <optional>
#include <string_view>
#include <utility>

#include "common/limits.h"
#include "meta/catalog_locations.h"
#include "meta/meta_records_internal.h"
#include "meta/postgres/pg_catalog_internal.h"
#include "meta/postgres/pg_objects_internal.h"

namespace serac::meta::postgres {
namespace {

// Existence checks with the messages of the reads (kNotFound "warehouse / namespace does not exist").
Status RequireWarehouse(PgConnection& db, const std::string& name) {
  return GetWarehouseRead(db, name).status();
}

Status RequireNamespace(PgConnection& db, const std::string& warehouse, const NamespaceLevels& levels) {
  return GetNamespaceRead(db, warehouse, levels).status();
}

// Runs a statement whose only parameter ($1) is a name.
Status RunForName(PgConnection& db, const std::string& sql, const std::string& name) {
  return db.Query(sql, {PgParam::Text(name)}).status();
}

// Runs a query whose parameters are $1 warehouse and $2 an encoded namespace path.
Result<bool> HasRowsInNamespace(PgConnection& db, const std::string& sql, const std::string& warehouse,
                                const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query(sql, {PgParam::Text(warehouse), PgParam::Bytes(path)}));
  return !rows.empty();
}

// The kind of whatever entity holds `name` in the namespace, if any.
Result<std::optional<EntityKind>> LoadEntityKind(PgConnection& db, const std::string& warehouse,
                                                 const std::string& path, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query("SELECT kind FROM entities WHERE warehouse = $1 AND namespace = $2 AND name = $3",
                            {PgParam::Text(warehouse), PgParam::Bytes(path), PgParam::Bytes(name)}));
  if (rows.empty()) return std::optional<EntityKind>();
  return std::optional<EntityKind>(rows.Int(0, 0) == EntityKindCode(EntityKind::kView) ? EntityKind::kView
                                                                                       : EntityKind::kTable);
}

Status NameTaken(EntityKind holder, const NamespaceLevels& levels, const std::string& name) {
  return Error(ErrorCode::kAlreadyExists,
               std::string("a ") + EntityKindName(holder) + " already exists: " + DisplayName(levels, name));
}

// Writes the row with its location key (NULL for a location outside the warehouse, which only a
// row from before locations were confined holds: it keeps it through a rename).
Status WriteEntityRow(PgConnection& db, const EntityRecord& entity, bool replace) {
  std::string sql =
      "INSERT INTO entities(warehouse, namespace, name, kind, uuid, location, metadata_location, created_ms, "
      "updated_ms, location_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
  if (replace) {
    sql +=
        " ON CONFLICT (warehouse, namespace, name) DO UPDATE SET kind = EXCLUDED.kind, uuid = EXCLUDED.uuid, "
        "location = EXCLUDED.location, metadata_location = EXCLUDED.metadata_location, "
        "created_ms = EXCLUDED.created_ms, updated_ms = EXCLUDED.updated_ms, location_key = "
        "EXCLUDED.location_key";
  }
  std::optional<std::string> key = LocationKeyIn(entity.warehouse, entity.location);
  return db
      .Query(sql, {PgParam::Text(entity.warehouse), PgParam::Bytes(EncodeNamespacePath(entity.levels)),
                   PgParam::Bytes(entity.name), PgParam::Int(EntityKindCode(entity.kind)),
                   PgParam::Text(entity.uuid), PgParam::Text(entity.location),
                   PgParam::Text(entity.metadata_location), PgParam::Int(entity.created_ms),
                   PgParam::Int(entity.updated_ms), key ? PgParam::Text(*key) : PgParam::NullText()})
      .status();
}

// The entity a row found by a location or uuid query names, for messages. Columns: namespace,
// name, kind.
std::string RowDisplayName(const PgRows& rows) {
  const bool view = rows.Int(0, 2) == EntityKindCode(EntityKind::kView);
  return std::string(view ? "view " : "table ") +
         DisplayName(DecodeNamespacePath(rows.Text(0, 0)), rows.Text(0, 1));
}

Status Overlaps(std::string_view what, const std::string& location, const std::string& other) {
  return Error(ErrorCode::kValidationFailed,
               std::string(what) + " location " + location + " overlaps " + other +
                   ": every table and view owns its location and everything below it alone");
}

// The entity (other than `self`, by namespace path and name) whose owned key is `key`, is below
// it, or is above it; and the namespace whose default location is at or below it. Each is one
// index lookup: the ancestors of "a/b/c" are "a" and "a/b".
Status CheckLocationFree(PgConnection& db, const std::string& warehouse, const std::string& self_path,
                         const std::string& self_name, std::string_view what, const std::string& location,
                         const std::string& key) {
  // '0' follows '/': the keys below "a" are those from "a/" up to, not including, "a0".
  SERAC_ASSIGN_OR_RETURN(
      PgRows at_or_below,
      db.Query("SELECT namespace, name, kind, location FROM entities WHERE warehouse = $1 AND "
               "(location_key = $2 OR (location_key >= ($2 || '/') AND location_key < ($2 || '0'))) AND "
               "NOT (namespace = $3 AND name = $4) LIMIT 1",
               {PgParam::Text(warehouse), PgParam::Text(key), PgParam::Bytes(self_path),
                PgParam::Bytes(self_name)}));
  if (!at_or_below.empty()) {
    return Overlaps(what, location, RowDisplayName(at_or_below) + "'s " + at_or_below.Text(0, 3));
  }
  for (size_t slash = key.find('/'); slash != std::string::npos; slash = key.find('/', slash + 1)) {
    SERAC_ASSIGN_OR_RETURN(
        PgRows above, db.Query("SELECT namespace, name, kind, location FROM entities WHERE warehouse = $1 "
                               "AND location_key = $2 AND NOT (namespace = $3 AND name = $4) LIMIT 1",
                               {PgParam::Text(warehouse), PgParam::Text(key.substr(0, slash)),
                                PgParam::Bytes(self_path), PgParam::Bytes(self_name)}));
    if (!above.empty()) return Overlaps(what, location, RowDisplayName(above) + "'s " + above.Text(0, 3));
  }
  SERAC_ASSIGN_OR_RETURN(
      PgRows namespaces,
      db.Query("SELECT path FROM namespaces WHERE warehouse = $1 AND "
               "(location_key = $2 OR (location_key >= ($2 || '/') AND location_key < ($2 || '0'))) LIMIT 1",
               {PgParam::Text(warehouse), PgParam::Text(key)}));
  if (!namespaces.empty()) {
    std::string levels;
    for (const std::string& level : DecodeNamespacePath(namespaces.Text(0, 0)))
      levels += (levels.empty() ? "" : ".") + level;
    return Overlaps(what, location, "the default location of namespace " + levels);
  }
  return Status::Ok();
}

// An entity's location must be a key in its warehouse's bucket that no other entity or namespace
// claims (meta/catalog_locations.h).
Status CheckEntityLocation(PgConnection& db, const EntityRecord& entity) {
  const std::string what =
      std::string(EntityKindName(entity.kind)) + " " + DisplayName(entity.levels, entity.name);
  std::optional<std::string> key = LocationKeyIn(entity.warehouse, entity.location);
  if (!key) {
    return Error(ErrorCode::kValidationFailed, what + ": location " + entity.location +
                                                   " is not a location inside warehouse " + entity.warehouse +
                                                   " (s3://" + entity.warehouse +
                                                   "/KEY, without empty, \".\" or \"..\" segments)");
  }
  return CheckLocationFree(db, entity.warehouse, EncodeNamespacePath(entity.levels), entity.name, what,
                           entity.location, *key);
}

// Maintenance settings and job records are keyed by a table's uuid: two entities of one warehouse
// must not share one, or a table registered with another's uuid would reach its settings.
Status CheckUuidFree(PgConnection& db, const EntityRecord& entity) {
  if (entity.uuid.empty()) return Error(ErrorCode::kValidationFailed, "a table or view needs a uuid");
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("SELECT namespace, name, kind FROM entities WHERE warehouse = $1 "
               "AND uuid = $2 AND NOT (namespace = $3 AND name = $4) LIMIT 1",
               {PgParam::Text(entity.warehouse), PgParam::Text(entity.uuid),
                PgParam::Bytes(EncodeNamespacePath(entity.levels)), PgParam::Bytes(entity.name)}));
  if (rows.empty()) return Status::Ok();
  return Error(ErrorCode::kValidationFailed, "uuid " + entity.uuid + " of " + EntityKindName(entity.kind) +
                                                 " " + DisplayName(entity.levels, entity.name) +
                                                 " is already " + RowDisplayName(rows) + "'s");
}

// A namespace's default location must not be at or below a table's or view's location.
Status CheckNamespaceLocation(PgConnection& db, const NamespaceRecord& ns) {
  const std::string key = NamespaceLocationKey(ns.levels);
  for (size_t end = key.find('/');; end = key.find('/', end + 1)) {
    SERAC_ASSIGN_OR_RETURN(PgRows rows,
                           db.Query("SELECT namespace, name, kind, location FROM entities "
                                    "WHERE warehouse = $1 AND location_key = $2 LIMIT 1",
                                    {PgParam::Text(ns.warehouse), PgParam::Text(key.substr(0, end))}));
    if (!rows.empty()) {
      return Error(
          ErrorCode::kValidationFailed,
          "the default location of namespace " +
              DisplayName(NamespaceLevels(ns.levels.begin(), ns.levels.end() - 1), ns.levels.back()) +
              ", s3://" + ns.warehouse + "/" + key + ", is inside " + RowDisplayName(rows) + "'s location " +
              rows.Text(0, 3));
    }
    if (end == std::string::npos) return Status::Ok();
  }
}

Status DeleteEntityRow(PgConnection& db, const EntityId& id) {
  return db
      .Query("DELETE FROM entities WHERE warehouse = $1 AND namespace = $2 AND name = $3",
             {PgParam::Text(id.warehouse), PgParam::Bytes(EncodeNamespacePath(id.levels)),
              PgParam::Bytes(id.name)})
      .status();
}

// Checks one swap against the stored entity without changing anything.
Status CheckSwap(PgConnection& db, const MetadataSwap& swap) {
  SERAC_ASSIGN_OR_RETURN(EntityRecord current, GetEntityRead(db, swap.id));
  if (current.metadata_location == swap.expected_metadata_location) return Status::Ok();
  return Error(ErrorCode::kConflict,
               std::string(EntityKindName(swap.id.kind)) + " " + DisplayName(swap.id.levels, swap.id.name) +
                   " was changed concurrently: its metadata location is " + current.metadata_location +
                   ", not " + swap.expected_metadata_location);
}

Status ApplySwap(PgConnection& db, const MetadataSwap& swap, int64_t now_ms) {
  const std::string path = EncodeNamespacePath(swap.id.levels);
  // The compare-and-swap itself: a commit at READ COMMITTED read the row without a lock, so the
  // UPDATE matches only while the location is still the one expected (it waits for a racing
  // commit's lock, then checks again). No row: the race was lost, and running again reports it.
  SERAC_ASSIGN_OR_RETURN(
      PgRows swapped,
      db.Query("UPDATE entities SET metadata_location = $4, updated_ms = $5 "
               "WHERE warehouse = $1 AND namespace = $2 AND name = $3 AND metadata_location = $6",
               {PgParam::Text(swap.id.warehouse), PgParam::Bytes(path), PgParam::Bytes(swap.id.name),
                PgParam::Text(swap.new_metadata_location), PgParam::Int(now_ms),
                PgParam::Text(swap.expected_metadata_location)}));
  if (swapped.affected() != 1) {
    db.MarkLostRace();
    return Error(ErrorCode::kConflict,
                 DisplayName(swap.id.levels, swap.id.name) + " was changed concurrently");
  }
  if (swap.new_location.empty()) return Status::Ok();
  // The entity moves: its new location is checked as a create's would be.
  EntityRecord moved;
  moved.warehouse = swap.id.warehouse;
  moved.levels = swap.id.levels;
  moved.name = swap.id.name;
  moved.kind = swap.id.kind;
  moved.location = swap.new_location;
  SERAC_RETURN_IF_ERROR(CheckEntityLocation(db, moved));
  return db
      .Query(
          "UPDATE entities SET location = $4, location_key = $5 "
          "WHERE warehouse = $1 AND namespace = $2 AND name = $3",
          {PgParam::Text(swap.id.warehouse), PgParam::Bytes(path), PgParam::Bytes(swap.id.name),
           PgParam::Text(swap.new_location),
           PgParam::Text(*LocationKeyIn(swap.id.warehouse, swap.new_location))})
      .status();
}

// Removes a table's maintenance settings and job history, found by its uuid. A uuid is never empty
// for a table the catalog made, but an empty one must not take the warehouse's defaults with it.
Status DeleteTableMaintenance(PgConnection& db, const std::string& warehouse, const std::string& table_uuid) {
  if (table_uuid.empty()) return Status::Ok();
  for (const char* sql : {"DELETE FROM maintenance_settings WHERE warehouse = $1 AND table_uuid = $2",
                          "DELETE FROM maintenance_jobs WHERE warehouse = $1 AND table_uuid = $2"}) {
    SERAC_RETURN_IF_ERROR(db.Query(sql, {PgParam::Text(warehouse), PgParam::Text(table_uuid)}).status());
  }
  return Status::Ok();
}

Result<int64_t> InsertMaintenanceJob(PgConnection& db, const MaintenanceJobRecord& job) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("INSERT INTO maintenance_jobs(warehouse, table_uuid, type, started_ms, ended_ms, "
               "status, json) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
               {PgParam::Text(job.warehouse), PgParam::Text(job.table_uuid), PgParam::Text(job.type),
                PgParam::Int(job.started_ms), PgParam::Int(job.ended_ms), PgParam::Text(job.status),
                PgParam::Text(job.json)}));
  if (rows.empty()) return Error(ErrorCode::kInternal, "PostgreSQL returned no id for a new maintenance job");
  return rows.Int(0, 0);
}

// Drops the table's records of the job's type older than the newest kMaintenanceJobsKeptPerTable,
// so that a table maintained for years keeps a bounded history.
Status TrimMaintenanceJobs(PgConnection& db, const MaintenanceJobRecord& job) {
  return db
      .Query(
          "DELETE FROM maintenance_jobs WHERE warehouse = $1 AND table_uuid = $2 AND type = $3 "
          "AND id <= (SELECT id FROM maintenance_jobs WHERE warehouse = $1 AND table_uuid = $2 "
          "AND type = $3 ORDER BY id DESC LIMIT 1 OFFSET $4)",
          {PgParam::Text(job.warehouse), PgParam::Text(job.table_uuid), PgParam::Text(job.type),
           PgParam::Int(limits::kMaintenanceJobsKeptPerTable)})
      .status();
}

// The record's identity must match too: an id alone could name another table's job if the caller
// holds an id from before its table was dropped.
Status ReplaceMaintenanceJob(PgConnection& db, const MaintenanceJobRecord& job) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("UPDATE maintenance_jobs SET started_ms = $5, ended_ms = $6, status = $7, "
               "json = $8 WHERE id = $1 AND warehouse = $2 AND table_uuid = $3 AND type = $4",
               {PgParam::Int(job.id), PgParam::Text(job.warehouse), PgParam::Text(job.table_uuid),
                PgParam::Text(job.type), PgParam::Int(job.started_ms), PgParam::Int(job.ended_ms),
                PgParam::Text(job.status), PgParam::Text(job.json)}));
  if (rows.affected() == 0) {
    return Error(ErrorCode::kNotFound, "maintenance job does not exist: " + std::to_string(job.id));
  }
  return Status::Ok();
}

}  // namespace

Status CreateWarehouseTx(PgConnection& db, const WarehouseRecord& warehouse, bool bucket_may_exist) {
  SERAC_ASSIGN_OR_RETURN(bool exists, IsWarehouse(db, warehouse.name));
  if (exists) return Error(ErrorCode::kAlreadyExists, "warehouse already exists");
  Result<BucketRecord> bucket = GetBucketRead(db, warehouse.name);
  if (bucket.ok() && !bucket_may_exist) return Error(ErrorCode::kAlreadyExists, "bucket already exists");
  if (!bucket.ok() && bucket.status().code() != ErrorCode::kNotFound) return bucket.status();
  if (!bucket.ok())
    SERAC_RETURN_IF_ERROR(CreateBucketTx(db, BucketRecord{warehouse.name, warehouse.created_ms}));
  return db
      .Query("INSERT INTO warehouses(name, created_ms) VALUES ($1, $2)",
             {PgParam::Text(warehouse.name), PgParam::Int(warehouse.created_ms)})
      .status();
}

Status DeleteWarehouseTx(PgConnection& db, const std::string& name, bool force, bool preserve_bucket,
                         int64_t now_ms) {
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, name));
  SERAC_ASSIGN_OR_RETURN(PgRows namespaces, db.Query("SELECT 1 FROM namespaces WHERE warehouse = $1 LIMIT 1",
                                                     {PgParam::Text(name)}));
  if (!namespaces.empty() && !force) return Error(ErrorCode::kNotEmpty, "warehouse still holds namespaces");
  // Children first: the foreign keys are checked statement by statement.
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM maintenance_jobs WHERE warehouse = $1", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM maintenance_settings WHERE warehouse = $1", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM entities WHERE warehouse = $1", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM namespaces WHERE warehouse = $1", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM warehouses WHERE name = $1", name));
  if (preserve_bucket) return Status::Ok();
  return PurgeBucketTx(db, name, now_ms);
}

Status CreateNamespaceTx(PgConnection& db, const NamespaceRecord& ns) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(ns.levels));
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, ns.warehouse));
  NamespaceLevels parent(ns.levels.begin(), ns.levels.end() - 1);
  if (!parent.empty()) {
    Status parent_found = RequireNamespace(db, ns.warehouse, parent);
    if (!parent_found.ok()) return Error(parent_found.code(), "parent " + parent_found.message());
  }
  SERAC_RETURN_IF_ERROR(CheckNamespaceLocation(db, ns));
  SERAC_ASSIGN_OR_RETURN(
      PgRows inserted,
      db.Query(
          "INSERT INTO namespaces(warehouse, path, parent, last_level, properties, created_ms, location_key) "
          "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (warehouse, path) DO NOTHING",
          {PgParam::Text(ns.warehouse), PgParam::Bytes(EncodeNamespacePath(ns.levels)),
           PgParam::Bytes(EncodeNamespacePath(parent)), PgParam::Bytes(ns.levels.back()),
           PgParam::Text(EncodeNamespaceProperties(ns.properties)), PgParam::Int(ns.created_ms),
           PgParam::Text(NamespaceLocationKey(ns.levels))}));
  if (inserted.affected() == 0) return Error(ErrorCode::kAlreadyExists, "namespace already exists");
  return Status::Ok();
}

Result<NamespacePropertiesReport> UpdateNamespacePropertiesTx(PgConnection& db, const std::string& warehouse,
                                                              const NamespaceLevels& levels,
                                                              const NamespacePropertiesChange& change) {
  SERAC_ASSIGN_OR_RETURN(NamespaceRecord ns, GetNamespaceRead(db, warehouse, levels));
  SERAC_ASSIGN_OR_RETURN(NamespacePropertiesReport report, ApplyPropertiesChange(ns.properties, change));
  SERAC_RETURN_IF_ERROR(db.Query("UPDATE namespaces SET properties = $3 WHERE warehouse = $1 AND path = $2",
                                 {PgParam::Text(warehouse), PgParam::Bytes(EncodeNamespacePath(levels)),
                                  PgParam::Text(EncodeNamespaceProperties(ns.properties))})
                            .status());
  return report;
}

Status DropNamespaceTx(PgConnection& db, const std::string& warehouse, const NamespaceLevels& levels) {
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, warehouse, levels));
  const std::string path = EncodeNamespacePath(levels);
  SERAC_ASSIGN_OR_RETURN(
      bool has_entities,
      HasRowsInNamespace(db, "SELECT 1 FROM entities WHERE warehouse = $1 AND namespace = $2 LIMIT 1",
                         warehouse, path));
  if (has_entities) return Error(ErrorCode::kNotEmpty, "namespace still holds tables or views");
  SERAC_ASSIGN_OR_RETURN(
      bool has_children,
      HasRowsInNamespace(db, "SELECT 1 FROM namespaces WHERE warehouse = $1 AND parent = $2 LIMIT 1",
                         warehouse, path));
  if (has_children) return Error(ErrorCode::kNotEmpty, "namespace still holds namespaces");
  return db
      .Query("DELETE FROM namespaces WHERE warehouse = $1 AND path = $2",
             {PgParam::Text(warehouse), PgParam::Bytes(path)})
      .status();
}

Status CreateEntityTx(PgConnection& db, const EntityRecord& entity) {
  SERAC_RETURN_IF_ERROR(ValidateEntity(entity));
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, entity.warehouse, entity.levels));
  SERAC_ASSIGN_OR_RETURN(
      auto holder, LoadEntityKind(db, entity.warehouse, EncodeNamespacePath(entity.levels), entity.name));
  if (holder) return NameTaken(*holder, entity.levels, entity.name);
  SERAC_RETURN_IF_ERROR(CheckEntityLocation(db, entity));
  SERAC_RETURN_IF_ERROR(CheckUuidFree(db, entity));
  return WriteEntityRow(db, entity, false);
}

Result<EntityRecord> DropEntityTx(PgConnection& db, const EntityId& id) {
  SERAC_ASSIGN_OR_RETURN(EntityRecord entity, GetEntityRead(db, id));
  SERAC_RETURN_IF_ERROR(DeleteEntityRow(db, id));
  if (entity.kind == EntityKind::kTable)
    SERAC_RETURN_IF_ERROR(DeleteTableMaintenance(db, id.warehouse, entity.uuid));
  return entity;
}

Status RenameEntityTx(PgConnection& db, const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name) {
  SERAC_ASSIGN_OR_RETURN(EntityRecord entity, GetEntityRead(db, from));
  entity.levels = to_levels;
  entity.name = to_name;
  SERAC_RETURN_IF_ERROR(ValidateEntity(entity));
  Status target_found = RequireNamespace(db, from.warehouse, to_levels);
  if (!target_found.ok()) return Error(target_found.code(), "target " + target_found.message());
  SERAC_ASSIGN_OR_RETURN(auto holder,
                         LoadEntityKind(db, from.warehouse, EncodeNamespacePath(to_levels), to_name));
  if (holder) return NameTaken(*holder, to_levels, to_name);
  SERAC_RETURN_IF_ERROR(DeleteEntityRow(db, from));
  return WriteEntityRow(db, entity, false);
}

Status RegisterEntityTx(PgConnection& db, const EntityRecord& entity, bool overwrite) {
  SERAC_RETURN_IF_ERROR(ValidateEntity(entity));
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, entity.warehouse, entity.levels));
  SERAC_ASSIGN_OR_RETURN(
      auto holder, LoadEntityKind(db, entity.warehouse, EncodeNamespacePath(entity.levels), entity.name));
  // Overwrite replaces an entity of the same kind only: a view never silently replaces a table.
  if (holder && (!overwrite || *holder != entity.kind)) return NameTaken(*holder, entity.levels, entity.name);
  // The entity it replaces, if any, is `self` to both checks: it gives up what it owned.
  SERAC_RETURN_IF_ERROR(CheckEntityLocation(db, entity));
  SERAC_RETURN_IF_ERROR(CheckUuidFree(db, entity));
  if (holder && *holder == EntityKind::kTable) {
    SERAC_ASSIGN_OR_RETURN(
        EntityRecord replaced,
        GetEntityRead(db, EntityId{entity.warehouse, entity.levels, entity.name, EntityKind::kTable}));
    // Another table takes the name: the old one's maintenance settings and jobs are not its.
    if (replaced.uuid != entity.uuid)
      SERAC_RETURN_IF_ERROR(DeleteTableMaintenance(db, entity.warehouse, replaced.uuid));
  }
  return WriteEntityRow(db, entity, true);
}

Status SwapMetadataLocationsTx(PgConnection& db, const std::vector<MetadataSwap>& swaps, int64_t now_ms) {
  SERAC_RETURN_IF_ERROR(RejectDuplicateSwaps(swaps));
  for (const MetadataSwap& swap : swaps) SERAC_RETURN_IF_ERROR(CheckSwap(db, swap));
  for (const MetadataSwap& swap : swaps) SERAC_RETURN_IF_ERROR(ApplySwap(db, swap, now_ms));
  return Status::Ok();
}

Status CommitMetadataTx(PgConnection& db, const MetadataCommit& commit, int64_t now_ms) {
  WriteCondition never_replace;
  never_replace.if_none_match_any = true;
  // The new files and the trimmed ones share most of their texts: their use counts move together,
  // once, at the end.
  SharedTextUses uses;
  for (const ObjectRecord& file : commit.new_files)
    SERAC_RETURN_IF_ERROR(PutObjectTx(db, file, never_replace, now_ms, uses));
  for (const EntityRecord& entity : commit.created) SERAC_RETURN_IF_ERROR(CreateEntityTx(db, entity));
  if (!commit.swaps.empty()) SERAC_RETURN_IF_ERROR(SwapMetadataLocationsTx(db, commit.swaps, now_ms));
  // A trimmed file already gone is what the commit wanted.
  for (const auto& [bucket, key] : commit.removed_files) {
    Status removed = DeleteObjectTx(db, bucket, key, {}, now_ms, uses);
    if (!removed.ok() && removed.code() != ErrorCode::kNotFound) return removed;
  }
  return uses.Apply(db);
}

Status PutMaintenanceSettingTx(PgConnection& db, const MaintenanceSetting& setting) {
  SERAC_RETURN_IF_ERROR(ValidateMaintenanceSetting(setting));
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, setting.warehouse));
  return db
      .Query(
          "INSERT INTO maintenance_settings(warehouse, table_uuid, type, json, updated_ms) "
          "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (warehouse, table_uuid, type) "
          "DO UPDATE SET json = EXCLUDED.json, updated_ms = EXCLUDED.updated_ms",
          {PgParam::Text(setting.warehouse), PgParam::Text(setting.table_uuid), PgParam::Text(setting.type),
           PgParam::Text(setting.json), PgParam::Int(setting.updated_ms)})
      .status();
}

Status DeleteMaintenanceSettingTx(PgConnection& db, const std::string& warehouse,
                                  const std::string& table_uuid, const std::string& type) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows deleted, db.Query("DELETE FROM maintenance_settings "
                               "WHERE warehouse = $1 AND table_uuid = $2 AND type = $3",
                               {PgParam::Text(warehouse), PgParam::Text(table_uuid), PgParam::Text(type)}));
  if (deleted.affected() == 0) return Error(ErrorCode::kNotFound, "no maintenance settings of type " + type);
  return Status::Ok();
}

Result<int64_t> SaveMaintenanceJobTx(PgConnection& db, const MaintenanceJobRecord& job) {
  SERAC_RETURN_IF_ERROR(ValidateMaintenanceJob(job));
  if (job.id != 0) {
    SERAC_RETURN_IF_ERROR(ReplaceMaintenanceJob(db, job));
    return job.id;
  }
  SERAC_ASSIGN_OR_RETURN(int64_t id, InsertMaintenanceJob(db, job));
  SERAC_RETURN_IF_ERROR(TrimMaintenanceJobs(db, job));
  return id;
}

}  // namespace serac::meta::postgres
