#include "meta/sqlite/sqlite_meta_store.h"

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "meta/sqlite/catalog_read_cache_internal.h"
#include "meta/sqlite/group_commit_internal.h"
#include "meta/sqlite/sqlite_catalog_internal.h"
#include "meta/sqlite/sqlite_db_internal.h"
#include "meta/sqlite/sqlite_iam_internal.h"
#include "meta/sqlite/sqlite_meta_store_internal.h"
#include "meta/sqlite/sqlite_reads_internal.h"
#include "meta/sqlite/sqlite_schema_internal.h"
#include "meta/sqlite/sqlite_writes_internal.h"
#include "meta/sqlite/wal_checkpointer_internal.h"
#include "meta/sqlite/wal_file_internal.h"

namespace serac::meta {
namespace sqlite {
namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Read connections, handed out one per concurrent reader. In WAL mode readers never wait for
// the writer, so a reader blocks only on this pool's short mutex.
class ReaderPool {
 public:
  explicit ReaderPool(ConnectionOptions options) : options_(std::move(options)) {}

  Result<std::unique_ptr<Connection>> Acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        std::unique_ptr<Connection> connection = std::move(idle_.back());
        idle_.pop_back();
        return connection;
      }
    }
    return Connection::Open(options_);
  }

  void Release(std::unique_ptr<Connection> connection) {
    // A read that failed half-way may leave its transaction open; never hand that on.
    if (connection->InTransaction() && !connection->Exec("ROLLBACK;").ok()) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < limits::kMetaIdleReadConnectionsMax) idle_.push_back(std::move(connection));
  }

 private:
  const ConnectionOptions options_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mutex_
};

// The connections every call runs on: writes through group commit, reads on the reader pool.
// Shared by the MetaStore and its CatalogStore so both are one database and one writer.
class Engine {
 public:
  // `checkpointer` already took over the writer's checkpoints (WalCheckpointer::Start).
  Engine(std::unique_ptr<Connection> writer, ConnectionOptions reader_options,
         std::unique_ptr<WalCheckpointer> checkpointer, GroupCommitter::LogSync sync_log)
      : readers_(std::move(reader_options)),
        checkpointer_(std::move(checkpointer)),
        committer_(std::move(writer), limits::kMetaWriteBatchMax, std::move(sync_log)) {}

  GroupCommitStats stats() const { return committer_.stats(); }

  Status Write(const GroupCommitter::Write& write) { return committer_.Run(write); }
  // See GroupCommitter::Run with `on_visible`.
  Status Write(const GroupCommitter::Write& write, const std::function<void()>& on_visible) {
    return committer_.Run(write, on_visible);
  }

  // `snapshot`: run inside one read transaction, for reads of more than one statement.
  template <typename T>
  Result<T> Read(bool snapshot, const std::function<Result<T>(Connection&)>& read) {
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<Connection> db, readers_.Acquire());
    Result<T> result = snapshot ? RunInReadTransaction<T>(*db, read) : read(*db);
    readers_.Release(std::move(db));
    return result;
  }

  // A write that also produces a value: the value is kept only if the write committed.
  template <typename T>
  Result<T> WriteAndReturn(const std::function<Result<T>(Connection&)>& write) {
    std::optional<T> value;
    Status status = Write([&](Connection& db) -> Status {
      Result<T> result = write(db);
      if (!result.ok()) return result.status();
      value = std::move(result).value();
      return Status::Ok();
    });
    if (!status.ok()) return status;
    return std::move(*value);
  }

 private:
  ReaderPool readers_;
  // Declared before the committer so that it is destroyed after it: the writer's hook calls it
  // until the writer is closed.
  std::unique_ptr<WalCheckpointer> checkpointer_;
  GroupCommitter committer_;
};

class SqliteCatalogStore final : public CatalogStore {
 public:
  explicit SqliteCatalogStore(Engine& engine) : engine_(engine) {}

