// The body of every CatalogStore call on SQLite. Reads run on a reader connection (inside one read
// transaction when they issue more than one statement); writes run on the writer inside a
// savepoint of a group commit and, like sqlite_writes_internal.h, never clean up after an error:
// the caller rolls the savepoint back.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/catalog_store.h"
#include "meta/meta_records_internal.h"
#include "meta/sqlite/sqlite_db_internal.h"
#include "meta/sqlite/sqlite_writes_internal.h"

namespace serac::meta::sqlite {

// kNotFound unless the warehouse / the namespace (by encoded path) exists.
Status RequireWarehouse(Connection& db, const std::string& name);
Status RequireNamespace(Connection& db, const std::string& warehouse, const std::string& path);

// The listing queries, exposed so a test can check that SQLite answers them with index range scans.
// Namespaces: ?1 warehouse, ?2 parent path, ?3 start_after, ?4 limit.
std::string ListNamespacesSql();
// Entities: ?1 warehouse, ?2 namespace path, ?3 kind, ?4 start_after, ?5 limit.
std::string ListEntitiesSql();

// A table's maintenance jobs, newest first: ?1 warehouse, ?2 table uuid, ?3 limit, and ?4 the type
// unless `every_type`.
std::string ListMaintenanceJobsSql(bool every_type);

Result<bool> IsWarehouse(Connection& db, const std::string& name);

Result<WarehouseRecord> GetWarehouseRead(Connection& db, const std::string& name);
Result<std::vector<WarehouseRecord>> ListWarehousesRead(Connection& db, const std::string& start_after,
                                                        uint32_t limit);
Result<NamespaceRecord> GetNamespaceRead(Connection& db, const std::string& warehouse,
                                         const NamespaceLevels& levels);
Result<std::vector<NamespaceRecord>> ListNamespacesRead(Connection& db, const std::string& warehouse,
                                                        const NamespaceLevels& parent,
                                                        const std::string& start_after, uint32_t limit);
Result<EntityRecord> GetEntityRead(Connection& db, const EntityId& id);
Result<EntityCounts> CountEntitiesRead(Connection& db, const std::string& warehouse);
Result<std::vector<EntityRecord>> ListEntitiesRead(Connection& db, const std::string& warehouse,
                                                   const NamespaceLevels& levels, EntityKind kind,
                                                   const std::string& start_after, uint32_t limit);
Result<std::vector<MaintenanceSetting>> ListMaintenanceSettingsRead(Connection& db,
                                                                    const std::string& warehouse,
                                                                    const std::string& table_uuid);
Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobsRead(Connection& db,
                                                                  const std::string& warehouse,
                                                                  const std::string& table_uuid,
                                                                  const std::string& type, uint32_t limit);

Status CreateWarehouseTx(Connection& db, const WarehouseRecord& warehouse, bool bucket_may_exist);
Status DeleteWarehouseTx(Connection& db, const std::string& name, bool force, bool preserve_bucket,
                         int64_t now_ms);
Status CreateNamespaceTx(Connection& db, const NamespaceRecord& ns);
Result<NamespacePropertiesReport> UpdateNamespacePropertiesTx(Connection& db, const std::string& warehouse,
                                                              const NamespaceLevels& levels,
                                                              const NamespacePropertiesChange& change);
Status DropNamespaceTx(Connection& db, const std::string& warehouse, const NamespaceLevels& levels);
Status CreateEntityTx(Connection& db, const EntityRecord& entity);
Result<EntityRecord> DropEntityTx(Connection& db, const EntityId& id);
Status RenameEntityTx(Connection& db, const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name);
Status RegisterEntityTx(Connection& db, const EntityRecord& entity, bool overwrite);
Status SwapMetadataLocationsTx(Connection& db, const std::vector<MetadataSwap>& swaps, int64_t now_ms);
// `new_file_inline`: EncodeInlineBytes of each of commit.new_files, in order.
Status CommitMetadataTx(Connection& db, const MetadataCommit& commit,
                        const std::vector<InlineBytes>& new_file_inline, int64_t now_ms);
Status PutMaintenanceSettingTx(Connection& db, const MaintenanceSetting& setting);
Status DeleteMaintenanceSettingTx(Connection& db, const std::string& warehouse, const std::string& table_uuid,
                                  const std::string& type);
// Returns the job's id: the new one when job.id is 0.
Result<int64_t> SaveMaintenanceJobTx(Connection& db, const MaintenanceJobRecord& job);

}  // namespace serac::meta::sqlite
