// FileIO: where a table writer's files go and its reads come from, so that the same writer code
// runs over S3 (client/), over serac's own object path in-process, or over a local directory
// (tools and tests). Locations are the table's own ("s3://bucket/key", "file:///abs/path", or a
// plain absolute path for the local implementation).
// Thread-safety: a FileIO may be shared by threads; an OutputFile is used by one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace serac::iceberg {

// A file being written. Nothing is visible at its location until Close succeeds; a file dropped or
// aborted before that leaves nothing behind.
class OutputFile {
 public:
  virtual ~OutputFile() = default;
  virtual Status Write(std::string_view bytes) = 0;
  // Makes the file durable and visible; returns its size in bytes.
  virtual Result<uint64_t> Close() = 0;
  virtual void Abort() = 0;
  virtual uint64_t bytes_written() const = 0;
};

class FileIO {
 public:
  virtual ~FileIO() = default;
  // A new file at `location`, replacing none: kAlreadyExists when one is there.
  virtual Result<std::unique_ptr<OutputFile>> Create(const std::string& location) = 0;
  // The whole file, refused past `bytes_max` (kInvalidArgument naming `limit_name`).
  virtual Result<std::string> ReadAll(const std::string& location, uint64_t bytes_max,
                                      std::string_view limit_name) = 0;
  // The file's size in bytes; kNotFound when there is none.
  virtual Result<uint64_t> Size(const std::string& location) = 0;
  // `length` bytes from `offset` (a deletion vector's blob, a Parquet footer); kInvalidArgument
  // when the file is shorter.
  virtual Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) = 0;
  virtual Status Delete(const std::string& location) = 0;
};

// A whole file written at once: created, written, closed (aborted on failure, so nothing is left
// at the location). Its size.
inline Result<uint64_t> WriteFile(FileIO& io, const std::string& location, std::string_view bytes) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> file, io.Create(location));
  if (Status written = file->Write(bytes); !written.ok()) {
    file->Abort();
    return written;
  }
  return file->Close();
}

// Files on the local file system: "file:///abs/path" or "/abs/path". Written to a temporary name
// beside the target, fsynced, then renamed, so a crash leaves no partial file at the location.
std::unique_ptr<FileIO> MakeLocalFileIO();

}  // namespace serac::iceberg
