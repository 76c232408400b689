#include "meta/postgres/postgres_meta_store.h"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "meta/postgres/pg_catalog_internal.h"
#include "meta/postgres/pg_engine_internal.h"
#include "meta/postgres/pg_iam_internal.h"
#include "meta/postgres/pg_objects_internal.h"
#include "meta/postgres/pg_schema_internal.h"

namespace serac::meta {
namespace postgres {
namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The database's clock in Unix epoch milliseconds: every server times leases by it.
const std::string kDatabaseNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

// A commit that creates an entity or moves one is checked against every other entity's location,
// which only SERIALIZABLE keeps true against a racing create; an ordinary commit (new metadata
// files, swaps, trimmed files) is a compare-and-swap on its own rows and runs at READ COMMITTED.
Isolation IsolationFor(const std::vector<EntityRecord>& created, const std::vector<MetadataSwap>& swaps) {
  if (!created.empty()) return Isolation::kSerializable;
  for (const MetadataSwap& swap : swaps) {
    if (!swap.new_location.empty()) return Isolation::kSerializable;
  }
  return Isolation::kReadCommitted;
}

class PostgresCatalogStore final : public CatalogStore {
 public:
  explicit PostgresCatalogStore(PgEngine& engine) : engine_(engine) {}

  Status CreateWarehouse(const WarehouseRecord& warehouse, bool bucket_may_exist) override {
    return engine_.Write(
        [&](PgConnection& db) { return CreateWarehouseTx(db, warehouse, bucket_may_exist); });
  }
  Result<WarehouseRecord> GetWarehouse(const std::string& name) override {
    return engine_.Read<WarehouseRecord>(false, [&](PgConnection& db) { return GetWarehouseRead(db, name); });
  }
  Result<std::vector<WarehouseRecord>> ListWarehouses(const std::string& start_after,
                                                      uint32_t limit) override {
    return engine_.Read<std::vector<WarehouseRecord>>(
        false, [&](PgConnection& db) { return ListWarehousesRead(db, start_after, limit); });
  }
  Status DeleteWarehouse(const std::string& name, bool force, bool preserve_bucket) override {
    return engine_.Write(
        [&](PgConnection& db) { return DeleteWarehouseTx(db, name, force, preserve_bucket, NowMillis()); });
  }

  Status CreateNamespace(const NamespaceRecord& ns) override {
    return engine_.Write([&](PgConnection& db) { return CreateNamespaceTx(db, ns); });
  }
  Result<NamespaceRecord> GetNamespace(const std::string& warehouse, const NamespaceLevels& levels) override {
    return engine_.Read<NamespaceRecord>(
        true, [&](PgConnection& db) { return GetNamespaceRead(db, warehouse, levels); });
  }
  Result<std::vector<NamespaceRecord>> ListNamespaces(const std::string& warehouse,
                                                      const NamespaceLevels& parent,
                                                      const std::string& start_after,
                                                      uint32_t limit) override {
    return engine_.Read<std::vector<NamespaceRecord>>(true, [&](PgConnection& db) {
      return ListNamespacesRead(db, warehouse, parent, start_after, limit);
    });
  }
  Result<NamespacePropertiesReport> UpdateNamespaceProperties(
      const std::string& warehouse, const NamespaceLevels& levels,
      const NamespacePropertiesChange& change) override {
    return engine_.WriteAndReturn<NamespacePropertiesReport>(
        [&](PgConnection& db) { return UpdateNamespacePropertiesTx(db, warehouse, levels, change); });
  }
  Status DropNamespace(const std::string& warehouse, const NamespaceLevels& levels) override {
    return engine_.Write([&](PgConnection& db) { return DropNamespaceTx(db, warehouse, levels); });
  }

