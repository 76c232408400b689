// The IcebergErrorResponse of the REST specification as a value every handler returns, and the
// statuses of lower modules turned into it (catalog_errors.cc).
// Private to catalog/.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "service/handler_result.h"

namespace serac::catalog {

struct IcebergError {
  int http_status = 500;
  std::string type;  // "NoSuchTableException", ...
  std::string message;
};

// A handler either sent its success response itself (kHandled) or returns the error to send
// (service/handler_result.h).
using HandlerResult = service::HandlerResult<IcebergError>;
using service::kHandled;

IcebergError MakeError(int http_status, std::string type, std::string message);
IcebergError BadRequest(std::string message);
IcebergError NoSuchTable(std::string_view name);
IcebergError NoSuchView(std::string_view name);
IcebergError NoSuchNamespace(std::string_view name);
// Maps a Status from the stores or the iceberg module. kNotFound becomes `not_found` (the caller
// knows what was missing); kConflict a 409 CommitFailedException.
IcebergError ErrorFromStatus(const Status& status, const IcebergError& not_found);
// An error of the iceberg module when it applies a commit or checks a view: kInvalidArgument is
// IllegalArgumentException, as the reference answers (Java clients rethrow that type with the
// message unchanged); the rest as ErrorFromStatus.
IcebergError MetadataRuleError(const Status& status);
// {"error": {"message", "type", "code"}}
std::string RenderErrorJson(const IcebergError& error);

}  // namespace serac::catalog
