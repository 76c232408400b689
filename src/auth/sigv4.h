// AWS Signature Version 4: verification of incoming requests (Authorization header and presigned
// query) and signing of outgoing ones (CLI, tests). Verify also accepts the legacy Signature
// Version 2 (HMAC-SHA1) forms that boto3's default presigner and older tools still produce. Pure functions
// over the request head; the body side (payload hash, aws-chunked, trailers, checksums) is in payload.h.
// Thread-safe: no shared mutable state except the signing-key cache, which is internally locked.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "http/http.h"

namespace serac::auth {

struct Credentials {
  std::string access_key;
  std::string secret_key;
  std::string session_token;  // non-empty for temporary credentials
};

// Returns the credentials for an access key; kUnknownAccessKey when there is none.
using CredentialLookup = std::function<Result<Credentials>(std::string_view access_key)>;

// How the canonical URI is formed.
enum class UriEncoding {
  kS3,       // decode the raw path once, re-encode once (S3's rule)
  kGeneric,  // encode the (already encoded) path segments again: "%1F" is signed as "%251F"
};

enum class PayloadMode {
  kSignedHex,                 // x-amz-content-sha256 is the hex SHA-256 of the body (for kGeneric
                              // requests also its base64 form, as Java SDK clients send it)
  kUnsigned,                  // UNSIGNED-PAYLOAD (also every presigned URL)
  kStreamingSigned,           // STREAMING-AWS4-HMAC-SHA256-PAYLOAD
  kStreamingSignedTrailer,    // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
  kStreamingUnsignedTrailer,  // STREAMING-UNSIGNED-PAYLOAD-TRAILER
};
// A request signed without x-amz-content-sha256 (generic AWS services, PyIceberg) signs the hex
// SHA-256 of its body without sending it. Verify checks such a request only against the hash of a
// body already read (VerifyOptions::body_sha256_hex) or known to be empty, and then reports it as
// kSignedHex: a VerifiedRequest always means the signature was compared.

struct VerifyOptions {
  std::vector<std::string> services = {"s3"};  // accepted signing names in the scope
  UriEncoding uri_encoding = UriEncoding::kS3;
  WallTime now;  // server time
  // SigV2 only: the bucket named by a virtual-host request's Host, which SigV2 signs as a path
  // prefix ("/bucket/key"). Empty for path-style requests.
  std::string virtual_host_bucket;
  // The hex SHA-256 of the whole body, read before verifying, for a request whose signature
  // covers a body hash it does not send (SignsUnsentBodyHash). Without it such a request with a
  // body is refused (kInvalidArgument), never accepted unchecked.
  std::optional<std::string> body_sha256_hex;
};

// What a verified request proved, and what the body reader still has to check.
struct VerifiedRequest {
  std::string access_key;
  std::string session_token;  // the x-amz-security-token sent, if any
  bool presigned = false;
  PayloadMode payload_mode = PayloadMode::kUnsigned;
  std::string payload_sha256_hex;  // for kSignedHex: the value to match against the body
  // Needed to verify aws-chunked chunk and trailer signatures.
  std::string signing_key;     // raw 32 bytes of kSigning — never log
  std::string seed_signature;  // hex signature of the request head
  std::string amz_date;        // 20130524T000000Z
  std::string scope;           // 20130524/us-east-1/s3/aws4_request
  int signature_version = 4;   // 2 for the legacy HMAC-SHA1 forms (payload_mode is then kUnsigned)
};

// What the server computed when a signature did not match, for the SignatureDoesNotMatch error
// body (AWS includes these so clients can debug their signing). Holds no secret material.
struct SignatureMismatchDetail {
  std::string access_key;
  std::string string_to_sign;
  std::string canonical_request;  // empty for SigV2, which has none
  std::string signature_provided;
};

// True if the request carries SigV4 or SigV2 auth (header or query); false means anonymous.
bool HasSignature(const http::Request& request);

// True for a SigV4 Authorization-header request without x-amz-content-sha256 whose head does not
// show an empty body: its signature covers the SHA-256 of a body that must be read before Verify
// can decide (VerifyOptions::body_sha256_hex). S3 refuses such requests, as AWS does.
bool SignsUnsentBodyHash(const http::Request& request);

// Verifies the signature of the request head; success means the signature was computed and
// compared (what the body must still match, for signed payloads, is in the VerifiedRequest).
// Errors: kAuthorizationMalformed, kUnknownAccessKey, kSignatureMismatch, kClockSkewed, kExpired,
// kAccessDenied (missing date, unsigned x-amz-* headers, in the header or presigned forms),
// kNotImplemented (SigV4a), kInvalidArgument (malformed SigV2, mixed mechanisms, a body hash
// signed but neither sent nor given in `options`).
Result<VerifiedRequest> Verify(const http::Request& request, const VerifyOptions& options,
                               const CredentialLookup& lookup);

// As above; on kSignatureMismatch also fills `*mismatch` (when non-null) with what was signed.
Result<VerifiedRequest> Verify(const http::Request& request, const VerifyOptions& options,
                               const CredentialLookup& lookup, SignatureMismatchDetail* mismatch);

// The signing key for (secret, day, region, service), cached per day.
std::string DeriveSigningKey(std::string_view secret_key, std::string_view day, std::string_view region,
                             std::string_view service);

// Canonical request pieces, exposed for tests and error bodies.
std::string CanonicalUri(std::string_view raw_path, UriEncoding encoding);
std::string CanonicalQuery(std::string_view raw_query, bool drop_signature);

// --- Signing (client side) ---

struct SignOptions {
  std::string region = "us-east-1";
  std::string service = "s3";
  UriEncoding uri_encoding = UriEncoding::kS3;
  WallTime now;
  std::string payload_sha256_hex;          // "" = UNSIGNED-PAYLOAD
  bool send_content_sha256_header = true;  // false for generic services (PyIceberg-style)
};

// Adds x-amz-date, x-amz-content-sha256 (optional), x-amz-security-token and Authorization to
// `headers`. `headers` must already contain Host.
void SignRequest(std::string_view method, std::string_view raw_path, std::string_view raw_query,
                 std::vector<http::Header>& headers, const Credentials& credentials,
                 const SignOptions& options);

// Builds a presigned URL query string (without the leading '?') for method/path/host.
std::string PresignQuery(std::string_view method, std::string_view raw_path, std::string_view host,
                         const Credentials& credentials, const SignOptions& options, int64_t expires_seconds);

}  // namespace serac::auth