  Status CreateWarehouse(const WarehouseRecord& warehouse, bool bucket_may_exist) override {
    return WriteWarehouses(
        [&](Connection& db) { return CreateWarehouseTx(db, warehouse, bucket_may_exist); });
  }
  Result<WarehouseRecord> GetWarehouse(const std::string& name) override {
    return cache_.Warehouse(name, [&] {
      return engine_.Read<WarehouseRecord>(false, [&](Connection& db) { return GetWarehouseRead(db, name); });
    });
  }
  Result<std::vector<WarehouseRecord>> ListWarehouses(const std::string& start_after,
                                                      uint32_t limit) override {
    return engine_.Read<std::vector<WarehouseRecord>>(
        false, [&](Connection& db) { return ListWarehousesRead(db, start_after, limit); });
  }
  Status DeleteWarehouse(const std::string& name, bool force, bool preserve_bucket) override {
    return WriteWarehouses(
        [&](Connection& db) { return DeleteWarehouseTx(db, name, force, preserve_bucket, NowMillis()); });
  }

  Status CreateNamespace(const NamespaceRecord& ns) override {
    return Write([&](Connection& db) { return CreateNamespaceTx(db, ns); });
  }
  Result<NamespaceRecord> GetNamespace(const std::string& warehouse, const NamespaceLevels& levels) override {
    return engine_.Read<NamespaceRecord>(
        false, [&](Connection& db) { return GetNamespaceRead(db, warehouse, levels); });
  }
  Result<std::vector<NamespaceRecord>> ListNamespaces(const std::string& warehouse,
                                                      const NamespaceLevels& parent,
                                                      const std::string& start_after,
                                                      uint32_t limit) override {
    return engine_.Read<std::vector<NamespaceRecord>>(
        true, [&](Connection& db) { return ListNamespacesRead(db, warehouse, parent, start_after, limit); });
  }
  Result<NamespacePropertiesReport> UpdateNamespaceProperties(
      const std::string& warehouse, const NamespaceLevels& levels,
      const NamespacePropertiesChange& change) override {
    return WriteAndReturn<NamespacePropertiesReport>(
        [&](Connection& db) { return UpdateNamespacePropertiesTx(db, warehouse, levels, change); });
  }
  Status DropNamespace(const std::string& warehouse, const NamespaceLevels& levels) override {
    return Write([&](Connection& db) { return DropNamespaceTx(db, warehouse, levels); });
  }

  Status CreateEntity(const EntityRecord& entity) override {
    return Write([&](Connection& db) { return CreateEntityTx(db, entity); });
  }
  Result<EntityRecord> GetEntity(const EntityId& id) override {
    return cache_.Entity(id, [&] {
      return engine_.Read<EntityRecord>(false, [&](Connection& db) { return GetEntityRead(db, id); });
    });
  }
  Result<EntityCounts> CountEntities(const std::string& warehouse) override {
    return engine_.Read<EntityCounts>(false,
                                      [&](Connection& db) { return CountEntitiesRead(db, warehouse); });
  }
  Result<std::vector<EntityRecord>> ListEntities(const std::string& warehouse, const NamespaceLevels& levels,
                                                 EntityKind kind, const std::string& start_after,
                                                 uint32_t limit) override {
    return engine_.Read<std::vector<EntityRecord>>(true, [&](Connection& db) {
      return ListEntitiesRead(db, warehouse, levels, kind, start_after, limit);
    });
  }
  Result<EntityRecord> DropEntity(const EntityId& id) override {
    return WriteAndReturn<EntityRecord>([&](Connection& db) { return DropEntityTx(db, id); });
  }
  Status RenameEntity(const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name) override {
    return Write([&](Connection& db) { return RenameEntityTx(db, from, to_levels, to_name); });
  }
  Status RegisterEntity(const EntityRecord& entity, bool overwrite) override {
    return Write([&](Connection& db) { return RegisterEntityTx(db, entity, overwrite); });
  }
  Status SwapMetadataLocations(const std::vector<MetadataSwap>& swaps) override {
    if (swaps.empty()) return Status::Ok();
    return Write([&](Connection& db) { return SwapMetadataLocationsTx(db, swaps, NowMillis()); });
  }
  Status CommitMetadata(const MetadataCommit& commit) override {
    const int64_t now_ms = NowMillis();
    std::vector<InlineBytes> new_file_inline;  // compressed here, before the write is queued
    new_file_inline.reserve(commit.new_files.size());
    for (const ObjectRecord& file : commit.new_files) new_file_inline.push_back(EncodeInlineBytes(file));
    // Visible before durable: the cached rows change then, so that a commit the caller lets start
    // from this one (on_visible) reads the rows as they now are.
    Status status =
        engine_.Write([&](Connection& db) { return CommitMetadataTx(db, commit, new_file_inline, now_ms); },
                      [&] {
                        CommitToCache(commit, now_ms);
                        if (commit.on_visible) commit.on_visible();
                      });
    if (!status.ok()) cache_.WriteCommitted();
    return status;
  }

