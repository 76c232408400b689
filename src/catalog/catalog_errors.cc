// Iceberg error responses and the mapping from serac's error codes to them.
#include "catalog/catalog_errors_internal.h"
#include "common/json_reads.h"
#include "http/http.h"

namespace serac::catalog {

IcebergError MakeError(int http_status, std::string type, std::string message) {
  return IcebergError{http_status, std::move(type), std::move(message)};
}

IcebergError BadRequest(std::string message) {
  return MakeError(400, "BadRequestException", std::move(message));
}

IcebergError NoSuchTable(std::string_view name) {
  return MakeError(404, "NoSuchTableException", "Table does not exist: " + std::string(name));
}

IcebergError NoSuchView(std::string_view name) {
  return MakeError(404, "NoSuchViewException", "View does not exist: " + std::string(name));
}

IcebergError NoSuchNamespace(std::string_view name) {
  return MakeError(404, "NoSuchNamespaceException", "Namespace does not exist: " + std::string(name));
}

IcebergError ErrorFromStatus(const Status& status, const IcebergError& not_found) {
  const std::string& message = status.message();
  switch (status.code()) {
    case ErrorCode::kNotFound:
      return not_found;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMalformedDocument:
    case ErrorCode::kTooSmall:
    case ErrorCode::kBadDigest:
    case ErrorCode::kIncompleteBody:
    case ErrorCode::kAuthorizationMalformed:
      return BadRequest(message);
    case ErrorCode::kValidationFailed:
      return MakeError(400, "ValidationException", message);
    case ErrorCode::kLimitExceeded:
      return MakeError(413, "BadRequestException", message);
    case ErrorCode::kAlreadyExists:
      return MakeError(409, "AlreadyExistsException", message);
    case ErrorCode::kNotEmpty:
      return MakeError(409, "NamespaceNotEmptyException", message);
    case ErrorCode::kConflict:
    case ErrorCode::kPreconditionFailed:
      return MakeError(409, "CommitFailedException", message);
    case ErrorCode::kNotImplemented:
      return MakeError(406, "UnsupportedOperationException", message);
    case ErrorCode::kUnknownAccessKey:
    case ErrorCode::kSignatureMismatch:
    case ErrorCode::kClockSkewed:
    case ErrorCode::kExpired:
    case ErrorCode::kPayloadHashMismatch:
      return MakeError(401, "NotAuthorizedException", message);
    case ErrorCode::kAccessDenied:
      return MakeError(403, "ForbiddenException", message);
    case ErrorCode::kMissingContentLength:
      return MakeError(411, "BadRequestException", message);
    case ErrorCode::kTimeout:
    case ErrorCode::kUnavailable:
    case ErrorCode::kIoError:
      return MakeError(503, "ServiceUnavailableException", message);
    case ErrorCode::kNotModified:
    case ErrorCode::kInvalidRange:
    case ErrorCode::kOk:
    case ErrorCode::kOutcomeUnknown:
    case ErrorCode::kInternal:
      break;
  }
  return MakeError(500, "InternalServerError", message.empty() ? "internal error" : message);
}

IcebergError MetadataRuleError(const Status& status) {
  if (status.code() == ErrorCode::kInvalidArgument) {
    return MakeError(400, "IllegalArgumentException", status.message());
  }
  return ErrorFromStatus(status, BadRequest(status.message()));
}

std::string RenderErrorJson(const IcebergError& error) {
  Json body = {{"error", {{"message", error.message}, {"type", error.type}, {"code", error.http_status}}}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error) {
  const std::string message(error.message);
  if (error.path.starts_with("/_iceberg") && error.path.ends_with("/oauth/tokens")) {
    const char* kind = error.status >= 500
                           ? (error.status == 503 ? "temporarily_unavailable" : "server_error")
                           : "invalid_request";
    Json body = {{"error", kind}, {"error_description", message}};
    return {"application/json", body.dump(-1, ' ', false, Json::error_handler_t::replace)};
  }
  const char* type = error.status == 503   ? "ServiceUnavailableException"
                     : error.status == 500 ? "ServerErrorException"
                                           : "BadRequestException";
  return {"application/json", RenderErrorJson(MakeError(error.status, type, message))};
}

}  // namespace serac::catalog
