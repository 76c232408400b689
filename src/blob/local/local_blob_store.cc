#include "blob/local/local_blob_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string_view>
#include <vector>

#include "common/blocking.h"
#include "common/limits.h"
#include "common/random.h"

namespace serac::blob {

namespace {

constexpr size_t kBlobIdLength = 32;
constexpr mode_t kFileMode = 0640;
constexpr mode_t kDirectoryMode = 0750;

// The id is the only caller-controlled part of a path, so accepting exactly 32 lower-case hex
// characters is what keeps "../" and friends from ever reaching the file system.
bool IsValidBlobId(std::string_view id) {
  return id.size() == kBlobIdLength && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Numeric value of the first `digits` characters of a valid id (the fan-out directory index).
size_t HexPrefixValue(std::string_view id, size_t digits) {
  size_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    char c = id[i];
    value = value * 16 + static_cast<size_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return value;
}

Status InvalidIdStatus(std::string_view id) {
  return Error(ErrorCode::kInvalidArgument, "invalid blob id '" + std::string(id.substr(0, 64)) + "'");
}

Status ErrnoStatus(std::string_view operation, const std::string& path, int error_number) {
  ErrorCode code = error_number == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIoError;
  return Error(code, std::string(operation) + " " + path + ": " + std::strerror(error_number));
}

// Owns a file descriptor; closes it exactly once.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() { Close(); }
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      Close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Status WriteAll(int fd, const char* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path, errno);
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
  return Status::Ok();
}

Result<size_t> PreadSome(int fd, char* buffer, size_t size, uint64_t offset, const std::string& path) {
  while (true) {
    ssize_t got = ::pread(fd, buffer, size, static_cast<off_t>(offset));
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) return ErrnoStatus("read", path, errno);
  }
}

Status FsyncFile(int fd, const std::string& path) {
  const blocking::Region flush;
  if (::fsync(fd) != 0) return ErrnoStatus("fsync", path, errno);
  return Status::Ok();
}

Status FsyncDirectory(const std::string& path) {
  FileDescriptor dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return ErrnoStatus("open directory", path, errno);
  return FsyncFile(dir.get(), path);
}

// Creates `path` if missing. Reports whether this call created it.
Result<bool> MakeDirectory(const std::string& path) {
  if (::mkdir(path.c_str(), kDirectoryMode) == 0) return true;
  if (errno == EEXIST) return false;
  return ErrnoStatus("mkdir", path, errno);
}

// Moves `from` to `to` without ever replacing an existing blob; falls back to plain rename on
// file systems without RENAME_NOREPLACE (ids are 128 random bits, so a clash is not expected).
Status RenameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return Status::Ok();
  if (errno == EEXIST) return Error(ErrorCode::kAlreadyExists, "blob exists: " + to);
  if (errno != EINVAL && errno != ENOSYS) return ErrnoStatus("rename", from, errno);
  if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoStatus("rename", from, errno);
  return Status::Ok();
}

// Lists the names in a directory except "." and "..". kNotFound when it is missing or not a directory.
Result<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus("opendir", path, errno == ENOTDIR ? ENOENT : errno);
  std::vector<std::string> names;
  errno = 0;
  while (dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  int error_number = errno;
  ::closedir(dir);
  if (error_number != 0) return ErrnoStatus("readdir", path, error_number);
  return names;
}

class LocalBlobReader : public BlobReader {
 public:
  LocalBlobReader(FileDescriptor fd, uint64_t size, std::string path)
      : fd_(std::move(fd)), size_(size), path_(std::move(path)) {}

  uint64_t size() const override { return size_; }
  int native_fd() const override { return fd_.get(); }

  Result<size_t> ReadAt(uint64_t offset, char* buffer, size_t size) override {
    if (offset >= size_ || size == 0) return size_t{0};
    size = static_cast<size_t>(std::min<uint64_t>(size, size_ - offset));
    return PreadSome(fd_.get(), buffer, size, offset, path_);
  }

 private:
  FileDescriptor fd_;
  uint64_t size_;
  std::string path_;
};

class LocalBlobStore;

