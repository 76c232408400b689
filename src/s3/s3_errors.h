// S3 error responses: the mapping from serac's closed ErrorCode set to S3 error codes and HTTP
// statuses, and the XML error body. Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace serac::s3 {

struct S3Error {
  int http_status = 500;
  std::string code;     // "NoSuchKey", ...
  std::string message;  // human readable
  // Extra elements placed in the <Error> body (RequestTime, ServerTime, ...).
  std::vector<std::pair<std::string, std::string>> details;
};

S3Error MakeError(int http_status, std::string code, std::string message);

// What a kNotFound from the MetaStore means for the operation at hand.
enum class Missing { kKey, kBucket, kUpload };

// Maps a failed Status to an S3 error. `presigned` picks AuthorizationQueryParametersError over
// AuthorizationHeaderMalformed.
S3Error ErrorFromStatus(const Status& status, Missing missing = Missing::kKey, bool presigned = false);

// Frequently used errors.
S3Error NoSuchBucket();
S3Error NoSuchKey();
S3Error NoSuchUpload();
S3Error NotImplemented(std::string_view what);
S3Error InvalidArgument(std::string message);
S3Error InvalidRequest(std::string message);
S3Error MalformedXml(std::string message);
S3Error InternalError(std::string message);

// Bytes as AWS prints them in StringToSignBytes: two lower-case hex digits each, space-separated.
std::string SpacedHexBytes(std::string_view bytes);
// Adds what the server signed to a SignatureDoesNotMatch error, in AWS's element order, so clients
// can debug their signing. The canonical request elements are left out when it is empty (SigV2).
void AddSignatureMismatchDetails(S3Error& error, std::string_view access_key, std::string_view string_to_sign,
                                 std::string_view signature_provided, std::string_view canonical_request);

// The <Error> document. `resource` is the request path.
std::string RenderErrorXml(const S3Error& error, std::string_view bucket, std::string_view key,
                           std::string_view resource, std::string_view request_id);

}  // namespace serac::s3
