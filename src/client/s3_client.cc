#include "client/s3_client.h"

#include <algorithm>
#include <pugixml.hpp>

#include "client/signed_request_internal.h"
#include "common/encoding.h"
#include "http/client.h"

namespace serac::client {
namespace {

using internal::Call;

constexpr std::string_view kSchemes[] = {"s3://", "s3a://", "s3n://"};
constexpr uint64_t kPartBytesMax = 5 * limits::kGiB;

// "/bucket/key" with the key encoded as S3 signs it (slashes kept).
std::string ObjectPath(std::string_view bucket, std::string_view key) {
  return "/" + UriEncode(bucket, true) + "/" + UriEncode(key, false);
}

// An S3 XML error body's code and message, else the HTTP status.
std::string ErrorText(const http::ClientResponse& response) {
  pugi::xml_document document;
  if (!response.body.empty() && document.load_buffer(response.body.data(), response.body.size())) {
    pugi::xml_node error = document.child("Error");
    std::string code = error.child_value("Code");
    std::string message = error.child_value("Message");
    if (!code.empty()) return message.empty() ? code : code + ": " + message;
  }
  return "HTTP " + std::to_string(response.status);
}

Status ErrorFromResponse(const http::ClientResponse& response, std::string_view what) {
  return Error(internal::CodeForStatus(response.status), std::string(what) + ": " + ErrorText(response));
}

std::string HeaderOr(const http::ClientResponse& response, std::string_view name) {
  const std::string* value = response.FindHeader(name);
  return value != nullptr ? *value : "";
}

}  // namespace

Result<S3Location> ParseS3Location(std::string_view url) {
  for (std::string_view scheme : kSchemes) {
    if (!url.starts_with(scheme)) continue;
    std::string_view rest = url.substr(scheme.size());
    const size_t slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos || slash + 1 == rest.size()) break;
    return S3Location{std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1))};
  }
  return Error(ErrorCode::kInvalidArgument, "not an s3://bucket/key location: \"" + std::string(url) + "\"");
}

class S3Requests {
 public:
  explicit S3Requests(const S3ClientOptions& options) {
    target_.base_url = internal::TrimTrailingSlashes(options.endpoint);
    target_.ca_file = options.ca_file;
    target_.insecure = options.insecure;
    signing_.access_key = options.access_key;
    signing_.secret_key = options.secret_key;
    signing_.session_token = options.session_token;
    signing_.region = options.region;
  }

  // Sends one request. A transport failure after the request may have arrived (a lost answer) is
  // kOutcomeUnknown for writes; reads and deletes are safe to repeat and keep the transport error.
  Result<http::ClientResponse> Send(const Call& call, bool is_write, uint64_t response_bytes_max = 0) const {
    SERAC_ASSIGN_OR_RETURN(http::ClientRequest request, internal::BuildRequest(target_, signing_, call));
    if (response_bytes_max > 0) request.response_body_bytes_max = response_bytes_max;
    bool request_sent = false;
    Result<http::ClientResponse> response = http::Send(request, &request_sent);
    if (!response.ok() && is_write && request_sent) {
      return Error(ErrorCode::kOutcomeUnknown,
                   call.method + " " + call.raw_path +
                       ": no answer, the write may or may not have happened: " + response.status().message());
    }
    return response;
  }

 private:
  internal::Target target_;
  internal::Signing signing_;
};

Result<S3Client> S3Client::Make(S3ClientOptions options) {
  if (!http::ParseUrl(options.endpoint).ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "S3 endpoint is not an http(s) URL: \"" + options.endpoint + "\"");
  }
  if (options.access_key.empty() || options.secret_key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "S3 client needs an access key and a secret key");
  }
  if (options.part_size_bytes < limits::kPartBytesMin || options.part_size_bytes > kPartBytesMax) {
    return Error(ErrorCode::kInvalidArgument, "S3 part size must be 5 MiB to 5 GiB, not " +
                                                  std::to_string(options.part_size_bytes) + " bytes");
  }
  return S3Client(std::move(options));
}

Result<PutObjectResult> S3Client::PutObject(std::string_view bucket, std::string_view key,
                                            std::string_view body, bool if_none_match_star) const {
  if (body.size() > options_.multipart_threshold_bytes) {
    S3Upload upload(*this, std::string(bucket), std::string(key), if_none_match_star);
    SERAC_RETURN_IF_ERROR(upload.Write(body));
    return upload.Close();
  }
  Call call;
  call.method = "PUT";
  call.raw_path = ObjectPath(bucket, key);
  call.body = std::string(body);
  if (if_none_match_star) call.headers.push_back({"If-None-Match", "*"});
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, true));
  if (response.status != 200) return ErrorFromResponse(response, "PUT " + std::string(key));
  return PutObjectResult{HeaderOr(response, "ETag"), 0};
}

