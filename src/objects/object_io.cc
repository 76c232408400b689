#include "objects/object_io.h"

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

void DiscardBlobs(blob::BlobStore& blobs, const std::vector<meta::Segment>& segments) {
  for (const meta::Segment& segment : segments) {
    Status removed = blobs.Remove(segment.blob_id);
    if (!removed.ok()) {
      log::Warn("objects: could not remove unreferenced blob " + segment.blob_id + ": " + removed.ToString());
    }
  }
}

Status AppendSegment(blob::BlobStore& blobs, const meta::Segment& segment, std::string& out) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobReader> reader, blobs.Open(segment.blob_id));
  const size_t start = out.size();
  out.resize(start + segment.size);
  uint64_t done = 0;
  while (done < segment.size) {
    SERAC_ASSIGN_OR_RETURN(size_t got, reader->ReadAt(done, out.data() + start + done, segment.size - done));
    if (got == 0) return Error(ErrorCode::kIoError, "blob shorter than its index entry: " + segment.blob_id);
    done += got;
  }
  return Status::Ok();
}

Result<std::string> ReadObjectBytes(blob::BlobStore& blobs, meta::ObjectRecord object) {
  if (object.segments.empty()) return std::move(object.inline_data);
  std::string bytes;
  bytes.reserve(object.size);
  for (const meta::Segment& segment : object.segments)
    SERAC_RETURN_IF_ERROR(AppendSegment(blobs, segment, bytes));
  return bytes;
}

}  // namespace serac::objects
