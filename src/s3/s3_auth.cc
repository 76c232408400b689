// Authorisation of S3 requests: the operation → action table, the resource ARNs, the condition
// keys, and the checks the service and the handlers run before anything changes.
#include "s3/s3_auth.h"

#include <array>

#include "common/encoding.h"
#include "common/log.h"
#include "s3/s3_internal.h"

namespace serac::s3 {

namespace {

using S = ResourceScope;

// Every operation the router can send to a handler. Actions are AWS's; operations without an
// action of their own use the one AWS documents for them (HeadBucket → s3:ListBucket, multipart
// writes and the copy destination → s3:PutObject).
constexpr std::array<OperationAccess, 26> kOperationAccess = {{
    // Service
    {"ListBuckets", "s3:ListAllMyBuckets", S::kFilteredService},
    // Buckets
    {"CreateBucket", "s3:CreateBucket", S::kBucket},
    {"HeadBucket", "s3:ListBucket", S::kBucket},
    {"DeleteBucket", "s3:DeleteBucket", S::kBucket},
    {"GetBucketLocation", "s3:GetBucketLocation", S::kBucket},
    {"GetBucketVersioning", "s3:GetBucketVersioning", S::kBucket},
    {"GetBucketAcl", "s3:GetBucketAcl", S::kBucket},
    {"ListObjects", "s3:ListBucket", S::kBucket, /*listing=*/true},
    {"ListObjectsV2", "s3:ListBucket", S::kBucket, /*listing=*/true},
    {"ListMultipartUploads", "s3:ListBucketMultipartUploads", S::kBucket},
    {"DeleteObjects", "s3:DeleteObject", S::kEachKey},
    // Objects
    {"PutObject", "s3:PutObject", S::kObject},
    {"CopyObject", "s3:PutObject", S::kObject, false, /*reads_copy_source=*/true},
    {"GetObject", "s3:GetObject", S::kObject},
    {"HeadObject", "s3:GetObject", S::kObject},
    {"DeleteObject", "s3:DeleteObject", S::kObject},
    {"GetObjectAcl", "s3:GetObjectAcl", S::kObject},
    {"GetObjectTagging", "s3:GetObjectTagging", S::kObject},
    {"PutObjectTagging", "s3:PutObjectTagging", S::kObject},
    {"DeleteObjectTagging", "s3:DeleteObjectTagging", S::kObject},
    // Multipart
    {"CreateMultipartUpload", "s3:PutObject", S::kObject},
    {"UploadPart", "s3:PutObject", S::kObject},
    {"UploadPartCopy", "s3:PutObject", S::kObject, false, /*reads_copy_source=*/true},
    {"CompleteMultipartUpload", "s3:PutObject", S::kObject},
    {"AbortMultipartUpload", "s3:AbortMultipartUpload", S::kObject},
    {"ListParts", "s3:ListMultipartUploadParts", S::kObject},
}};

}  // namespace

std::span<const OperationAccess> OperationAccessTable() { return kOperationAccess; }

const OperationAccess* FindOperationAccess(std::string_view operation) {
  for (const OperationAccess& entry : kOperationAccess) {
    if (entry.operation == operation) return &entry;
  }
  return nullptr;
}

std::string ResourceArn(ResourceScope scope, std::string_view bucket, std::string_view key) {
  switch (scope) {
    case ResourceScope::kService:
    case ResourceScope::kFilteredService:
      return std::string(auth::S3ServiceArn());
    case ResourceScope::kBucket:
      return auth::S3BucketArn(bucket);
    case ResourceScope::kObject:
      return auth::S3ObjectArn(bucket, key);
    case ResourceScope::kEachKey:
      break;
  }
  return {};
}

auth::ConditionContext RequestConditions(const auth::Principal& principal, const http::Request& request,
                                         const QueryParams& query, bool listing) {
  namespace keys = auth::condition_keys;
  auth::ConditionContext context = auth::RequestConditions(principal, request);
  if (listing && !auth::IsUnrestricted(principal)) {
    context.Set(keys::kS3Prefix, std::string(query.Get("prefix")));
    if (const std::string* delimiter = query.Find("delimiter")) context.Set(keys::kS3Delimiter, *delimiter);
    if (const std::string* max_keys = query.Find("max-keys")) context.Set(keys::kS3MaxKeys, *max_keys);
  }
  return context;
}

// --- The checks (declared in s3_internal.h) ---

bool IsAllowed(RequestContext& ctx, std::string_view action, std::string_view resource) {
  return ctx.backend.identity->IsAllowed(ctx.principal, action, resource, &ctx.conditions);
}

HandlerResult AuthorizeOperation(RequestContext& ctx, std::string_view operation) {
  const OperationAccess* access = FindOperationAccess(operation);
  if (access == nullptr) {
    // Fail closed: a routed operation missing from the table is a bug, not a permission.
    log::Error("s3: no access rule for operation " + std::string(operation));
    return MakeError(403, "AccessDenied", "Access Denied");
  }
  ctx.conditions = RequestConditions(ctx.principal, ctx.request, ctx.query, access->listing);
  // Filtered listings and per-key operations are decided by their handlers.
  if (access->scope != ResourceScope::kFilteredService && access->scope != ResourceScope::kEachKey) {
    Status allowed = ctx.backend.identity->Authorize(
        ctx.principal, access->action, ResourceArn(access->scope, ctx.bucket, ctx.key), &ctx.conditions);
    if (!allowed.ok()) return ErrorFromStatus(allowed);
  }
  if (access->reads_copy_source) {
    auto source = ParseCopySource(ctx.header("x-amz-copy-source"));
    if (!source.ok()) return ErrorFromStatus(source.status());
    Status allowed = ctx.backend.identity->Authorize(
        ctx.principal, "s3:GetObject", auth::S3ObjectArn(source->bucket, source->key), &ctx.conditions);
    if (!allowed.ok()) return ErrorFromStatus(allowed);
  }
  return kHandled;
}

// ListBuckets follows MinIO where AWS has no rule of its own: AWS lists every bucket to a caller
// allowed s3:ListAllMyBuckets and refuses anyone else; MinIO then falls back to the buckets the
// caller may s3:ListBucket or s3:GetBucketLocation. serac does the same, except that a caller with
// no such bucket gets an empty list (MinIO answers AccessDenied): only an explicit Deny of
// s3:ListAllMyBuckets refuses the listing, so an administrator can still forbid it outright.
BucketListing BucketListingAccess(RequestContext& ctx) {
  switch (ctx.backend.identity->Decide(ctx.principal, "s3:ListAllMyBuckets", auth::S3ServiceArn(),
                                       &ctx.conditions)) {
    case auth::PolicyDecision::kAllow:
      return BucketListing::kAll;
    case auth::PolicyDecision::kExplicitDeny:
      return BucketListing::kDenied;
    case auth::PolicyDecision::kImplicitDeny:
      break;
  }
  return BucketListing::kVisibleOnly;
}

bool MaySeeBucket(RequestContext& ctx, std::string_view bucket) {
  // Evaluated as a listing of the whole bucket, the way AWS fills s3:prefix when none is sent.
  auth::ConditionContext whole_bucket = ctx.conditions;
  whole_bucket.Set(auth::condition_keys::kS3Prefix, "");
  const std::string arn = auth::S3BucketArn(bucket);
  const auth::IdentityService& identity = *ctx.backend.identity;
  return identity.IsAllowed(ctx.principal, "s3:ListBucket", arn, &whole_bucket) ||
         identity.IsAllowed(ctx.principal, "s3:GetBucketLocation", arn, &ctx.conditions);
}

}  // namespace serac::s3
