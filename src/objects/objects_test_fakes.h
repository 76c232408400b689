// In-memory MetaStore and BlobStore for the tests of objects/ and server/: just enough behaviour for the
// start-up sweep, the GC and the readiness probe, with switches to inject failures.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "blob/blob_store.h"
#include "meta/meta_store.h"

namespace serac::objects::testing {

class FakeMetaStore : public meta::MetaStore {
 public:
  std::set<std::string> referenced;
  std::vector<std::string> garbage;
  bool fail_everything = false;

  Status CreateBucket(const meta::BucketRecord&) override { return Unsupported(); }
  Result<meta::BucketRecord> GetBucket(const std::string&) override {
    if (fail_everything) return Error(ErrorCode::kIoError, "disk on fire");
    return Error(ErrorCode::kNotFound, "no such bucket");
  }
  Result<std::vector<meta::BucketRecord>> ListBuckets() override { return Unsupported(); }
  Status DeleteBucket(const std::string&) override { return Unsupported(); }
  Result<meta::ObjectRecord> GetObject(const std::string&, const std::string&) override {
    return Unsupported();
  }
  Status PutObject(const meta::ObjectRecord&, const meta::WriteCondition&) override { return Unsupported(); }
  Status DeleteObject(const std::string&, const std::string&, const meta::WriteCondition&) override {
    return Unsupported();
  }
  Status SetObjectTags(const std::string&, const std::string&,
                       const std::vector<std::pair<std::string, std::string>>&,
                       const meta::WriteCondition&) override {
    return Error(ErrorCode::kNotImplemented, "SetObjectTags");
  }
  Result<std::vector<meta::ObjectRecord>> ListObjects(const meta::ListObjectsQuery&) override {
    return Unsupported();
  }
  Status CreateUpload(const meta::UploadRecord&) override { return Unsupported(); }
  Result<meta::UploadRecord> GetUpload(const std::string&, const std::string&, const std::string&) override {
    return Unsupported();
  }
  Status PutPart(const std::string&, const meta::PartRecord&) override { return Unsupported(); }
  Result<std::vector<meta::PartRecord>> ListParts(const std::string&, uint32_t, uint32_t) override {
    return Unsupported();
  }
  Result<std::vector<meta::UploadRecord>> ListUploads(const meta::ListUploadsQuery&) override {
    return Unsupported();
  }
  Status CompleteUpload(const std::string&, const meta::ObjectRecord&, const meta::WriteCondition&) override {
    return Unsupported();
  }
  Status AbortUpload(const std::string&, const std::string&, const std::string&) override {
    return Unsupported();
  }

  Result<std::vector<std::string>> PeekGarbage(uint32_t limit) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_everything) return Error(ErrorCode::kIoError, "disk on fire");
    size_t count = std::min<size_t>(limit, garbage.size());
    return std::vector<std::string>(garbage.begin(), garbage.begin() + static_cast<long>(count));
  }
  Status ForgetGarbage(const std::vector<std::string>& ids) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::string& id : ids) std::erase(garbage, id);
    return Status::Ok();
  }
  // One server: every lease is this one's.
  Result<bool> AcquireLease(const std::string&, const std::string&, std::chrono::milliseconds) override {
    return true;
  }
  Status ReleaseLease(const std::string&, const std::string&) override { return Status::Ok(); }
  Result<std::optional<meta::LeaseRecord>> GetLease(const std::string&) override {
    return std::optional<meta::LeaseRecord>();
  }
  Status ForgetExpiredLeases(const std::string&) override { return Status::Ok(); }
  Status ForEachReferencedBlob(const std::function<Status(const std::string&)>& visit) override {
    if (fail_everything) return Error(ErrorCode::kIoError, "disk on fire");
    for (const std::string& id : referenced) SERAC_RETURN_IF_ERROR(visit(id));
    return Status::Ok();
  }

  // The server module never touches the catalog; reaching this is a bug in the test.
  meta::CatalogStore& catalog() override { std::abort(); }
  // Nor IAM.
  meta::IamStore& iam() override { std::abort(); }

  size_t garbage_size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return garbage.size();
  }

 private:
  static Status Unsupported() { return Error(ErrorCode::kNotImplemented, "not in the fake"); }
  std::mutex mutex_;
};

class FakeBlobStore : public blob::BlobStore {
 public:
  std::set<std::string> committed;
  int temporary_files = 0;
  std::set<std::string> undeletable;             // Remove() fails for these ids
  std::map<std::string, WallTime> committed_at;  // absent: committed long ago (the epoch)

  Result<std::unique_ptr<blob::BlobWriter>> Create() override { return Unsupported(); }
  Result<std::unique_ptr<blob::BlobWriter>> CreateWithId(const blob::BlobId&) override {
    return Unsupported();
  }
  Result<blob::BlobId> CreateFromRange(const blob::BlobId&, uint64_t, uint64_t) override {
    return Unsupported();
  }
  Result<std::unique_ptr<blob::BlobReader>> Open(const blob::BlobId&) override { return Unsupported(); }
  Status Remove(const blob::BlobId& id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (undeletable.contains(id)) return Error(ErrorCode::kIoError, "permission denied");
    committed.erase(id);
    return Status::Ok();
  }
  Status ForEachBlob(const std::function<Status(const blob::BlobId&)>& visit) override {
    for (const std::string& id : committed) SERAC_RETURN_IF_ERROR(visit(id));
    return Status::Ok();
  }
  Result<WallTime> CommittedAt(const blob::BlobId& id) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!committed.contains(id)) return Error(ErrorCode::kNotFound, "no blob " + id);
    auto found = committed_at.find(id);
    return found != committed_at.end() ? found->second : WallTime{};
  }
  Status SweepTemporaryFiles() override {
    temporary_files = 0;
    return Status::Ok();
  }

  bool Has(const std::string& id) {
    std::lock_guard<std::mutex> lock(mutex_);
    return committed.contains(id);
  }

 private:
  static Status Unsupported() { return Error(ErrorCode::kNotImplemented, "not in the fake"); }
  std::mutex mutex_;
};

}  // namespace serac::objects::testing