// Streams into <root>/tmp/<id>; Commit moves it into the fan-out tree.
class LocalBlobWriter : public BlobWriter {
 public:
  LocalBlobWriter(LocalBlobStore* store, BlobId id, std::string temp_path, FileDescriptor fd)
      : store_(store), id_(std::move(id)), temp_path_(std::move(temp_path)), fd_(std::move(fd)) {}
  ~LocalBlobWriter() override { Abort(); }

  Status Append(const char* data, size_t size) override;
  Status Commit() override;
  void Abort() override;
  const BlobId& id() const override { return id_; }
  uint64_t size() const override { return size_; }

  // Copies [offset, offset + length) of `source_fd` to the end of this blob.
  Status AppendRange(int source_fd, const std::string& source_path, uint64_t offset, uint64_t length);

 private:
  enum class State { kOpen, kCommitted, kFailed };

  Status CheckOpen() const;
  Status Flush();
  Status WriteToFile(const char* data, size_t size);
  void StartWriteBack();
  Status Fail(Status status);
  Status CopyWithReadWrite(int source_fd, const std::string& source_path, uint64_t offset, uint64_t length);

  LocalBlobStore* store_;
  BlobId id_;
  std::string temp_path_;
  FileDescriptor fd_;
  uint64_t size_ = 0;
  State state_ = State::kOpen;
  // Small appends are gathered here so the file sees few large writes; appends at least as large
  // as the buffer go straight to write(2) without a copy.
  std::vector<char> buffer_;
  // Bytes written to the file whose write-back has not been started yet (see StartWriteBack).
  uint64_t written_bytes_ = 0;
  uint64_t write_back_started_bytes_ = 0;
};

class LocalBlobStore : public BlobStore {
 public:
  explicit LocalBlobStore(const LocalBlobStoreOptions& options)
      : root_(options.root),
        blobs_dir_(root_ + "/blobs"),
        tmp_dir_(root_ + "/tmp"),
        fsync_(options.fsync),
        known_level1_dirs_(256, false),
        known_level2_dirs_(256 * 256, false) {}

  Status Initialize();

  Result<std::unique_ptr<BlobWriter>> Create() override;
  Result<std::unique_ptr<BlobWriter>> CreateWithId(const BlobId& id) override;
  Result<BlobId> CreateFromRange(const BlobId& source, uint64_t offset, uint64_t length) override;
  Result<std::unique_ptr<BlobReader>> Open(const BlobId& id) override;
  Status Remove(const BlobId& id) override;
  Status ForEachBlob(const std::function<Status(const BlobId&)>& visit) override;
  Result<WallTime> CommittedAt(const BlobId& id) override;
  Status SweepTemporaryFiles() override;

  bool fsync_enabled() const { return fsync_; }

  // Durably moves a fully written temp file into place under `id` (called by the writer).
  Status CommitTemporaryFile(int fd, const std::string& temp_path, const BlobId& id);

 private:
  Result<std::unique_ptr<LocalBlobWriter>> CreateWriter(BlobId id);
  std::string Level1Dir(const BlobId& id) const { return blobs_dir_ + "/" + id.substr(0, 2); }
  std::string Level2Dir(const BlobId& id) const { return Level1Dir(id) + "/" + id.substr(2, 2); }
  std::string BlobPath(const BlobId& id) const { return Level2Dir(id) + "/" + id; }
  Status EnsureFanOutDirectories(const BlobId& id);
  Status EnsureDurableDirectory(const std::string& path, const std::string& parent, std::vector<bool>& known,
                                size_t index);

  const std::string root_;
  const std::string blobs_dir_;
  const std::string tmp_dir_;
  const bool fsync_;
  // Fan-out directories this process has seen exist with a durable entry in their parent; a
  // directory made by a concurrent writer may not be fsynced yet, so "exists" alone is not enough.
  std::mutex known_dirs_mutex_;
  std::vector<bool> known_level1_dirs_;  // guarded by known_dirs_mutex_
  std::vector<bool> known_level2_dirs_;  // guarded by known_dirs_mutex_
};

// ---------------------------------------------------------------------------------------------
// LocalBlobWriter

Status LocalBlobWriter::CheckOpen() const {
  if (state_ == State::kOpen) return Status::Ok();
  if (state_ == State::kCommitted) return Error(ErrorCode::kInternal, "blob writer already committed");
  return Error(ErrorCode::kIoError, "blob writer failed earlier or was aborted");
}

