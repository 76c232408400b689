// Private to s3/: what each S3 operation must be allowed to do. One table (s3_auth.cc) names, for
// every operation serac offers, the IAM action it needs (AWS's names) and what the action's
// resource is (the service, the bucket or the object), so the policy check happens in one place,
// before the handler runs and before anything changes. Pure functions, thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "auth/identity.h"
#include "auth/policy.h"
#include "http/http.h"
#include "s3/s3_rules.h"

namespace serac::s3 {

// What an operation's action is checked against.
enum class ResourceScope {
  kService,  // auth::S3ServiceArn(): account-level
  // Account-level listing that its handler decides and narrows to what the caller may see
  // (ListBuckets, through BucketListingAccess in s3_internal.h): only an explicit Deny refuses it.
  kFilteredService,
  kBucket,   // auth::S3BucketArn(bucket)
  kObject,   // auth::S3ObjectArn(bucket, key)
  kEachKey,  // per key named in the request body (DeleteObjects), decided by the handler
};

struct OperationAccess {
  std::string_view operation;  // the routed operation name, as in the access log: "PutObject"
  std::string_view action;     // the IAM action: "s3:PutObject"
  ResourceScope scope;
  bool listing = false;            // adds the s3:prefix / s3:delimiter / s3:max-keys condition keys
  bool reads_copy_source = false;  // also needs s3:GetObject on x-amz-copy-source
};

// The whole table, one entry per operation serac offers.
std::span<const OperationAccess> OperationAccessTable();
// The entry for `operation`, or nullptr for operations serac does not offer.
const OperationAccess* FindOperationAccess(std::string_view operation);

// The ARN `scope` names for this bucket and key (empty for kEachKey: there is no single one).
std::string ResourceArn(ResourceScope scope, std::string_view bucket, std::string_view key);

// The condition keys of a request: auth::RequestConditions, and for listings s3:prefix (empty when absent, as
// AWS evaluates it), s3:delimiter and s3:max-keys (when sent).
auth::ConditionContext RequestConditions(const auth::Principal& principal, const http::Request& request,
                                         const QueryParams& query, bool listing);

}  // namespace serac::s3
