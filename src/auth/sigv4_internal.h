// Pieces of SigV4 shared by the request verifier (sigv4.cc) and the body verifier (payload.cc).
// Private to the auth module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "auth/sigv4.h"
#include "common/status.h"
#include "http/http.h"

namespace serac::auth::internal {

inline constexpr std::string_view kSigningAlgorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kChunkAlgorithm = "AWS4-HMAC-SHA256-PAYLOAD";
inline constexpr std::string_view kTrailerAlgorithm = "AWS4-HMAC-SHA256-TRAILER";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
inline constexpr std::string_view kEmptySha256Hex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
inline constexpr std::string_view kSignatureMismatchMessage =
    "The request signature we calculated does not match the signature you provided. "
    "Check your key and signing method.";

// "<algorithm>\n<amz_date>\n<scope>\n<tail>": the tail is the hashed canonical request for a
// request head, or "<previous signature>\n<hash>\n<hash>" for a chunk.
std::string StringToSign(std::string_view algorithm, std::string_view amz_date, std::string_view scope,
                         std::string_view tail);

// Lower-case hex HMAC-SHA256 of `string_to_sign` under the derived signing key.
std::string SignatureHex(std::string_view signing_key, std::string_view string_to_sign);

// True when `a` and `b` are the same signature, compared in constant time (case-insensitive hex).
bool SignaturesEqual(std::string_view a, std::string_view b);

// Case-insensitive header lookups that do not depend on the http module's implementation.
const std::string* FindHeader(const http::Request& request, std::string_view name);
std::vector<std::string_view> FindHeaders(const http::Request& request, std::string_view name);

bool IsLowerHex(std::string_view text, size_t length);

// A temporary credential's session token must come with the request, exactly (constant time);
// long-term credentials have none and need none.
Status CheckSessionToken(std::string_view presented, const Credentials& credentials);

// A header-signed request's time within limits::kClockSkewMax of now (kClockSkewed otherwise), as
// both SigV2 and SigV4 require.
Status CheckClockSkew(WallTime request_time, WallTime now);

// The non-empty, trimmed items of a comma-separated header value.
std::vector<std::string_view> SplitList(std::string_view text);

// The value of the first query parameter named `name`, or nullptr (SigV2 and SigV4 each parse the
// query their own way: SigV2 keeps the raw names its string to sign needs).
template <typename Param>
const std::string* FindParam(const std::vector<Param>& params, std::string_view name) {
  for (const Param& param : params) {
    if (param.name == name) return &param.value;
  }
  return nullptr;
}

}  // namespace serac::auth::internal
