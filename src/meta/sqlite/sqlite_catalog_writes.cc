#include <optional>
#include <set>
#include <utility>

#include "common/limits.h"
#include "meta/catalog_locations.h"
#include "meta/sqlite/sqlite_catalog_internal.h"
#include "meta/sqlite/sqlite_reads_internal.h"
#include "meta/sqlite/sqlite_writes_internal.h"

namespace serac::meta::sqlite {
namespace {

// Runs a statement whose only parameter (?1) is a name.
Status RunForName(Connection& db, const std::string& sql, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, name).Run();
}

Result<bool> HasRowsForName(Connection& db, const std::string& sql, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, name).Step();
}

// Runs a statement whose parameters are ?1 warehouse and ?2 an encoded namespace path.
Result<bool> HasRowsInNamespace(Connection& db, const std::string& sql, const std::string& warehouse,
                                const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, warehouse).BindBlob(2, path).Step();
}

// The kind of whatever entity holds `name` in the namespace, if any.
Result<std::optional<EntityKind>> LoadEntityKind(Connection& db, const std::string& warehouse,
                                                 const std::string& path, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT kind FROM entities "
                                               "WHERE warehouse = ?1 AND namespace = ?2 AND name = ?3;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, warehouse).BindBlob(2, path).BindBlob(3, name).Step());
  if (!found) return std::optional<EntityKind>();
  return std::optional<EntityKind>(stmt->Int(0) == EntityKindCode(EntityKind::kView) ? EntityKind::kView
                                                                                     : EntityKind::kTable);
}

Status NameTaken(EntityKind holder, const NamespaceLevels& levels, const std::string& name) {
  return Error(ErrorCode::kAlreadyExists,
               std::string("a ") + EntityKindName(holder) + " already exists: " + DisplayName(levels, name));
}

// Writes the row with its location key (NULL for a location outside the warehouse, which only a
// row from before locations were confined holds: it keeps it through a rename).
Status WriteEntityRow(Connection& db, const EntityRecord& entity, bool replace) {
  std::string sql = replace ? "INSERT OR REPLACE" : "INSERT";
  sql +=
      " INTO entities(warehouse, namespace, name, kind, uuid, location, metadata_location, created_ms, "
      "updated_ms, location_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10);";
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  stmt->BindText(1, entity.warehouse)
      .BindBlob(2, EncodeNamespacePath(entity.levels))
      .BindBlob(3, entity.name);
  stmt->BindInt(4, EntityKindCode(entity.kind)).BindText(5, entity.uuid).BindText(6, entity.location);
  stmt->BindText(7, entity.metadata_location).BindInt(8, entity.created_ms).BindInt(9, entity.updated_ms);
  if (std::optional<std::string> key = LocationKeyIn(entity.warehouse, entity.location)) {
    stmt->BindText(10, *key);
  } else {
    stmt->BindNull(10);
  }
  return stmt->Run();
}

// The entity a row found by a location or uuid query names, for messages.
std::string RowDisplayName(Statement& stmt) {
  const bool view = stmt.Int(2) == EntityKindCode(EntityKind::kView);
  return std::string(view ? "view " : "table ") +
         DisplayName(DecodeNamespacePath(stmt.Blob(0)), stmt.Blob(1));
}

Status Overlaps(std::string_view what, const std::string& location, const std::string& other) {
  return Error(ErrorCode::kValidationFailed,
               std::string(what) + " location " + location + " overlaps " + other +
                   ": every table and view owns its location and everything below it alone");
}

