#include "service/error_response.h"

namespace serac::service {

void SendErrorResponse(RequestContext& ctx, int http_status,
                       const std::function<http::ErrorDocument()>& render) {
  if (ctx.response.started()) {
    ctx.response.CloseAfterResponse();
    return;
  }
  ctx.response.SetStatus(http_status);
  if (http_status == 304 || ctx.request.method == "HEAD") {
    (void)ctx.response.Send("");
    return;
  }
  if (http_status == 411 || http_status == 413) ctx.response.CloseAfterResponse();
  http::ErrorDocument document = render();
  ctx.response.AddHeader("Content-Type", document.content_type);
  (void)ctx.response.Send(document.body);
}

}  // namespace serac::service