Status LocalBlobWriter::Fail(Status status) {
  Abort();
  return status;
}

Status LocalBlobWriter::Flush() {
  if (buffer_.empty()) return Status::Ok();
  Status status = WriteToFile(buffer_.data(), buffer_.size());
  buffer_.clear();
  return status;
}

Status LocalBlobWriter::WriteToFile(const char* data, size_t size) {
  SERAC_RETURN_IF_ERROR(WriteAll(fd_.get(), data, size, temp_path_));
  written_bytes_ += size;
  StartWriteBack();
  return Status::Ok();
}

// The disk starts writing a large blob while the rest still arrives and is hashed, so the fsync
// in Commit only waits for the tail instead of the whole blob. Only a hint: fsync stays the
// durability point, so a file system that refuses it changes nothing.
void LocalBlobWriter::StartWriteBack() {
  if (!store_->fsync_enabled()) return;
  uint64_t pending = written_bytes_ - write_back_started_bytes_;
  if (pending < limits::kBlobWriteBackStepBytes) return;
  (void)::sync_file_range(fd_.get(), static_cast<off_t>(write_back_started_bytes_),
                          static_cast<off_t>(pending), SYNC_FILE_RANGE_WRITE);
  write_back_started_bytes_ = written_bytes_;
}

Status LocalBlobWriter::Append(const char* data, size_t size) {
  SERAC_RETURN_IF_ERROR(CheckOpen());
  constexpr size_t kCapacity = limits::kBlobWriteBufferBytes;
  if (buffer_.size() + size > kCapacity) {
    Status flushed = Flush();
    if (!flushed.ok()) return Fail(flushed);
  }
  if (size >= kCapacity) {
    Status written = WriteToFile(data, size);
    if (!written.ok()) return Fail(written);
  } else {
    if (buffer_.capacity() == 0) buffer_.reserve(kCapacity);
    buffer_.insert(buffer_.end(), data, data + size);
  }
  size_ += size;
  return Status::Ok();
}

Status LocalBlobWriter::CopyWithReadWrite(int source_fd, const std::string& source_path, uint64_t offset,
                                          uint64_t length) {
  std::vector<char> chunk(static_cast<size_t>(std::min<uint64_t>(length, limits::kBlobWriteBufferBytes)));
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(length, chunk.size()));
    SERAC_ASSIGN_OR_RETURN(size_t got, PreadSome(source_fd, chunk.data(), want, offset, source_path));
    if (got == 0) return Error(ErrorCode::kIoError, "source blob shrank while copying: " + source_path);
    SERAC_RETURN_IF_ERROR(WriteToFile(chunk.data(), got));
    offset += got;
    length -= got;
    size_ += got;
  }
  return Status::Ok();
}

Status LocalBlobWriter::AppendRange(int source_fd, const std::string& source_path, uint64_t offset,
                                    uint64_t length) {
  SERAC_RETURN_IF_ERROR(CheckOpen());
  Status status = Flush();
  // The kernel copies (or reflinks) without the data passing through user space when it can.
  loff_t source_offset = static_cast<loff_t>(offset);
  while (status.ok() && length > 0) {
    size_t step = static_cast<size_t>(std::min<uint64_t>(length, limits::kBlobCopyChunkBytes));
    ssize_t copied = ::copy_file_range(source_fd, &source_offset, fd_.get(), nullptr, step, 0);
    if (copied > 0) {
      length -= static_cast<uint64_t>(copied);
      size_ += static_cast<uint64_t>(copied);
      written_bytes_ += static_cast<uint64_t>(copied);
      StartWriteBack();
    } else if (copied == 0) {
      status = Error(ErrorCode::kIoError, "source blob shrank while copying: " + source_path);
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP ||
               errno == EPERM) {
      status = CopyWithReadWrite(source_fd, source_path, static_cast<uint64_t>(source_offset), length);
      length = 0;
    } else {
      status = ErrnoStatus("copy_file_range", source_path, errno);
    }
  }
  if (!status.ok()) return Fail(status);
  return Status::Ok();
}

