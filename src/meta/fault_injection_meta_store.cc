#include "meta/fault_injection_meta_store.h"

#include <optional>
#include <utility>

namespace serac::meta {
namespace {

Status StoreClosed() { return Error(ErrorCode::kUnavailable, "store failed to reopen after crash"); }

}  // namespace

// Forwards every call to the wrapped store's catalog through the owner's fault machinery.
class FaultInjectionMetaStore::Catalog final : public CatalogStore {
 public:
  explicit Catalog(FaultInjectionMetaStore& owner) : owner_(owner) {}

  Status CreateWarehouse(const WarehouseRecord& warehouse, bool bucket_may_exist) override {
    return owner_.Mutate(
        [&](MetaStore& store) { return store.catalog().CreateWarehouse(warehouse, bucket_may_exist); });
  }
  Result<WarehouseRecord> GetWarehouse(const std::string& name) override {
    return owner_.Query<WarehouseRecord>(
        [&](MetaStore& store) { return store.catalog().GetWarehouse(name); });
  }
  Result<std::vector<WarehouseRecord>> ListWarehouses(const std::string& start_after,
                                                      uint32_t limit) override {
    return owner_.Query<std::vector<WarehouseRecord>>(
        [&](MetaStore& store) { return store.catalog().ListWarehouses(start_after, limit); });
  }
  Status DeleteWarehouse(const std::string& name, bool force, bool preserve_bucket) override {
    return owner_.Mutate(
        [&](MetaStore& store) { return store.catalog().DeleteWarehouse(name, force, preserve_bucket); });
  }
  Status CreateNamespace(const NamespaceRecord& ns) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().CreateNamespace(ns); });
  }
  Result<NamespaceRecord> GetNamespace(const std::string& warehouse, const NamespaceLevels& levels) override {
    return owner_.Query<NamespaceRecord>(
        [&](MetaStore& store) { return store.catalog().GetNamespace(warehouse, levels); });
  }
  Result<std::vector<NamespaceRecord>> ListNamespaces(const std::string& warehouse,
                                                      const NamespaceLevels& parent,
                                                      const std::string& start_after,
                                                      uint32_t limit) override {
    return owner_.Query<std::vector<NamespaceRecord>>([&](MetaStore& store) {
      return store.catalog().ListNamespaces(warehouse, parent, start_after, limit);
    });
  }
  Result<NamespacePropertiesReport> UpdateNamespaceProperties(
      const std::string& warehouse, const NamespaceLevels& levels,
      const NamespacePropertiesChange& change) override {
    return owner_.MutateAndReturn<NamespacePropertiesReport>([&](MetaStore& store) {
      return store.catalog().UpdateNamespaceProperties(warehouse, levels, change);
    });
  }
  Status DropNamespace(const std::string& warehouse, const NamespaceLevels& levels) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().DropNamespace(warehouse, levels); });
  }
  Status CreateEntity(const EntityRecord& entity) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().CreateEntity(entity); });
  }
  Result<EntityRecord> GetEntity(const EntityId& id) override {
    return owner_.Query<EntityRecord>([&](MetaStore& store) { return store.catalog().GetEntity(id); });
  }
  Result<std::vector<EntityRecord>> ListEntities(const std::string& warehouse, const NamespaceLevels& levels,
                                                 EntityKind kind, const std::string& start_after,
                                                 uint32_t limit) override {
    return owner_.Query<std::vector<EntityRecord>>([&](MetaStore& store) {
      return store.catalog().ListEntities(warehouse, levels, kind, start_after, limit);
    });
  }
  Result<EntityCounts> CountEntities(const std::string& warehouse) override {
    return owner_.Query<EntityCounts>(
        [&](MetaStore& store) { return store.catalog().CountEntities(warehouse); });
  }
  Result<EntityRecord> DropEntity(const EntityId& id) override {
    return owner_.MutateAndReturn<EntityRecord>(
        [&](MetaStore& store) { return store.catalog().DropEntity(id); });
  }
  Status RenameEntity(const EntityId& from, const NamespaceLevels& to_levels,
                      const std::string& to_name) override {
    return owner_.Mutate(
        [&](MetaStore& store) { return store.catalog().RenameEntity(from, to_levels, to_name); });
  }
  Status RegisterEntity(const EntityRecord& entity, bool overwrite) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().RegisterEntity(entity, overwrite); });
  }
  Status SwapMetadataLocations(const std::vector<MetadataSwap>& swaps) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().SwapMetadataLocations(swaps); });
  }
  Status CommitMetadata(const MetadataCommit& commit) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().CommitMetadata(commit); });
  }
  Status PutMaintenanceSetting(const MaintenanceSetting& setting) override {
    return owner_.Mutate([&](MetaStore& store) { return store.catalog().PutMaintenanceSetting(setting); });
  }
  Status DeleteMaintenanceSetting(const std::string& warehouse, const std::string& table_uuid,
                                  const std::string& type) override {
    return owner_.Mutate([&](MetaStore& store) {
      return store.catalog().DeleteMaintenanceSetting(warehouse, table_uuid, type);
    });
  }
  Result<std::vector<MaintenanceSetting>> ListMaintenanceSettings(const std::string& warehouse,
                                                                  const std::string& table_uuid) override {
    return owner_.Query<std::vector<MaintenanceSetting>>(
        [&](MetaStore& store) { return store.catalog().ListMaintenanceSettings(warehouse, table_uuid); });
  }
  Result<int64_t> SaveMaintenanceJob(const MaintenanceJobRecord& job) override {
    return owner_.MutateAndReturn<int64_t>(
        [&](MetaStore& store) { return store.catalog().SaveMaintenanceJob(job); });
  }
  Result<std::vector<MaintenanceJobRecord>> ListMaintenanceJobs(const std::string& warehouse,
                                                                const std::string& table_uuid,
                                                                const std::string& type,
                                                                uint32_t limit) override {
    return owner_.Query<std::vector<MaintenanceJobRecord>>([&](MetaStore& store) {
      return store.catalog().ListMaintenanceJobs(warehouse, table_uuid, type, limit);
    });
  }

 private:
  FaultInjectionMetaStore& owner_;
};