  Status CreateEntity(const EntityRecord& entity) override {
    return engine_.Write([&](PgConnection& db) { return CreateEntityTx(db, entity); });
  }
  Result<EntityRecord> GetEntity(const EntityId& id) override {
    return engine_.Read<EntityRecord>(false, [&](PgConnection& db) { return GetEntityRead(db, id); });
  }
  Result<EntityCounts> CountEntities(const std::string& warehouse) override {
    return engine_.Read<EntityCounts>(false,
                                      [&](PgConnection& db) { return CountEntitiesRead(db, warehouse); });
  }
  Result<std::vector<EntityRecord>> ListEntities(const std::string& warehouse, const NamespaceLevels& levels,
                                                 EntityKind kind, const std::string& start_after,
                                                 uint32_t limit) override {
    return engine_.Read<std::vector<EntityRecord>>(true, [&](PgConnection& db) {
      return ListEntitiesRead(db, warehouse, levels, kind, start_after, limit);
    });
  }
  Result<EntityRecord> DropEntity(const EntityId& id) override {
    return engine_.WriteAndReturn<EntityRecord>([&](PgConnection& db) { return DropEntityTx(db, id); });
  }
  Status RenameEntity(const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name) override {
    return engine_.Write([&](PgConnection& db) { return RenameEntityTx(db, from, to_levels, to_name); });
  }
  Status RegisterEntity(const EntityRecord& entity, bool overwrite) override {
    return engine_.Write([&](PgConnection& db) { return RegisterEntityTx(db, entity, overwrite); });
  }
  Status SwapMetadataLocations(const std::vector<MetadataSwap>& swaps) override {
    if (swaps.empty()) return Status::Ok();
    const int64_t now_ms = NowMillis();
    return engine_.Write([&](PgConnection& db) { return SwapMetadataLocationsTx(db, swaps, now_ms); }, {},
                         IsolationFor({}, swaps));
  }
  // Visible and durable at once: on_visible runs once COMMIT is known to have happened.
  Status CommitMetadata(const MetadataCommit& commit) override {
    const int64_t now_ms = NowMillis();
    return engine_.Write([&](PgConnection& db) { return CommitMetadataTx(db, commit, now_ms); },
                         commit.on_visible, IsolationFor(commit.created, commit.swaps));
  }

  Status PutMaintenanceSetting(const MaintenanceSetting& setting) override {
    return engine_.Write([&](PgConnection& db) { return PutMaintenanceSettingTx(db, setting); });
  }
  Status DeleteMaintenanceSetting(const std::string& warehouse, const std::string& table_uuid,
                                  const std::string& type) override {
    return engine_.Write(
        [&](PgConnection& db) { return DeleteMaintenanceSettingTx(db, warehouse, table_uuid, type); });
  }
  Result<std::vector<MaintenanceSetting>> ListMaintenanceSettings(const std::string& warehouse,
                                                                  const std::string& table_uuid) override {
    return engine_.Read<std::vector<MaintenanceSetting>>(
        false, [&](PgConnection& db) { return ListMaintenanceSettingsRead(db, warehouse, table_uuid); });
  }
  Result<int64_t> SaveMaintenanceJob(const MaintenanceJobRecord& job) override {
    return engine_.WriteAndReturn<int64_t>([&](PgConnection& db) { return SaveMaintenanceJobTx(db, job); },
                                           Isolation::kReadCommitted);
  }
  Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobs(const std::string& warehouse,
                                                                const std::string& table_uuid,
                                                                const std::string& type,
                                                                uint32_t limit) override {
    return engine_.Read<std::vector<MaintenanceJobRecord>>(false, [&](PgConnection& db) {
      return ListMaintenanceJobsRead(db, warehouse, table_uuid, type, limit);
    });
  }

 private:
  PgEngine& engine_;
};

class PostgresIamStore final : public IamStore {
 public:
  explicit PostgresIamStore(PgEngine& engine)
      : engine_(engine), builtin_(std::make_shared<const BuiltinPolicyNames>()) {}

  void SetBuiltinPolicyNames(std::vector<std::string> names) override {
    auto builtin = std::make_shared<const BuiltinPolicyNames>(std::make_move_iterator(names.begin()),
                                                              std::make_move_iterator(names.end()));
    std::lock_guard<std::mutex> lock(builtin_mutex_);
    builtin_ = std::move(builtin);
  }

