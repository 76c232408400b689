// Private to s3/: the per-request context and the operation handlers, one file per area
// (s3_common.cc, s3_buckets.cc, s3_objects.cc, s3_get.cc, s3_copy.cc, s3_list.cc, s3_multipart.cc,
// s3_complete.cc, s3_tagging.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/identity.h"
#include "auth/payload.h"
#include "auth/policy.h"
#include "auth/sigv4.h"
#include "blob/blob_store.h"
#include "http/http.h"
#include "meta/meta_store.h"
#include "s3/s3_errors.h"
#include "s3/s3_rules.h"
#include "s3/s3_service.h"
#include "service/front_end_stores.h"
#include "service/handler_result.h"
#include "service/request_context.h"

namespace serac::s3 {

// What the service was built with; shared by every request.
struct Backend : service::FrontEndStores {
  S3Options options;
};

// One request after routing and authentication.
// The exchange, query, signature and principal are service::RequestContext's.
struct RequestContext : service::RequestContext {
  RequestContext(Backend& backend_in, const http::Request& request_in, http::BodyReader& raw_body_in,
                 http::ResponseWriter& response_in, http::RequestOutcome& outcome_in)
      : service::RequestContext(request_in, raw_body_in, response_in, outcome_in), backend(backend_in) {}

  Backend& backend;
  auth::ConditionContext conditions;  // the request's condition keys, once authorised
  std::string bucket;                 // decoded; empty for the service level
  std::string key;                    // decoded; empty for bucket-level operations
  bool virtual_host = false;          // bucket came from the Host header

