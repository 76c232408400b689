#include "service/authenticate.h"

#include "common/encoding.h"
#include "common/hash.h"

namespace serac::service {

bool AuthenticateSignature(RequestContext& ctx, const auth::IdentityService& identity,
                           const auth::CredentialLookup& credentials, const SignaturePolicy& policy,
                           SignatureFailure& failure) {
  auth::VerifyOptions options;
  options.services = policy.services;
  options.uri_encoding = policy.uri_encoding;
  options.virtual_host_bucket = policy.virtual_host_bucket;
  options.now = Now();
  failure.now = options.now;
  if (policy.unsent_body_hash_bytes_max > 0 && auth::SignsUnsentBodyHash(ctx.request)) {
    // The signature covers this body: nothing is decided, and no principal exists, before it is read.
    Result<std::string> body = ctx.raw_body.ReadAll(policy.unsent_body_hash_bytes_max);
    if (!body.ok()) {
      failure.step = SignatureFailure::Step::kSignature;
      failure.status = body.status();
      return false;
    }
    options.body_sha256_hex = Sha256Hex(*body);
    ctx.body_read_for_signature = std::move(body).value();
  }
  Result<auth::VerifiedRequest> verified = auth::Verify(ctx.request, options, credentials, &failure.mismatch);
  if (!verified.ok()) {
    failure.step = SignatureFailure::Step::kSignature;
    failure.status = verified.status();
    return false;
  }
  ctx.verified = std::move(verified).value();
  ctx.outcome.principal = ctx.verified.access_key;  // an id, never a secret: who tried
  Result<auth::Principal> principal = identity.PrincipalForSignedRequest(ctx.verified, options.now);
  if (!principal.ok()) {
    failure.step = SignatureFailure::Step::kPrincipal;
    failure.status = principal.status();
    return false;
  }
  ctx.principal = std::move(principal).value();
  return true;
}

std::optional<std::string_view> BearerToken(const http::Request& request) {
  std::string_view header = TrimWhitespace(request.HeaderOr("authorization"));
  constexpr std::string_view kScheme = "bearer ";
  if (header.size() <= kScheme.size() || !AsciiEqualsIgnoreCase(header.substr(0, kScheme.size()), kScheme)) {
    return std::nullopt;
  }
  return TrimWhitespace(header.substr(kScheme.size()));
}

Status AuthenticateBearer(RequestContext& ctx, const auth::IdentityService& identity,
                          std::string_view token) {
  SERAC_ASSIGN_OR_RETURN(ctx.principal, identity.PrincipalForBearerToken(token, Now()));
  ctx.outcome.principal = ctx.principal.access_key;
  return Status::Ok();
}

}  // namespace serac::service
