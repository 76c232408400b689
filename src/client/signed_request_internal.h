// What every client in this module does to send one request: build the URL, sign it (SigV4 with a
// service name and URI encoding, or a bearer token, or nothing), send it, and turn the answer's
// status into an ErrorCode.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "http/client.h"
#include "http/http.h"

namespace serac::client::internal {

struct Signing {
  enum class Kind { kNone, kSigV4, kBearer } kind = Kind::kSigV4;
  std::string access_key;
  std::string secret_key;
  std::string session_token;
  std::string region = "us-east-1";
  std::string service = "s3";   // SigV4 signing name: s3, s3tables, ...
  bool s3_uri_encoding = true;  // S3's path encoding; false: the generic one other services verify
  std::string bearer_token;
  WallTime now = {};  // the signing time; the epoch = the clock's now
};

struct Target {
  std::string base_url;  // scheme://host[:port][/prefix], no trailing slash
  std::string ca_file;
  bool insecure = false;
};

struct Call {
  std::string method = "GET";
  std::string raw_path;  // appended to base_url; already percent-encoded
  std::string raw_query;
  std::vector<http::Header> headers;
  std::string body;
};

// The signed request, ready for http::Send. kInvalidArgument when base_url + raw_path is no URL.
Result<http::ClientRequest> BuildRequest(const Target& target, const Signing& signing, const Call& call);

// The error code a response status means to a caller (404 kNotFound, 409 kConflict, 412
// kPreconditionFailed, 401/403 kAccessDenied, 503 kUnavailable, other 5xx kInternal, other 4xx
// kInvalidArgument).
ErrorCode CodeForStatus(int status);

// "base" without trailing slashes.
std::string TrimTrailingSlashes(std::string text);

}  // namespace serac::client::internal
