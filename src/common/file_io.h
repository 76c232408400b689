// Small helpers for files that must be durable: the server key and the root credentials are
// written with them (temp file, WriteAll, fsync, rename, FsyncDirectory). Errors are kIoError
// naming the path and the system's reason. Thread-safe: no state.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace serac::file_io {

// kIoError "<what> <path>: <strerror(errno)>", for the errno of the call that just failed.
Status ErrnoError(std::string_view what, const std::string& path);

// Writes all of `data` to `fd` (retrying short writes and EINTR); `path` names the file in errors.
Status WriteAll(int fd, std::string_view data, const std::string& path);

// Makes the directory's entries (a created or renamed file) durable.
Status FsyncDirectory(const std::string& dir);

}  // namespace serac::file_io
