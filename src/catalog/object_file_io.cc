// iceberg::FileIO on the object path: what S3's PutObject and GetObject do for a request, done
// for the server's own table writers without HTTP in between.
#include "blob/blob_store.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/in_process_tables.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"
#include "meta/catalog_locations.h"
#include "objects/object_io.h"

namespace serac::catalog {
namespace {

Result<S3Location> ObjectLocation(const std::string& location) {
  auto parsed = ParseS3Location(location);
  if (!parsed || parsed->bucket.empty() || parsed->key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "not an s3:// object location: " + location);
  }
  return *parsed;
}

class ObjectOutputFile final : public iceberg::OutputFile {
 public:
  ObjectOutputFile(meta::MetaStore& meta, blob::BlobStore& blobs, S3Location target, std::string location)
      : meta_(meta),
        blobs_(blobs),
        target_(std::move(target)),
        location_(std::move(location)),
        body_(std::make_unique<objects::ObjectBodyWriter>(blobs, limits::kInlineObjectBytesMax)),
        md5_(Digest::Algorithm::kMd5),
        crc_(ChecksumAlgorithm::kCrc64Nvme) {}

  Status Write(std::string_view bytes) override {
    if (!body_) return Error(ErrorCode::kInternal, "write to a closed file: " + location_);
    SERAC_RETURN_IF_ERROR(body_->Append(bytes));
    md5_.Update(bytes);
    crc_.Update(bytes.data(), bytes.size());
    return Status::Ok();
  }

  Result<uint64_t> Close() override {
    if (!body_) return Error(ErrorCode::kInternal, "file closed twice: " + location_);
    std::unique_ptr<objects::ObjectBodyWriter> body = std::move(body_);
    meta::ObjectRecord record;
    record.bucket = target_.bucket;
    record.key = target_.key;
    record.mtime_ms = ToUnixMillis(Now());
    record.etag = HexEncode(md5_.Finish());
    record.checksum = meta::ChecksumRecord{std::string(ChecksumAlgorithmName(ChecksumAlgorithm::kCrc64Nvme)),
                                           Base64Encode(crc_.Finish()), "FULL_OBJECT"};
    SERAC_RETURN_IF_ERROR(body->Finish(record));
    meta::WriteCondition never_replace;
    never_replace.if_none_match_any = true;
    Status committed = objects::CommitObject(meta_, blobs_, record, never_replace);
    if (committed.code() == ErrorCode::kPreconditionFailed) {
      return Error(ErrorCode::kAlreadyExists, "file already exists: " + location_);
    }
    if (committed.code() == ErrorCode::kNotFound) {
      return Error(ErrorCode::kNotFound,
                   "no such bucket: " + target_.bucket + " (writing " + location_ + ")");
    }
    SERAC_RETURN_IF_ERROR(committed);
    return record.size;
  }

  void Abort() override { body_.reset(); }  // an unfinished body writer discards its blob

  uint64_t bytes_written() const override { return body_ ? body_->size() : 0; }

 private:
  meta::MetaStore& meta_;
  blob::BlobStore& blobs_;
  const S3Location target_;
  const std::string location_;
  std::unique_ptr<objects::ObjectBodyWriter> body_;  // null once closed or aborted
  Digest md5_;
  Checksummer crc_;
};

class ObjectFileIO final : public iceberg::FileIO {
 public:
  ObjectFileIO(meta::MetaStore& meta, blob::BlobStore& blobs) : meta_(meta), blobs_(blobs) {}

  Result<std::unique_ptr<iceberg::OutputFile>> Create(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(S3Location target, ObjectLocation(location));
    return std::unique_ptr<iceberg::OutputFile>(
        std::make_unique<ObjectOutputFile>(meta_, blobs_, std::move(target), location));
  }

  Result<std::string> ReadAll(const std::string& location, uint64_t bytes_max,
                              std::string_view limit_name) override {
    SERAC_ASSIGN_OR_RETURN(meta::ObjectRecord object, Find(location));
    if (object.size > bytes_max) {
      return Error(ErrorCode::kInvalidArgument, location + " is " + std::to_string(object.size) +
                                                    " bytes, more than " + std::string(limit_name) + " (" +
                                                    std::to_string(bytes_max) + " bytes)");
    }
    return objects::ReadObjectBytes(blobs_, std::move(object));
  }

