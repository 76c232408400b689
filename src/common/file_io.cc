#include "common/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/blocking.h"

namespace serac::file_io {

Status ErrnoError(std::string_view what, const std::string& path) {
  return Error(ErrorCode::kIoError, std::string(what) + " " + path + ": " + std::strerror(errno));
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return ErrnoError("cannot write", path);
    data.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

Status FsyncDirectory(const std::string& dir) {
  const blocking::Region flush;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open directory", dir);
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) return ErrnoError("cannot fsync directory", dir);
  return Status::Ok();
}

}  // namespace serac::file_io