  // Maintenance rows are not cached and change no cached row, so their writes go straight to the
  // engine: saving a job as it starts and again as it ends must not empty the entity cache.
  Status PutMaintenanceSetting(const MaintenanceSetting& setting) override {
    return engine_.Write([&](Connection& db) { return PutMaintenanceSettingTx(db, setting); });
  }
  Status DeleteMaintenanceSetting(const std::string& warehouse, const std::string& table_uuid,
                                  const std::string& type) override {
    return engine_.Write(
        [&](Connection& db) { return DeleteMaintenanceSettingTx(db, warehouse, table_uuid, type); });
  }
  Result<std::vector<MaintenanceSetting>> ListMaintenanceSettings(const std::string& warehouse,
                                                                  const std::string& table_uuid) override {
    return engine_.Read<std::vector<MaintenanceSetting>>(
        false, [&](Connection& db) { return ListMaintenanceSettingsRead(db, warehouse, table_uuid); });
  }
  Result<int64_t> SaveMaintenanceJob(const MaintenanceJobRecord& job) override {
    return engine_.WriteAndReturn<int64_t>([&](Connection& db) { return SaveMaintenanceJobTx(db, job); });
  }
  Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobs(const std::string& warehouse,
                                                                const std::string& table_uuid,
                                                                const std::string& type,
                                                                uint32_t limit) override {
    return engine_.Read<std::vector<MaintenanceJobRecord>>(false, [&](Connection& db) {
      return ListMaintenanceJobsRead(db, warehouse, table_uuid, type, limit);
    });
  }

 private:
  // A commit changes only the rows it swaps (and creates): every other table's row stays cached,
  // and the swapped ones change in the cache as they did in the database (ApplySwap).
  void CommitToCache(const MetadataCommit& commit, int64_t now_ms) {
    for (const MetadataSwap& swap : commit.swaps) {
      cache_.EntityWritten(swap.id, [&](EntityRecord& row) {
        row.metadata_location = swap.new_metadata_location;
        if (!swap.new_location.empty()) row.location = swap.new_location;
        row.updated_ms = now_ms;
        return true;
      });
    }
    for (const EntityRecord& created : commit.created) {
      cache_.EntityWritten(EntityId{created.warehouse, created.levels, created.name, created.kind},
                           [](EntityRecord&) { return false; });
    }
  }

  // Every catalog write goes through these three, so that cached rows never outlive a change.
  Status Write(const GroupCommitter::Write& write) {
    Status status = engine_.Write(write);
    cache_.WriteCommitted();
    return status;
  }
  Status WriteWarehouses(const GroupCommitter::Write& write) {
    Status status = engine_.Write(write);
    cache_.WarehouseWriteCommitted();
    return status;
  }
  template <typename T>
  Result<T> WriteAndReturn(const std::function<Result<T>(Connection&)>& write) {
    Result<T> result = engine_.WriteAndReturn<T>(write);
    cache_.WriteCommitted();
    return result;
  }

  Engine& engine_;
  CatalogReadCache cache_;
};

class SqliteIamStore final : public IamStore {
 public:
  explicit SqliteIamStore(Engine& engine)
      : engine_(engine), builtin_(std::make_shared<const BuiltinPolicyNames>()) {}

  void SetBuiltinPolicyNames(std::vector<std::string> names) override {
    auto builtin = std::make_shared<const BuiltinPolicyNames>(std::make_move_iterator(names.begin()),
                                                              std::make_move_iterator(names.end()));
    std::lock_guard<std::mutex> lock(builtin_mutex_);
    builtin_ = std::move(builtin);
  }