// Forwards every call to the wrapped store's IAM part through the owner's fault machinery.
class FaultInjectionMetaStore::Iam final : public IamStore {
 public:
  explicit Iam(FaultInjectionMetaStore& owner) : owner_(owner) {}

  // Configuration, not a write: never faulted and not counted.
  void SetBuiltinPolicyNames(std::vector<std::string> names) override {
    std::shared_lock<std::shared_mutex> lock(owner_.store_mutex_);
    {
      std::lock_guard<std::mutex> builtin_lock(owner_.builtin_mutex_);
      owner_.builtin_policy_names_ = names;
    }
    if (owner_.store_ != nullptr) owner_.store_->iam().SetBuiltinPolicyNames(std::move(names));
  }

  Status CreateUser(const IamUserRecord& user) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().CreateUser(user); });
  }
  Status SetUserEnabled(std::string_view name, bool enabled) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().SetUserEnabled(name, enabled); });
  }
  Status DeleteUser(std::string_view name) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().DeleteUser(name); });
  }
  Status CreateAccessKey(const AccessKeyRecord& key) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().CreateAccessKey(key); });
  }
  Status SetAccessKeyEnabled(std::string_view access_key, bool enabled) override {
    return owner_.Mutate(
        [&](MetaStore& store) { return store.iam().SetAccessKeyEnabled(access_key, enabled); });
  }
  Status DeleteAccessKey(std::string_view access_key) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().DeleteAccessKey(access_key); });
  }
  Status PutPolicy(const PolicyRecord& policy) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().PutPolicy(policy); });
  }
  Status DeletePolicy(std::string_view name) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().DeletePolicy(name); });
  }
  Status AttachPolicy(std::string_view user, std::string_view policy) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().AttachPolicy(user, policy); });
  }
  Status DetachPolicy(std::string_view user, std::string_view policy) override {
    return owner_.Mutate([&](MetaStore& store) { return store.iam().DetachPolicy(user, policy); });
  }
  Result<IamUserRecord> GetUser(std::string_view name) override {
    return owner_.Query<IamUserRecord>([&](MetaStore& store) { return store.iam().GetUser(name); });
  }
  Result<AccessKeyRecord> GetAccessKey(std::string_view access_key) override {
    return owner_.Query<AccessKeyRecord>(
        [&](MetaStore& store) { return store.iam().GetAccessKey(access_key); });
  }
  Result<PolicyRecord> GetPolicy(std::string_view name) override {
    return owner_.Query<PolicyRecord>([&](MetaStore& store) { return store.iam().GetPolicy(name); });
  }
  Result<IamSnapshot> LoadSnapshot() override {
    return owner_.Query<IamSnapshot>([](MetaStore& store) { return store.iam().LoadSnapshot(); });
  }
  Result<uint64_t> Generation() override {
    return owner_.Query<uint64_t>([](MetaStore& store) { return store.iam().Generation(); });
  }

 private:
  FaultInjectionMetaStore& owner_;
};

