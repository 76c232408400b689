// An S3 object client: PUT (one request, or a multipart upload above a size), GET (whole or a byte
// range), HEAD, LIST (one page of ListObjectsV2) and DELETE, path-style and signed with SigV4, for
// serac and for any S3-compatible store. What the sync writer and `serac table load` write data and
// metadata files with.
// Thread-safe: an S3Client is immutable after construction; calls may run concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/limits.h"
#include "common/status.h"

namespace serac::client {

struct S3ClientOptions {
  std::string endpoint = "http://127.0.0.1:9000";  // scheme://host[:port]; buckets go in the path
  std::string access_key;
  std::string secret_key;     // never logged or printed
  std::string session_token;  // temporary credentials (vended by a catalog); empty otherwise
  std::string region = "us-east-1";
  std::string ca_file;    // trusted CAs for https (PEM); empty = the system store
  bool insecure = false;  // skip certificate verification (self-signed test servers only)
  // A body larger than this goes up as a multipart upload in parts of part_size_bytes.
  uint64_t multipart_threshold_bytes = limits::kS3ClientMultipartThresholdBytes;
  uint64_t part_size_bytes = limits::kS3ClientPartSizeBytes;
  uint32_t parts_in_flight = limits::kS3ClientPartsInFlightMax;  // one S3Upload's concurrent UploadParts
};

// "s3://bucket/key" (also s3a:// and s3n://, as engines write them) → bucket and key.
struct S3Location {
  std::string bucket;
  std::string key;
};
// kInvalidArgument naming the text when it is not such a URL or has no key.
Result<S3Location> ParseS3Location(std::string_view url);

struct PutObjectResult {
  std::string etag;    // as the server sent it, quotes included
  uint32_t parts = 0;  // 0 for a single PUT
};

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;
  std::optional<WallTime> last_modified;  // when the server said
};

struct ListObjectsPage {
  std::vector<ObjectInfo> objects;
  std::string next_continuation_token;  // empty when this is the last page
};

// A multipart upload begun and neither completed nor aborted.
struct MultipartUploadInfo {
  std::string key;
  std::string upload_id;
  std::optional<WallTime> initiated;
};
struct ListUploadsPage {
  std::vector<MultipartUploadInfo> uploads;
  std::string next_key_marker;  // with next_upload_id_marker; both empty on the last page
  std::string next_upload_id_marker;
};

class S3Client;

// An object written as its bytes come (a table writer's data file): held in memory up to the
// client's multipart threshold and PUT at Close, or, once larger, sent as a multipart upload with
// up to parts_in_flight parts uploading at once while the writer goes on, so memory stays at a few
// parts whatever the object's size. Nothing is visible before Close succeeds; an upload abandoned
// or failed is aborted (after the parts in flight have finished). Used by one thread.
class S3Upload {
 public:
  S3Upload(const S3Client& client, std::string bucket, std::string key, bool if_none_match_star);
  S3Upload(S3Upload&&) noexcept;
  ~S3Upload();  // aborts an upload that was not closed

  Status Write(std::string_view bytes);
  Result<PutObjectResult> Close();
  void Abort();
  uint64_t bytes_written() const { return written_; }

 private:
  Status SendPart(std::string body);
  // An empty buffer for a part's bytes: a spare body, or a new string.
  std::string SpareBody();
  // Waits until at most `keep` parts are in flight; the first error of those waited for.
  Status Settle(size_t keep);

  // A part sent: its ETag, and its body's buffer back for the next part.
  struct PartSent {
    std::string etag;
    std::string body;
  };
  struct PartInFlight {
    uint32_t number = 0;
    std::future<Result<PartSent>> sent;
  };

  const S3Client* client_;
  std::string bucket_;
  std::string key_;
  bool if_none_match_star_;
  std::string buffer_;
  std::string upload_id_;  // empty until the multipart upload starts
  std::deque<PartInFlight> in_flight_;
  std::map<uint32_t, std::string> etags_;  // by part number
  // Bodies of parts sent, kept for the next parts: a part's megabytes are copied into memory already
  // touched instead of into fresh pages the kernel must zero.
  std::vector<std::string> spare_bodies_;
  uint32_t parts_ = 0;
  uint64_t written_ = 0;
  bool done_ = false;
};

class S3Client {
 public:
  // kInvalidArgument when the endpoint is not an http(s) URL, credentials are missing, or the part
  // size is outside S3's 5 MiB to 5 GiB.
  static Result<S3Client> Make(S3ClientOptions options);

  // Errors carry the server's S3 error code and message: kNotFound (NoSuchBucket), kAccessDenied,
  // kPreconditionFailed (If-None-Match: * on an existing key), kInvalidArgument, kUnavailable
  // (503, SlowDown), kOutcomeUnknown (the answer was lost: the object may or may not be there).
  // A failed multipart upload is aborted, so no parts are left behind.
  // if_none_match_star: create only, never overwrite (S3 conditional writes).
  Result<PutObjectResult> PutObject(std::string_view bucket, std::string_view key, std::string_view body,
                                    bool if_none_match_star = false) const;
  // The object's bytes; with `range` only [first, last] (inclusive, as HTTP Range counts).
  // kNotFound for a missing key or bucket.
  Result<std::string> GetObject(std::string_view bucket, std::string_view key,
                                std::optional<std::pair<uint64_t, uint64_t>> range = std::nullopt) const;
  Result<ObjectInfo> HeadObject(std::string_view bucket, std::string_view key) const;
  // One page of keys under `prefix` in byte order, at most max_keys (1..1000).
  Result<ListObjectsPage> ListObjects(std::string_view bucket, std::string_view prefix,
                                      std::string_view continuation_token = {},
                                      uint32_t max_keys = 1000) const;
  // OK also when the key does not exist (S3's rule).
  Status DeleteObject(std::string_view bucket, std::string_view key) const;
  // One page (up to 1,000) of the multipart uploads in progress under `prefix`, after the markers.
  Result<ListUploadsPage> ListMultipartUploads(std::string_view bucket, std::string_view prefix,
                                               std::string_view key_marker = {},
                                               std::string_view upload_id_marker = {}) const;
  // OK also when the upload is already gone (NoSuchUpload).
  Status AbortMultipartUpload(std::string_view bucket, std::string_view key,
                              std::string_view upload_id) const;
  // kAlreadyExists when the bucket exists (whoever owns it).
  Status CreateBucket(std::string_view bucket) const;

  const S3ClientOptions& options() const { return options_; }

 private:
  friend class S3Upload;
  explicit S3Client(S3ClientOptions options) : options_(std::move(options)) {}

  S3ClientOptions options_;
};

}  // namespace serac::client
