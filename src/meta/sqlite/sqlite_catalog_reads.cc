#include <nlohmann/json.hpp>
#include <utility>

#include "meta/sqlite/sqlite_catalog_internal.h"

namespace serac::meta::sqlite {
namespace {

// Entity columns as read by GetEntityRead and ListEntitiesRead (after warehouse and namespace).
constexpr const char* kEntityColumns =
    "name, kind, uuid, location, metadata_location, created_ms, updated_ms";

EntityKind KindFromCode(int64_t code) { return code == 1 ? EntityKind::kView : EntityKind::kTable; }

EntityRecord ReadEntityColumns(const Statement& row, const std::string& warehouse,
                               const NamespaceLevels& levels) {
  EntityRecord entity;
  entity.warehouse = warehouse;
  entity.levels = levels;
  entity.name = row.Blob(0);
  entity.kind = KindFromCode(row.Int(1));
  entity.uuid = row.Text(2);
  entity.location = row.Text(3);
  entity.metadata_location = row.Text(4);
  entity.created_ms = row.Int(5);
  entity.updated_ms = row.Int(6);
  return entity;
}

// Columns: path, properties, created_ms.
Result<NamespaceRecord> ReadNamespaceColumns(const Statement& row, const std::string& warehouse) {
  NamespaceRecord ns;
  ns.warehouse = warehouse;
  ns.levels = DecodeNamespacePath(row.Blob(0));
  SERAC_ASSIGN_OR_RETURN(ns.properties, DecodeNamespaceProperties(row.Text(1)));
  ns.created_ms = row.Int(2);
  return ns;
}

Status RequireNamespaceOrWarehouse(Connection& db, const std::string& warehouse,
                                   const NamespaceLevels& levels) {
  if (levels.empty()) return RequireWarehouse(db, warehouse);
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(levels));
  return RequireNamespace(db, warehouse, EncodeNamespacePath(levels));
}

}  // namespace

Status RequireWarehouse(Connection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(bool found, IsWarehouse(db, name));
  if (!found) return Error(ErrorCode::kNotFound, "warehouse does not exist");
  return Status::Ok();
}

Status RequireNamespace(Connection& db, const std::string& warehouse, const std::string& path) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT 1 FROM namespaces WHERE warehouse = ?1 AND path = ?2;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, warehouse).BindBlob(2, path).Step());
  if (!found) return Error(ErrorCode::kNotFound, "namespace does not exist");
  return Status::Ok();
}

std::string ListNamespacesSql() {
  return "SELECT path, properties, created_ms FROM namespaces "
         "WHERE warehouse = ?1 AND parent = ?2 AND last_level > ?3 ORDER BY last_level LIMIT ?4;";
}

std::string ListEntitiesSql() {
  // Without statistics SQLite prefers the primary key (no second lookup per row), which would step
  // over every entity of the other kind; the kind index bounds the scan to the rows returned.
  return std::string("SELECT ") + kEntityColumns +
         " FROM entities INDEXED BY entities_by_kind WHERE warehouse = ?1 AND namespace = ?2 AND kind = ?3 "
         "AND name > ?4 "
         "ORDER BY name LIMIT ?5;";
}

std::string ListMaintenanceJobsSql(bool every_type) {
  // Every type: at most kMaintenanceJobsKeptPerTable rows per type are kept, so sorting the
  // table's rows of all types is bounded; one type reads its index range backwards, unsorted.
  return std::string(
             "SELECT id, type, started_ms, ended_ms, status, json FROM maintenance_jobs "
             "WHERE warehouse = ?1 AND table_uuid = ?2") +
         (every_type ? "" : " AND type = ?4") + " ORDER BY id DESC LIMIT ?3;";
}

Result<bool> IsWarehouse(Connection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT 1 FROM warehouses WHERE name = ?1;"));
  return stmt->BindText(1, name).Step();
}

Result<WarehouseRecord> GetWarehouseRead(Connection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT created_ms FROM warehouses WHERE name = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, name).Step());
  if (!found) return Error(ErrorCode::kNotFound, "warehouse does not exist");
  return WarehouseRecord{name, stmt->Int(0)};
}

Result<std::vector<WarehouseRecord>> ListWarehousesRead(Connection& db, const std::string& start_after,
                                                        uint32_t limit) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT name, created_ms FROM warehouses WHERE name > ?1 "
                                               "ORDER BY name LIMIT ?2;"));
  stmt->BindText(1, start_after).BindInt(2, limit);
  std::vector<WarehouseRecord> warehouses;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return warehouses;
    warehouses.push_back(WarehouseRecord{stmt->Text(0), stmt->Int(1)});
  }
}

