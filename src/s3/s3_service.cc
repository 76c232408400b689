// Request entry point: addressing (path or virtual host), authentication, routing to the
// operation handlers, and error responses.
#include "s3/s3_service.h"

#include <array>

#include "common/clock.h"
#include "common/encoding.h"
#include "common/limits.h"
#include "common/log.h"
#include "s3/s3_internal.h"
#include "service/authenticate.h"
#include "service/error_response.h"

namespace serac::s3 {

struct S3Service::Impl {
  Backend backend;
};

S3Service::S3Service(meta::MetaStore* meta, blob::BlobStore* blobs, const auth::IdentityService* identity,
                     S3Options options)
    : impl_(std::make_unique<Impl>()) {
  impl_->backend.Bind(meta, blobs, identity);
  impl_->backend.options = std::move(options);
}

S3Service::~S3Service() = default;

namespace {

using HandlerFn = HandlerResult (*)(RequestContext&);

// Whether a route's handler reads the request body. Every other route has any body it was sent
// read and verified against the signature before the handler runs (VerifyUnusedBody), so no
// operation acts on a request whose signed parts were not all checked.
enum class Body { kNone, kRead };

struct Route {
  const char* operation;
  HandlerFn handler;  // nullptr: not implemented
  Body body = Body::kNone;
};

// Sub-resources serac recognises but does not offer; they must not fall through to a plain
// object or bucket operation.
constexpr std::array<std::string_view, 26> kUnsupportedSubresources = {"policy",
                                                                       "cors",
                                                                       "lifecycle",
                                                                       "website",
                                                                       "logging",
                                                                       "notification",
                                                                       "replication",
                                                                       "encryption",
                                                                       "object-lock",
                                                                       "ownershipControls",
                                                                       "publicAccessBlock",
                                                                       "accelerate",
                                                                       "requestPayment",
                                                                       "analytics",
                                                                       "metrics",
                                                                       "inventory",
                                                                       "intelligent-tiering",
                                                                       "policyStatus",
                                                                       "versions",
                                                                       "torrent",
                                                                       "restore",
                                                                       "select",
                                                                       "retention",
                                                                       "legal-hold",
                                                                       "attributes",
                                                                       "replication-status"};

std::optional<std::string_view> UnsupportedSubresource(const QueryParams& query) {
  for (std::string_view name : kUnsupportedSubresources) {
    if (query.Has(name)) return name;
  }
  return std::nullopt;
}

Route NotImplementedRoute(const char* operation) { return {operation, nullptr}; }

Route ServiceRoute(const RequestContext& ctx) {
  if (ctx.request.method == "GET") return {"ListBuckets", ListBuckets};
  return NotImplementedRoute("UnknownServiceOperation");
}

Route BucketRoute(const RequestContext& ctx) {
  const std::string& method = ctx.request.method;
  const QueryParams& q = ctx.query;
  if (UnsupportedSubresource(q) || (q.Has("tagging")))
    return NotImplementedRoute("UnsupportedBucketOperation");
  if (method == "GET") {
    if (q.Has("location")) return {"GetBucketLocation", GetBucketLocation};
    if (q.Has("versioning")) return {"GetBucketVersioning", GetBucketVersioning};
    if (q.Has("acl")) return {"GetBucketAcl", GetAcl};
    if (q.Has("uploads")) return {"ListMultipartUploads", ListMultipartUploads};
    if (q.Get("list-type") == "2")
      return {"ListObjectsV2", [](RequestContext& c) { return ListObjects(c, true); }};
    return {"ListObjects", [](RequestContext& c) { return ListObjects(c, false); }};
  }
  if (method == "HEAD") return {"HeadBucket", HeadBucket};
  if (method == "PUT") {
    if (!q.entries().empty()) return NotImplementedRoute("UnsupportedBucketOperation");
    return {"CreateBucket", CreateBucket, Body::kRead};
  }
  if (method == "DELETE") {
    if (!q.entries().empty()) return NotImplementedRoute("UnsupportedBucketOperation");
    return {"DeleteBucket", DeleteBucket};
  }
  if (method == "POST" && q.Has("delete")) return {"DeleteObjects", DeleteObjects, Body::kRead};
  return NotImplementedRoute("UnsupportedBucketOperation");
}

Route ObjectRoute(const RequestContext& ctx) {
  const std::string& method = ctx.request.method;
  const QueryParams& q = ctx.query;
  if (UnsupportedSubresource(q)) return NotImplementedRoute("UnsupportedObjectOperation");
  bool copy = ctx.has_header("x-amz-copy-source");
  if (method == "GET") {
    if (q.Has("uploadId")) return {"ListParts", ListParts};
    if (q.Has("tagging")) return {"GetObjectTagging", GetObjectTagging};
    if (q.Has("acl")) return {"GetObjectAcl", GetAcl};
    return {"GetObject", [](RequestContext& c) { return GetObject(c, false); }};
  }
  if (method == "HEAD") return {"HeadObject", [](RequestContext& c) { return GetObject(c, true); }};
  if (method == "PUT") {
    if (q.Has("partNumber") && q.Has("uploadId")) {
      return copy ? Route{"UploadPartCopy", UploadPartCopy} : Route{"UploadPart", UploadPart, Body::kRead};
    }
    if (q.Has("tagging")) return {"PutObjectTagging", PutObjectTagging, Body::kRead};
    if (q.Has("acl")) return NotImplementedRoute("PutObjectAcl");
    return copy ? Route{"CopyObject", CopyObject} : Route{"PutObject", PutObject, Body::kRead};
  }
  if (method == "DELETE") {
    if (q.Has("uploadId")) return {"AbortMultipartUpload", AbortMultipartUpload};
    if (q.Has("tagging")) return {"DeleteObjectTagging", DeleteObjectTagging};
    return {"DeleteObject", DeleteObject};
  }
  if (method == "POST") {
    if (q.Has("uploads")) return {"CreateMultipartUpload", CreateMultipartUpload};
    if (q.Has("uploadId")) return {"CompleteMultipartUpload", CompleteMultipartUpload, Body::kRead};
  }
  return NotImplementedRoute("UnsupportedObjectOperation");
}

// The host name without port, lower-cased; empty for IP-literal hosts.
std::string HostName(const http::Request& request) {
  std::string_view host = TrimWhitespace(request.HeaderOr("host"));
  if (!host.empty() && host.front() == '[') return {};
  size_t colon = host.find(':');
  return AsciiLower(host.substr(0, colon));
}

// Fills ctx.bucket / ctx.key from the Host header and the path.
std::optional<S3Error> ResolveAddress(RequestContext& ctx) {
  std::string_view path = ctx.request.path;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  const std::string& domain = ctx.backend.options.domain;
  std::string host = HostName(ctx.request);
  std::string_view key_part;
  if (!domain.empty() && host.size() > domain.size() + 1 &&
      std::string_view(host).substr(host.size() - domain.size()) == AsciiLower(domain) &&
      host[host.size() - domain.size() - 1] == '.') {
    ctx.bucket = host.substr(0, host.size() - domain.size() - 1);
    ctx.virtual_host = true;
    key_part = path;
  } else {
    size_t slash = path.find('/');
    auto bucket = UriDecode(path.substr(0, slash), false);
    if (!bucket) return MakeError(400, "InvalidURI", "Couldn't parse the specified URI.");
    ctx.bucket = std::move(*bucket);
    key_part = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  auto key = UriDecode(key_part, false);
  if (!key) return MakeError(400, "InvalidURI", "Couldn't parse the specified URI.");
  ctx.key = std::move(*key);
  return std::nullopt;
}

bool IsPresigned(const http::Request& request) {
  return request.query.find("X-Amz-Credential") != std::string::npos ||
         request.query.find("X-Amz-Signature") != std::string::npos;
}

// Why the signed request's key or session token does not make a principal, in AWS's terms: a
// session token that has expired or does not hold (forged, another key's, parent key gone) is a
// 400 like AWS's STS tokens; anything else keeps its own code.
S3Error PrincipalError(const Status& status, const auth::VerifiedRequest& verified) {
  if (status.code() == ErrorCode::kExpired) {
    return MakeError(400, "ExpiredToken", "The provided token has expired.");
  }
  if (status.code() == ErrorCode::kAccessDenied && !verified.session_token.empty()) {
    return MakeError(400, "InvalidToken", "The provided token is malformed or otherwise invalid.");
  }
  return ErrorFromStatus(status);
}

// A SigV4 Authorization header without x-amz-content-sha256: AWS refuses it for S3, whose
// signatures always name their payload, and so does serac.
bool LacksPayloadHeader(const http::Request& request) {
  std::string_view authorization = TrimWhitespace(request.HeaderOr("authorization"));
  return authorization.substr(0, 5) == "AWS4-" && request.FindHeader("x-amz-content-sha256") == nullptr;
}

std::optional<S3Error> Authenticate(RequestContext& ctx) {
  if (!auth::HasSignature(ctx.request)) {
    return MakeError(403, "AccessDenied", "Anonymous access is not allowed");
  }
  if (LacksPayloadHeader(ctx.request)) {
    return InvalidRequest("Missing required header for this request: x-amz-content-sha256");
  }
  service::SignaturePolicy policy;
  policy.services = {"s3"};
  policy.uri_encoding = auth::UriEncoding::kS3;
  if (ctx.virtual_host) policy.virtual_host_bucket = ctx.bucket;  // SigV2 signs it as a path prefix
  service::SignatureFailure failure;
  if (service::AuthenticateSignature(ctx, *ctx.backend.identity, ctx.backend.credentials, policy, failure)) {
    ctx.outcome.principal = ctx.principal.user;
    return std::nullopt;
  }
  if (failure.step == service::SignatureFailure::Step::kPrincipal)
    return PrincipalError(failure.status, ctx.verified);
  const Status& status = failure.status;
  const auth::SignatureMismatchDetail& mismatch = failure.mismatch;
  S3Error error = ErrorFromStatus(status, Missing::kKey, IsPresigned(ctx.request));
  if (status.code() == ErrorCode::kSignatureMismatch) {
    AddSignatureMismatchDetails(error, mismatch.access_key, mismatch.string_to_sign,
                                mismatch.signature_provided, mismatch.canonical_request);
  }
  if (status.code() == ErrorCode::kClockSkewed) {
    std::string_view request_time = ctx.request.HeaderOr("x-amz-date", ctx.query.Get("X-Amz-Date"));
    error.details = {{"RequestTime", std::string(request_time)},
                     {"ServerTime", FormatIso8601(failure.now)},
                     {"MaxAllowedSkewMilliseconds",
                      std::to_string(std::chrono::milliseconds(limits::kClockSkewMax).count())}};
  }
  return error;
}

void SendError(RequestContext& ctx, const S3Error& error) {
  // A 503 (the metadata or blob store cannot be reached, or asks to slow down) says when to retry.
  if (error.http_status == 503 && !ctx.response.started()) ctx.response.AddHeader("Retry-After", "1");
  service::SendErrorResponse(ctx, error.http_status, [&] {
    return http::ErrorDocument{"application/xml", RenderErrorXml(error, ctx.bucket, ctx.key, ctx.request.path,
                                                                 ctx.request.request_id)};
  });
}

// Object operations on a version other than "null" (the only one an unversioned bucket has) must not
// fall through to the live object: a DELETE ?versionId=x would otherwise remove it.
std::optional<S3Error> VersionProblem(const RequestContext& ctx) {
  const std::string* version = ctx.query.Find("versionId");
  if (ctx.key.empty() || version == nullptr || IsUnversionedId(*version)) return std::nullopt;
  return InvalidArgument(std::string(kInvalidVersionIdMessage));
}

// True when the request head shows no body at all.
bool HasNoBody(RequestContext& ctx) {
  return ctx.request.FindHeader("transfer-encoding") == nullptr &&
         ctx.raw_body.content_length().value_or(0) == 0;
}

// Reads and verifies a body sent to an operation that takes none: a body that does not match
// its signed hash (or whose aws-chunked signatures fail) refuses the request before it acts.
std::optional<S3Error> VerifyUnusedBody(RequestContext& ctx) {
  if (HasNoBody(ctx)) return std::nullopt;
  auth::PayloadOptions options;
  options.compute_md5 = false;
  auto body = OpenVerifiedBody(ctx, options);
  if (!body.ok()) {
    ctx.response.CloseAfterResponse();
    return BodyOpenError(ctx, body.status());
  }
  Result<std::string> text = (*body)->ReadAll(limits::kUnusedRequestBodyBytesMax);
  if (!text.ok()) {
    ctx.response.CloseAfterResponse();  // what is left of the body is still on the wire
    if (text.status().code() == ErrorCode::kLimitExceeded) {
      return MakeError(
          400, "MaxMessageLengthExceeded",
          "Your request was too big: " + std::string(ctx.outcome.operation) +
              " takes no body, and one over limits::kUnusedRequestBodyBytesMax (64 KiB) was sent.");
    }
    return ErrorFromStatus(text.status());
  }
  ctx.outcome.bytes_in += text->size();
  return std::nullopt;
}

// A refused request's body is never waited for: the connection closes after the error instead
// of draining it, so a client cannot hold the connection by sending it slowly.
void RefuseUnproven(RequestContext& ctx, const S3Error& error) {
  if (!HasNoBody(ctx)) ctx.response.CloseAfterResponse();
  SendError(ctx, error);
}

Route SelectRoute(const RequestContext& ctx) {
  if (ctx.bucket.empty()) return ServiceRoute(ctx);
  if (ctx.key.empty()) return BucketRoute(ctx);
  return ObjectRoute(ctx);
}

}  // namespace

void S3Service::Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
                       http::RequestOutcome& outcome) {
  Serve(nullptr, request, body, response, outcome);
}

void S3Service::HandleAs(const auth::Principal& principal, const http::Request& request,
                         http::BodyReader& body, http::ResponseWriter& response,
                         http::RequestOutcome& outcome) {
  Serve(&principal, request, body, response, outcome);
}

void S3Service::Serve(const auth::Principal* proven, const http::Request& request, http::BodyReader& body,
                      http::ResponseWriter& response, http::RequestOutcome& outcome) {
  RequestContext ctx(impl_->backend, request, body, response, outcome);
  if (auto error = ResolveAddress(ctx)) return SendError(ctx, *error);
  Route route = SelectRoute(ctx);
  outcome.operation = route.operation;
  if (proven != nullptr) {
    // Proven by the caller (the web console's session); the body is taken as sent, unsigned.
    ctx.principal = *proven;
    outcome.principal = proven->user;
  } else if (auto error = Authenticate(ctx)) {
    return RefuseUnproven(ctx, *error);
  }
  if (route.handler == nullptr) return SendError(ctx, NotImplemented(route.operation));
  if (auto error = AuthorizeOperation(ctx, route.operation)) return RefuseUnproven(ctx, *error);
  if (auto error = VersionProblem(ctx)) return SendError(ctx, *error);
  if (route.body == Body::kNone) {
    if (auto error = VerifyUnusedBody(ctx)) return SendError(ctx, *error);
  }
  HandlerResult result = route.handler(ctx);
  if (result) SendError(ctx, *result);
}

http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error) {
  S3Error s3_error = MakeError(error.status, std::string(error.code), std::string(error.message));
  return {"application/xml", RenderErrorXml(s3_error, "", "", error.path, error.request_id)};
}

}  // namespace serac::s3
