#include "meta/fault_injection_meta_store.h"

#include <utility>

namespace serac::meta {
namespace {

Status StoreClosed() { return Error(ErrorCode::kUnavailable, "store failed to reopen after crash"); }

}  // namespace

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

Status FaultInjectionMetaStore::ForEachReferencedBlob(
    const std::function<Status(const std::string&)>& visit) {
  std::shared_lock<std::shared_mutex> lock(store_mutex_);
  if (store_ == nullptr) return StoreClosed();
  return store_->ForEachReferencedBlob(visit);
}

}  // namespace serac::meta
