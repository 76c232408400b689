// The local FileIO: a file is written under a temporary name in its directory, fsynced, renamed
// into place without replacing anything (link + unlink), and the directory fsynced.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/file_io.h"
#include "common/random.h"
#include "iceberg/io/file_io.h"

namespace serac::iceberg {

namespace {

using file_io::ErrnoError;
using file_io::FsyncDirectory;
using file_io::WriteAll;

Result<std::string> LocalPath(const std::string& location) {
  std::string_view path(location);
  if (path.starts_with("file://")) path.remove_prefix(7);
  if (!path.starts_with("/")) {
    return Error(ErrorCode::kInvalidArgument, "not a local absolute path or file:// location: " + location);
  }
  return std::string(path);
}

class LocalOutputFile final : public OutputFile {
 public:
  LocalOutputFile(int fd, std::string temp_path, std::string path)
      : fd_(fd), temp_path_(std::move(temp_path)), path_(std::move(path)) {}
  ~LocalOutputFile() override { Abort(); }

  Status Write(std::string_view bytes) override {
    if (fd_ < 0) return Error(ErrorCode::kInternal, "write to a closed file: " + path_);
    SERAC_RETURN_IF_ERROR(WriteAll(fd_, bytes, temp_path_));
    written_ += bytes.size();
    return Status::Ok();
  }

  Result<uint64_t> Close() override {
    if (fd_ < 0) return Error(ErrorCode::kInternal, "file closed twice: " + path_);
    if (::fsync(fd_) != 0) return ErrnoError("fsync", temp_path_);
    ::close(fd_);
    fd_ = -1;
    // link() refuses an existing target: a file is never replaced.
    if (::link(temp_path_.c_str(), path_.c_str()) != 0) {
      const int saved = errno;
      ::unlink(temp_path_.c_str());
      if (saved == EEXIST) return Error(ErrorCode::kAlreadyExists, "file exists: " + path_);
      errno = saved;
      return ErrnoError("link", path_);
    }
    ::unlink(temp_path_.c_str());
    SERAC_RETURN_IF_ERROR(FsyncDirectory(std::filesystem::path(path_).parent_path().string()));
    return written_;
  }

  void Abort() override {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
    ::unlink(temp_path_.c_str());
  }

  uint64_t bytes_written() const override { return written_; }

 private:
  int fd_;
  std::string temp_path_;
  std::string path_;
  uint64_t written_ = 0;
};

class LocalFileIO final : public FileIO {
 public:
  Result<std::unique_ptr<OutputFile>> Create(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(std::string path, LocalPath(location));
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
    if (error)
      return Error(ErrorCode::kIoError, "cannot create the directory of " + path + ": " + error.message());
    if (std::filesystem::exists(path)) return Error(ErrorCode::kAlreadyExists, "file exists: " + path);
    std::string temp = path + ".tmp-" + RandomHexId(8);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoError("open", temp);
    return std::unique_ptr<OutputFile>(new LocalOutputFile(fd, std::move(temp), std::move(path)));
  }

  Result<std::string> ReadAll(const std::string& location, uint64_t bytes_max,
                              std::string_view limit_name) override {
    SERAC_ASSIGN_OR_RETURN(std::string path, LocalPath(location));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Error(ErrorCode::kNotFound, "no such file: " + path);
      return ErrnoError("open", path);
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      ::close(fd);
      return ErrnoError("stat", path);
    }
    if (static_cast<uint64_t>(info.st_size) > bytes_max) {
      ::close(fd);
      return Error(ErrorCode::kInvalidArgument, path + " is larger than " + std::string(limit_name) + " (" +
                                                    std::to_string(bytes_max) + " bytes)");
    }
    std::string bytes(static_cast<size_t>(info.st_size), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        return ErrnoError("read", path);
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    return bytes;
  }

  Result<uint64_t> Size(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(std::string path, LocalPath(location));
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
      if (errno == ENOENT) return Error(ErrorCode::kNotFound, "no such file: " + path);
      return ErrnoError("stat", path);
    }
    return static_cast<uint64_t>(info.st_size);
  }

  Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) override {
    SERAC_ASSIGN_OR_RETURN(std::string path, LocalPath(location));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Error(ErrorCode::kNotFound, "no such file: " + path);
      return ErrnoError("open", path);
    }
    std::string bytes(static_cast<size_t>(length), '\0');
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ::close(fd);
        return ErrnoError("read", path);
      }
      if (n == 0) {
        ::close(fd);
        return Error(ErrorCode::kInvalidArgument,
                     path + " ends before byte " + std::to_string(offset + length));
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    return bytes;
  }

  Status Delete(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(std::string path, LocalPath(location));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoError("unlink", path);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<FileIO> MakeLocalFileIO() { return std::make_unique<LocalFileIO>(); }

}  // namespace serac::iceberg