  Status CreateUser(const IamUserRecord& user) override {
    auto builtin = Builtin();
    return Write([&](PgConnection& db) { return CreateIamUserTx(db, user, *builtin); });
  }
  Status SetUserEnabled(std::string_view name, bool enabled) override {
    return Write([&](PgConnection& db) { return SetIamUserEnabledTx(db, name, enabled); });
  }
  Status DeleteUser(std::string_view name) override {
    return Write([&](PgConnection& db) { return DeleteIamUserTx(db, name); });
  }
  Status CreateAccessKey(const AccessKeyRecord& key) override {
    return Write([&](PgConnection& db) { return CreateAccessKeyTx(db, key); });
  }
  Status SetAccessKeyEnabled(std::string_view access_key, bool enabled) override {
    return Write([&](PgConnection& db) { return SetAccessKeyEnabledTx(db, access_key, enabled); });
  }
  Status DeleteAccessKey(std::string_view access_key) override {
    return Write([&](PgConnection& db) { return DeleteAccessKeyTx(db, access_key); });
  }
  Status PutPolicy(const PolicyRecord& policy) override {
    auto builtin = Builtin();
    return Write([&](PgConnection& db) { return PutPolicyTx(db, policy, *builtin); });
  }
  Status DeletePolicy(std::string_view name) override {
    auto builtin = Builtin();
    return Write([&](PgConnection& db) { return DeletePolicyTx(db, name, *builtin); });
  }
  Status AttachPolicy(std::string_view user, std::string_view policy) override {
    auto builtin = Builtin();
    return Write([&](PgConnection& db) { return AttachPolicyTx(db, user, policy, *builtin); });
  }
  Status DetachPolicy(std::string_view user, std::string_view policy) override {
    return Write([&](PgConnection& db) { return DetachPolicyTx(db, user, policy); });
  }

  Result<IamUserRecord> GetUser(std::string_view name) override {
    return engine_.Read<IamUserRecord>(true, [&](PgConnection& db) { return GetIamUserRead(db, name); });
  }
  Result<AccessKeyRecord> GetAccessKey(std::string_view access_key) override {
    return engine_.Read<AccessKeyRecord>(false,
                                         [&](PgConnection& db) { return GetAccessKeyRead(db, access_key); });
  }
  Result<PolicyRecord> GetPolicy(std::string_view name) override {
    return engine_.Read<PolicyRecord>(false, [&](PgConnection& db) { return GetPolicyRead(db, name); });
  }
  Result<IamSnapshot> LoadSnapshot() override { return engine_.Read<IamSnapshot>(true, LoadIamSnapshotRead); }
  Result<uint64_t> Generation() override { return engine_.Read<uint64_t>(false, IamGenerationRead); }

 private:
  // Every IAM write moves the generation in its own transaction, so a write that fails moves nothing.
  Status Write(const std::function<Status(PgConnection&)>& write) {
    return engine_.Write([&](PgConnection& db) -> Status {
      SERAC_RETURN_IF_ERROR(write(db));
      return BumpIamGenerationTx(db);
    });
  }

  std::shared_ptr<const BuiltinPolicyNames> Builtin() {
    std::lock_guard<std::mutex> lock(builtin_mutex_);
    return builtin_;
  }

  PgEngine& engine_;
  std::mutex builtin_mutex_;
  std::shared_ptr<const BuiltinPolicyNames> builtin_;  // guarded by builtin_mutex_; never null
};

class PostgresMetaStore final : public MetaStore {
 public:
  explicit PostgresMetaStore(std::unique_ptr<PgEngine> engine)
      : engine_(std::move(engine)), catalog_(*engine_), iam_(*engine_) {}

  CatalogStore& catalog() override { return catalog_; }
  IamStore& iam() override { return iam_; }

  std::string RenderMetrics() override {
    const PgEngineStats stats = engine_->stats();
    std::string text;
    const auto add = [&text](const char* name, const char* type, const char* help, uint64_t value) {
      text += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name +
              " " + std::to_string(value) + "\n";
    };
    add("serac_postgres_connections_open", "gauge", "Connections to PostgreSQL open, lent out or idle.",
        stats.connections_open);
    add("serac_postgres_connections_idle", "gauge", "Connections to PostgreSQL idle in the pool.",
        stats.connections_idle);
    add("serac_postgres_acquire_waits_total", "counter", "Calls that waited for a pooled connection.",
        stats.acquire_waits);
    add("serac_postgres_acquire_timeouts_total", "counter", "Calls that found no connection in time (503).",
        stats.acquire_timeouts);
    add("serac_postgres_races_lost_total", "counter", "Transactions run again after a serialization failure.",
        stats.races_lost);
    add("serac_postgres_connections_lost_total", "counter",
        "Transactions run again after their connection broke.", stats.connections_lost);
    add("serac_postgres_outcomes_looked_up_total", "counter",
        "COMMITs whose answer was lost, looked up by id.", stats.outcomes_looked_up);
    add("serac_postgres_outcomes_unknown_total", "counter",
        "Lost COMMIT answers whose outcome stayed unknown.", stats.outcomes_unknown);
    return text;
  }

