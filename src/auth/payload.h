// The body side of authentication and integrity: wraps the raw HTTP body of a PUT/UploadPart and
// yields the object bytes, while it
//   - removes aws-chunked framing and verifies every chunk signature and the trailer signature,
//   - checks the x-amz-content-sha256 hex value (kSignedHex; a body whose hash the client signed
//     but did not send is hashed before the signature is compared, service/authenticate.cc),
//   - checks Content-MD5 and any x-amz-checksum-* (header or trailer),
//   - computes the MD5 (the ETag) and the object's checksum in the same pass.
// All checks complete when Read() returns 0; a failure is returned from that Read() call instead,
// so the caller never commits unverified bytes. Not thread-safe (one request).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/sigv4.h"
#include "common/hash.h"
#include "common/status.h"
#include "http/http.h"

namespace serac::auth {

// The header that carries an object checksum of ALGORITHM: "x-amz-checksum-crc32", ...
std::string_view ChecksumHeaderName(ChecksumAlgorithm algorithm);
// The algorithm an x-amz-checksum-* header name carries (any case); nullopt for the other
// x-amz-checksum-* headers (x-amz-checksum-type, x-amz-checksum-mode) and every other header.
std::optional<ChecksumAlgorithm> ChecksumAlgorithmOfHeader(std::string_view name);

struct PayloadOptions {
  // Compute this checksum even if the client sent none (e.g. the upload's algorithm); the
  // client's own x-amz-checksum-* algorithm, if any, takes precedence.
  std::optional<ChecksumAlgorithm> default_checksum;
  bool compute_md5 = true;
};

class VerifyingBodyReader final : public http::BodyReader {
 public:
  // Errors at construction: kInvalidArgument (bad Content-MD5 / checksum header syntax, both a
  // trailer and a checksum header), kMissingContentLength (aws-chunked without a decoded length).
  static Result<std::unique_ptr<VerifyingBodyReader>> Create(const http::Request& request,
                                                             const VerifiedRequest& verified,
                                                             http::BodyReader& raw,
                                                             const PayloadOptions& options);
  ~VerifyingBodyReader() override;

  Result<size_t> Read(char* buffer, size_t capacity) override;
  // The decoded length when known in advance (x-amz-decoded-content-length or Content-Length).
  std::optional<uint64_t> content_length() const override;
  void SetLimit(uint64_t bytes_max) override;

  // Valid after Read() returned 0.
  uint64_t bytes_read() const;
  std::string md5_hex() const;
  // Algorithm and base64 value of the verified (or computed) checksum, if any.
  std::optional<std::pair<ChecksumAlgorithm, std::string>> checksum() const;

 private:
  struct Impl;
  explicit VerifyingBodyReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace serac::auth