// The entity (other than `self`, by namespace path and name) whose owned key is `key`, is below
// it, or (unless `only_at_or_below`) is above it; and the namespace whose default location is at
// or below it. Each is one index lookup: the ancestors of "a/b/c" are "a" and "a/b".
Status CheckLocationFree(Connection& db, const std::string& warehouse, const std::string& self_path,
                         const std::string& self_name, std::string_view what, const std::string& location,
                         const std::string& key) {
  SERAC_ASSIGN_OR_RETURN(
      auto at_or_below,
      db.Prepare("SELECT namespace, name, kind, location FROM entities WHERE warehouse = ?1 AND "
                 "(location_key = ?2 OR (location_key >= ?2 || '/' AND location_key < ?2 || '0')) AND "
                 "NOT (namespace = ?3 AND name = ?4) LIMIT 1;"));
  at_or_below->BindText(1, warehouse).BindText(2, key).BindBlob(3, self_path).BindBlob(4, self_name);
  SERAC_ASSIGN_OR_RETURN(bool found, at_or_below->Step());
  if (found) return Overlaps(what, location, RowDisplayName(*at_or_below) + "'s " + at_or_below->Text(3));
  for (size_t slash = key.find('/'); slash != std::string::npos; slash = key.find('/', slash + 1)) {
    SERAC_ASSIGN_OR_RETURN(
        auto above, db.Prepare("SELECT namespace, name, kind, location FROM entities WHERE warehouse = ?1 "
                               "AND location_key = ?2 AND NOT (namespace = ?3 AND name = ?4) LIMIT 1;"));
    above->BindText(1, warehouse)
        .BindText(2, key.substr(0, slash))
        .BindBlob(3, self_path)
        .BindBlob(4, self_name);
    SERAC_ASSIGN_OR_RETURN(bool inside, above->Step());
    if (inside) return Overlaps(what, location, RowDisplayName(*above) + "'s " + above->Text(3));
  }
  SERAC_ASSIGN_OR_RETURN(
      auto namespaces,
      db.Prepare("SELECT path FROM namespaces WHERE warehouse = ?1 AND "
                 "(location_key = ?2 OR (location_key >= ?2 || '/' AND location_key < ?2 || '0')) LIMIT 1;"));
  SERAC_ASSIGN_OR_RETURN(bool holds_namespace, namespaces->BindText(1, warehouse).BindText(2, key).Step());
  if (holds_namespace) {
    std::string levels;
    for (const std::string& level : DecodeNamespacePath(namespaces->Blob(0)))
      levels += (levels.empty() ? "" : ".") + level;
    return Overlaps(what, location, "the default location of namespace " + levels);
  }
  return Status::Ok();
}

// An entity's location must be a key in its warehouse's bucket that no other entity or namespace
// claims (meta/catalog_locations.h).
Status CheckEntityLocation(Connection& db, const EntityRecord& entity) {
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
Status CheckUuidFree(Connection& db, const EntityRecord& entity) {
  if (entity.uuid.empty()) return Error(ErrorCode::kValidationFailed, "a table or view needs a uuid");
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT namespace, name, kind FROM entities WHERE warehouse = ?1 "
                                    "AND uuid = ?2 AND NOT (namespace = ?3 AND name = ?4) LIMIT 1;"));
  stmt->BindText(1, entity.warehouse).BindText(2, entity.uuid);
  stmt->BindBlob(3, EncodeNamespacePath(entity.levels)).BindBlob(4, entity.name);
  SERAC_ASSIGN_OR_RETURN(bool taken, stmt->Step());
  if (!taken) return Status::Ok();
  return Error(ErrorCode::kValidationFailed, "uuid " + entity.uuid + " of " + EntityKindName(entity.kind) +
                                                 " " + DisplayName(entity.levels, entity.name) +
                                                 " is already " + RowDisplayName(*stmt) + "'s");
}

// A namespace's default location must not be at or below a table's or view's location.
Status CheckNamespaceLocation(Connection& db, const NamespaceRecord& ns) {
  const std::string key = NamespaceLocationKey(ns.levels);
  for (size_t end = key.find('/');; end = key.find('/', end + 1)) {
    SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT namespace, name, kind, location FROM entities "
                                                 "WHERE warehouse = ?1 AND location_key = ?2 LIMIT 1;"));
    SERAC_ASSIGN_OR_RETURN(bool owned,
                           stmt->BindText(1, ns.warehouse).BindText(2, key.substr(0, end)).Step());
    if (owned) {
      return Error(
          ErrorCode::kValidationFailed,
          "the default location of namespace " +
              DisplayName(NamespaceLevels(ns.levels.begin(), ns.levels.end() - 1), ns.levels.back()) +
              ", s3://" + ns.warehouse + "/" + key + ", is inside " + RowDisplayName(*stmt) + "'s location " +
              stmt->Text(3));
    }
    if (end == std::string::npos) return Status::Ok();
  }
}

