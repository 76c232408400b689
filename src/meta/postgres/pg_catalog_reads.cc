#include <utility>

#include "meta/meta_records_internal.h"
#include "meta/postgres/pg_catalog_internal.h"

namespace serac::meta::postgres {
namespace {

// Entity columns as read by GetEntityRead and ListEntitiesRead.
constexpr const char* kEntityColumns =
    "name, kind, uuid, location, metadata_location, created_ms, updated_ms";

EntityKind KindFromCode(int64_t code) {
  return code == EntityKindCode(EntityKind::kView) ? EntityKind::kView : EntityKind::kTable;
}

EntityRecord ReadEntityColumns(const PgRows& rows, int row, const std::string& warehouse,
                               const NamespaceLevels& levels) {
  EntityRecord entity;
  entity.warehouse = warehouse;
  entity.levels = levels;
  entity.name = rows.Text(row, 0);
  entity.kind = KindFromCode(rows.Int(row, 1));
  entity.uuid = rows.Text(row, 2);
  entity.location = rows.Text(row, 3);
  entity.metadata_location = rows.Text(row, 4);
  entity.created_ms = rows.Int(row, 5);
  entity.updated_ms = rows.Int(row, 6);
  return entity;
}

// Columns: path, properties, created_ms.
Result<NamespaceRecord> ReadNamespaceColumns(const PgRows& rows, int row, const std::string& warehouse) {
  NamespaceRecord ns;
  ns.warehouse = warehouse;
  ns.levels = DecodeNamespacePath(rows.Text(row, 0));
  SERAC_ASSIGN_OR_RETURN(ns.properties, DecodeNamespaceProperties(rows.Text(row, 1)));
  ns.created_ms = rows.Int(row, 2);
  return ns;
}

// The empty list names the warehouse itself, the parent of top-level namespaces.
Status RequireNamespaceOrWarehouse(PgConnection& db, const std::string& warehouse,
                                   const NamespaceLevels& levels) {
  if (levels.empty()) return GetWarehouseRead(db, warehouse).status();
  return GetNamespaceRead(db, warehouse, levels).status();
}

std::string ListMaintenanceJobsSql(bool every_type) {
  // Every type: at most kMaintenanceJobsKeptPerTable rows per type are kept, so sorting the
  // table's rows of all types is bounded; one type reads its index range backwards, unsorted.
  return std::string(
             "SELECT id, type, started_ms, ended_ms, status, json FROM maintenance_jobs "
             "WHERE warehouse = $1 AND table_uuid = $2") +
         (every_type ? "" : " AND type = $4") + " ORDER BY id DESC LIMIT $3";
}

}  // namespace

Result<bool> IsWarehouse(PgConnection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT 1 FROM warehouses WHERE name = $1", {PgParam::Text(name)}));
  return !rows.empty();
}

Result<WarehouseRecord> GetWarehouseRead(PgConnection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query("SELECT created_ms FROM warehouses WHERE name = $1", {PgParam::Text(name)}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "warehouse does not exist");
  return WarehouseRecord{name, rows.Int(0, 0)};
}

Result<std::vector<WarehouseRecord>> ListWarehousesRead(PgConnection& db, const std::string& start_after,
                                                        uint32_t limit) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query("SELECT name, created_ms FROM warehouses WHERE name > $1 ORDER BY name LIMIT $2",
                            {PgParam::Text(start_after), PgParam::Int(limit)}));
  std::vector<WarehouseRecord> warehouses;
  warehouses.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row)
    warehouses.push_back(WarehouseRecord{rows.Text(row, 0), rows.Int(row, 1)});
  return warehouses;
}

Result<NamespaceRecord> GetNamespaceRead(PgConnection& db, const std::string& warehouse,
                                         const NamespaceLevels& levels) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(levels));
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT path, properties, created_ms FROM namespaces "
                                  "WHERE warehouse = $1 AND path = $2",
                                  {PgParam::Text(warehouse), PgParam::Bytes(EncodeNamespacePath(levels))}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "namespace does not exist");
  return ReadNamespaceColumns(rows, 0, warehouse);
}