S3Upload::S3Upload(const S3Client& client, std::string bucket, std::string key, bool if_none_match_star)
    : client_(&client),
      bucket_(std::move(bucket)),
      key_(std::move(key)),
      if_none_match_star_(if_none_match_star) {}

S3Upload::S3Upload(S3Upload&& other) noexcept
    : client_(other.client_),
      bucket_(std::move(other.bucket_)),
      key_(std::move(other.key_)),
      if_none_match_star_(other.if_none_match_star_),
      buffer_(std::move(other.buffer_)),
      upload_id_(std::move(other.upload_id_)),
      in_flight_(std::move(other.in_flight_)),
      etags_(std::move(other.etags_)),
      spare_bodies_(std::move(other.spare_bodies_)),
      parts_(other.parts_),
      written_(other.written_),
      done_(other.done_) {
  other.done_ = true;
}

S3Upload::~S3Upload() { Abort(); }

void S3Upload::Abort() {
  if (done_) return;
  done_ = true;
  buffer_.clear();
  (void)Settle(0);  // parts still uploading would land after the abort
  if (upload_id_.empty()) return;
  // Whatever went wrong, the parts do not linger.
  Call abort_call;
  abort_call.method = "DELETE";
  abort_call.raw_path = ObjectPath(bucket_, key_);
  abort_call.raw_query = "uploadId=" + UriEncode(upload_id_, true);
  (void)S3Requests(client_->options_).Send(abort_call, false);
}

std::string S3Upload::SpareBody() {
  if (spare_bodies_.empty()) return std::string();
  std::string body = std::move(spare_bodies_.back());
  spare_bodies_.pop_back();
  body.clear();
  return body;
}

Status S3Upload::SendPart(std::string body) {
  const std::string path = ObjectPath(bucket_, key_);
  if (upload_id_.empty()) {
    Call create;
    create.method = "POST";
    create.raw_path = path;
    create.raw_query = "uploads=";
    SERAC_ASSIGN_OR_RETURN(http::ClientResponse created, S3Requests(client_->options_).Send(create, false));
    if (created.status != 200) return ErrorFromResponse(created, "CreateMultipartUpload " + key_);
    pugi::xml_document document;
    if (document.load_buffer(created.body.data(), created.body.size())) {
      upload_id_ = document.child("InitiateMultipartUploadResult").child_value("UploadId");
    }
    if (upload_id_.empty()) return Error(ErrorCode::kInternal, "CreateMultipartUpload answered no UploadId");
  }
  if (++parts_ > limits::kPartNumberMax) {
    return Error(ErrorCode::kLimitExceeded, "object needs more than limits::kPartNumberMax (10000) parts");
  }
  Call part;
  part.method = "PUT";
  part.raw_path = path;
  part.raw_query = "partNumber=" + std::to_string(parts_) + "&uploadId=" + UriEncode(upload_id_, true);
  part.body = std::move(body);
  const uint32_t number = parts_;
  // Each part goes on its own connection; the writer goes on with the next one meanwhile.
  in_flight_.push_back(PartInFlight{
      number,
      std::async(std::launch::async,
                 [options = client_->options_, part = std::move(part), number]() mutable -> Result<PartSent> {
                   SERAC_ASSIGN_OR_RETURN(http::ClientResponse sent, S3Requests(options).Send(part, false));
                   if (sent.status != 200)
                     return ErrorFromResponse(sent, "UploadPart " + std::to_string(number));
                   return PartSent{HeaderOr(sent, "ETag"), std::move(part.body)};
                 })});
  return Settle(std::max<uint32_t>(1, client_->options_.parts_in_flight) - 1);
}

Status S3Upload::Settle(size_t keep) {
  Status first = Status::Ok();
  while (in_flight_.size() > keep) {
    PartInFlight part = std::move(in_flight_.front());
    in_flight_.pop_front();
    Result<PartSent> sent = part.sent.get();
    if (!sent.ok()) {
      if (first.ok()) first = sent.status();
      continue;
    }
    etags_[part.number] = std::move(sent->etag);
    spare_bodies_.push_back(std::move(sent->body));
  }
  return first;
}

