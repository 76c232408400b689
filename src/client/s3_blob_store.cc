#include "client/s3_blob_store.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/limits.h"
#include "common/random.h"
#include "common/store_url.h"

namespace serac::client {
namespace {

bool IsValidBlobId(std::string_view id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Status InvalidId(std::string_view id) {
  return Error(ErrorCode::kInvalidArgument, "not a blob id: \"" + std::string(id.substr(0, 64)) + "\"");
}

// Errors after which the same request may succeed: the upstream asked to be tried again, or the
// answer was lost (only idempotent requests are retried).
bool Retryable(const Status& status) {
  return status.code() == ErrorCode::kUnavailable || status.code() == ErrorCode::kOutcomeUnknown;
}

const Status& StatusOf(const Status& status) { return status; }
template <typename T>
Status StatusOf(const Result<T>& result) {
  return result.status();
}

// Runs `call` (an idempotent request) again while it fails with a retryable error, waiting
// limits::kS3BlobStoreRetryBaseMs, doubling, between attempts.
template <typename Call>
auto WithRetries(Call call) -> decltype(call()) {
  for (uint32_t attempt = 1;; ++attempt) {
    auto result = call();
    if (result.ok() || !Retryable(StatusOf(result)) || attempt >= limits::kS3BlobStoreAttemptsMax)
      return result;
    std::this_thread::sleep_for(std::chrono::milliseconds(limits::kS3BlobStoreRetryBaseMs << (attempt - 1)));
  }
}

class S3BlobWriter final : public blob::BlobWriter {
 public:
  S3BlobWriter(const S3Client& client, const std::string& bucket, std::string key, blob::BlobId id)
      : client_(client),
        bucket_(bucket),
        key_(std::move(key)),
        id_(std::move(id)),
        upload_(client, bucket, key_, true) {}

  Status Append(const char* data, size_t size) override {
    if (state_ != State::kOpen)
      return Error(ErrorCode::kInvalidArgument, "blob " + id_ + " is not open for writing");
    Status written = upload_.Write(std::string_view(data, size));
    if (!written.ok()) Abort();
    return written;
  }

  Status Commit() override {
    if (state_ != State::kOpen)
      return Error(ErrorCode::kInvalidArgument, "blob " + id_ + " is not open for writing");
    const uint64_t size = upload_.bytes_written();
    Result<PutObjectResult> closed = upload_.Close();
    if (!closed.ok() && closed.status().code() == ErrorCode::kOutcomeUnknown) {
      // The upload's answer was lost: the blob exists exactly when the upstream has its object
      // (no other writer uses this random id), at its size.
      Result<ObjectInfo> there = WithRetries([&] { return client_.HeadObject(bucket_, key_); });
      if (there.ok() && there->size == size) {
        state_ = State::kCommitted;
        return Status::Ok();
      }
      if (!there.ok() && there.status().code() != ErrorCode::kNotFound) return closed.status();
    }
    if (!closed.ok()) {
      state_ = State::kFailed;
      // Written with If-None-Match: * — only a blob given its id (CreateWithId) can meet one.
      if (closed.status().code() == ErrorCode::kPreconditionFailed) {
        return Error(ErrorCode::kAlreadyExists, "blob exists: " + id_);
      }
      return closed.status();
    }
    state_ = State::kCommitted;
    return Status::Ok();
  }

  void Abort() override {
    if (state_ != State::kOpen) return;
    upload_.Abort();
    state_ = State::kFailed;
  }

  const blob::BlobId& id() const override { return id_; }
  uint64_t size() const override { return upload_.bytes_written(); }

 private:
  enum class State { kOpen, kCommitted, kFailed };
  const S3Client& client_;
  const std::string& bucket_;
  const std::string key_;
  const blob::BlobId id_;
  S3Upload upload_;
  State state_ = State::kOpen;
};

// Ranged GETs, a window of limits::kS3BlobReadAheadBytes at a time, so that a reader reading in
// small pieces from the start sends one request per window.
class S3BlobReader final : public blob::BlobReader {
 public:
  S3BlobReader(const S3Client& client, const std::string& bucket, std::string key, uint64_t size)
      : client_(client), bucket_(bucket), key_(std::move(key)), size_(size) {}

  uint64_t size() const override { return size_; }
  int native_fd() const override { return -1; }

  Result<size_t> ReadAt(uint64_t offset, char* buffer, size_t size) override {
    if (offset >= size_ || size == 0) return size_t{0};
    const uint64_t wanted = std::min<uint64_t>(size, size_ - offset);
    if (offset < window_offset_ || offset >= window_offset_ + window_.size()) {
      const uint64_t length =
          std::min<uint64_t>(std::max<uint64_t>(wanted, limits::kS3BlobReadAheadBytes), size_ - offset);
      SERAC_ASSIGN_OR_RETURN(std::string bytes, WithRetries([&] {
                               return client_.GetObject(bucket_, key_,
                                                        std::make_pair(offset, offset + length - 1));
                             }));
      if (bytes.size() != length) {
        return Error(ErrorCode::kInternal, "s3://" + bucket_ + "/" + key_ + " answered " +
                                               std::to_string(bytes.size()) + " bytes for a range of " +
                                               std::to_string(length));
      }
      window_ = std::move(bytes);
      window_offset_ = offset;
    }
    const size_t count =
        static_cast<size_t>(std::min<uint64_t>(wanted, window_offset_ + window_.size() - offset));
    std::copy_n(window_.data() + (offset - window_offset_), count, buffer);
    return count;
  }

 private:
  const S3Client& client_;
  const std::string& bucket_;
  const std::string key_;
  const uint64_t size_;
  std::string window_;
  uint64_t window_offset_ = 0;
};

class S3BlobStore final : public blob::BlobStore {
 public:
  S3BlobStore(S3Client client, std::string bucket, std::string prefix, std::chrono::seconds stale_upload_age)
      : client_(std::move(client)),
        bucket_(std::move(bucket)),
        prefix_(std::move(prefix)),
        stale_upload_age_(stale_upload_age) {}

  Result<std::unique_ptr<blob::BlobWriter>> Create() override {
    blob::BlobId id = RandomHexId();
    std::string key = Key(id);  // before `id` is moved: argument order is unspecified
    return std::unique_ptr<blob::BlobWriter>(
        new S3BlobWriter(client_, bucket_, std::move(key), std::move(id)));
  }

  Result<std::unique_ptr<blob::BlobWriter>> CreateWithId(const blob::BlobId& id) override {
    if (!IsValidBlobId(id)) return InvalidId(id);
    return std::unique_ptr<blob::BlobWriter>(new S3BlobWriter(client_, bucket_, Key(id), id));
  }

  Result<blob::BlobId> CreateFromRange(const blob::BlobId& source, uint64_t offset,
                                       uint64_t length) override {
    if (!IsValidBlobId(source)) return InvalidId(source);
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobReader> reader, Open(source));
    if (offset > reader->size() || length > reader->size() - offset) {
      return Error(ErrorCode::kInvalidRange, "range beyond the end of blob " + source);
    }
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobWriter> writer, Create());
    std::string chunk(static_cast<size_t>(std::min<uint64_t>(length, limits::kS3BlobReadAheadBytes)), '\0');
    for (uint64_t done = 0; done < length;) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(chunk.size(), length - done));
      SERAC_ASSIGN_OR_RETURN(size_t got, reader->ReadAt(offset + done, chunk.data(), want));
      if (got == 0) return Error(ErrorCode::kInternal, "blob " + source + " ended early");
      SERAC_RETURN_IF_ERROR(writer->Append(chunk.data(), got));
      done += got;
    }
    SERAC_RETURN_IF_ERROR(writer->Commit());
    return writer->id();
  }

  Result<std::unique_ptr<blob::BlobReader>> Open(const blob::BlobId& id) override {
    if (!IsValidBlobId(id)) return InvalidId(id);
    SERAC_ASSIGN_OR_RETURN(ObjectInfo info,
                           WithRetries([&] { return client_.HeadObject(bucket_, Key(id)); }));
    return std::unique_ptr<blob::BlobReader>(new S3BlobReader(client_, bucket_, Key(id), info.size));
  }

  Status Remove(const blob::BlobId& id) override {
    if (!IsValidBlobId(id)) return InvalidId(id);
    return WithRetries([&] { return client_.DeleteObject(bucket_, Key(id)); });
  }

  Status ForEachBlob(const std::function<Status(const blob::BlobId&)>& visit) override {
    std::string token;
    do {
      SERAC_ASSIGN_OR_RETURN(ListObjectsPage page,
                             WithRetries([&] { return client_.ListObjects(bucket_, prefix_, token); }));
      for (const ObjectInfo& object : page.objects) {
        const std::string_view id = std::string_view(object.key).substr(prefix_.size());
        if (!IsValidBlobId(id)) continue;  // not one of ours (the bucket may hold other things)
        SERAC_RETURN_IF_ERROR(visit(std::string(id)));
      }
      token = std::move(page.next_continuation_token);
    } while (!token.empty());
    return Status::Ok();
  }

  Result<WallTime> CommittedAt(const blob::BlobId& id) override {
    if (!IsValidBlobId(id)) return InvalidId(id);
    SERAC_ASSIGN_OR_RETURN(ObjectInfo info,
                           WithRetries([&] { return client_.HeadObject(bucket_, Key(id)); }));
    if (!info.last_modified) {
      return Error(ErrorCode::kInternal, "s3://" + bucket_ + "/" + Key(id) + " has no Last-Modified");
    }
    return *info.last_modified;
  }

  // Uploads of blobs under the prefix that never completed (a writer cut short by a crash), begun
  // longer ago than the store's stale-upload age, are aborted: their parts are invisible but take
  // space. Younger ones may belong to a writer still running (another node, with a shared prefix).
  Status SweepTemporaryFiles() override {
    const WallTime cut = Now() - stale_upload_age_;
    std::string key_marker, upload_marker;
    do {
      SERAC_ASSIGN_OR_RETURN(ListUploadsPage page, WithRetries([&] {
                               return client_.ListMultipartUploads(bucket_, prefix_, key_marker,
                                                                   upload_marker);
                             }));
      for (const MultipartUploadInfo& upload : page.uploads) {
        if (!IsValidBlobId(std::string_view(upload.key).substr(prefix_.size()))) continue;
        if (!upload.initiated || *upload.initiated > cut) continue;
        SERAC_RETURN_IF_ERROR(
            WithRetries([&] { return client_.AbortMultipartUpload(bucket_, upload.key, upload.upload_id); }));
      }
      key_marker = std::move(page.next_key_marker);
      upload_marker = std::move(page.next_upload_id_marker);
    } while (!key_marker.empty());
    return Status::Ok();
  }

  Status CheckReachable() override { return client_.ListObjects(bucket_, prefix_, "", 1).status(); }

 private:
  std::string Key(std::string_view id) const { return prefix_ + std::string(id); }

  const S3Client client_;
  const std::string bucket_;
  const std::string prefix_;
  const std::chrono::seconds stale_upload_age_;
};

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// The value of `name` in a query string "a=1&b=2" (percent-decoding is not needed for the URLs and
// region names it carries).
std::optional<std::string> QueryValue(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const size_t end = query.find('&');
    const std::string_view pair = query.substr(0, end);
    const size_t equals = pair.find('=');
    if (pair.substr(0, equals) == name) {
      return equals == std::string_view::npos ? std::string() : std::string(pair.substr(equals + 1));
    }
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return std::nullopt;
}