  Status CreateBucket(const BucketRecord& bucket) override {
    return Write([&](PgConnection& db) { return CreateBucketTx(db, bucket); });
  }
  Result<BucketRecord> GetBucket(const std::string& name) override {
    return Read<BucketRecord>(false, [&](PgConnection& db) { return GetBucketRead(db, name); });
  }
  Result<BucketUsage> GetBucketUsage(const std::string& bucket) override {
    return Read<BucketUsage>(false, [&](PgConnection& db) { return GetBucketUsageRead(db, bucket); });
  }
  Result<std::vector<BucketRecord>> ListBuckets() override {
    return Read<std::vector<BucketRecord>>(false, ListBucketsRead);
  }
  Status DeleteBucket(const std::string& name) override {
    return Write([&](PgConnection& db) { return DeleteBucketTx(db, name); });
  }

  Result<ObjectRecord> GetObject(const std::string& bucket, const std::string& key) override {
    return Read<ObjectRecord>(false, [&](PgConnection& db) { return GetObjectRead(db, bucket, key); });
  }
  Status PutObject(const ObjectRecord& object, const WriteCondition& condition) override {
    const int64_t now_ms = NowMillis();
    return WriteRows([&](PgConnection& db) { return PutObjectTx(db, object, condition, now_ms); });
  }
  Status DeleteObject(const std::string& bucket, const std::string& key,
                      const WriteCondition& condition) override {
    const int64_t now_ms = NowMillis();
    return WriteRows([&](PgConnection& db) { return DeleteObjectTx(db, bucket, key, condition, now_ms); });
  }
  Status SetObjectTags(const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition) override {
    return WriteRows([&](PgConnection& db) { return SetObjectTagsTx(db, bucket, key, tags, condition); });
  }
  Result<std::vector<ObjectRecord>> ListObjects(const ListObjectsQuery& query) override {
    return Read<std::vector<ObjectRecord>>(true,
                                           [&](PgConnection& db) { return ListObjectsRead(db, query); });
  }

  Status CreateUpload(const UploadRecord& upload) override {
    return WriteRows([&](PgConnection& db) { return CreateUploadTx(db, upload); });
  }
  Result<UploadRecord> GetUpload(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id) override {
    return Read<UploadRecord>(false,
                              [&](PgConnection& db) { return GetUploadRead(db, bucket, key, upload_id); });
  }
  Status PutPart(const std::string& upload_id, const PartRecord& part) override {
    const int64_t now_ms = NowMillis();
    return WriteRows([&](PgConnection& db) { return PutPartTx(db, upload_id, part, now_ms); });
  }
  Result<std::vector<PartRecord>> ListParts(const std::string& upload_id, uint32_t part_number_marker,
                                            uint32_t limit) override {
    return Read<std::vector<PartRecord>>(
        true, [&](PgConnection& db) { return ListPartsRead(db, upload_id, part_number_marker, limit); });
  }
  Result<std::vector<UploadRecord>> ListUploads(const ListUploadsQuery& query) override {
    return Read<std::vector<UploadRecord>>(true,
                                           [&](PgConnection& db) { return ListUploadsRead(db, query); });
  }
  Status CompleteUpload(const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition) override {
    const int64_t now_ms = NowMillis();
    return WriteRows(
        [&](PgConnection& db) { return CompleteUploadTx(db, upload_id, object, condition, now_ms); });
  }
  Status AbortUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id) override {
    const int64_t now_ms = NowMillis();
    return WriteRows([&](PgConnection& db) { return AbortUploadTx(db, bucket, key, upload_id, now_ms); });
  }