  Status CreateUser(const IamUserRecord& user) override {
    auto builtin = Builtin();
    return Write([&](Connection& db) { return CreateIamUserTx(db, user, *builtin); });
  }
  Status SetUserEnabled(std::string_view name, bool enabled) override {
    return Write([&](Connection& db) { return SetIamUserEnabledTx(db, name, enabled); });
  }
  Status DeleteUser(std::string_view name) override {
    return Write([&](Connection& db) { return DeleteIamUserTx(db, name); });
  }

  Status CreateAccessKey(const AccessKeyRecord& key) override {
    return Write([&](Connection& db) { return CreateAccessKeyTx(db, key); });
  }
  Status SetAccessKeyEnabled(std::string_view access_key, bool enabled) override {
    return Write([&](Connection& db) { return SetAccessKeyEnabledTx(db, access_key, enabled); });
  }
  Status DeleteAccessKey(std::string_view access_key) override {
    return Write([&](Connection& db) { return DeleteAccessKeyTx(db, access_key); });
  }

  Status PutPolicy(const PolicyRecord& policy) override {
    auto builtin = Builtin();
    return Write([&](Connection& db) { return PutPolicyTx(db, policy, *builtin); });
  }
  Status DeletePolicy(std::string_view name) override {
    auto builtin = Builtin();
    return Write([&](Connection& db) { return DeletePolicyTx(db, name, *builtin); });
  }
  Status AttachPolicy(std::string_view user, std::string_view policy) override {
    auto builtin = Builtin();
    return Write([&](Connection& db) { return AttachPolicyTx(db, user, policy, *builtin); });
  }
  Status DetachPolicy(std::string_view user, std::string_view policy) override {
    return Write([&](Connection& db) { return DetachPolicyTx(db, user, policy); });
  }

  Result<IamUserRecord> GetUser(std::string_view name) override {
    return engine_.Read<IamUserRecord>(true, [&](Connection& db) { return GetIamUserRead(db, name); });
  }
  Result<AccessKeyRecord> GetAccessKey(std::string_view access_key) override {
    return engine_.Read<AccessKeyRecord>(false,
                                         [&](Connection& db) { return GetAccessKeyRead(db, access_key); });
  }
  Result<PolicyRecord> GetPolicy(std::string_view name) override {
    return engine_.Read<PolicyRecord>(false, [&](Connection& db) { return GetPolicyRead(db, name); });
  }
  Result<IamSnapshot> LoadSnapshot() override { return engine_.Read<IamSnapshot>(true, LoadIamSnapshotRead); }
  Result<uint64_t> Generation() override { return engine_.Read<uint64_t>(false, IamGenerationRead); }

 private:
  // Every IAM write moves the generation in its own savepoint, so a write that fails moves nothing.
  Status Write(const std::function<Status(Connection&)>& write) {
    return engine_.Write([&](Connection& db) -> Status {
      SERAC_RETURN_IF_ERROR(write(db));
      return BumpIamGenerationTx(db);
    });
  }

  // The list as of this call; a write keeps the list it started with.
  std::shared_ptr<const BuiltinPolicyNames> Builtin() {
    std::lock_guard<std::mutex> lock(builtin_mutex_);
    return builtin_;
  }

  Engine& engine_;
  std::mutex builtin_mutex_;
  std::shared_ptr<const BuiltinPolicyNames> builtin_;  // guarded by builtin_mutex_; never null
};

class SqliteMetaStore final : public MetaStore {
 public:
  SqliteMetaStore(std::unique_ptr<Connection> writer, ConnectionOptions reader_options,
                  std::unique_ptr<WalCheckpointer> checkpointer, GroupCommitter::LogSync sync_log)
      : engine_(std::move(writer), std::move(reader_options), std::move(checkpointer), std::move(sync_log)),
        catalog_(engine_),
        iam_(engine_) {}

  GroupCommitStats stats() const { return engine_.stats(); }

  CatalogStore& catalog() override { return catalog_; }
  IamStore& iam() override { return iam_; }