Status DeleteEntityRow(Connection& db, const EntityId& id) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM entities "
                                               "WHERE warehouse = ?1 AND namespace = ?2 AND name = ?3;"));
  return stmt->BindText(1, id.warehouse)
      .BindBlob(2, EncodeNamespacePath(id.levels))
      .BindBlob(3, id.name)
      .Run();
}

// Checks one swap against the stored entity without changing anything.
Status CheckSwap(Connection& db, const MetadataSwap& swap) {
  SERAC_ASSIGN_OR_RETURN(EntityRecord current, GetEntityRead(db, swap.id));
  if (current.metadata_location == swap.expected_metadata_location) return Status::Ok();
  return Error(ErrorCode::kConflict,
               std::string(EntityKindName(swap.id.kind)) + " " + DisplayName(swap.id.levels, swap.id.name) +
                   " was changed concurrently: its metadata location is " + current.metadata_location +
                   ", not " + swap.expected_metadata_location);
}

Status ApplySwap(Connection& db, const MetadataSwap& swap, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("UPDATE entities SET metadata_location = ?4, updated_ms = ?5 "
                                               "WHERE warehouse = ?1 AND namespace = ?2 AND name = ?3;"));
  stmt->BindText(1, swap.id.warehouse).BindBlob(2, EncodeNamespacePath(swap.id.levels));
  stmt->BindBlob(3, swap.id.name).BindText(4, swap.new_metadata_location).BindInt(5, now_ms);
  SERAC_RETURN_IF_ERROR(stmt->Run());
  if (swap.new_location.empty()) return Status::Ok();
  // The entity moves: its new location is checked as a create's would be.
  EntityRecord moved;
  moved.warehouse = swap.id.warehouse;
  moved.levels = swap.id.levels;
  moved.name = swap.id.name;
  moved.kind = swap.id.kind;
  moved.location = swap.new_location;
  SERAC_RETURN_IF_ERROR(CheckEntityLocation(db, moved));
  SERAC_ASSIGN_OR_RETURN(auto relocate, db.Prepare("UPDATE entities SET location = ?4, location_key = ?5 "
                                                   "WHERE warehouse = ?1 AND namespace = ?2 AND name = ?3;"));
  relocate->BindText(1, swap.id.warehouse).BindBlob(2, EncodeNamespacePath(swap.id.levels));
  relocate->BindBlob(3, swap.id.name).BindText(4, swap.new_location);
  return relocate->BindText(5, *LocationKeyIn(swap.id.warehouse, swap.new_location)).Run();
}

// Removes a table's maintenance settings and job history, found by its uuid. A uuid is never empty
// for a table the catalog made, but an empty one must not take the warehouse's defaults with it.
Status DeleteTableMaintenance(Connection& db, const std::string& warehouse, const std::string& table_uuid) {
  if (table_uuid.empty()) return Status::Ok();
  for (const char* sql : {"DELETE FROM maintenance_settings WHERE warehouse = ?1 AND table_uuid = ?2;",
                          "DELETE FROM maintenance_jobs WHERE warehouse = ?1 AND table_uuid = ?2;"}) {
    SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
    SERAC_RETURN_IF_ERROR(stmt->BindText(1, warehouse).BindText(2, table_uuid).Run());
  }
  return Status::Ok();
}

Result<int64_t> InsertMaintenanceJob(Connection& db, const MaintenanceJobRecord& job) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("INSERT INTO maintenance_jobs(warehouse, table_uuid, type, started_ms, "
                                    "ended_ms, status, json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);"));
  stmt->BindText(1, job.warehouse).BindText(2, job.table_uuid).BindText(3, job.type);
  stmt->BindInt(4, job.started_ms).BindInt(5, job.ended_ms).BindText(6, job.status).BindText(7, job.json);
  SERAC_RETURN_IF_ERROR(stmt->Run());
  return db.LastInsertRowId();
}

