// How every front end ends a request with an error, so that the three answer alike: once the
// response head is out, the only honest signal left is to cut the connection; HEAD and 304 answers
// carry a head only; anything else carries the protocol's error document, rendered only then. 411
// and 413 also close the connection, since the refused body may still be on its way.
// Thread-safety: as the request context (one request, its connection's thread).
#pragma once

#include <functional>

#include "http/http.h"
#include "service/request_context.h"

namespace serac::service {

void SendErrorResponse(RequestContext& ctx, int http_status,
                       const std::function<http::ErrorDocument()>& render);

}  // namespace serac::service