Status S3Upload::Write(std::string_view bytes) {
  if (done_) return Error(ErrorCode::kInternal, "write to a finished upload: " + key_);
  buffer_.append(bytes);
  written_ += bytes.size();
  const uint64_t part_size = client_->options_.part_size_bytes;
  // Parts start once the object is past the threshold; from then on each part leaves the buffer as
  // soon as it is whole.
  if (parts_ > 0 || buffer_.size() > std::max(client_->options_.multipart_threshold_bytes, part_size)) {
    while (buffer_.size() >= part_size) {
      // The buffer's first part_size bytes leave as the part itself; only the bytes past them
      // (usually a fraction of one write) are copied, into the buffer that comes next.
      std::string rest = SpareBody();
      rest.assign(buffer_, part_size);
      buffer_.resize(part_size);
      std::swap(rest, buffer_);
      Status sent = SendPart(std::move(rest));
      if (!sent.ok()) {
        Abort();
        return sent;
      }
    }
  }
  return Status::Ok();
}

Result<PutObjectResult> S3Upload::Close() {
  if (done_) return Error(ErrorCode::kInternal, "upload closed twice: " + key_);
  const S3Requests requests(client_->options_);
  const std::string path = ObjectPath(bucket_, key_);
  if (upload_id_.empty()) {
    done_ = true;
    Call call;
    call.method = "PUT";
    call.raw_path = path;
    call.body = std::move(buffer_);
    if (if_none_match_star_) call.headers.push_back({"If-None-Match", "*"});
    SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, requests.Send(call, true));
    if (response.status != 200) return ErrorFromResponse(response, "PUT " + key_);
    return PutObjectResult{HeaderOr(response, "ETag"), 0};
  }
  if (!buffer_.empty()) {
    Status sent = SendPart(std::move(buffer_));
    if (!sent.ok()) {
      Abort();
      return sent;
    }
    buffer_.clear();
  }
  if (Status settled = Settle(0); !settled.ok()) {
    Abort();
    return settled;
  }
  Call complete;
  complete.method = "POST";
  complete.raw_path = path;
  complete.raw_query = "uploadId=" + UriEncode(upload_id_, true);
  complete.body = "<CompleteMultipartUpload>";
  for (const auto& [number, etag] : etags_) {
    complete.body += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" + XmlEscape(etag) +
                     "</ETag></Part>";
  }
  complete.body += "</CompleteMultipartUpload>";
  if (if_none_match_star_) complete.headers.push_back({"If-None-Match", "*"});
  Result<http::ClientResponse> completed = requests.Send(complete, true);
  if (!completed.ok()) {
    // The object may exist now; the upload is gone or will be aborted, never half visible.
    if (completed.status().code() != ErrorCode::kOutcomeUnknown) Abort();
    done_ = true;
    return completed.status();
  }
  // CompleteMultipartUpload may answer 200 with an error document after it started.
  pugi::xml_document result;
  const bool parsed = result.load_buffer(completed->body.data(), completed->body.size());
  if (completed->status != 200 || (parsed && result.child("Error"))) {
    Abort();
    return ErrorFromResponse(*completed, "CompleteMultipartUpload " + key_);
  }
  done_ = true;
  std::string etag = parsed ? result.child("CompleteMultipartUploadResult").child_value("ETag") : "";
  return PutObjectResult{etag, parts_};
}

Result<std::string> S3Client::GetObject(std::string_view bucket, std::string_view key,
                                        std::optional<std::pair<uint64_t, uint64_t>> range) const {
  Call call;
  call.raw_path = ObjectPath(bucket, key);
  if (range) {
    call.headers.push_back(
        {"Range", "bytes=" + std::to_string(range->first) + "-" + std::to_string(range->second)});
  }
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response,
                         S3Requests(options_).Send(call, false, limits::kS3ClientObjectBytesMax));
  if (response.status != 200 && response.status != 206)
    return ErrorFromResponse(response, "GET s3://" + std::string(bucket) + "/" + std::string(key));
  return std::move(response.body);
}

Result<ObjectInfo> S3Client::HeadObject(std::string_view bucket, std::string_view key) const {
  Call call;
  call.method = "HEAD";
  call.raw_path = ObjectPath(bucket, key);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, false));
  const std::string location = "s3://" + std::string(bucket) + "/" + std::string(key);
  if (response.status == 404) {
    // A HEAD answer has no body to tell a missing key from a missing bucket: ask for the bucket.
    Call bucket_call;
    bucket_call.method = "HEAD";
    bucket_call.raw_path = "/" + UriEncode(bucket, true);
    auto bucket_response = S3Requests(options_).Send(bucket_call, false);
    if (bucket_response.ok() && bucket_response->status == 404) {
      return Error(ErrorCode::kNotFound, location + ": no bucket " + std::string(bucket));
    }
    return Error(ErrorCode::kNotFound,
                 location + ": no object " + std::string(key) + " in bucket " + std::string(bucket));
  }
  if (response.status != 200) return ErrorFromResponse(response, "HEAD " + location);
  std::optional<uint64_t> size = ParseUint64(HeaderOr(response, "Content-Length"));
  return ObjectInfo{std::string(key), size.value_or(0), HeaderOr(response, "ETag"),
                    ParseHttpDate(HeaderOr(response, "Last-Modified"))};
}