FaultInjectionMetaStore::FaultInjectionMetaStore(Opener opener, std::unique_ptr<MetaStore> store)
    : opener_(std::move(opener)),
      store_(std::move(store)),
      catalog_(std::make_unique<Catalog>(*this)),
      iam_(std::make_unique<Iam>(*this)) {}

FaultInjectionMetaStore::~FaultInjectionMetaStore() = default;

CatalogStore& FaultInjectionMetaStore::catalog() { return *catalog_; }

IamStore& FaultInjectionMetaStore::iam() { return *iam_; }

Result<std::unique_ptr<FaultInjectionMetaStore>> FaultInjectionMetaStore::Open(Opener opener) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<MetaStore> store, opener());
  return std::unique_ptr<FaultInjectionMetaStore>(
      new FaultInjectionMetaStore(std::move(opener), std::move(store)));
}

void FaultInjectionMetaStore::FailNthMutation(uint64_t n, FaultTiming timing) {
  std::lock_guard<std::mutex> lock(fault_mutex_);
  fault_countdown_ = n;
  fault_timing_ = timing;
}

void FaultInjectionMetaStore::DisarmFault() { FailNthMutation(0, FaultTiming::kBeforeDelegating); }

Status FaultInjectionMetaStore::SimulateCrash() {
  std::unique_lock<std::shared_mutex> lock(store_mutex_);
  store_.reset();
  SERAC_ASSIGN_OR_RETURN(store_, opener_());
  std::lock_guard<std::mutex> builtin_lock(builtin_mutex_);
  store_->iam().SetBuiltinPolicyNames(builtin_policy_names_);
  return Status::Ok();
}

MetaStore* FaultInjectionMetaStore::wrapped() {
  std::shared_lock<std::shared_mutex> lock(store_mutex_);
  return store_.get();
}

FaultInjectionMetaStore::Fault FaultInjectionMetaStore::TakeFault() {
  std::lock_guard<std::mutex> lock(fault_mutex_);
  if (fault_countdown_ == 0 || --fault_countdown_ != 0) return Fault::kNone;
  return fault_timing_ == FaultTiming::kBeforeDelegating ? Fault::kBefore : Fault::kAfter;
}

Status FaultInjectionMetaStore::Mutate(const std::function<Status(MetaStore&)>& mutation) {
  std::shared_lock<std::shared_mutex> lock(store_mutex_);
  mutations_.fetch_add(1);
  Fault fault = TakeFault();
  if (fault == Fault::kBefore) return Error(ErrorCode::kIoError, "injected fault before the write");
  if (store_ == nullptr) return StoreClosed();
  Status status = mutation(*store_);
  if (fault == Fault::kAfter) {
    return Error(ErrorCode::kIoError, "injected fault: the write happened, its acknowledgement was lost");
  }
  return status;
}

template <typename T>
Result<T> FaultInjectionMetaStore::MutateAndReturn(const std::function<Result<T>(MetaStore&)>& mutation) {
  std::optional<Result<T>> result;
  Status status = Mutate([&](MetaStore& store) {
    result.emplace(mutation(store));
    return result->status();
  });
  if (!status.ok()) return status;
  return std::move(*result);
}

template <typename T>
Result<T> FaultInjectionMetaStore::Query(const std::function<Result<T>(MetaStore&)>& query) {
  std::shared_lock<std::shared_mutex> lock(store_mutex_);
  if (store_ == nullptr) return StoreClosed();
  return query(*store_);
}

Status FaultInjectionMetaStore::CreateBucket(const BucketRecord& bucket) {
  return Mutate([&](MetaStore& store) { return store.CreateBucket(bucket); });
}

Result<BucketRecord> FaultInjectionMetaStore::GetBucket(const std::string& name) {
  return Query<BucketRecord>([&](MetaStore& store) { return store.GetBucket(name); });
}

Result<std::vector<BucketRecord>> FaultInjectionMetaStore::ListBuckets() {
  return Query<std::vector<BucketRecord>>([](MetaStore& store) { return store.ListBuckets(); });
}

Status FaultInjectionMetaStore::DeleteBucket(const std::string& name) {
  return Mutate([&](MetaStore& store) { return store.DeleteBucket(name); });
}

Result<ObjectRecord> FaultInjectionMetaStore::GetObject(const std::string& bucket, const std::string& key) {
  return Query<ObjectRecord>([&](MetaStore& store) { return store.GetObject(bucket, key); });
}

