#include "s3/s3_errors.h"

#include "s3/s3_xml.h"

namespace serac::s3 {

S3Error MakeError(int http_status, std::string code, std::string message) {
  S3Error error;
  error.http_status = http_status;
  error.code = std::move(code);
  error.message = std::move(message);
  return error;
}

S3Error NoSuchBucket() { return MakeError(404, "NoSuchBucket", "The specified bucket does not exist"); }
S3Error NoSuchKey() { return MakeError(404, "NoSuchKey", "The specified key does not exist."); }
S3Error NoSuchUpload() {
  return MakeError(404, "NoSuchUpload",
                   "The specified multipart upload does not exist. The upload ID may be invalid, or the "
                   "upload may have been aborted or completed.");
}
S3Error NotImplemented(std::string_view what) {
  return MakeError(
      501, "NotImplemented",
      "A header or query you provided implies functionality that is not implemented: " + std::string(what));
}
S3Error InvalidArgument(std::string message) { return MakeError(400, "InvalidArgument", std::move(message)); }
S3Error InvalidRequest(std::string message) { return MakeError(400, "InvalidRequest", std::move(message)); }
S3Error MalformedXml(std::string message) {
  if (message.empty()) {
    message = "The XML you provided was not well-formed or did not validate against our published schema.";
  }
  return MakeError(400, "MalformedXML", std::move(message));
}
S3Error InternalError(std::string message) { return MakeError(500, "InternalError", std::move(message)); }

namespace {

S3Error NotFoundError(Missing missing) {
  switch (missing) {
    case Missing::kBucket:
      return NoSuchBucket();
    case Missing::kUpload:
      return NoSuchUpload();
    case Missing::kKey:
      break;
  }
  return NoSuchKey();
}

// Message to show for a code when the Status carries none.
std::string OrDefault(const std::string& message, std::string_view fallback) {
  return message.empty() ? std::string(fallback) : message;
}

}  // namespace

S3Error ErrorFromStatus(const Status& status, Missing missing, bool presigned) {
  const std::string& m = status.message();
  switch (status.code()) {
    case ErrorCode::kOk:
    case ErrorCode::kOutcomeUnknown:
    case ErrorCode::kInternal:
      return InternalError(OrDefault(m, "We encountered an internal error. Please try again."));
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kValidationFailed:
      return InvalidArgument(OrDefault(m, "Invalid argument"));
    case ErrorCode::kMalformedDocument:
      return MalformedXml(m);
    case ErrorCode::kNotFound:
      return NotFoundError(missing);
    case ErrorCode::kAlreadyExists:
      return MakeError(409, "BucketAlreadyOwnedByYou",
                       "Your previous request to create the named bucket succeeded and you already own it.");
    case ErrorCode::kNotEmpty:
      return MakeError(409, "BucketNotEmpty", "The bucket you tried to delete is not empty");
    case ErrorCode::kPreconditionFailed:
      return MakeError(412, "PreconditionFailed",
                       "At least one of the pre-conditions you specified did not hold");
    case ErrorCode::kConflict:
      return MakeError(409, "ConditionalRequestConflict",
                       "A conflicting operation occurred. If using PutObject you can retry the request.");
    case ErrorCode::kNotModified:
      return MakeError(304, "NotModified", "Not Modified");
    case ErrorCode::kLimitExceeded:
      return MakeError(400, "EntityTooLarge",
                       OrDefault(m, "Your proposed upload exceeds the maximum allowed object size."));
    case ErrorCode::kTooSmall:
      return MakeError(400, "EntityTooSmall",
                       OrDefault(m, "Your proposed upload is smaller than the minimum allowed object size."));
    case ErrorCode::kInvalidRange:
      return MakeError(416, "InvalidRange", "The requested range is not satisfiable");
    case ErrorCode::kNotImplemented:
      return NotImplemented(m);
    case ErrorCode::kUnknownAccessKey:
      return MakeError(403, "InvalidAccessKeyId",
                       "The AWS Access Key Id you provided does not exist in our records.");
    case ErrorCode::kSignatureMismatch:
      return MakeError(403, "SignatureDoesNotMatch",
                       OrDefault(m,
                                 "The request signature we calculated does not match the signature you "
                                 "provided. Check your key and signing method."));
    case ErrorCode::kAuthorizationMalformed:
      return MakeError(400, presigned ? "AuthorizationQueryParametersError" : "AuthorizationHeaderMalformed",
                       OrDefault(m, "The authorization information is malformed"));
    case ErrorCode::kClockSkewed:
      return MakeError(403, "RequestTimeTooSkewed",
                       "The difference between the request time and the current time is too large.");
    case ErrorCode::kExpired:
      return MakeError(403, "AccessDenied", OrDefault(m, "Request has expired"));
    case ErrorCode::kAccessDenied:
      return MakeError(403, "AccessDenied", OrDefault(m, "Access Denied"));
    case ErrorCode::kMissingContentLength:
      return MakeError(411, "MissingContentLength", "You must provide the Content-Length HTTP header.");
    case ErrorCode::kBadDigest:
      return MakeError(
          400, "BadDigest",
          OrDefault(m, "The Content-MD5 or checksum you specified did not match what we received."));
    case ErrorCode::kPayloadHashMismatch:
      return MakeError(400, "XAmzContentSHA256Mismatch",
                       "The provided 'x-amz-content-sha256' header does not match what was computed.");
    case ErrorCode::kIncompleteBody:
      return MakeError(
          400, "IncompleteBody",
          "You did not provide the number of bytes specified by the Content-Length HTTP header.");
    case ErrorCode::kIoError:
      return InternalError("We encountered an internal error. Please try again.");
    case ErrorCode::kUnavailable:
      return MakeError(503, "ServiceUnavailable", "Please reduce your request rate.");
    case ErrorCode::kTimeout:
      return MakeError(400, "RequestTimeout",
                       "Your socket connection to the server was not read from or written to within the "
                       "timeout period.");
  }
  return InternalError("unmapped error");
}

std::string SpacedHexBytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (char c : bytes) {
    if (!out.empty()) out += ' ';
    auto byte = static_cast<unsigned char>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0x0F];
  }
  return out;
}

void AddSignatureMismatchDetails(S3Error& error, std::string_view access_key, std::string_view string_to_sign,
                                 std::string_view signature_provided, std::string_view canonical_request) {
  error.details.emplace_back("AWSAccessKeyId", std::string(access_key));
  error.details.emplace_back("StringToSign", std::string(string_to_sign));
  error.details.emplace_back("SignatureProvided", std::string(signature_provided));
  error.details.emplace_back("StringToSignBytes", SpacedHexBytes(string_to_sign));
  if (canonical_request.empty()) return;
  error.details.emplace_back("CanonicalRequest", std::string(canonical_request));
  error.details.emplace_back("CanonicalRequestBytes", SpacedHexBytes(canonical_request));
}

std::string RenderErrorXml(const S3Error& error, std::string_view bucket, std::string_view key,
                           std::string_view resource, std::string_view request_id) {
  XmlWriter xml;
  xml.Open("Error");
  xml.Element("Code", error.code);
  xml.Element("Message", error.message);
  if (!key.empty()) xml.Element("Key", key);
  if (!bucket.empty()) xml.Element("BucketName", bucket);
  xml.Element("Resource", resource);
  for (const auto& [name, value] : error.details) xml.Element(name, value);
  xml.Element("RequestId", request_id);
  xml.Element("HostId", request_id);
  xml.Close();
  return xml.Finish();
}

}  // namespace serac::s3
