// A MetaStore decorator for tests that injects the failures a real deployment sees: a write that
// fails before it reaches the store, a write that took effect but whose acknowledgement was lost
// (the caller sees kIoError, the state changed anyway), and a process restart (the wrapped store
// is closed and opened again from the same storage). Any back end can be wrapped.
//
// Thread-safety: all methods are thread-safe; SimulateCrash waits for calls in flight.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "meta/meta_store.h"

namespace serac::meta {

enum class FaultTiming {
  kBeforeDelegating,  // the call fails and nothing changes
  kAfterDelegating,   // the call takes effect, then reports kIoError
};

class FaultInjectionMetaStore final : public MetaStore {
 public:
  // Opens (and re-opens after a crash) the wrapped store.
  using Opener = std::function<Result<std::unique_ptr<MetaStore>>()>;

  static Result<std::unique_ptr<FaultInjectionMetaStore>> Open(Opener opener);
  ~FaultInjectionMetaStore() override;

  // Makes the nth mutating call from now on (1 = the next one) fail with kIoError. One fault is
  // armed at a time; arming another replaces it.
  void FailNthMutation(uint64_t n, FaultTiming timing);
  void DisarmFault();
  // Closes the wrapped store and opens it again from its storage, as a restart would.
  Status SimulateCrash();
  // Mutating calls seen so far, injected failures included.
  uint64_t mutation_count() const { return mutations_.load(); }
  // The wrapped store; valid until the next SimulateCrash.
  MetaStore* wrapped();

  Status CreateBucket(const BucketRecord& bucket) override;
  Result<BucketRecord> GetBucket(const std::string& name) override;
  Result<std::vector<BucketRecord>> ListBuckets() override;
  Status DeleteBucket(const std::string& name) override;
  Result<ObjectRecord> GetObject(const std::string& bucket, const std::string& key) override;
  Status PutObject(const ObjectRecord& object, const WriteCondition& condition) override;
  Status DeleteObject(const std::string& bucket, const std::string& key,
                      const WriteCondition& condition) override;
  Status SetObjectTags(const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition) override;
  Result<std::vector<ObjectRecord>> ListObjects(const ListObjectsQuery& query) override;
  Status CreateUpload(const UploadRecord& upload) override;
  Result<UploadRecord> GetUpload(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id) override;
  Status PutPart(const std::string& upload_id, const PartRecord& part) override;
  Result<std::vector<PartRecord>> ListParts(const std::string& upload_id, uint32_t part_number_marker,
                                            uint32_t limit) override;
  Result<std::vector<UploadRecord>> ListUploads(const ListUploadsQuery& query) override;
  Status CompleteUpload(const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition) override;
  Status AbortUpload(const std::string& bucket, const std::string& key,
                     const std::string& upload_id) override;
  Result<std::vector<std::string>> PeekGarbage(uint32_t limit) override;
  Status ForgetGarbage(const std::vector<std::string>& blob_ids) override;
  Result<bool> AcquireLease(const std::string& name, const std::string& holder,
                            std::chrono::milliseconds ttl) override;
  Status ReleaseLease(const std::string& name, const std::string& holder) override;
  Result<std::optional<LeaseRecord>> GetLease(const std::string& name) override;
  Status ForgetExpiredLeases(const std::string& prefix) override;
  std::string RenderMetrics() override;
  Status ForEachReferencedBlob(const std::function<Status(const std::string&)>& visit) override;
  // Catalog calls go through the same fault and crash machinery (its mutations count too) and
  // always reach the catalog of the currently open wrapped store.
  CatalogStore& catalog() override;
  // IAM calls likewise. The built-in policy names are remembered here and registered again on
  // every store opened by SimulateCrash, as the server would do on start-up.
  IamStore& iam() override;

 private:
  enum class Fault { kNone, kBefore, kAfter };
  class Catalog;
  class Iam;

  FaultInjectionMetaStore(Opener opener, std::unique_ptr<MetaStore> store);

  Fault TakeFault();
  Status Mutate(const std::function<Status(MetaStore&)>& mutation);
  template <typename T>
  Result<T> MutateAndReturn(const std::function<Result<T>(MetaStore&)>& mutation);
  template <typename T>
  Result<T> Query(const std::function<Result<T>(MetaStore&)>& query);

  const Opener opener_;
  std::shared_mutex store_mutex_;     // shared by calls, exclusive for SimulateCrash
  std::unique_ptr<MetaStore> store_;  // guarded by store_mutex_; null if reopening failed
  std::mutex fault_mutex_;
  uint64_t fault_countdown_ = 0;                               // guarded by fault_mutex_; 0 = no fault armed
  FaultTiming fault_timing_ = FaultTiming::kBeforeDelegating;  // guarded by fault_mutex_
  std::atomic<uint64_t> mutations_{0};
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<Iam> iam_;
  std::mutex builtin_mutex_;
  std::vector<std::string> builtin_policy_names_;  // guarded by builtin_mutex_
};

}  // namespace serac::meta
