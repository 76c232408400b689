// BlobStore: immutable byte blobs under unique ids. A blob is written once through a BlobWriter,
// becomes visible only when Commit() returns OK (data and directory entry on stable storage), and
// is never modified afterwards; it is removed only by Remove(). Back ends: local/ (a directory).
//
// Thread-safety: BlobStore methods are thread-safe. BlobWriter and BlobReader are used by one
// thread at a time.
// ForEachBlob and SweepTemporaryFiles serve the start-up sweep, which assumes no other process
// writes to the store meanwhile (see the single-process assumptions in meta/meta_store.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace serac::blob {

// 32 lower-case hex characters (128 random bits).
using BlobId = std::string;

class BlobWriter {
 public:
  virtual ~BlobWriter() = default;
  virtual Status Append(const char* data, size_t size) = 0;
  // Makes the blob durable and visible under id(). After an error the blob does not exist.
  virtual Status Commit() = 0;
  // Discards the partial blob (also done by the destructor when not committed).
  virtual void Abort() = 0;
  virtual const BlobId& id() const = 0;
  virtual uint64_t size() const = 0;
};

class BlobReader {
 public:
  virtual ~BlobReader() = default;
  virtual uint64_t size() const = 0;
  // Reads up to `size` bytes at `offset`; returns the count (0 only at end of blob).
  virtual Result<size_t> ReadAt(uint64_t offset, char* buffer, size_t size) = 0;
  // An open file descriptor for zero-copy sends, or -1 when the back end has none.
  virtual int native_fd() const = 0;
};

class BlobStore {
 public:
  virtual ~BlobStore() = default;
  virtual Result<std::unique_ptr<BlobWriter>> Create() = 0;
  // A writer whose blob takes the given id, for moving blobs between stores under the ids the
  // metadata names (`serac admin migrate --copy-blobs-to`). Commit never replaces a blob: it fails
  // with kAlreadyExists when one has that id. kInvalidArgument for an id that is not a blob id.
  virtual Result<std::unique_ptr<BlobWriter>> CreateWithId(const BlobId& id) = 0;
  // Copies the byte range of an existing blob into a new committed blob (UploadPartCopy, CopyObject).
  // Back ends may use copy_file_range/reflink.
  virtual Result<BlobId> CreateFromRange(const BlobId& source, uint64_t offset, uint64_t length) = 0;
  virtual Result<std::unique_ptr<BlobReader>> Open(const BlobId& id) = 0;
  // Removing a missing blob is OK (idempotent, for GC retries).
  virtual Status Remove(const BlobId& id) = 0;
  // Calls visit(id) for every committed blob (start-up orphan sweep). Stops early on non-OK.
  virtual Status ForEachBlob(const std::function<Status(const BlobId&)>& visit) = 0;
  // When the blob was committed (to the store's clock, at least to the second); kNotFound when it
  // does not exist. An orphan sweep over a store other processes write to spares the young ones.
  virtual Result<WallTime> CommittedAt(const BlobId& id) = 0;
  // Deletes leftovers of writers that never committed (start-up sweep). Not safe while writers run.
  virtual Status SweepTemporaryFiles() = 0;
  // Whether the store answers now (the readiness probe): OK, or why not. A directory on the
  // server's own disk always does; a store behind the network asks it, once, without retrying.
  virtual Status CheckReachable() { return Status::Ok(); }
};

}  // namespace serac::blob