Result<ListObjectsPage> S3Client::ListObjects(std::string_view bucket, std::string_view prefix,
                                              std::string_view continuation_token, uint32_t max_keys) const {
  Call call;
  call.raw_path = "/" + UriEncode(bucket, true);
  call.raw_query = "list-type=2&max-keys=" + std::to_string(std::clamp<uint32_t>(max_keys, 1, 1000));
  if (!continuation_token.empty())
    call.raw_query += "&continuation-token=" + UriEncode(continuation_token, true);
  if (!prefix.empty()) call.raw_query += "&prefix=" + UriEncode(prefix, true);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, false));
  if (response.status != 200) return ErrorFromResponse(response, "LIST " + std::string(bucket));
  pugi::xml_document document;
  if (!document.load_buffer(response.body.data(), response.body.size())) {
    return Error(ErrorCode::kInternal, "ListObjectsV2 answered a body that is not XML");
  }
  pugi::xml_node result = document.child("ListBucketResult");
  ListObjectsPage page;
  for (pugi::xml_node contents : result.children("Contents")) {
    ObjectInfo object;
    object.key = contents.child_value("Key");
    object.size = ParseUint64(contents.child_value("Size")).value_or(0);
    object.etag = contents.child_value("ETag");
    object.last_modified = ParseIso8601(contents.child_value("LastModified"));
    page.objects.push_back(std::move(object));
  }
  if (std::string_view(result.child_value("IsTruncated")) == "true") {
    page.next_continuation_token = result.child_value("NextContinuationToken");
  }
  return page;
}

Status S3Client::DeleteObject(std::string_view bucket, std::string_view key) const {
  Call call;
  call.method = "DELETE";
  call.raw_path = ObjectPath(bucket, key);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, false));
  if (response.status != 204 && response.status != 200) {
    return ErrorFromResponse(response, "DELETE " + std::string(key));
  }
  return Status::Ok();
}

Result<ListUploadsPage> S3Client::ListMultipartUploads(std::string_view bucket, std::string_view prefix,
                                                       std::string_view key_marker,
                                                       std::string_view upload_id_marker) const {
  Call call;
  call.raw_path = "/" + UriEncode(bucket, true);
  call.raw_query = "uploads=";
  if (!key_marker.empty()) call.raw_query += "&key-marker=" + UriEncode(key_marker, true);
  if (!prefix.empty()) call.raw_query += "&prefix=" + UriEncode(prefix, true);
  if (!upload_id_marker.empty()) call.raw_query += "&upload-id-marker=" + UriEncode(upload_id_marker, true);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, false));
  if (response.status != 200) return ErrorFromResponse(response, "LIST uploads " + std::string(bucket));
  pugi::xml_document document;
  if (!document.load_buffer(response.body.data(), response.body.size())) {
    return Error(ErrorCode::kInternal, "ListMultipartUploads answered a body that is not XML");
  }
  pugi::xml_node result = document.child("ListMultipartUploadsResult");
  ListUploadsPage page;
  for (pugi::xml_node upload : result.children("Upload")) {
    page.uploads.push_back({upload.child_value("Key"), upload.child_value("UploadId"),
                            ParseIso8601(upload.child_value("Initiated"))});
  }
  if (std::string_view(result.child_value("IsTruncated")) == "true") {
    page.next_key_marker = result.child_value("NextKeyMarker");
    page.next_upload_id_marker = result.child_value("NextUploadIdMarker");
  }
  return page;
}

Status S3Client::AbortMultipartUpload(std::string_view bucket, std::string_view key,
                                      std::string_view upload_id) const {
  Call call;
  call.method = "DELETE";
  call.raw_path = ObjectPath(bucket, key);
  call.raw_query = "uploadId=" + UriEncode(upload_id, true);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, false));
  if (response.status == 204 || response.status == 200 || response.status == 404) return Status::Ok();
  return ErrorFromResponse(response, "ABORT upload of " + std::string(key));
}

Status S3Client::CreateBucket(std::string_view bucket) const {
  Call call;
  call.method = "PUT";
  call.raw_path = "/" + UriEncode(bucket, true);
  SERAC_ASSIGN_OR_RETURN(http::ClientResponse response, S3Requests(options_).Send(call, false));
  if (response.status == 409)
    return Error(ErrorCode::kAlreadyExists,
                 "CreateBucket " + std::string(bucket) + ": " + ErrorText(response));
  if (response.status != 200) return ErrorFromResponse(response, "CreateBucket " + std::string(bucket));
  return Status::Ok();
}

}  // namespace serac::client
