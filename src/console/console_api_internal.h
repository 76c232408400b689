// The console's own API routes (console_api.cc) and what the service and they share: one API
// request, a verified session, and the console's JSON answers. Private to console/.
#pragma once

#include <string>
#include <string_view>

#include "auth/identity.h"
#include "auth/tokens.h"
#include "common/clock.h"
#include "common/json_reads.h"
#include "console/console_service.h"
#include "http/http.h"

namespace serac::console {

struct ApiCall {
  const http::Request& request;
  http::BodyReader& body;
  http::ResponseWriter& response;
  http::RequestOutcome& outcome;
};

// A session whose cookie, anti-forgery value, sign-out record and key were all checked.
struct Session {
  std::string token;
  auth::ConsoleSessionClaims claims;
  auth::Principal principal;
};

struct ConsoleApiContext {
  const ConsoleServices& services;
  const ConsoleOptions& options;
  WallTime started;
};

// {"error":{"code":C,"message":M}} with `status`.
void SendApiError(ApiCall& call, int status, std::string_view code, std::string_view message);
void SendApiJson(ApiCall& call, int status, const Json& body);
// True when the request has no body; otherwise answers 400 (the body is not read: the connection
// closes after the answer) and returns false.
bool NoBodyOrRefuse(ApiCall& call);
// For a route that takes a JSON object (at most limits::kConsoleSignInBodyBytesMax): the object, or
// the error sent and nullopt.
std::optional<Json> ReadJsonObject(ApiCall& call);

// Serves overview, metrics, presign and engine-config; false when `route` is none of them (nothing
// sent).
bool ServeConsoleRoute(const ConsoleApiContext& context, ApiCall& call, const Session& session,
                       std::string_view route);

}  // namespace serac::console
