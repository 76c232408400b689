#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include "common/file_io.h"
#include "meta/sqlite/wal_file_internal.h"

namespace serac::meta::sqlite {

WalFile::WalFile(std::string database_path) : path_(std::move(database_path) + "-wal") {}

WalFile::~WalFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status WalFile::Sync() {
  struct stat now {};
  if (::stat(path_.c_str(), &now) != 0) return file_io::ErrnoError("cannot find the metadata log", path_);
  if (fd_ < 0 || now.st_dev != device_ || now.st_ino != inode_) SERAC_RETURN_IF_ERROR(Reopen());
  if (::fdatasync(fd_) != 0) return file_io::ErrnoError("cannot fsync the metadata log", path_);
  return Status::Ok();
}

Status WalFile::Reopen() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return file_io::ErrnoError("cannot open the metadata log", path_);
  struct stat opened {};
  if (::fstat(fd_, &opened) != 0) return file_io::ErrnoError("cannot stat the metadata log", path_);
  // A log created since the last open is durable only once its name is.
  std::string directory = std::filesystem::path(path_).parent_path().string();
  SERAC_RETURN_IF_ERROR(file_io::FsyncDirectory(directory.empty() ? "." : directory));
  device_ = opened.st_dev;
  inode_ = opened.st_ino;
  return Status::Ok();
}

}  // namespace serac::meta::sqlite