Status ReadKeys(S3ClientOptions& client) {
  client.access_key = Environment("SERAC_BLOB_S3_ACCESS_KEY_ID");
  client.secret_key = Environment("SERAC_BLOB_S3_SECRET_ACCESS_KEY");
  if (const std::string file = Environment("SERAC_BLOB_S3_CREDENTIALS_FILE"); !file.empty()) {
    std::ifstream in(file);
    if (!in) {
      return Error(ErrorCode::kInvalidArgument,
                   "SERAC_BLOB_S3_CREDENTIALS_FILE names " + file + ", which cannot be read");
    }
    std::getline(in, client.access_key);
    std::getline(in, client.secret_key);
    if (client.access_key.empty() || client.secret_key.empty()) {
      return Error(
          ErrorCode::kInvalidArgument,
          file +
              " (SERAC_BLOB_S3_CREDENTIALS_FILE) must hold the access key id on its first line and the "
              "secret on its second");
    }
  }
  if (client.access_key.empty()) client.access_key = Environment("AWS_ACCESS_KEY_ID");
  if (client.secret_key.empty()) client.secret_key = Environment("AWS_SECRET_ACCESS_KEY");
  if (client.access_key.empty() || client.secret_key.empty()) {
    return Error(
        ErrorCode::kInvalidArgument,
        "the s3:// blob store needs keys: SERAC_BLOB_S3_ACCESS_KEY_ID and SERAC_BLOB_S3_SECRET_ACCESS_KEY "
        "(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or SERAC_BLOB_S3_CREDENTIALS_FILE");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<blob::BlobStore>> OpenS3BlobStore(S3BlobStoreOptions options) {
  if (options.bucket.empty())
    return Error(ErrorCode::kInvalidArgument, "the s3:// blob store needs a bucket");
  if (!options.prefix.empty() && options.prefix.back() != '/') options.prefix += '/';
  SERAC_ASSIGN_OR_RETURN(S3Client client, S3Client::Make(options.client));
  Status created = WithRetries([&] { return client.CreateBucket(options.bucket); });
  if (!created.ok() && created.code() != ErrorCode::kAlreadyExists) {
    return Error(created.code(), "blob store s3://" + options.bucket + "/" + options.prefix + " at " +
                                     options.client.endpoint + ": " + created.message());
  }
  return std::unique_ptr<blob::BlobStore>(new S3BlobStore(
      std::move(client), std::move(options.bucket), std::move(options.prefix), options.stale_upload_age));
}

Result<std::unique_ptr<blob::BlobStore>> OpenS3BlobStoreUrl(std::string_view url) {
  std::optional<std::string_view> rest = StoreUrlLocation(url, "s3://");
  if (!rest) return Error(ErrorCode::kInvalidArgument, "not an s3:// blob store URL: " + std::string(url));
  std::string_view query;
  if (const size_t mark = rest->find('?'); mark != std::string_view::npos) {
    query = rest->substr(mark + 1);
    rest = rest->substr(0, mark);
  }
  S3BlobStoreOptions options;
  const size_t slash = rest->find('/');
  options.bucket = std::string(rest->substr(0, slash));
  if (slash != std::string_view::npos) options.prefix = std::string(rest->substr(slash + 1));
  options.client.endpoint = QueryValue(query, "endpoint").value_or(Environment("AWS_ENDPOINT_URL"));
  if (options.client.endpoint.empty()) {
    return Error(
        ErrorCode::kInvalidArgument,
        "the s3:// blob store needs an endpoint: ?endpoint=URL in the blob store URL, or AWS_ENDPOINT_URL");
  }
  options.client.region = QueryValue(query, "region").value_or(Environment("AWS_REGION"));
  if (options.client.region.empty()) options.client.region = "us-east-1";
  SERAC_RETURN_IF_ERROR(ReadKeys(options.client));
  return OpenS3BlobStore(std::move(options));
}

}  // namespace serac::client