// Drops the table's records of the job's type older than the newest kMaintenanceJobsKeptPerTable,
// so that a table maintained for years keeps a bounded history.
Status TrimMaintenanceJobs(Connection& db, const MaintenanceJobRecord& job) {
  SERAC_ASSIGN_OR_RETURN(
      auto stmt,
      db.Prepare("DELETE FROM maintenance_jobs WHERE warehouse = ?1 AND table_uuid = ?2 AND type = ?3 "
                 "AND id <= (SELECT id FROM maintenance_jobs WHERE warehouse = ?1 AND table_uuid = ?2 "
                 "AND type = ?3 ORDER BY id DESC LIMIT 1 OFFSET ?4);"));
  stmt->BindText(1, job.warehouse).BindText(2, job.table_uuid).BindText(3, job.type);
  return stmt->BindInt(4, limits::kMaintenanceJobsKeptPerTable).Run();
}

// The record's identity must match too: an id alone could name another table's job if the caller
// holds an id from before its table was dropped.
Status ReplaceMaintenanceJob(Connection& db, const MaintenanceJobRecord& job) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("UPDATE maintenance_jobs SET started_ms = ?5, ended_ms = ?6, "
                                               "status = ?7, json = ?8 WHERE id = ?1 AND warehouse = ?2 AND "
                                               "table_uuid = ?3 AND type = ?4;"));
  stmt->BindInt(1, job.id).BindText(2, job.warehouse).BindText(3, job.table_uuid).BindText(4, job.type);
  stmt->BindInt(5, job.started_ms).BindInt(6, job.ended_ms).BindText(7, job.status).BindText(8, job.json);
  SERAC_RETURN_IF_ERROR(stmt->Run());
  if (db.Changes() == 0) {
    return Error(ErrorCode::kNotFound, "maintenance job does not exist: " + std::to_string(job.id));
  }
  return Status::Ok();
}

}  // namespace

Status CreateWarehouseTx(Connection& db, const WarehouseRecord& warehouse, bool bucket_may_exist) {
  SERAC_ASSIGN_OR_RETURN(bool exists, IsWarehouse(db, warehouse.name));
  if (exists) return Error(ErrorCode::kAlreadyExists, "warehouse already exists");
  Result<BucketRecord> bucket = GetBucketRead(db, warehouse.name);
  if (bucket.ok() && !bucket_may_exist) return Error(ErrorCode::kAlreadyExists, "bucket already exists");
  if (!bucket.ok() && bucket.status().code() != ErrorCode::kNotFound) return bucket.status();
  if (!bucket.ok())
    SERAC_RETURN_IF_ERROR(CreateBucketTx(db, BucketRecord{warehouse.name, warehouse.created_ms}));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT INTO warehouses(name, created_ms) VALUES (?1, ?2);"));
  return stmt->BindText(1, warehouse.name).BindInt(2, warehouse.created_ms).Run();
}

Status DeleteWarehouseTx(Connection& db, const std::string& name, bool force, bool preserve_bucket,
                         int64_t now_ms) {
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, name));
  SERAC_ASSIGN_OR_RETURN(bool has_namespaces,
                         HasRowsForName(db, "SELECT 1 FROM namespaces WHERE warehouse = ?1 LIMIT 1;", name));
  if (has_namespaces && !force) return Error(ErrorCode::kNotEmpty, "warehouse still holds namespaces");
  // Children first: the foreign keys are checked statement by statement.
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM maintenance_jobs WHERE warehouse = ?1;", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM maintenance_settings WHERE warehouse = ?1;", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM entities WHERE warehouse = ?1;", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM namespaces WHERE warehouse = ?1;", name));
  SERAC_RETURN_IF_ERROR(RunForName(db, "DELETE FROM warehouses WHERE name = ?1;", name));
  if (preserve_bucket) return Status::Ok();
  return PurgeBucketTx(db, name, now_ms);
}

Status CreateNamespaceTx(Connection& db, const NamespaceRecord& ns) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(ns.levels));
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, ns.warehouse));
  NamespaceLevels parent(ns.levels.begin(), ns.levels.end() - 1);
  if (!parent.empty()) {
    Status parent_found = RequireNamespace(db, ns.warehouse, EncodeNamespacePath(parent));
    if (!parent_found.ok()) return Error(parent_found.code(), "parent " + parent_found.message());
  }
  SERAC_RETURN_IF_ERROR(CheckNamespaceLocation(db, ns));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT OR IGNORE INTO namespaces(warehouse, path, parent, "
                                               "last_level, properties, created_ms, location_key) "
                                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);"));
  stmt->BindText(1, ns.warehouse).BindBlob(2, EncodeNamespacePath(ns.levels));
  stmt->BindBlob(3, EncodeNamespacePath(parent)).BindBlob(4, ns.levels.back());
  stmt->BindText(5, EncodeNamespaceProperties(ns.properties)).BindInt(6, ns.created_ms);
  stmt->BindText(7, NamespaceLocationKey(ns.levels));
  SERAC_RETURN_IF_ERROR(stmt->Run());
  if (db.Changes() == 0) return Error(ErrorCode::kAlreadyExists, "namespace already exists");
  return Status::Ok();
}

