#include "auth/sigv4.h"
#include "client/signed_request_internal.h"
#include "common/clock.h"
#include "common/hash.h"

namespace serac::client::internal {

std::string TrimTrailingSlashes(std::string text) {
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

Result<http::ClientRequest> BuildRequest(const Target& target, const Signing& signing, const Call& call) {
  std::string url = target.base_url + call.raw_path;
  if (!call.raw_query.empty()) url += "?" + call.raw_query;
  Result<http::Url> parsed = http::ParseUrl(url);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInvalidArgument,
                 "bad endpoint '" + target.base_url + "': " + parsed.status().message());
  }
  http::ClientRequest request;
  request.method = call.method;
  request.url = url;
  request.body = call.body;
  request.tls_ca_file = target.ca_file;
  request.tls_insecure = target.insecure;
  request.headers.push_back({"Host", parsed->HostHeader()});
  for (const http::Header& header : call.headers) request.headers.push_back(header);
  switch (signing.kind) {
    case Signing::Kind::kNone:
      break;
    case Signing::Kind::kBearer:
      request.headers.push_back({"Authorization", "Bearer " + signing.bearer_token});
      break;
    case Signing::Kind::kSigV4: {
      auth::Credentials credentials{signing.access_key, signing.secret_key, signing.session_token};
      auth::SignOptions options;
      options.region = signing.region;
      options.service = signing.service;
      options.uri_encoding = signing.s3_uri_encoding ? auth::UriEncoding::kS3 : auth::UriEncoding::kGeneric;
      options.now = signing.now == WallTime{} ? Now() : signing.now;
      options.payload_sha256_hex = Sha256Hex(call.body);
      auth::SignRequest(call.method, parsed->path, parsed->query, request.headers, credentials, options);
      break;
    }
  }
  return request;
}

ErrorCode CodeForStatus(int status) {
  switch (status) {
    case 401:
    case 403:
      return ErrorCode::kAccessDenied;
    case 404:
      return ErrorCode::kNotFound;
    case 409:
      return ErrorCode::kConflict;
    case 412:
      return ErrorCode::kPreconditionFailed;
    case 501:
      return ErrorCode::kNotImplemented;
    case 503:
      return ErrorCode::kUnavailable;
    default:
      return status >= 500 ? ErrorCode::kInternal : ErrorCode::kInvalidArgument;
  }
}

}  // namespace serac::client::internal
