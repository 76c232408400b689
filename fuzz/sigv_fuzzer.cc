// Fuzzes request authentication: SigV4 (Authorization header and presigned query) and SigV2
// parsing and verification, the canonical URI and query, and the body side — aws-chunked framing,
// chunk and trailer signatures, trailers, Content-MD5 and x-amz-checksum-* — in
// VerifyingBodyReader. The first byte picks the mode, the rest is a request in the text form of
// fuzz_request.h:
//   'r' the request verified as it is (its own Authorization header or presigned query), against
//       a server clock of 2026-01-01T00:00:00Z, the date the seeds were signed with;
//   's' the request signed first with root's key (S3 URI rules; the payload hash it names in
//       x-amz-content-sha256, else the body's), then verified and its body read through
//       VerifyingBodyReader, so that mutated bodies reach the aws-chunked decoder;
//   'g' as 's' with the catalog's signing name and generic URI encoding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "auth/payload.h"
#include "auth/sigv4.h"
#include "common/clock.h"
#include "fuzz_request.h"
#include "http/http_test_fakes.h"

namespace {

using serac::Result;
using serac::auth::Credentials;

Result<Credentials> LookupRoot(std::string_view access_key) {
  if (access_key != serac::fuzz::kRootAccessKey) {
    return serac::Error(serac::ErrorCode::kUnknownAccessKey, "unknown access key");
  }
  return Credentials{std::string(serac::fuzz::kRootAccessKey), std::string(serac::fuzz::kRootSecretKey), ""};
}

void ReadBody(const serac::fuzz::ParsedInput& input, const serac::auth::VerifiedRequest& verified) {
  serac::http::testing::StringBody raw(input.body);
  serac::auth::PayloadOptions options;
  options.default_checksum = serac::ChecksumAlgorithm::kCrc64Nvme;
  auto reader = serac::auth::VerifyingBodyReader::Create(input.request, verified, raw, options);
  if (!reader.ok()) return;
  (*reader)->SetLimit(1 << 20);
  char buffer[4096];
  for (;;) {
    auto got = (*reader)->Read(buffer, sizeof(buffer));
    if (!got.ok() || *got == 0) break;
  }
  (void)(*reader)->md5_hex();
  (void)(*reader)->checksum();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return -1;
  const char mode = static_cast<char>(data[0]);
  serac::fuzz::ParsedInput input;
  if (!serac::fuzz::ParseInput(data + 1, size - 1, input)) return -1;
  serac::auth::VerifyOptions options;
  if (mode == 'r') {
    options.services = {"s3", "s3tables"};
    options.now = serac::FromUnixMillis(1767225600000);  // 2026-01-01T00:00:00Z
    (void)serac::auth::HasSignature(input.request);
    serac::auth::SignatureMismatchDetail mismatch;
    auto verified = serac::auth::Verify(input.request, options, LookupRoot, &mismatch);
    if (verified.ok()) ReadBody(input, *verified);
    (void)serac::auth::CanonicalUri(input.request.path, serac::auth::UriEncoding::kS3);
    (void)serac::auth::CanonicalUri(input.request.path, serac::auth::UriEncoding::kGeneric);
    (void)serac::auth::CanonicalQuery(input.request.query, true);
    return 0;
  }
  if (mode != 's' && mode != 'g') return -1;
  const bool generic = mode == 'g';
  serac::fuzz::SignAsRoot(input, generic ? "s3tables" : "s3",
                          generic ? serac::auth::UriEncoding::kGeneric : serac::auth::UriEncoding::kS3);
  options.services = {generic ? "s3tables" : "s3"};
  options.uri_encoding = generic ? serac::auth::UriEncoding::kGeneric : serac::auth::UriEncoding::kS3;
  options.now = serac::Now();
  auto verified = serac::auth::Verify(input.request, options, LookupRoot);
  if (verified.ok()) ReadBody(input, *verified);
  return 0;
}
