// The one object path: how bytes become an object (kept in the index row up to a size, else in a
// blob written as they come), how the index row is committed without ever pointing at a blob that
// is not there or leaving one nothing points at, how an object's bytes are read back (whole, or a
// range streamed to a socket or into a new blob), and how an object's blobs are copied for another
// object. The S3 handlers and the catalog's metadata files both write and read through it.
// Thread-safety: the free functions are thread-safe (the stores are); an ObjectBodyWriter is used
// by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blob/blob_store.h"
#include "common/status.h"
#include "meta/meta_store.h"

namespace serac::objects {

// Collects an object's bytes: in memory while they fit `inline_bytes_max` (the object then lives
// in its index row), in one blob from the first byte beyond it on (or from the start when told
// the body will not fit). An unfinished writer discards its blob.
class ObjectBodyWriter {
 public:
  ObjectBodyWriter(blob::BlobStore& blobs, uint64_t inline_bytes_max)
      : blobs_(blobs), inline_max_(inline_bytes_max) {}

  // Writes to a blob from the start: the caller knows the body is larger than inline_bytes_max.
  Status StartBlob();
  Status Append(std::string_view bytes);
  // Commits the blob, if any, and fills record.size, record.inline_data and record.segments.
  Status Finish(meta::ObjectRecord& record);

  uint64_t size() const { return size_; }

 private:
  blob::BlobStore& blobs_;
  const uint64_t inline_max_;
  std::string inline_data_;
  std::unique_ptr<blob::BlobWriter> blob_;
  uint64_t size_ = 0;
};

// Commits `record` to the index under `condition`. When the index refuses it (a failed condition,
// a missing bucket, a disk error), the blobs the record names are removed again: nothing ever
// pointed at them. Returns the index's answer.
Status CommitObject(meta::MetaStore& meta, blob::BlobStore& blobs, const meta::ObjectRecord& record,
                    const meta::WriteCondition& condition);

// Records a part of a multipart upload whose blob is committed. When the index refuses it (the
// upload was completed or aborted meanwhile), the part's blob is removed again.
Status CommitPart(meta::MetaStore& meta, blob::BlobStore& blobs, const std::string& upload_id,
                  const meta::PartRecord& part);

// Removes blobs that no index row references (a write that did not land), logging what cannot be
// removed: the start-up sweep gets those.
void DiscardBlobs(blob::BlobStore& blobs, const std::vector<meta::Segment>& segments);

// Where ReadObjectRange delivers an object's bytes: a socket, a hash and a new blob, memory.
class ObjectByteSink {
 public:
  virtual ~ObjectByteSink() = default;
  // Called once, before any byte, with the number of bytes that follow. ReadObjectRange has opened
  // the first blob by then, so a missing blob is reported before anything was promised.
  virtual Status Begin(uint64_t length) = 0;
  virtual Status Write(std::string_view bytes) = 0;
  // `length` bytes of `blob` from `offset`. The default reads them through a buffer and Writes
  // them; a sink that can copy from the blob's file descriptor (sendfile) does that instead.
  virtual Status WriteBlobRange(blob::BlobReader& blob, uint64_t offset, uint64_t length);
  // The whole range at once when it is already in memory (an inline object): Begin and Write, or
  // one step where the sink has one (a head and a small body in one system call).
  virtual Status BeginWithBytes(std::string_view bytes);
};

// Streams `length` bytes of `object` from byte `first` (both within the object) to `sink`: from
// the index row for an inline object, else segment by segment. kIoError when a blob is shorter
// than its index entry; the sink's own errors pass through.
Status ReadObjectRange(blob::BlobStore& blobs, const meta::ObjectRecord& object, uint64_t first,
                       uint64_t length, ObjectByteSink& sink);

// `length` bytes of `object` from byte `first` (both within the object), in memory.
Result<std::string> ReadObjectRangeBytes(blob::BlobStore& blobs, const meta::ObjectRecord& object,
                                         uint64_t first, uint64_t length);

// The bytes of `object` (as the index returned it: inline, in segments, or in pieces whose shared
// texts the index filled in).
Result<std::string> ReadObjectBytes(blob::BlobStore& blobs, meta::ObjectRecord object);

// Gives `target` the bytes of `source` as its own: inline bytes are copied, every segment becomes a
// new blob (the back end may share the data: reflink, copy_file_range) so that removing either
// object never touches the other's. On failure no blob of the copy is left behind.
Status CopyObjectBytes(blob::BlobStore& blobs, const meta::ObjectRecord& source, meta::ObjectRecord& target);

}  // namespace serac::objects