  Result<uint64_t> Size(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(meta::ObjectRecord object, Find(location));
    return object.size;
  }

  Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) override {
    SERAC_ASSIGN_OR_RETURN(meta::ObjectRecord object, Find(location));
    if (offset > object.size || length > object.size - offset) {
      return Error(ErrorCode::kInvalidArgument, location + " is " + std::to_string(object.size) +
                                                    " bytes, shorter than the range " +
                                                    std::to_string(offset) + "+" + std::to_string(length));
    }
    return objects::ReadObjectRangeBytes(blobs_, object, offset, length);
  }

  Status Delete(const std::string& location) override {
    SERAC_ASSIGN_OR_RETURN(S3Location target, ObjectLocation(location));
    Status deleted = meta_.DeleteObject(target.bucket, target.key, {});
    if (deleted.code() == ErrorCode::kNotFound) return Status::Ok();  // as S3's DELETE: already gone
    return deleted;
  }

 private:
  Result<meta::ObjectRecord> Find(const std::string& location) {
    SERAC_ASSIGN_OR_RETURN(S3Location target, ObjectLocation(location));
    auto object = meta_.GetObject(target.bucket, target.key);
    if (!object.ok() && object.status().code() == ErrorCode::kNotFound) {
      return Error(ErrorCode::kNotFound, "no such file: " + location);
    }
    return object;
  }

  meta::MetaStore& meta_;
  blob::BlobStore& blobs_;
};

// An ObjectFileIO that refuses every location outside what one table owns.
class TableFileIO final : public iceberg::FileIO {
 public:
  TableFileIO(meta::MetaStore& meta, blob::BlobStore& blobs, std::string warehouse, std::string owned_key)
      : files_(meta, blobs), warehouse_(std::move(warehouse)), owned_key_(std::move(owned_key)) {}

  Result<std::unique_ptr<iceberg::OutputFile>> Create(const std::string& location) override {
    SERAC_RETURN_IF_ERROR(RequireOwned(location));
    return files_.Create(location);
  }
  Result<std::string> ReadAll(const std::string& location, uint64_t bytes_max,
                              std::string_view limit_name) override {
    SERAC_RETURN_IF_ERROR(RequireOwned(location));
    return files_.ReadAll(location, bytes_max, limit_name);
  }
  Result<uint64_t> Size(const std::string& location) override {
    SERAC_RETURN_IF_ERROR(RequireOwned(location));
    return files_.Size(location);
  }
  Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) override {
    SERAC_RETURN_IF_ERROR(RequireOwned(location));
    return files_.ReadRange(location, offset, length);
  }
  Status Delete(const std::string& location) override {
    SERAC_RETURN_IF_ERROR(RequireOwned(location));
    return files_.Delete(location);
  }

 private:
  Status RequireOwned(const std::string& location) const {
    return RequireOwnedFile(warehouse_, owned_key_, location);
  }

  ObjectFileIO files_;
  const std::string warehouse_;
  const std::string owned_key_;
};

}  // namespace

Status RequireOwnedFile(std::string_view warehouse, std::string_view owned_key, const std::string& location) {
  std::optional<std::string> key = meta::LocationKeyIn(warehouse, location);
  if (key && *key != owned_key && meta::KeyAtOrBelow(*key, owned_key)) return Status::Ok();
  return Error(ErrorCode::kAccessDenied, location + " is outside s3://" + std::string(warehouse) + "/" +
                                             std::string(owned_key) +
                                             "/, the location of the table it was read or deleted for");
}

std::unique_ptr<iceberg::FileIO> MakeObjectFileIO(meta::MetaStore& meta, blob::BlobStore& blobs) {
  return std::make_unique<ObjectFileIO>(meta, blobs);
}

std::unique_ptr<iceberg::FileIO> MakeTableFileIO(meta::MetaStore& meta, blob::BlobStore& blobs,
                                                 std::string warehouse, std::string owned_key) {
  return std::make_unique<TableFileIO>(meta, blobs, std::move(warehouse), std::move(owned_key));
}

}  // namespace serac::catalog
