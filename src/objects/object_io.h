// The one object path: how bytes become an object (kept in the index row up to a size, else in a
// blob written as they come), how the index row is committed without ever pointing at a blob that
// is not there or leaving one nothing points at, and how an object's bytes are read back whole
// (inline, segments or pieces). The S3 handlers and the catalog's metadata files both write and
// read through it.
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

// Removes blobs that no index row references (a write that did not land), logging what cannot be
// removed: the start-up sweep gets those.
void DiscardBlobs(blob::BlobStore& blobs, const std::vector<meta::Segment>& segments);

// Appends one segment's bytes to `out`; kIoError when the blob is shorter than its index entry.
Status AppendSegment(blob::BlobStore& blobs, const meta::Segment& segment, std::string& out);

// The bytes of `object` (as the index returned it: inline, in segments, or in pieces whose shared
// texts the index filled in).
Result<std::string> ReadObjectBytes(blob::BlobStore& blobs, meta::ObjectRecord object);

}  // namespace serac::objects