  Status CreateBucket(const BucketRecord& bucket) override {
    return Write([&](Connection& db) { return CreateBucketTx(db, bucket); });
  }
  Result<BucketRecord> GetBucket(const std::string& name) override {
    return Read<BucketRecord>(false, [&](Connection& db) { return GetBucketRead(db, name); });
  }
  Result<std::vector<BucketRecord>> ListBuckets() override {
    return Read<std::vector<BucketRecord>>(false, ListBucketsRead);
  }
  Status DeleteBucket(const std::string& name) override {
    return Write([&](Connection& db) { return DeleteBucketTx(db, name); });
  }
  Result<BucketUsage> GetBucketUsage(const std::string& bucket) override {
    return Read<BucketUsage>(false, [&](Connection& db) { return GetBucketUsageRead(db, bucket); });
  }

  Result<ObjectRecord> GetObject(const std::string& bucket, const std::string& key) override {
    return Read<ObjectRecord>(false, [&](Connection& db) { return GetObjectRead(db, bucket, key); });
  }
  Status PutObject(const ObjectRecord& object, const WriteCondition& condition) override {
    const InlineBytes inline_bytes = EncodeInlineBytes(object);  // before the write is queued
    return Write(
        [&](Connection& db) { return PutObjectTx(db, object, inline_bytes, condition, NowMillis()); });
  }
  Status DeleteObject(const std::string& bucket, const std::string& key,
                      const WriteCondition& condition) override {
    return Write([&](Connection& db) { return DeleteObjectTx(db, bucket, key, condition, NowMillis()); });
  }
  Status SetObjectTags(const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition) override {
    return Write([&](Connection& db) { return SetObjectTagsTx(db, bucket, key, tags, condition); });
  }
  Result<std::vector<ObjectRecord>> ListObjects(const ListObjectsQuery& query) override {
    return Read<std::vector<ObjectRecord>>(true, [&](Connection& db) { return ListObjectsRead(db, query); });
  }