Status LocalBlobWriter::Commit() {
  SERAC_RETURN_IF_ERROR(CheckOpen());
  Status status = Flush();
  if (status.ok()) status = store_->CommitTemporaryFile(fd_.get(), temp_path_, id_);
  if (!status.ok()) return Fail(status);
  fd_.Close();
  state_ = State::kCommitted;
  return Status::Ok();
}

void LocalBlobWriter::Abort() {
  if (state_ != State::kOpen) return;
  state_ = State::kFailed;
  fd_.Close();
  buffer_.clear();
  buffer_.shrink_to_fit();
  ::unlink(temp_path_.c_str());  // ENOENT is fine: a sweep may have removed it already
}

// ---------------------------------------------------------------------------------------------
// LocalBlobStore

Status LocalBlobStore::Initialize() {
  std::error_code error;
  std::filesystem::create_directories(blobs_dir_, error);
  if (!error) std::filesystem::create_directories(tmp_dir_, error);
  if (error)
    return Error(ErrorCode::kIoError, "cannot create blob store under " + root_ + ": " + error.message());
  if (fsync_) {
    SERAC_RETURN_IF_ERROR(FsyncDirectory(root_));
  }
  return Status::Ok();
}

Result<std::unique_ptr<LocalBlobWriter>> LocalBlobStore::CreateWriter(BlobId id) {
  std::string temp_path = tmp_dir_ + "/" + id;
  FileDescriptor fd(::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kFileMode));
  if (!fd.valid()) return ErrnoStatus("create", temp_path, errno);
  return std::make_unique<LocalBlobWriter>(this, std::move(id), std::move(temp_path), std::move(fd));
}

Result<std::unique_ptr<BlobWriter>> LocalBlobStore::Create() {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<LocalBlobWriter> writer, CreateWriter(RandomHexId()));
  return std::unique_ptr<BlobWriter>(std::move(writer));
}

Result<std::unique_ptr<BlobWriter>> LocalBlobStore::CreateWithId(const BlobId& id) {
  if (!IsValidBlobId(id)) return InvalidIdStatus(id);
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<LocalBlobWriter> writer, CreateWriter(id));
  return std::unique_ptr<BlobWriter>(std::move(writer));
}

Status LocalBlobStore::EnsureDurableDirectory(const std::string& path, const std::string& parent,
                                              std::vector<bool>& known, size_t index) {
  {
    std::lock_guard<std::mutex> lock(known_dirs_mutex_);
    if (known[index]) return Status::Ok();
  }
  SERAC_ASSIGN_OR_RETURN(bool created, MakeDirectory(path));
  (void)created;  // created or not, its entry may not be durable yet (another writer may have just made it)
  if (fsync_) {
    SERAC_RETURN_IF_ERROR(FsyncDirectory(parent));
  }
  std::lock_guard<std::mutex> lock(known_dirs_mutex_);
  known[index] = true;
  return Status::Ok();
}

Status LocalBlobStore::EnsureFanOutDirectories(const BlobId& id) {
  size_t level1 = HexPrefixValue(id, 2);
  size_t level2 = HexPrefixValue(id, 4);
  SERAC_RETURN_IF_ERROR(EnsureDurableDirectory(Level1Dir(id), blobs_dir_, known_level1_dirs_, level1));
  return EnsureDurableDirectory(Level2Dir(id), Level1Dir(id), known_level2_dirs_, level2);
}

Status LocalBlobStore::CommitTemporaryFile(int fd, const std::string& temp_path, const BlobId& id) {
  if (fsync_) {
    SERAC_RETURN_IF_ERROR(FsyncFile(fd, temp_path));
  }
  SERAC_RETURN_IF_ERROR(EnsureFanOutDirectories(id));
  std::string final_path = BlobPath(id);
  Status renamed = RenameNoReplace(temp_path, final_path);
  if (!renamed.ok()) {
    // The temp file vanished (swept) or the rename failed: either way there is no blob.
    return renamed.code() == ErrorCode::kNotFound ? Error(ErrorCode::kIoError, renamed.message()) : renamed;
  }
  if (fsync_) {
    Status synced = FsyncDirectory(Level2Dir(id));
    if (!synced.ok()) {
      // Promise kept: after an error the blob does not exist.
      ::unlink(final_path.c_str());
      return synced;
    }
  }
  return Status::Ok();
}

