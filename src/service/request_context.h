// What every front end (S3, the Iceberg catalog, the admin API) knows about the request it is
// serving: the HTTP exchange, the decoded query, and once authenticated, the verified signature
// and the principal the request acts as. Each front end's own context derives from it and adds its
// stores and its addressing (bucket and key, warehouse and namespace, ...).
// Thread-safety: one context per request, used by the connection's thread only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "auth/identity.h"
#include "auth/sigv4.h"
#include "http/http.h"
#include "service/query_params.h"

namespace serac::service {

struct RequestContext {
  RequestContext(const http::Request& request_in, http::BodyReader& raw_body_in,
                 http::ResponseWriter& response_in, http::RequestOutcome& outcome_in)
      : request(request_in),
        raw_body(raw_body_in),
        response(response_in),
        outcome(outcome_in),
        query(QueryParams::Parse(request_in.query)) {}

  const http::Request& request;
  http::BodyReader& raw_body;  // unverified: read a signed body through auth::VerifyingBodyReader
  http::ResponseWriter& response;
  http::RequestOutcome& outcome;   // what the access log and the metrics record
  auth::VerifiedRequest verified;  // empty for bearer-token and anonymous requests
  auth::Principal principal;       // who the request acts as, once authenticated
  QueryParams query;
  // The whole body, when it had to be read to check a signature that covers its unsent hash
  // (service::AuthenticateSignature); the body is then verified and raw_body is at its end.
  std::optional<std::string> body_read_for_signature;

  std::string_view header(std::string_view name) const { return request.HeaderOr(name); }
  bool has_header(std::string_view name) const { return request.FindHeader(name) != nullptr; }
};

}  // namespace serac::service
