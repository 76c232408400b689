// AWS Signature Version 2 (HMAC-SHA1), the legacy scheme boto3 still uses for presigned URLs when
// no signature version is configured, and that older tools use in "Authorization: AWS id:sig".
// Private to the auth module: Verify (sigv4.cc) dispatches here.
#pragma once

#include <string>
#include <string_view>

#include "auth/sigv4.h"
#include "common/status.h"
#include "http/http.h"

namespace serac::auth::internal {

// True when the request is signed with SigV2: an "AWS " Authorization header, or an
// AWSAccessKeyId query parameter without any SigV4 query parameters.
bool IsSignatureV2(const http::Request& request);

Result<VerifiedRequest> VerifySignatureV2(const http::Request& request, const VerifyOptions& options,
                                          const CredentialLookup& lookup, SignatureMismatchDetail* mismatch);

// "/bucket/key?sub=resource": the raw path as sent (prefixed with "/bucket" for virtual-host
// requests), plus the signed sub-resources of the query, sorted by name, values decoded.
std::string CanonicalizedResourceV2(std::string_view raw_path, std::string_view raw_query,
                                    std::string_view virtual_host_bucket);

// Base64 of HMAC-SHA1(secret, string_to_sign).
std::string SignatureV2(std::string_view secret_key, std::string_view string_to_sign);

}  // namespace serac::auth::internal
