#include "common/status.h"

namespace serac {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "Ok";
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kOutcomeUnknown:
      return "OutcomeUnknown";
    case ErrorCode::kMalformedDocument:
      return "MalformedDocument";
    case ErrorCode::kValidationFailed:
      return "ValidationFailed";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kAlreadyExists:
      return "AlreadyExists";
    case ErrorCode::kNotEmpty:
      return "NotEmpty";
    case ErrorCode::kPreconditionFailed:
      return "PreconditionFailed";
    case ErrorCode::kConflict:
      return "Conflict";
    case ErrorCode::kNotModified:
      return "NotModified";
    case ErrorCode::kLimitExceeded:
      return "LimitExceeded";
    case ErrorCode::kTooSmall:
      return "TooSmall";
    case ErrorCode::kInvalidRange:
      return "InvalidRange";
    case ErrorCode::kNotImplemented:
      return "NotImplemented";
    case ErrorCode::kUnknownAccessKey:
      return "UnknownAccessKey";
    case ErrorCode::kSignatureMismatch:
      return "SignatureMismatch";
    case ErrorCode::kAuthorizationMalformed:
      return "AuthorizationMalformed";
    case ErrorCode::kClockSkewed:
      return "ClockSkewed";
    case ErrorCode::kExpired:
      return "Expired";
    case ErrorCode::kAccessDenied:
      return "AccessDenied";
    case ErrorCode::kMissingContentLength:
      return "MissingContentLength";
    case ErrorCode::kBadDigest:
      return "BadDigest";
    case ErrorCode::kPayloadHashMismatch:
      return "PayloadHashMismatch";
    case ErrorCode::kIncompleteBody:
      return "IncompleteBody";
    case ErrorCode::kIoError:
      return "IoError";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kTimeout:
      return "Timeout";
    case ErrorCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(ErrorCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

}  // namespace serac