Result<std::vector<NamespaceRecord>> ListNamespacesRead(PgConnection& db, const std::string& warehouse,
                                                        const NamespaceLevels& parent,
                                                        const std::string& start_after, uint32_t limit) {
  SERAC_RETURN_IF_ERROR(RequireNamespaceOrWarehouse(db, warehouse, parent));
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("SELECT path, properties, created_ms FROM namespaces "
               "WHERE warehouse = $1 AND parent = $2 AND last_level > $3 ORDER BY last_level LIMIT $4",
               {PgParam::Text(warehouse), PgParam::Bytes(EncodeNamespacePath(parent)),
                PgParam::Bytes(start_after), PgParam::Int(limit)}));
  std::vector<NamespaceRecord> namespaces;
  namespaces.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    SERAC_ASSIGN_OR_RETURN(NamespaceRecord ns, ReadNamespaceColumns(rows, row, warehouse));
    namespaces.push_back(std::move(ns));
  }
  return namespaces;
}

Result<EntityRecord> GetEntityRead(PgConnection& db, const EntityId& id) {
  SERAC_RETURN_IF_ERROR(ValidateNamespaceLevels(id.levels));
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query(std::string("SELECT ") + kEntityColumns +
                                " FROM entities WHERE warehouse = $1 AND namespace = $2 AND name = $3",
                            {PgParam::Text(id.warehouse), PgParam::Bytes(EncodeNamespacePath(id.levels)),
                             PgParam::Bytes(id.name)}));
  EntityRecord entity;
  if (!rows.empty()) entity = ReadEntityColumns(rows, 0, id.warehouse, id.levels);
  if (rows.empty() || entity.kind != id.kind) {
    return Error(ErrorCode::kNotFound, std::string(EntityKindName(id.kind)) + " does not exist: " + id.name);
  }
  return entity;
}

Result<EntityCounts> CountEntitiesRead(PgConnection& db, const std::string& warehouse) {
  SERAC_RETURN_IF_ERROR(GetWarehouseRead(db, warehouse).status());
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("SELECT kind::bigint, count(*)::bigint FROM entities WHERE warehouse = $1 GROUP BY kind",
               {PgParam::Text(warehouse)}));
  EntityCounts counts;
  for (int row = 0; row < rows.size(); ++row) {
    const uint64_t count = static_cast<uint64_t>(rows.Int(row, 1));
    (KindFromCode(rows.Int(row, 0)) == EntityKind::kView ? counts.views : counts.tables) += count;
  }
  return counts;
}

Result<std::vector<EntityRecord>> ListEntitiesRead(PgConnection& db, const std::string& warehouse,
                                                   const NamespaceLevels& levels, EntityKind kind,
                                                   const std::string& start_after, uint32_t limit) {
  SERAC_RETURN_IF_ERROR(GetNamespaceRead(db, warehouse, levels).status());
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query(std::string("SELECT ") + kEntityColumns +
                   " FROM entities WHERE warehouse = $1 AND namespace = $2 AND kind = $3 AND name > $4 "
                   "ORDER BY name LIMIT $5",
               {PgParam::Text(warehouse), PgParam::Bytes(EncodeNamespacePath(levels)),
                PgParam::Int(EntityKindCode(kind)), PgParam::Bytes(start_after), PgParam::Int(limit)}));
  std::vector<EntityRecord> entities;
  entities.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row)
    entities.push_back(ReadEntityColumns(rows, row, warehouse, levels));
  return entities;
}

Result<std::vector<MaintenanceSetting>> ListMaintenanceSettingsRead(PgConnection& db,
                                                                    const std::string& warehouse,
                                                                    const std::string& table_uuid) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT type, json, updated_ms FROM maintenance_settings "
                                               "WHERE warehouse = $1 AND table_uuid = $2 ORDER BY type",
                                               {PgParam::Text(warehouse), PgParam::Text(table_uuid)}));
  std::vector<MaintenanceSetting> settings;
  settings.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    settings.push_back(
        MaintenanceSetting{warehouse, table_uuid, rows.Text(row, 0), rows.Text(row, 1), rows.Int(row, 2)});
  }
  return settings;
}

Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobsRead(PgConnection& db,
                                                                  const std::string& warehouse,
                                                                  const std::string& table_uuid,
                                                                  const std::string& type, uint32_t limit) {
  PgParams params = {PgParam::Text(warehouse), PgParam::Text(table_uuid), PgParam::Int(limit)};
  if (!type.empty()) params.push_back(PgParam::Text(type));
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query(ListMaintenanceJobsSql(type.empty()), params));
  std::vector<MaintenanceJobRecord> jobs;
  jobs.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    MaintenanceJobRecord job;
    job.id = rows.Int(row, 0);
    job.warehouse = warehouse;
    job.table_uuid = table_uuid;
    job.type = rows.Text(row, 1);
    job.started_ms = rows.Int(row, 2);
    job.ended_ms = rows.Int(row, 3);
    job.status = rows.Text(row, 4);
    job.json = rows.Text(row, 5);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace serac::meta::postgres