Result<NamespaceRecord> GetNamespaceRead(Connection& db, const std::string& warehouse,
                                         const NamespaceLevels& levels) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(levels));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT path, properties, created_ms FROM namespaces "
                                               "WHERE warehouse = ?1 AND path = ?2;"));
  SERAC_ASSIGN_OR_RETURN(bool found,
                         stmt->BindText(1, warehouse).BindBlob(2, EncodeNamespacePath(levels)).Step());
  if (!found) return Error(ErrorCode::kNotFound, "namespace does not exist");
  return ReadNamespaceColumns(*stmt, warehouse);
}

Result<std::vector<NamespaceRecord>> ListNamespacesRead(Connection& db, const std::string& warehouse,
                                                        const NamespaceLevels& parent,
                                                        const std::string& start_after, uint32_t limit) {
  SERAC_RETURN_IF_ERROR(RequireNamespaceOrWarehouse(db, warehouse, parent));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(ListNamespacesSql()));
  stmt->BindText(1, warehouse).BindBlob(2, EncodeNamespacePath(parent)).BindBlob(3, start_after);
  stmt->BindInt(4, limit);
  std::vector<NamespaceRecord> namespaces;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return namespaces;
    SERAC_ASSIGN_OR_RETURN(NamespaceRecord ns, ReadNamespaceColumns(*stmt, warehouse));
    namespaces.push_back(std::move(ns));
  }
}

Result<EntityRecord> GetEntityRead(Connection& db, const EntityId& id) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(id.levels));
  std::string sql = std::string("SELECT ") + kEntityColumns +
                    " FROM entities WHERE warehouse = ?1 AND namespace = ?2 AND name = ?3;";
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  stmt->BindText(1, id.warehouse).BindBlob(2, EncodeNamespacePath(id.levels)).BindBlob(3, id.name);
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->Step());
  EntityRecord entity;
  if (found) entity = ReadEntityColumns(*stmt, id.warehouse, id.levels);
  if (!found || entity.kind != id.kind) {
    return Error(ErrorCode::kNotFound, std::string(EntityKindName(id.kind)) + " does not exist: " + id.name);
  }
  return entity;
}

Result<EntityCounts> CountEntitiesRead(Connection& db, const std::string& warehouse) {
  SERAC_RETURN_IF_ERROR(RequireWarehouse(db, warehouse));
  SERAC_ASSIGN_OR_RETURN(
      auto stmt, db.Prepare("SELECT kind, count(*) FROM entities WHERE warehouse = ?1 GROUP BY kind;"));
  stmt->BindText(1, warehouse);
  EntityCounts counts;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return counts;
    const uint64_t count = static_cast<uint64_t>(stmt->Int(1));
    (KindFromCode(stmt->Int(0)) == EntityKind::kView ? counts.views : counts.tables) += count;
  }
}

Result<std::vector<EntityRecord>> ListEntitiesRead(Connection& db, const std::string& warehouse,
                                                   const NamespaceLevels& levels, EntityKind kind,
                                                   const std::string& start_after, uint32_t limit) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(levels));
  SERAC_RETURN_IF_ERROR(RequireNamespace(db, warehouse, EncodeNamespacePath(levels)));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(ListEntitiesSql()));
  stmt->BindText(1, warehouse).BindBlob(2, EncodeNamespacePath(levels)).BindInt(3, EntityKindCode(kind));
  stmt->BindBlob(4, start_after).BindInt(5, limit);
  std::vector<EntityRecord> entities;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return entities;
    entities.push_back(ReadEntityColumns(*stmt, warehouse, levels));
  }
}

Result<std::vector<MaintenanceSetting>> ListMaintenanceSettingsRead(Connection& db,
                                                                    const std::string& warehouse,
                                                                    const std::string& table_uuid) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT type, json, updated_ms FROM maintenance_settings "
                                               "WHERE warehouse = ?1 AND table_uuid = ?2 ORDER BY type;"));
  stmt->BindText(1, warehouse).BindText(2, table_uuid);
  std::vector<MaintenanceSetting> settings;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return settings;
    settings.push_back(MaintenanceSetting{warehouse, table_uuid, stmt->Text(0), stmt->Text(1), stmt->Int(2)});
  }
}

Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobsRead(Connection& db,
                                                                  const std::string& warehouse,
                                                                  const std::string& table_uuid,
                                                                  const std::string& type, uint32_t limit) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(ListMaintenanceJobsSql(type.empty())));
  stmt->BindText(1, warehouse).BindText(2, table_uuid).BindInt(3, limit);
  if (!type.empty()) stmt->BindText(4, type);
  std::vector<MaintenanceJobRecord> jobs;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return jobs;
    MaintenanceJobRecord job;
    job.id = stmt->Int(0);
    job.warehouse = warehouse;
    job.table_uuid = table_uuid;
    job.type = stmt->Text(1);
    job.started_ms = stmt->Int(2);
    job.ended_ms = stmt->Int(3);
    job.status = stmt->Text(4);
    job.json = stmt->Text(5);
    jobs.push_back(std::move(job));
  }
}

}  // namespace serac::meta::sqlite
