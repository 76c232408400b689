#include "blob/fault_injection_blob_store.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace serac::blob {

class FaultInjectionBlobStore::Writer : public BlobWriter {
 public:
  Writer(FaultInjectionBlobStore* store, std::unique_ptr<BlobWriter> inner, uint64_t epoch,
         std::optional<uint64_t> tear_after_bytes)
      : store_(store),
        inner_(std::move(inner)),
        id_(inner_->id()),
        epoch_(epoch),
        tear_after_bytes_(tear_after_bytes) {}

  ~Writer() override {
    if (inner_ != nullptr && Crashed()) store_->KeepCrashedWriter(std::move(inner_));
  }

  Status Append(const char* data, size_t size) override {
    SERAC_RETURN_IF_ERROR(CheckUsable());
    if (store_->TakeAppendFault()) {
      failed_ = true;
      inner_->Abort();
      return Error(ErrorCode::kIoError, "injected fault: append failed");
    }
    size_ += size;
    if (tear_after_bytes_) {
      // Only the prefix reaches the inner writer: the rest was "lost in the page cache".
      uint64_t room = *tear_after_bytes_ > inner_->size() ? *tear_after_bytes_ - inner_->size() : 0;
      size = static_cast<size_t>(std::min<uint64_t>(size, room));
    }
    Status status = inner_->Append(data, size);
    if (!status.ok()) failed_ = true;
    return status;
  }

  Status Commit() override {
    SERAC_RETURN_IF_ERROR(CheckUsable());
    failed_ = true;  // whatever happens below, this writer is finished unless the commit succeeds
    if (tear_after_bytes_) {
      store_->KeepCrashedWriter(std::move(inner_));
      return Error(ErrorCode::kIoError, "injected fault: crashed before commit (torn write)");
    }
    if (store_->TakeCommitFault()) {
      inner_->Abort();
      return Error(ErrorCode::kIoError, "injected fault: fsync failed during commit");
    }
    SERAC_RETURN_IF_ERROR(inner_->Commit());
    failed_ = false;
    committed_ = true;
    return Status::Ok();
  }

  void Abort() override {
    if (inner_ == nullptr || Crashed()) return;  // a crashed process aborts nothing
    inner_->Abort();
  }

  const BlobId& id() const override { return id_; }
  uint64_t size() const override { return size_; }

 private:
  bool Crashed() const { return !committed_ && store_->crash_epoch() != epoch_; }

  Status CheckUsable() {
    if (inner_ != nullptr && Crashed()) {
      store_->KeepCrashedWriter(std::move(inner_));
    }
    if (inner_ == nullptr) return Error(ErrorCode::kUnavailable, "injected fault: writer lost in a crash");
    if (committed_) return Error(ErrorCode::kInternal, "blob writer already committed");
    if (failed_) return Error(ErrorCode::kIoError, "blob writer failed earlier");
    return Status::Ok();
  }

  FaultInjectionBlobStore* store_;
  std::unique_ptr<BlobWriter> inner_;  // null once handed to the store as a crash leftover
  BlobId id_;
  uint64_t epoch_;
  std::optional<uint64_t> tear_after_bytes_;
  uint64_t size_ = 0;
  bool failed_ = false;
  bool committed_ = false;
};

FaultInjectionBlobStore::FaultInjectionBlobStore(std::unique_ptr<BlobStore> inner)
    : inner_(std::move(inner)) {}

FaultInjectionBlobStore::~FaultInjectionBlobStore() = default;

void FaultInjectionBlobStore::FailNthAppend(uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  appends_until_failure_ = n;
}

void FaultInjectionBlobStore::FailNextCommit() {
  std::lock_guard<std::mutex> lock(mutex_);
  fail_next_commit_ = true;
}

void FaultInjectionBlobStore::TearNextWriter(uint64_t prefix_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  tear_next_writer_ = true;
  tear_prefix_bytes_ = prefix_bytes;
}

void FaultInjectionBlobStore::Crash() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++crash_epoch_;
}

bool FaultInjectionBlobStore::TakeAppendFault() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (appends_until_failure_ == 0) return false;
  return --appends_until_failure_ == 0;
}

bool FaultInjectionBlobStore::TakeCommitFault() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(fail_next_commit_, false);
}

uint64_t FaultInjectionBlobStore::crash_epoch() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return crash_epoch_;
}

void FaultInjectionBlobStore::KeepCrashedWriter(std::unique_ptr<BlobWriter> inner) {
  std::lock_guard<std::mutex> lock(mutex_);
  crashed_writers_.push_back(std::move(inner));
}

Result<std::unique_ptr<BlobWriter>> FaultInjectionBlobStore::Create() {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> inner, inner_->Create());
  return Wrap(std::move(inner));
}

Result<std::unique_ptr<BlobWriter>> FaultInjectionBlobStore::CreateWithId(const BlobId& id) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<BlobWriter> inner, inner_->CreateWithId(id));
  return Wrap(std::move(inner));
}

Result<std::unique_ptr<BlobWriter>> FaultInjectionBlobStore::Wrap(std::unique_ptr<BlobWriter> inner) {
  std::optional<uint64_t> tear_after_bytes;
  uint64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::exchange(tear_next_writer_, false)) tear_after_bytes = tear_prefix_bytes_;
    epoch = crash_epoch_;
  }
  return std::unique_ptr<BlobWriter>(
      std::make_unique<Writer>(this, std::move(inner), epoch, tear_after_bytes));
}

Result<BlobId> FaultInjectionBlobStore::CreateFromRange(const BlobId& source, uint64_t offset,
                                                        uint64_t length) {
  if (TakeCommitFault()) return Error(ErrorCode::kIoError, "injected fault: fsync failed during copy");
  return inner_->CreateFromRange(source, offset, length);
}

Result<std::unique_ptr<BlobReader>> FaultInjectionBlobStore::Open(const BlobId& id) {
  return inner_->Open(id);
}

Status FaultInjectionBlobStore::Remove(const BlobId& id) { return inner_->Remove(id); }

Status FaultInjectionBlobStore::ForEachBlob(const std::function<Status(const BlobId&)>& visit) {
  return inner_->ForEachBlob(visit);
}

Result<WallTime> FaultInjectionBlobStore::CommittedAt(const BlobId& id) { return inner_->CommittedAt(id); }

Status FaultInjectionBlobStore::SweepTemporaryFiles() { return inner_->SweepTemporaryFiles(); }

}  // namespace serac::blob