Result<NamespacePropertiesReport> UpdateNamespacePropertiesTx(Connection& db, const std::string& warehouse,
                                                              const NamespaceLevels& levels,
                                                              const NamespacePropertiesChange& change) {
  SERAC_ASSIGN_OR_RETURN(NamespaceRecord ns, GetNamespaceRead(db, warehouse, levels));
  SERAC_ASSIGN_OR_RETURN(NamespacePropertiesReport report, ApplyPropertiesChange(ns.properties, change));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("UPDATE namespaces SET properties = ?3 "
                                               "WHERE warehouse = ?1 AND path = ?2;"));
  stmt->BindText(1, warehouse).BindBlob(2, EncodeNamespacePath(levels));
  SERAC_RETURN_IF_ERROR(stmt->BindText(3, EncodeNamespaceProperties(ns.properties)).Run());
  return report;
}

Status DropNamespaceTx(Connection& db, const std::string& warehouse, const NamespaceLevels& levels) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(levels));
  const std::string path = EncodeNamespacePath(levels);
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, warehouse, path));
  SERAC_ASSIGN_OR_RETURN(
      bool has_entities,
      HasRowsInNamespace(db, "SELECT 1 FROM entities WHERE warehouse = ?1 AND namespace = ?2 LIMIT 1;",
                         warehouse, path));
  if (has_entities) return Error(ErrorCode::kNotEmpty, "namespace still holds tables or views");
  SERAC_ASSIGN_OR_RETURN(
      bool has_children,
      HasRowsInNamespace(db, "SELECT 1 FROM namespaces WHERE warehouse = ?1 AND parent = ?2 LIMIT 1;",
                         warehouse, path));
  if (has_children) return Error(ErrorCode::kNotEmpty, "namespace still holds namespaces");
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM namespaces WHERE warehouse = ?1 AND path = ?2;"));
  return stmt->BindText(1, warehouse).BindBlob(2, path).Run();
}

Status CreateEntityTx(Connection& db, const EntityRecord& entity) {
  SERAC_RETURN_IF_ERROR(ValidateEntity(entity));
  const std::string path = EncodeNamespacePath(entity.levels);
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, entity.warehouse, path));
  SERAC_ASSIGN_OR_RETURN(auto holder, LoadEntityKind(db, entity.warehouse, path, entity.name));
  if (holder) return NameTaken(*holder, entity.levels, entity.name);
  SERAC_RETURN_IF_ERROR(CheckEntityLocation(db, entity));
  SERAC_RETURN_IF_ERROR(CheckUuidFree(db, entity));
  return WriteEntityRow(db, entity, false);
}

Result<EntityRecord> DropEntityTx(Connection& db, const EntityId& id) {
  SERAC_ASSIGN_OR_RETURN(EntityRecord entity, GetEntityRead(db, id));
  SERAC_RETURN_IF_ERROR(DeleteEntityRow(db, id));
  if (entity.kind == EntityKind::kTable)
    SERAC_RETURN_IF_ERROR(DeleteTableMaintenance(db, id.warehouse, entity.uuid));
  return entity;
}

Status RenameEntityTx(Connection& db, const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name) {
  SERAC_ASSIGN_OR_RETURN(EntityRecord entity, GetEntityRead(db, from));
  entity.levels = to_levels;
  entity.name = to_name;
  SERAC_RETURN_IF_ERROR(ValidateEntity(entity));
  const std::string to_path = EncodeNamespacePath(to_levels);
  Status target_found = RequireNamespace(db, from.warehouse, to_path);
  if (!target_found.ok()) return Error(target_found.code(), "target " + target_found.message());
  SERAC_ASSIGN_OR_RETURN(auto holder, LoadEntityKind(db, from.warehouse, to_path, to_name));
  if (holder) return NameTaken(*holder, to_levels, to_name);
  SERAC_RETURN_IF_ERROR(DeleteEntityRow(db, from));
  return WriteEntityRow(db, entity, false);
}