Status FaultInjectionMetaStore::PutObject(const ObjectRecord& object, const WriteCondition& condition) {
  return Mutate([&](MetaStore& store) { return store.PutObject(object, condition); });
}

Status FaultInjectionMetaStore::DeleteObject(const std::string& bucket, const std::string& key,
                                             const WriteCondition& condition) {
  return Mutate([&](MetaStore& store) { return store.DeleteObject(bucket, key, condition); });
}

Status FaultInjectionMetaStore::SetObjectTags(const std::string& bucket, const std::string& key,
                                              const std::vector<std::pair<std::string, std::string>>& tags,
                                              const WriteCondition& condition) {
  return Mutate([&](MetaStore& store) { return store.SetObjectTags(bucket, key, tags, condition); });
}

Result<std::vector<ObjectRecord>> FaultInjectionMetaStore::ListObjects(const ListObjectsQuery& query) {
  return Query<std::vector<ObjectRecord>>([&](MetaStore& store) { return store.ListObjects(query); });
}

Status FaultInjectionMetaStore::CreateUpload(const UploadRecord& upload) {
  return Mutate([&](MetaStore& store) { return store.CreateUpload(upload); });
}

Result<UploadRecord> FaultInjectionMetaStore::GetUpload(const std::string& bucket, const std::string& key,
                                                        const std::string& upload_id) {
  return Query<UploadRecord>([&](MetaStore& store) { return store.GetUpload(bucket, key, upload_id); });
}

Status FaultInjectionMetaStore::PutPart(const std::string& upload_id, const PartRecord& part) {
  return Mutate([&](MetaStore& store) { return store.PutPart(upload_id, part); });
}

Result<std::vector<PartRecord>> FaultInjectionMetaStore::ListParts(const std::string& upload_id,
                                                                   uint32_t part_number_marker,
                                                                   uint32_t limit) {
  return Query<std::vector<PartRecord>>(
      [&](MetaStore& store) { return store.ListParts(upload_id, part_number_marker, limit); });
}

Result<std::vector<UploadRecord>> FaultInjectionMetaStore::ListUploads(const ListUploadsQuery& query) {
  return Query<std::vector<UploadRecord>>([&](MetaStore& store) { return store.ListUploads(query); });
}

Status FaultInjectionMetaStore::CompleteUpload(const std::string& upload_id, const ObjectRecord& object,
                                               const WriteCondition& condition) {
  return Mutate([&](MetaStore& store) { return store.CompleteUpload(upload_id, object, condition); });
}

Status FaultInjectionMetaStore::AbortUpload(const std::string& bucket, const std::string& key,
                                            const std::string& upload_id) {
  return Mutate([&](MetaStore& store) { return store.AbortUpload(bucket, key, upload_id); });
}

Result<std::vector<std::string>> FaultInjectionMetaStore::PeekGarbage(uint32_t limit) {
  return Query<std::vector<std::string>>([&](MetaStore& store) { return store.PeekGarbage(limit); });
}

Status FaultInjectionMetaStore::ForgetGarbage(const std::vector<std::string>& blob_ids) {
  return Mutate([&](MetaStore& store) { return store.ForgetGarbage(blob_ids); });
}

Result<bool> FaultInjectionMetaStore::AcquireLease(const std::string& name, const std::string& holder,
                                                   std::chrono::milliseconds ttl) {
  return MutateAndReturn<bool>([&](MetaStore& store) { return store.AcquireLease(name, holder, ttl); });
}

Status FaultInjectionMetaStore::ReleaseLease(const std::string& name, const std::string& holder) {
  return Mutate([&](MetaStore& store) { return store.ReleaseLease(name, holder); });
}

Status FaultInjectionMetaStore::ForgetExpiredLeases(const std::string& prefix) {
  return Mutate([&](MetaStore& store) { return store.ForgetExpiredLeases(prefix); });
}

Result<std::optional<LeaseRecord>> FaultInjectionMetaStore::GetLease(const std::string& name) {
  return Query<std::optional<LeaseRecord>>([&](MetaStore& store) { return store.GetLease(name); });
}

std::string FaultInjectionMetaStore::RenderMetrics() {
  std::shared_lock<std::shared_mutex> lock(store_mutex_);
  return store_ == nullptr ? std::string() : store_->RenderMetrics();
}

Status FaultInjectionMetaStore::ForEachReferencedBlob(
    const std::function<Status(const std::string&)>& visit) {
  std::shared_lock<std::shared_mutex> lock(store_mutex_);
  if (store_ == nullptr) return StoreClosed();
  return store_->ForEachReferencedBlob(visit);
}

}  // namespace serac::meta
