// Who a request acts as: the one path from a signed request (SigV4 or SigV2, in the headers or
// presigned) or an OAuth2 bearer token to an auth::Principal, shared by every front end. Each front
// end says which signatures it accepts and turns a failure into its own protocol's error.
// Thread-safety: free functions; the IdentityService they use is thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/identity.h"
#include "auth/sigv4.h"
#include "common/clock.h"
#include "common/status.h"
#include "service/request_context.h"

namespace serac::service {

// The signatures a front end accepts.
struct SignaturePolicy {
  std::vector<std::string> services;  // SigV4 signing names: {"s3"}, {"s3tables", "s3"}, ...
  auth::UriEncoding uri_encoding = auth::UriEncoding::kS3;
  std::string virtual_host_bucket;  // a virtual-host request's bucket (SigV2 signs it in the path)
  // The most body bytes read into memory, before the signature is checked, for a request whose
  // signature covers a body hash it does not send (auth::SignsUnsentBodyHash: PyIceberg and other
  // generic AWS clients). Such a body is kept in RequestContext::body_read_for_signature. 0: such
  // requests are refused (S3, as AWS refuses them).
  uint64_t unsent_body_hash_bytes_max = 0;
};

// Why a signed request was not authenticated, for the front end's error.
struct SignatureFailure {
  // kSignature: the signature does not verify (or is malformed, expired, too skewed, of an unknown
  // key); kPrincipal: it verifies, but the key's user or session is unusable (disabled, expired
  // session token, parent key gone).
  enum class Step { kSignature, kPrincipal } step = Step::kSignature;
  Status status;
  auth::SignatureMismatchDetail mismatch;  // filled for kSignatureMismatch
  WallTime now;                            // the time the signature was checked against
};

// Verifies ctx.request's signature and fills ctx.verified, ctx.principal and ctx.outcome.principal
// (the access key id: who tried, never a secret; a front end may name the user once it is known).
// A principal is filled only after the signature was compared: when it covers a body hash the
// request does not send, the body is read first (SignaturePolicy::unsent_body_hash_bytes_max).
// On failure returns false and fills `failure` (kLimitExceeded: that body is too large).
bool AuthenticateSignature(RequestContext& ctx, const auth::IdentityService& identity,
                           const auth::CredentialLookup& credentials, const SignaturePolicy& policy,
                           SignatureFailure& failure);

// The token of "Authorization: Bearer <token>", if that is the header's scheme.
std::optional<std::string_view> BearerToken(const http::Request& request);

// Fills ctx.principal (and ctx.outcome.principal with its access key) from a bearer token; the
// identity service's error otherwise (kExpired, kAccessDenied, a store failure).
Status AuthenticateBearer(RequestContext& ctx, const auth::IdentityService& identity, std::string_view token);

}  // namespace serac::service
