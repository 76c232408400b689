#include "objects/object_io.h"

#include <algorithm>

#include "common/limits.h"
#include "common/log.h"

namespace serac::objects {

Status ObjectBodyWriter::StartBlob() {
  if (blob_) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(blob_, blobs_.Create());
  if (!inline_data_.empty()) {
    SERAC_RETURN_IF_ERROR(blob_->Append(inline_data_.data(), inline_data_.size()));
    inline_data_.clear();
  }
  return Status::Ok();
}

Status ObjectBodyWriter::Append(std::string_view bytes) {
  if (bytes.empty()) return Status::Ok();
  size_ += bytes.size();
  if (!blob_) {
    inline_data_.append(bytes);
    if (inline_data_.size() <= inline_max_) return Status::Ok();
    return StartBlob();  // moves what was collected into the blob
  }
  return blob_->Append(bytes.data(), bytes.size());
}

Status ObjectBodyWriter::Finish(meta::ObjectRecord& record) {
  record.size = size_;
  record.segments.clear();
  if (!blob_) {
    record.inline_data = std::move(inline_data_);
    return Status::Ok();
  }
  SERAC_RETURN_IF_ERROR(blob_->Commit());
  record.inline_data.clear();
  record.segments.push_back({blob_->id(), size_});
  return Status::Ok();
}

Status CommitObject(meta::MetaStore& meta, blob::BlobStore& blobs, const meta::ObjectRecord& record,
                    const meta::WriteCondition& condition) {
  Status stored = meta.PutObject(record, condition);
  if (!stored.ok()) DiscardBlobs(blobs, record.segments);  // the index never pointed at them
  return stored;
}

Status CommitPart(meta::MetaStore& meta, blob::BlobStore& blobs, const std::string& upload_id,
                  const meta::PartRecord& part) {
  Status stored = meta.PutPart(upload_id, part);
  if (!stored.ok()) DiscardBlobs(blobs, {{part.blob_id, part.size}});
  return stored;
}

void DiscardBlobs(blob::BlobStore& blobs, const std::vector<meta::Segment>& segments) {
  for (const meta::Segment& segment : segments) {
    Status removed = blobs.Remove(segment.blob_id);
    if (!removed.ok()) {
      log::Warn("objects: could not remove unreferenced blob " + segment.blob_id + ": " + removed.ToString());
    }
  }
}

Status ObjectByteSink::WriteBlobRange(blob::BlobReader& blob, uint64_t offset, uint64_t length) {
  std::string buffer(static_cast<size_t>(std::min<uint64_t>(limits::kIoBufferBytes, length)), '\0');
  while (length > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), length));
    SERAC_ASSIGN_OR_RETURN(size_t got, blob.ReadAt(offset, buffer.data(), want));
    if (got == 0) return Error(ErrorCode::kIoError, "blob shorter than its index entry");
    SERAC_RETURN_IF_ERROR(Write(std::string_view(buffer.data(), got)));
    offset += got;
    length -= got;
  }
  return Status::Ok();
}

Status ObjectByteSink::BeginWithBytes(std::string_view bytes) {
  SERAC_RETURN_IF_ERROR(Begin(bytes.size()));
  return bytes.empty() ? Status::Ok() : Write(bytes);
}

Status ReadObjectRange(blob::BlobStore& blobs, const meta::ObjectRecord& object, uint64_t first,
                       uint64_t length, ObjectByteSink& sink) {
  if (object.segments.empty()) {
    std::string_view bytes(object.inline_data);
    return sink.BeginWithBytes(bytes.substr(std::min<uint64_t>(first, bytes.size()), length));
  }
  const uint64_t end = first + length;
  uint64_t segment_start = 0;
  bool begun = false;
  for (const meta::Segment& segment : object.segments) {
    const uint64_t segment_end = segment_start + segment.size;
    const uint64_t from = std::max(first, segment_start);
    const uint64_t to = std::min(end, segment_end);
    const uint64_t base = segment_start;
    segment_start = segment_end;
    if (from >= to) continue;
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobReader> reader, blobs.Open(segment.blob_id));
    if (!begun) {
      SERAC_RETURN_IF_ERROR(sink.Begin(length));
      begun = true;
    }
    SERAC_RETURN_IF_ERROR(sink.WriteBlobRange(*reader, from - base, to - from));
  }
  if (!begun) return sink.Begin(0);
  return Status::Ok();
}

namespace {

// Collects the bytes in memory (ReadObjectBytes).
class StringSink final : public ObjectByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  Status Begin(uint64_t length) override {
    out_.reserve(length);
    return Status::Ok();
  }
  Status Write(std::string_view bytes) override {
    out_.append(bytes);
    return Status::Ok();
  }

 private:
  std::string& out_;
};

}  // namespace

Result<std::string> ReadObjectRangeBytes(blob::BlobStore& blobs, const meta::ObjectRecord& object,
                                         uint64_t first, uint64_t length) {
  std::string bytes;
  if (length == 0) return bytes;
  StringSink sink(bytes);
  SERAC_RETURN_IF_ERROR(ReadObjectRange(blobs, object, first, length, sink));
  return bytes;
}

Result<std::string> ReadObjectBytes(blob::BlobStore& blobs, meta::ObjectRecord object) {
  if (object.segments.empty()) return std::move(object.inline_data);
  SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadObjectRangeBytes(blobs, object, 0, object.size));
  if (bytes.size() != object.size) {
    return Error(ErrorCode::kIoError, "object " + object.key + " has " + std::to_string(bytes.size()) +
                                          " bytes in its blobs, its index entry says " +
                                          std::to_string(object.size));
  }
  return bytes;
}

Status CopyObjectBytes(blob::BlobStore& blobs, const meta::ObjectRecord& source, meta::ObjectRecord& target) {
  target.inline_data = source.inline_data;
  target.segments.clear();
  for (const meta::Segment& segment : source.segments) {
    Result<blob::BlobId> copied = blobs.CreateFromRange(segment.blob_id, 0, segment.size);
    if (!copied.ok()) {
      DiscardBlobs(blobs, target.segments);
      target.segments.clear();
      return copied.status();
    }
    target.segments.push_back({std::move(copied).value(), segment.size});
  }
  return Status::Ok();
}

}  // namespace serac::objects