  meta::MetaStore& meta() { return *backend.meta; }
  blob::BlobStore& blobs() { return *backend.blobs; }
};

// A handler either wrote its success response itself (nullopt) or returns the error to send.
using HandlerResult = service::HandlerResult<S3Error>;  // service/handler_result.h
using service::kHandled;

// --- Authorisation (s3_auth.cc) ---

// Checks the operation's action (s3_auth.h table) on its resource, and for a copy s3:GetObject on
// the source, with the request's condition keys (kept in ctx.conditions). AccessDenied otherwise.
// Runs before the handler, so a denied request changes nothing.
HandlerResult AuthorizeOperation(RequestContext& ctx, std::string_view operation);
// One more check inside a handler (DeleteObjects' keys), with ctx.conditions.
bool IsAllowed(RequestContext& ctx, std::string_view action, std::string_view resource);

// What ListBuckets may show this caller: every bucket (s3:ListAllMyBuckets allowed), only the
// buckets MaySeeBucket (no Allow for it), or nothing at all (an explicit Deny: AccessDenied).
enum class BucketListing { kAll, kVisibleOnly, kDenied };
BucketListing BucketListingAccess(RequestContext& ctx);
// True when the caller may s3:ListBucket (the whole bucket) or s3:GetBucketLocation on `bucket`.
bool MaySeeBucket(RequestContext& ctx, std::string_view bucket);

// --- Shared helpers (s3_common.cc) ---

// NoSuchBucket unless the bucket exists.
HandlerResult RequireBucket(RequestContext& ctx);
// Sends an XML document with 200 (or `status`).
HandlerResult SendXml(RequestContext& ctx, const std::string& xml, int status = 200);
// Wraps the raw body in the SigV4/checksum verifier.
Result<std::unique_ptr<auth::VerifyingBodyReader>> OpenVerifiedBody(RequestContext& ctx,
                                                                    const auth::PayloadOptions& options);
// Maps an error from VerifyingBodyReader::Create (bad Content-MD5 syntax → InvalidDigest).
S3Error BodyOpenError(RequestContext& ctx, const Status& status);
// Reads a small verified XML body (≤ limits::kXmlRequestBodyBytesMax).
Result<std::string> ReadXmlBody(RequestContext& ctx);
// Parses Content-Type, Content-Encoding, ..., x-amz-meta-*, x-amz-tagging from the request.
HandlerResult HeadersFromRequest(RequestContext& ctx, meta::ObjectHeaders& headers);
// Adds the stored headers of an object to a GET/HEAD response.
void AddObjectHeaders(RequestContext& ctx, const meta::ObjectRecord& object);
std::string QuoteEtag(std::string_view etag);
// Reads If-Match & co. from the named headers.
Conditions ReadConditions(RequestContext& ctx, std::string_view if_match, std::string_view if_none_match,
                          std::string_view if_modified_since, std::string_view if_unmodified_since);
std::optional<ChecksumAlgorithm> ParseOptionalAlgorithm(std::string_view name);

// A request body received, verified and stored: inline bytes or one committed blob.
struct ReceivedBody {
  std::string inline_data;
  std::vector<meta::Segment> segments;  // empty or one blob
  uint64_t size = 0;
  std::string md5_hex;
  std::optional<std::pair<ChecksumAlgorithm, std::string>> checksum;  // algorithm, base64
};
// Streams the verified body (≤ limits::kSinglePutBytesMax) to memory when it fits in
// limits::kInlineObjectBytesMax and `allow_inline`, else to a new committed blob.
HandlerResult ReceiveBody(RequestContext& ctx, const auth::PayloadOptions& options, bool allow_inline,
                          ReceivedBody& body);
// If-None-Match (only "*", else 501) and If-Match of a write, decided by the MetaStore.
HandlerResult ReadWriteCondition(RequestContext& ctx, meta::WriteCondition& condition);
// The error for a failed conditional write. A PreconditionFailed names the header that failed in
// <Condition>, as AWS does (s3fs turns an If-None-Match failure into FileExistsError by it).
S3Error WriteError(const Status& status, const meta::WriteCondition& condition, Missing missing);
// Looks up the object named by x-amz-copy-source and checks the x-amz-copy-source-if-* headers.
HandlerResult LoadCopySource(RequestContext& ctx, meta::ObjectRecord& source);
// Adds x-amz-checksum-<alg> (and its type) for a stored checksum.
void AddChecksumHeaders(RequestContext& ctx, const meta::ChecksumRecord& checksum);
// Adds <ChecksumCRC32>… (and <ChecksumType>) to an XML result.
void WriteChecksumElements(XmlWriter& xml, const meta::ChecksumRecord& checksum);

// --- Buckets (s3_buckets.cc) ---
HandlerResult ListBuckets(RequestContext& ctx);
HandlerResult CreateBucket(RequestContext& ctx);
HandlerResult HeadBucket(RequestContext& ctx);
HandlerResult DeleteBucket(RequestContext& ctx);
HandlerResult GetBucketLocation(RequestContext& ctx);
HandlerResult GetBucketVersioning(RequestContext& ctx);
HandlerResult GetAcl(RequestContext& ctx);

// --- Objects (s3_objects.cc, s3_get.cc, s3_copy.cc, s3_tagging.cc) ---
HandlerResult PutObject(RequestContext& ctx);
HandlerResult GetObject(RequestContext& ctx, bool head);
HandlerResult DeleteObject(RequestContext& ctx);
HandlerResult DeleteObjects(RequestContext& ctx);
HandlerResult CopyObject(RequestContext& ctx);
HandlerResult GetObjectTagging(RequestContext& ctx);
HandlerResult PutObjectTagging(RequestContext& ctx);
HandlerResult DeleteObjectTagging(RequestContext& ctx);

// --- Listing (s3_list.cc) ---
HandlerResult ListObjects(RequestContext& ctx, bool v2);

// --- Multipart (s3_multipart.cc, s3_complete.cc) ---
HandlerResult CreateMultipartUpload(RequestContext& ctx);
HandlerResult UploadPart(RequestContext& ctx);
HandlerResult UploadPartCopy(RequestContext& ctx);
HandlerResult CompleteMultipartUpload(RequestContext& ctx);
HandlerResult AbortMultipartUpload(RequestContext& ctx);
HandlerResult ListParts(RequestContext& ctx);
HandlerResult ListMultipartUploads(RequestContext& ctx);

}  // namespace serac::s3