Status RegisterEntityTx(Connection& db, const EntityRecord& entity, bool overwrite) {
  SERAC_RETURN_IF_ERROR(ValidateEntity(entity));
  const std::string path = EncodeNamespacePath(entity.levels);
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, entity.warehouse, path));
  SERAC_ASSIGN_OR_RETURN(auto holder, LoadEntityKind(db, entity.warehouse, path, entity.name));
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

Status SwapMetadataLocationsTx(Connection& db, const std::vector<MetadataSwap>& swaps, int64_t now_ms) {
  SERAC_RETURN_IF_ERROR(RejectDuplicateSwaps(swaps));
  for (const MetadataSwap& swap : swaps) SERAC_RETURN_IF_ERROR(CheckSwap(db, swap));
  for (const MetadataSwap& swap : swaps) SERAC_RETURN_IF_ERROR(ApplySwap(db, swap, now_ms));
  return Status::Ok();
}

Status CommitMetadataTx(Connection& db, const MetadataCommit& commit,
                        const std::vector<InlineBytes>& new_file_inline, int64_t now_ms) {
  if (new_file_inline.size() != commit.new_files.size()) {
    return Error(ErrorCode::kInternal, "a commit's new files and their inline bytes do not match");
  }
  WriteCondition never_replace;
  never_replace.if_none_match_any = true;
  // The new files and the trimmed ones share most of their history pieces: counted together, only
  // the pieces whose use count really changes are updated.
  SharedTextUses uses;
  for (size_t i = 0; i < commit.new_files.size(); ++i) {
    SERAC_RETURN_IF_ERROR(
        PutObjectTx(db, commit.new_files[i], new_file_inline[i], never_replace, now_ms, uses));
  }
  for (const EntityRecord& entity : commit.created) SERAC_RETURN_IF_ERROR(CreateEntityTx(db, entity));
  if (!commit.swaps.empty()) SERAC_RETURN_IF_ERROR(SwapMetadataLocationsTx(db, commit.swaps, now_ms));
  for (const auto& [bucket, key] : commit.removed_files) {
    Status removed = DeleteObjectTx(db, bucket, key, {}, now_ms, uses);
    if (!removed.ok() && removed.code() != ErrorCode::kNotFound) return removed;
  }
  return uses.Apply(db);
}

Status PutMaintenanceSettingTx(Connection& db, const MaintenanceSetting& setting) {
  SERAC_RETURN_IF_ERROR(ValidateMaintenanceSetting(setting));
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, setting.warehouse));
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("INSERT OR REPLACE INTO maintenance_settings(warehouse, "
                                    "table_uuid, type, json, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5);"));
  stmt->BindText(1, setting.warehouse).BindText(2, setting.table_uuid).BindText(3, setting.type);
  return stmt->BindText(4, setting.json).BindInt(5, setting.updated_ms).Run();
}

Status DeleteMaintenanceSettingTx(Connection& db, const std::string& warehouse, const std::string& table_uuid,
                                  const std::string& type) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM maintenance_settings "
                                               "WHERE warehouse = ?1 AND table_uuid = ?2 AND type = ?3;"));
  SERAC_RETURN_IF_ERROR(stmt->BindText(1, warehouse).BindText(2, table_uuid).BindText(3, type).Run());
  if (db.Changes() == 0) return Error(ErrorCode::kNotFound, "no maintenance settings of type " + type);
  return Status::Ok();
}

Result<int64_t> SaveMaintenanceJobTx(Connection& db, const MaintenanceJobRecord& job) {
  SERAC_RETURN_IF_ERROR(ValidateMaintenanceJob(job));
  if (job.id != 0) {
    SERAC_RETURN_IF_ERROR(ReplaceMaintenanceJob(db, job));
    return job.id;
  }
  SERAC_ASSIGN_OR_RETURN(int64_t id, InsertMaintenanceJob(db, job));
  SERAC_RETURN_IF_ERROR(TrimMaintenanceJobs(db, job));
  return id;
}

}  // namespace serac::meta::sqlite