  Result<std::vector<std::string>> PeekGarbage(uint32_t limit) override {
    return Read<std::vector<std::string>>(false,
                                          [&](PgConnection& db) { return PeekGarbageRead(db, limit); });
  }
  Status ForgetGarbage(const std::vector<std::string>& blob_ids) override {
    if (blob_ids.empty()) return Status::Ok();
    return WriteRows([&](PgConnection& db) { return ForgetGarbageTx(db, blob_ids); });
  }
  Result<bool> AcquireLease(const std::string& name, const std::string& holder,
                            std::chrono::milliseconds ttl) override {
    return engine_->WriteAndReturn<bool>(
        [&](PgConnection& db) -> Result<bool> {
          SERAC_ASSIGN_OR_RETURN(
              PgRows rows,
              db.Query("INSERT INTO leases(name, holder, expires_ms) VALUES ($1, $2, " + kDatabaseNowMs +
                           " + $3) ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, "
                           "expires_ms = EXCLUDED.expires_ms WHERE leases.holder = EXCLUDED.holder OR "
                           "leases.expires_ms <= " +
                           kDatabaseNowMs,
                       {PgParam::Text(name), PgParam::Text(holder), PgParam::Int(ttl.count())}));
          return rows.affected() > 0;
        },
        Isolation::kReadCommitted);
  }
  Status ReleaseLease(const std::string& name, const std::string& holder) override {
    return WriteRows([&](PgConnection& db) {
      return db
          .Query("DELETE FROM leases WHERE name = $1 AND holder = $2",
                 {PgParam::Text(name), PgParam::Text(holder)})
          .status();
    });
  }
  Status ForgetExpiredLeases(const std::string& prefix) override {
    return WriteRows([&](PgConnection& db) {
      return db
          .Query("DELETE FROM leases WHERE left(name, $2::integer) = $1 AND expires_ms <= " + kDatabaseNowMs,
                 {PgParam::Text(prefix), PgParam::Int(static_cast<int64_t>(prefix.size()))})
          .status();
    });
  }
  Result<std::optional<LeaseRecord>> GetLease(const std::string& name) override {
    return Read<std::optional<LeaseRecord>>(
        false, [&](PgConnection& db) -> Result<std::optional<LeaseRecord>> {
          SERAC_ASSIGN_OR_RETURN(PgRows rows,
                                 db.Query("SELECT holder, expires_ms FROM leases WHERE name = $1 AND "
                                          "expires_ms > " +
                                              kDatabaseNowMs,
                                          {PgParam::Text(name)}));
          if (rows.empty()) return std::optional<LeaseRecord>();
          return std::optional<LeaseRecord>(LeaseRecord{name, rows.Text(0, 0), rows.Int(0, 1)});
        });
  }

  Status ForEachReferencedBlob(const std::function<Status(const std::string&)>& visit) override {
    Result<bool> done = Read<bool>(true, [&](PgConnection& db) -> Result<bool> {
      SERAC_RETURN_IF_ERROR(ForEachReferencedBlobRead(db, visit));
      return true;
    });
    return done.status();
  }

 private:
  Status Write(const PgEngine::Work& write) { return engine_->Write(write); }
  // Object writes, uploads, the GC queue and leases: row locks and keys order them (Isolation).
  Status WriteRows(const PgEngine::Work& write) {
    return engine_->Write(write, {}, Isolation::kReadCommitted);
  }
  template <typename T>
  Result<T> Read(bool snapshot, const std::function<Result<T>(PgConnection&)>& read) {
    return engine_->Read<T>(snapshot, read);
  }

  std::unique_ptr<PgEngine> engine_;
  PostgresCatalogStore catalog_;
  PostgresIamStore iam_;
};

}  // namespace
}  // namespace postgres

Result<std::unique_ptr<MetaStore>> OpenPostgresMetaStore(const PostgresOptions& options) {
  auto engine = std::make_unique<postgres::PgEngine>(options.conninfo, limits::kPostgresConnectionsMax);
  SERAC_RETURN_IF_ERROR(postgres::MigrateSchema(*engine));
  return std::unique_ptr<MetaStore>(std::make_unique<postgres::PostgresMetaStore>(std::move(engine)));
}

}  // namespace serac::meta
