// The body of every CatalogStore call on PostgreSQL. Writes run inside a transaction of
// PgEngine::Write and, like pg_objects_internal.h, never clean up after an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/catalog_store.h"
#include "meta/meta_store.h"
#include "meta/postgres/pg_connection_internal.h"

namespace serac::meta::postgres {

Result<bool> IsWarehouse(PgConnection& db, const std::string& name);

Result<WarehouseRecord> GetWarehouseRead(PgConnection& db, const std::string& name);
Result<std::vector<WarehouseRecord>> ListWarehousesRead(PgConnection& db, const std::string& start_after,
                                                        uint32_t limit);
Result<NamespaceRecord> GetNamespaceRead(PgConnection& db, const std::string& warehouse,
                                         const NamespaceLevels& levels);
Result<std::vector<NamespaceRecord>> ListNamespacesRead(PgConnection& db, const std::string& warehouse,
                                                        const NamespaceLevels& parent,
                                                        const std::string& start_after, uint32_t limit);
Result<EntityRecord> GetEntityRead(PgConnection& db, const EntityId& id);
Result<EntityCounts> CountEntitiesRead(PgConnection& db, const std::string& warehouse);
Result<std::vector<EntityRecord>> ListEntitiesRead(PgConnection& db, const std::string& warehouse,
                                                   const NamespaceLevels& levels, EntityKind kind,
                                                   const std::string& start_after, uint32_t limit);
Result<std::vector<MaintenanceSetting>> ListMaintenanceSettingsRead(PgConnection& db,
                                                                    const std::string& warehouse,
                                                                    const std::string& table_uuid);
Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobsRead(PgConnection& db,
                                                                  const std::string& warehouse,
                                                                  const std::string& table_uuid,
                                                                  const std::string& type, uint32_t limit);

Status CreateWarehouseTx(PgConnection& db, const WarehouseRecord& warehouse, bool bucket_may_exist);
Status DeleteWarehouseTx(PgConnection& db, const std::string& name, bool force, bool preserve_bucket,
                         int64_t now_ms);
Status CreateNamespaceTx(PgConnection& db, const NamespaceRecord& ns);
Result<NamespacePropertiesReport> UpdateNamespacePropertiesTx(PgConnection& db, const std::string& warehouse,
                                                              const NamespaceLevels& levels,
                                                              const NamespacePropertiesChange& change);
Status DropNamespaceTx(PgConnection& db, const std::string& warehouse, const NamespaceLevels& levels);
Status CreateEntityTx(PgConnection& db, const EntityRecord& entity);
Result<EntityRecord> DropEntityTx(PgConnection& db, const EntityId& id);
Status RenameEntityTx(PgConnection& db, const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name);
Status RegisterEntityTx(PgConnection& db, const EntityRecord& entity, bool overwrite);
Status SwapMetadataLocationsTx(PgConnection& db, const std::vector<MetadataSwap>& swaps, int64_t now_ms);
Status CommitMetadataTx(PgConnection& db, const MetadataCommit& commit, int64_t now_ms);
Status PutMaintenanceSettingTx(PgConnection& db, const MaintenanceSetting& setting);
Status DeleteMaintenanceSettingTx(PgConnection& db, const std::string& warehouse,
                                  const std::string& table_uuid, const std::string& type);
// Returns the job's id: the new one when job.id is 0.
Result<int64_t> SaveMaintenanceJobTx(PgConnection& db, const MaintenanceJobRecord& job);

}  // namespace serac::meta::postgres