Result<BlobId> LocalBlobStore::CreateFromRange(const BlobId& source, uint64_t offset, uint64_t length) {
  if (!IsValidBlobId(source)) return InvalidIdStatus(source);
  std::string source_path = BlobPath(source);
  FileDescriptor source_fd(::open(source_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!source_fd.valid()) return ErrnoStatus("open", source_path, errno);
  struct stat info {};
  if (::fstat(source_fd.get(), &info) != 0) return ErrnoStatus("stat", source_path, errno);
  uint64_t source_size = static_cast<uint64_t>(info.st_size);
  if (offset > source_size || length > source_size - offset) {
    return Error(ErrorCode::kInvalidRange, "range beyond the end of blob " + source);
  }
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<LocalBlobWriter> writer, CreateWriter(RandomHexId()));
  SERAC_RETURN_IF_ERROR(writer->AppendRange(source_fd.get(), source_path, offset, length));
  SERAC_RETURN_IF_ERROR(writer->Commit());
  return writer->id();
}

Result<std::unique_ptr<BlobReader>> LocalBlobStore::Open(const BlobId& id) {
  if (!IsValidBlobId(id)) return InvalidIdStatus(id);
  std::string path = BlobPath(id);
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("open", path, errno);
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return ErrnoStatus("stat", path, errno);
  return std::unique_ptr<BlobReader>(
      std::make_unique<LocalBlobReader>(std::move(fd), static_cast<uint64_t>(info.st_size), std::move(path)));
}

Status LocalBlobStore::Remove(const BlobId& id) {
  if (!IsValidBlobId(id)) return InvalidIdStatus(id);
  std::string path = BlobPath(id);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("unlink", path, errno);
  return Status::Ok();
}

// The file's modification time: a blob's bytes are written before its commit renames it into
// place and never again, so this is when it was committed to within the write's duration.
Result<WallTime> LocalBlobStore::CommittedAt(const BlobId& id) {
  if (!IsValidBlobId(id)) return InvalidIdStatus(id);
  const std::string path = BlobPath(id);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Error(ErrorCode::kNotFound, "no blob " + id);
    return ErrnoStatus("stat", path, errno);
  }
  return WallTime(
      std::chrono::seconds(info.st_mtim.tv_sec) +
      std::chrono::duration_cast<WallTime::duration>(std::chrono::nanoseconds(info.st_mtim.tv_nsec)));
}

Status LocalBlobStore::ForEachBlob(const std::function<Status(const BlobId&)>& visit) {
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> level1_names, ListDirectory(blobs_dir_));
  for (const std::string& level1 : level1_names) {
    Result<std::vector<std::string>> level2_names = ListDirectory(blobs_dir_ + "/" + level1);
    // kNotFound: a stray file rather than a fan-out directory.
    if (!level2_names.ok() && level2_names.status().code() == ErrorCode::kNotFound) continue;
    SERAC_RETURN_IF_ERROR(level2_names.status());
    for (const std::string& level2 : *level2_names) {
      Result<std::vector<std::string>> ids = ListDirectory(blobs_dir_ + "/" + level1 + "/" + level2);
      if (!ids.ok() && ids.status().code() == ErrorCode::kNotFound) continue;
      SERAC_RETURN_IF_ERROR(ids.status());
      for (const std::string& id : *ids) {
        // Only names that sit where their id says count as blobs.
        if (!IsValidBlobId(id) || id.compare(0, 2, level1) != 0 || id.compare(2, 2, level2) != 0) continue;
        SERAC_RETURN_IF_ERROR(visit(id));
      }
    }
  }
  return Status::Ok();
}

Status LocalBlobStore::SweepTemporaryFiles() {
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDirectory(tmp_dir_));
  for (const std::string& name : names) {
    std::string path = tmp_dir_ + "/" + name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("unlink", path, errno);
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<BlobStore>> OpenLocalBlobStore(const LocalBlobStoreOptions& options) {
  if (options.root.empty()) return Error(ErrorCode::kInvalidArgument, "blob store root is empty");
  auto store = std::make_unique<LocalBlobStore>(options);
  SERAC_RETURN_IF_ERROR(store->Initialize());
  return std::unique_ptr<BlobStore>(std::move(store));
}

}  // namespace serac::blob
