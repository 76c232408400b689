// serac's identity administration API: users, access keys and policies, as JSON over HTTP under
// /_serac/admin/v1. Every request is signed with SigV4 (signing name "s3" or "s3tables", S3 URI
// encoding) by root or by a user whose policies allow the admin:<Action> named below on the
// resource named below (the built-in consoleAdmin policy allows them all). USER, KEY and POLICY
// are single path segments, percent-encoded as needed. Each route: method, path, body, answer;
// then the action and its resource.
//
//   POST   /users {"name":N,"policies":[P...]}  201 user
//          admin:CreateUser on user/N; admin:AttachUserPolicy on user/N and policy/P for each P
//   GET    /users  200 {"users":[user...]}  admin:ListUsers on the service
//   GET    /users/USER  200 user  admin:GetUser on user/USER
//   PATCH  /users/USER {"enabled":true|false}  200 user
//          admin:EnableUser or admin:DisableUser on user/USER
//   DELETE /users/USER (also its keys)  204  admin:DeleteUser on user/USER
//   POST   /users/USER/access-keys {"access-key"?,"secret-key"?,"description"?}
//          201 key with "secret-key" (the only time it is shown); admin:CreateAccessKey on user/USER
//   GET    /users/USER/access-keys  200 {"access-keys":[key...]}  admin:ListAccessKeys on user/USER
//   GET    /access-keys (every user's)  200 {"access-keys":[key...]}  admin:ListAccessKeys, service
//   PATCH  /access-keys/KEY {"enabled":true|false}  204
//          admin:EnableAccessKey or admin:DisableAccessKey on the key
//   DELETE /access-keys/KEY  204  admin:DeleteAccessKey on the key
//   GET    /policies  200 {"policies":[{"name","builtin"}...]}  admin:ListPolicies on the service
//   PUT    /policies/POLICY (the document)  201 created, 200 replaced
//          admin:CreatePolicy on policy/POLICY
//   GET    /policies/POLICY  200 {"name","builtin","document"}  admin:GetPolicy on policy/POLICY
//   DELETE /policies/POLICY (409 while attached)  204  admin:DeletePolicy on policy/POLICY
//   PUT    /users/USER/policies/POLICY  204  admin:AttachUserPolicy on user/USER and policy/POLICY
//   DELETE /users/USER/policies/POLICY  204  admin:DetachUserPolicy on user/USER and policy/POLICY
//   POST   /users/USER/simulate {"resource":ARN,"actions":[A...]}  200 {"user","resource","results":
//          [{"action","allowed","reason":"allowed"|"explicit-deny"|"implicit-deny"}...]}: what the user's
//          policies decide now (root's name is the root access key), with this request's conditions
//          (address, TLS); at most kSimulatedActionsMax actions.  admin:SimulatePolicy on user/USER
//
// Resources (auth/policy.h): the service is arn:aws:admin:::, user/USER is
// arn:aws:admin:::user/USER, a key is arn:aws:admin:::user/OWNER/access-key/KEY, policy/POLICY is
// arn:aws:admin:::policy/POLICY.
// user = {"name","enabled","created-ms","policies":[...]};
// key  = {"access-key","user","enabled","created-ms","description"} (never the secret, but on create).
//
// Errors are {"error":{"code":C,"message":M}} with the HTTP status of AdminErrorFor(); an unknown
// path is 404 NoSuchRoute, a known path with another method 405 MethodNotAllowed.
// Thread-safe: one instance serves all connections.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "http/http.h"

namespace serac::auth {
class IdentityService;
struct Principal;
}  // namespace serac::auth

namespace serac::admin {

inline constexpr std::string_view kAdminPathPrefix = "/_serac/admin";
inline constexpr std::string_view kAdminBasePath = "/_serac/admin/v1";

enum class AdminOperation {
  kCreateUser,
  kListUsers,
  kGetUser,
  kUpdateUser,  // enable or disable
  kDeleteUser,
  kCreateAccessKey,
  kListUserAccessKeys,
  kListAllAccessKeys,
  kUpdateAccessKey,  // enable or disable
  kDeleteAccessKey,
  kListPolicies,
  kPutPolicy,
  kGetPolicy,
  kDeletePolicy,
  kAttachPolicy,
  kDetachPolicy,
  kSimulatePolicy,
};

inline constexpr size_t kSimulatedActionsMax = 64;  // actions one simulation may ask about

// A matched route with its decoded path parameters.
struct AdminRoute {
  AdminOperation operation = AdminOperation::kListUsers;
  std::string user;        // NAME
  std::string access_key;  // KEY
  std::string policy;      // POLICY
};

// Matches method and raw (percent-encoded) path. kNotFound for an unknown path,
// kNotImplemented for a known path with another method (answered as 405), kInvalidArgument for
// a path segment that does not decode.
Result<AdminRoute> MatchAdminRoute(std::string_view method, std::string_view raw_path);

// The operation's name for the access log, e.g. "AdminCreateUser".
std::string_view AdminOperationName(AdminOperation operation);

struct AdminError {
  int http_status = 500;
  std::string code;     // "InvalidArgument", "NotFound", "AlreadyExists", "AccessDenied", ...
  std::string message;  // for the client; replaced by a generic one for 5xx (the log has it)
};

// The HTTP status and error code for a failed operation.
AdminError AdminErrorFor(ErrorCode code);
// For a failed MatchAdminRoute: 404 NoSuchRoute, 405 MethodNotAllowed, else AdminErrorFor(code).
AdminError RouteError(ErrorCode code);
// {"error":{"code":...,"message":...}}
std::string AdminErrorJson(std::string_view code, std::string_view message);

class AdminApi {
 public:
  // `identity` must outlive this object.
  explicit AdminApi(auth::IdentityService* identity) : identity_(identity) {}

  // Serves a request whose path is under kAdminPathPrefix.
  void Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
              http::RequestOutcome& outcome);
  // The same request, acting as `principal`, which the caller has already proven (the web
  // console's session): no signature is looked for; authorisation is the principal's.
  void HandleAs(const auth::Principal& principal, const http::Request& request, http::BodyReader& body,
                http::ResponseWriter& response, http::RequestOutcome& outcome);

 private:
  auth::IdentityService* identity_;
};

// The admin API's error document for an error the HTTP server answers by itself (server/router.cc
// chooses it under /_serac/admin).
http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error);

}  // namespace serac::admin