  Status CreateUpload(const UploadRecord& upload) override {
    return Write([&](Connection& db) { return CreateUploadTx(db, upload); });
  }
  Result<UploadRecord> GetUpload(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id) override {
    return Read<UploadRecord>(false,
                              [&](Connection& db) { return GetUploadRead(db, bucket, key, upload_id); });
  }
  Status PutPart(const std::string& upload_id, const PartRecord& part) override {
    return Write([&](Connection& db) { return PutPartTx(db, upload_id, part, NowMillis()); });
  }
  Result<std::vector<PartRecord>> ListParts(const std::string& upload_id, uint32_t part_number_marker,
                                            uint32_t limit) override {
    return Read<std::vector<PartRecord>>(
        true, [&](Connection& db) { return ListPartsRead(db, upload_id, part_number_marker, limit); });
  }
  Result<std::vector<UploadRecord>> ListUploads(const ListUploadsQuery& query) override {
    return Read<std::vector<UploadRecord>>(true, [&](Connection& db) { return ListUploadsRead(db, query); });
  }
  Status CompleteUpload(const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition) override {
    return Write(
        [&](Connection& db) { return CompleteUploadTx(db, upload_id, object, condition, NowMillis()); });
  }
  Status AbortUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id) override {
    return Write([&](Connection& db) { return AbortUploadTx(db, bucket, key, upload_id, NowMillis()); });
  }

  Result<std::vector<std::string>> PeekGarbage(uint32_t limit) override {
    return Read<std::vector<std::string>>(false, [&](Connection& db) { return PeekGarbageRead(db, limit); });
  }
  Status ForgetGarbage(const std::vector<std::string>& blob_ids) override {
    if (blob_ids.empty()) return Status::Ok();
    return Write([&](Connection& db) { return ForgetGarbageTx(db, blob_ids); });
  }
  Result<bool> AcquireLease(const std::string& name, const std::string& holder,
                            std::chrono::milliseconds ttl) override {
    return engine_.WriteAndReturn<bool>([&](Connection& db) -> Result<bool> {
      const int64_t now_ms = NowMillis();
      SERAC_ASSIGN_OR_RETURN(auto stmt,
                             db.Prepare("INSERT INTO leases(name, holder, expires_ms) VALUES (?1, ?2, ?3) "
                                        "ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, "
                                        "expires_ms = excluded.expires_ms "
                                        "WHERE leases.holder = excluded.holder OR leases.expires_ms <= ?4;"));
      stmt->BindText(1, name).BindText(2, holder).BindInt(3, now_ms + ttl.count()).BindInt(4, now_ms);
      SERAC_RETURN_IF_ERROR(stmt->Run());
      return db.Changes() > 0;
    });
  }
  Status ReleaseLease(const std::string& name, const std::string& holder) override {
    return Write([&](Connection& db) -> Status {
      SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM leases WHERE name = ?1 AND holder = ?2;"));
      return stmt->BindText(1, name).BindText(2, holder).Run();
    });
  }
  Status ForgetExpiredLeases(const std::string& prefix) override {
    return Write([&](Connection& db) -> Status {
      SERAC_ASSIGN_OR_RETURN(
          auto stmt, db.Prepare("DELETE FROM leases WHERE substr(name, 1, ?2) = ?1 AND expires_ms <= ?3;"));
      return stmt->BindText(1, prefix)
          .BindInt(2, static_cast<int64_t>(prefix.size()))
          .BindInt(3, NowMillis())
          .Run();
    });
  }
  Result<std::optional<LeaseRecord>> GetLease(const std::string& name) override {
    return Read<std::optional<LeaseRecord>>(false, [&](Connection& db) -> Result<std::optional<LeaseRecord>> {
      SERAC_ASSIGN_OR_RETURN(
          auto stmt,
          db.Prepare("SELECT holder, expires_ms FROM leases WHERE name = ?1 AND expires_ms > ?2;"));
      SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, name).BindInt(2, NowMillis()).Step());
      if (!found) return std::optional<LeaseRecord>();
      return std::optional<LeaseRecord>(LeaseRecord{name, stmt->Text(0), stmt->Int(1)});
    });
  }

  Status ForEachReferencedBlob(const std::function<Status(const std::string&)>& visit) override {
    Result<bool> done = Read<bool>(true, [&](Connection& db) -> Result<bool> {
      SERAC_RETURN_IF_ERROR(ForEachReferencedBlobRead(db, visit));
      return true;
    });
    return done.status();
  }

 private:
  Status Write(const GroupCommitter::Write& write) { return engine_.Write(write); }

  template <typename T>
  Result<T> Read(bool snapshot, const std::function<Result<T>(Connection&)>& read) {
    return engine_.Read<T>(snapshot, read);
  }

  Engine engine_;
  SqliteCatalogStore catalog_;
  SqliteIamStore iam_;
};

}  // namespace
}  // namespace sqlite

Result<std::unique_ptr<MetaStore>> OpenSqliteMetaStore(const SqliteOptions& options) {
  sqlite::ConnectionOptions writer_options{options.path, true};
  SERAC_ASSIGN_OR_RETURN(auto writer, sqlite::Connection::Open(writer_options));
  SERAC_RETURN_IF_ERROR(sqlite::MigrateSchema(*writer));
  sqlite::GroupCommitter::LogSync sync_log;
  if (options.fsync) {
    auto log = std::make_shared<sqlite::WalFile>(options.path);
    SERAC_RETURN_IF_ERROR(log->Sync());  // the migrations, committed without fsync
    sync_log = [log] { return log->Sync(); };
  }
  SERAC_ASSIGN_OR_RETURN(auto checkpointer, sqlite::WalCheckpointer::Start(writer_options, *writer));
  sqlite::ConnectionOptions reader_options{options.path, false};
  return std::unique_ptr<MetaStore>(std::make_unique<sqlite::SqliteMetaStore>(
      std::move(writer), std::move(reader_options), std::move(checkpointer), std::move(sync_log)));
}

std::optional<sqlite::GroupCommitStats> SqliteGroupCommitStats(MetaStore& store) {
  auto* sqlite_store = dynamic_cast<sqlite::SqliteMetaStore*>(&store);
  if (sqlite_store == nullptr) return std::nullopt;
  return sqlite_store->stats();
}

}  // namespace serac::meta
