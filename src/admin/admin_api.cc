#include "admin/admin_api.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "auth/identity.h"
#include "auth/payload.h"
#include "auth/policy.h"
#include "auth/sigv4.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/json_nesting.h"
#include "common/limits.h"
#include "common/log.h"
#include "service/authenticate.h"
#include "service/handler_result.h"

namespace serac::admin {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kJsonContentType = "application/json";

// A successful answer: status and JSON body ("" for 204).
struct Reply {
  int status = 200;
  std::string body;
};

std::string Dump(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

Reply JsonReply(int status, const Json& json) { return Reply{status, Dump(json)}; }
Reply NoContent() { return Reply{204, ""}; }

// --- routing ---

std::vector<std::string_view> SplitSegments(std::string_view path) {
  std::vector<std::string_view> segments;
  while (!path.empty()) {
    path.remove_prefix(1);  // the '/'
    size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  }
  return segments;
}

struct RouteCandidate {
  std::string_view method;
  AdminOperation operation;
};

Result<AdminOperation> PickMethod(std::string_view method, std::initializer_list<RouteCandidate> candidates) {
  for (const RouteCandidate& candidate : candidates) {
    if (candidate.method == method) return candidate.operation;
  }
  return Error(ErrorCode::kNotImplemented, std::string(method) + " is not allowed on this admin path");
}

Result<std::string> DecodeSegment(std::string_view segment) {
  std::optional<std::string> decoded = UriDecode(segment);
  if (!decoded || decoded->empty() || decoded->find('/') != std::string::npos) {
    return Error(ErrorCode::kInvalidArgument, "malformed path segment '" + std::string(segment) + "'");
  }
  return std::move(*decoded);
}

Status NoSuchRoute(std::string_view path) {
  return Error(ErrorCode::kNotFound, "no admin API route for " + std::string(path));
}

// Paths under /users.
Result<AdminRoute> MatchUserRoute(std::string_view method, const std::vector<std::string_view>& parts,
                                  std::string_view path) {
  AdminRoute route;
  if (parts.size() == 1) {
    SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"POST", AdminOperation::kCreateUser},
                                                                {"GET", AdminOperation::kListUsers}}));
    return route;
  }
  SERAC_ASSIGN_OR_RETURN(route.user, DecodeSegment(parts[1]));
  if (parts.size() == 2) {
    SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"GET", AdminOperation::kGetUser},
                                                                {"PATCH", AdminOperation::kUpdateUser},
                                                                {"DELETE", AdminOperation::kDeleteUser}}));
    return route;
  }
  if (parts.size() == 3 && parts[2] == "access-keys") {
    SERAC_ASSIGN_OR_RETURN(route.operation,
                           PickMethod(method, {{"POST", AdminOperation::kCreateAccessKey},
                                               {"GET", AdminOperation::kListUserAccessKeys}}));
    return route;
  }
  if (parts.size() == 3 && parts[2] == "simulate") {
    SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"POST", AdminOperation::kSimulatePolicy}}));
    return route;
  }
  if (parts.size() == 4 && parts[2] == "policies") {
    SERAC_ASSIGN_OR_RETURN(route.policy, DecodeSegment(parts[3]));
    SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"PUT", AdminOperation::kAttachPolicy},
                                                                {"DELETE", AdminOperation::kDetachPolicy}}));
    return route;
  }
  return NoSuchRoute(path);
}

Result<AdminRoute> MatchAccessKeyRoute(std::string_view method, const std::vector<std::string_view>& parts,
                                       std::string_view path) {
  AdminRoute route;
  if (parts.size() == 1) {
    SERAC_ASSIGN_OR_RETURN(route.operation,
                           PickMethod(method, {{"GET", AdminOperation::kListAllAccessKeys}}));
    return route;
  }
  if (parts.size() != 2) return NoSuchRoute(path);
  SERAC_ASSIGN_OR_RETURN(route.access_key, DecodeSegment(parts[1]));
  SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"PATCH", AdminOperation::kUpdateAccessKey},
                                                              {"DELETE", AdminOperation::kDeleteAccessKey}}));
  return route;
}

Result<AdminRoute> MatchPolicyRoute(std::string_view method, const std::vector<std::string_view>& parts,
                                    std::string_view path) {
  AdminRoute route;
  if (parts.size() == 1) {
    SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"GET", AdminOperation::kListPolicies}}));
    return route;
  }
  if (parts.size() != 2) return NoSuchRoute(path);
  SERAC_ASSIGN_OR_RETURN(route.policy, DecodeSegment(parts[1]));
  SERAC_ASSIGN_OR_RETURN(route.operation, PickMethod(method, {{"PUT", AdminOperation::kPutPolicy},
                                                              {"GET", AdminOperation::kGetPolicy},
                                                              {"DELETE", AdminOperation::kDeletePolicy}}));
  return route;
}

}  // namespace

AdminError RouteError(ErrorCode code) {
  if (code == ErrorCode::kNotFound) return {404, "NoSuchRoute"};
  if (code == ErrorCode::kNotImplemented) return {405, "MethodNotAllowed"};
  return AdminErrorFor(code);
}

namespace {

// --- request bodies ---

Result<Json> ParseObject(std::string_view body) {
  if (TrimWhitespace(body).empty()) return Json::object();
  if (!JsonNestingWithin(body, limits::kJsonNestingDepthMax)) {
    return Error(ErrorCode::kInvalidArgument,
                 "the request body nests deeper than limits::kJsonNestingDepthMax (" +
                     std::to_string(limits::kJsonNestingDepthMax) + " levels)");
  }
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Error(ErrorCode::kInvalidArgument, "the request body is not valid JSON");
  if (!parsed.is_object())
    return Error(ErrorCode::kInvalidArgument, "the request body must be a JSON object");
  return parsed;
}

// Refuses fields the operation does not know, so a misspelt field is not silently ignored.
Status CheckFields(const Json& object, std::initializer_list<std::string_view> known) {
  for (const auto& item : object.items()) {
    bool found = false;
    for (std::string_view name : known) found = found || item.key() == name;
    if (!found) return Error(ErrorCode::kInvalidArgument, "unknown field '" + item.key() + "'");
  }
  return Status::Ok();
}

Result<std::optional<std::string>> OptionalString(const Json& object, const char* field) {
  auto found = object.find(field);
  if (found == object.end() || found->is_null()) return std::optional<std::string>();
  if (!found->is_string())
    return Error(ErrorCode::kInvalidArgument, std::string("'") + field + "' must be a string");
  return std::optional<std::string>(found->get<std::string>());
}

Result<bool> RequiredEnabledFlag(std::string_view body) {
  SERAC_ASSIGN_OR_RETURN(Json object, ParseObject(body));
  SERAC_RETURN_IF_ERROR(CheckFields(object, {"enabled"}));
  auto found = object.find("enabled");
  if (found == object.end() || !found->is_boolean()) {
    return Error(ErrorCode::kInvalidArgument, "'enabled' (true or false) is required");
  }
  return found->get<bool>();
}

struct NewUserRequest {
  std::string name;
  std::vector<std::string> policies;
};

Result<NewUserRequest> ParseNewUser(std::string_view body) {
  SERAC_ASSIGN_OR_RETURN(Json object, ParseObject(body));
  SERAC_RETURN_IF_ERROR(CheckFields(object, {"name", "policies"}));
  NewUserRequest request;
  SERAC_ASSIGN_OR_RETURN(std::optional<std::string> name, OptionalString(object, "name"));
  if (!name) return Error(ErrorCode::kInvalidArgument, "'name' is required");
  request.name = std::move(*name);
  auto policies = object.find("policies");
  if (policies == object.end() || policies->is_null()) return request;
  if (!policies->is_array())
    return Error(ErrorCode::kInvalidArgument, "'policies' must be a list of policy names");
  for (const Json& policy : *policies) {
    if (!policy.is_string())
      return Error(ErrorCode::kInvalidArgument, "'policies' must be a list of policy names");
    request.policies.push_back(policy.get<std::string>());
  }
  return request;
}

struct NewKeyRequest {
  std::optional<std::string> access_key;
  std::optional<std::string> secret_key;
  std::string description;
};

Result<NewKeyRequest> ParseNewKey(std::string_view body) {
  SERAC_ASSIGN_OR_RETURN(Json object, ParseObject(body));
  SERAC_RETURN_IF_ERROR(CheckFields(object, {"access-key", "secret-key", "description"}));
  NewKeyRequest request;
  SERAC_ASSIGN_OR_RETURN(request.access_key, OptionalString(object, "access-key"));
  SERAC_ASSIGN_OR_RETURN(request.secret_key, OptionalString(object, "secret-key"));
  SERAC_ASSIGN_OR_RETURN(std::optional<std::string> description, OptionalString(object, "description"));
  request.description = description.value_or("");
  if (request.secret_key && !request.access_key) {
    return Error(ErrorCode::kInvalidArgument, "'secret-key' needs 'access-key' too");
  }
  return request;
}

// --- responses ---

Json UserJson(const auth::UserInfo& user) {
  return Json{{"name", user.name},
              {"enabled", user.enabled},
              {"created-ms", user.created_ms},
              {"policies", user.policies}};
}

Json KeyJson(const auth::AccessKeyInfo& key) {
  return Json{{"access-key", key.access_key},
              {"user", key.user},
              {"enabled", key.enabled},
              {"created-ms", key.created_ms},
              {"description", key.description}};
}

Json KeysJson(const std::vector<auth::AccessKeyInfo>& keys) {
  Json list = Json::array();
  for (const auth::AccessKeyInfo& key : keys) list.push_back(KeyJson(key));
  return Json{{"access-keys", std::move(list)}};
}

Json PolicyJson(const auth::PolicyInfo& policy) {
  Json document = Json::parse(policy.document, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) document = policy.document;  // stored text that is no longer JSON
  return Json{{"name", policy.name}, {"builtin", policy.builtin}, {"document", std::move(document)}};
}

// --- authentication ---

std::string ActionName(const AdminRoute& route, bool enable) {
  switch (route.operation) {
    case AdminOperation::kCreateUser:
      return "admin:CreateUser";
    case AdminOperation::kListUsers:
      return "admin:ListUsers";
    case AdminOperation::kGetUser:
      return "admin:GetUser";
    case AdminOperation::kUpdateUser:
      return enable ? "admin:EnableUser" : "admin:DisableUser";
    case AdminOperation::kDeleteUser:
      return "admin:DeleteUser";
    case AdminOperation::kCreateAccessKey:
      return "admin:CreateAccessKey";
    case AdminOperation::kListUserAccessKeys:
    case AdminOperation::kListAllAccessKeys:
      return "admin:ListAccessKeys";
    case AdminOperation::kUpdateAccessKey:
      return enable ? "admin:EnableAccessKey" : "admin:DisableAccessKey";
    case AdminOperation::kDeleteAccessKey:
      return "admin:DeleteAccessKey";
    case AdminOperation::kListPolicies:
      return "admin:ListPolicies";
    case AdminOperation::kPutPolicy:
      return "admin:CreatePolicy";
    case AdminOperation::kGetPolicy:
      return "admin:GetPolicy";
    case AdminOperation::kDeletePolicy:
      return "admin:DeletePolicy";
    case AdminOperation::kAttachPolicy:
      return "admin:AttachUserPolicy";
    case AdminOperation::kDetachPolicy:
      return "admin:DetachUserPolicy";
    case AdminOperation::kSimulatePolicy:
      return "admin:SimulatePolicy";
  }
  return "admin:Unknown";
}

// One request's state while it is served.
class AdminCall {
 public:
  // `proven`: the principal the caller has already proven (the web console's session), or null
  // for a request that must carry its own signature.
  AdminCall(auth::IdentityService& identity, const auth::Principal* proven, const http::Request& request,
            http::BodyReader& raw_body, http::ResponseWriter& response, http::RequestOutcome& outcome)
      : identity_(identity), proven_(proven), ctx_(request, raw_body, response, outcome) {}

  void Run() {
    if (HandlerResult error = Serve()) SendError(*error);
  }

 private:
  using HandlerResult = service::HandlerResult<AdminError>;

  // The error a failed step ends the request with: `error`'s status and code (by default the ones
  // the ErrorCode means), the step's message.
  static AdminError Failed(const Status& status, AdminError error) {
    error.message = status.message();
    return error;
  }
  static AdminError Failed(const Status& status) { return Failed(status, AdminErrorFor(status.code())); }

  HandlerResult Serve() {
    if (Status authenticated = Authenticate(); !authenticated.ok()) {
      // A refused request's body is never waited for (nor drained): the connection closes.
      if (!ctx_.body_read_for_signature &&
          (ctx_.has_header("transfer-encoding") || ctx_.raw_body.content_length().value_or(0) > 0)) {
        ctx_.response.CloseAfterResponse();
      }
      return Failed(authenticated);
    }
    if (HandlerResult error = ReadBody()) return error;
    Result<AdminRoute> matched = MatchAdminRoute(ctx_.request.method, ctx_.request.path);
    if (!matched.ok()) return Failed(matched.status(), RouteError(matched.status().code()));
    const AdminRoute& route = *matched;
    ctx_.outcome.operation = std::string(AdminOperationName(route.operation));
    bool enable = false;
    if (route.operation == AdminOperation::kUpdateUser ||
        route.operation == AdminOperation::kUpdateAccessKey) {
      Result<bool> flag = RequiredEnabledFlag(body_);
      if (!flag.ok()) return Failed(flag.status());
      enable = *flag;
    }
    if (Status allowed = AuthorizeRoute(route, ActionName(route, enable)); !allowed.ok())
      return Failed(allowed);
    Result<Reply> reply = Execute(route, enable);
    if (!reply.ok()) return Failed(reply.status());
    Send(reply->status, reply->body);
    return service::kHandled;
  }

  Status Authenticate() {
    if (proven_ != nullptr) {
      ctx_.principal = *proven_;
      ctx_.outcome.principal = proven_->access_key;
      return Status::Ok();
    }
    if (!auth::HasSignature(ctx_.request)) {
      return Error(ErrorCode::kAccessDenied, "admin requests must be signed with AWS Signature Version 4");
    }
    service::SignaturePolicy policy;
    policy.services = {"s3", "s3tables"};
    policy.uri_encoding = auth::UriEncoding::kS3;
    policy.unsent_body_hash_bytes_max = limits::kAdminRequestBodyBytesMax;
    service::SignatureFailure failure;
    if (!service::AuthenticateSignature(ctx_, identity_, identity_.LookupFunction(), policy, failure)) {
      return failure.status;
    }
    return Status::Ok();
  }

  // Each admin action is checked against what it acts on — a user, one of a user's keys, a policy
  // (auth::AdminUserArn, AdminAccessKeyArn, AdminPolicyArn) — so that a grant can be narrow.
  // Attaching a policy, and creating a user with policies, needs admin:AttachUserPolicy on the user
  // and on each policy: a grant to attach "readonly" is no grant to attach "consoleAdmin".
  Status AuthorizeRoute(const AdminRoute& route, const std::string& action) {
    const auth::ConditionContext context = auth::RequestConditions(ctx_.principal, ctx_.request);
    auto allow = [&](std::string_view what, const std::string& resource) {
      return identity_.Authorize(ctx_.principal, what, resource, &context);
    };
    switch (route.operation) {
      case AdminOperation::kListUsers:
      case AdminOperation::kListAllAccessKeys:
      case AdminOperation::kListPolicies:
        return allow(action, std::string(auth::AdminServiceArn()));
      case AdminOperation::kCreateUser: {
        SERAC_ASSIGN_OR_RETURN(NewUserRequest request, ParseNewUser(body_));
        SERAC_RETURN_IF_ERROR(allow(action, auth::AdminUserArn(request.name)));
        for (const std::string& policy : request.policies) {
          SERAC_RETURN_IF_ERROR(allow("admin:AttachUserPolicy", auth::AdminUserArn(request.name)));
          SERAC_RETURN_IF_ERROR(allow("admin:AttachUserPolicy", auth::AdminPolicyArn(policy)));
        }
        return Status::Ok();
      }
      case AdminOperation::kGetUser:
      case AdminOperation::kSimulatePolicy:
      case AdminOperation::kUpdateUser:
      case AdminOperation::kDeleteUser:
      case AdminOperation::kCreateAccessKey:
      case AdminOperation::kListUserAccessKeys:
        return allow(action, auth::AdminUserArn(route.user));
      case AdminOperation::kUpdateAccessKey:
      case AdminOperation::kDeleteAccessKey:
        return allow(action, auth::AdminAccessKeyArn(OwnerOfKey(route.access_key), route.access_key));
      case AdminOperation::kPutPolicy:
      case AdminOperation::kGetPolicy:
      case AdminOperation::kDeletePolicy:
        return allow(action, auth::AdminPolicyArn(route.policy));
      case AdminOperation::kAttachPolicy:
      case AdminOperation::kDetachPolicy:
        SERAC_RETURN_IF_ERROR(allow(action, auth::AdminUserArn(route.user)));
        return allow(action, auth::AdminPolicyArn(route.policy));
    }
    return Error(ErrorCode::kInternal, "unhandled admin operation");
  }

  // The user a key belongs to; for a key that does not exist, "*", so that only a grant on every
  // user's keys tells a caller it is missing (404) rather than refused (403).
  std::string OwnerOfKey(const std::string& access_key) {
    Result<std::vector<auth::AccessKeyInfo>> keys = identity_.ListAccessKeys("");
    if (keys.ok()) {
      for (const auth::AccessKeyInfo& key : *keys) {
        if (key.access_key == access_key) return key.user;
      }
    }
    return "*";
  }

  // Reads the body through the payload verifier, which checks it against the hash the signature
  // covers (a body signed without sending its hash was read, and verified, by Authenticate).
  HandlerResult ReadBody() {
    if (ctx_.body_read_for_signature) {
      ctx_.outcome.bytes_in += ctx_.body_read_for_signature->size();
      body_ = std::move(*ctx_.body_read_for_signature);
      ctx_.body_read_for_signature.reset();
      return service::kHandled;
    }
    auth::PayloadOptions options;
    options.compute_md5 = false;
    auto reader = auth::VerifyingBodyReader::Create(ctx_.request, ctx_.verified, ctx_.raw_body, options);
    if (!reader.ok()) {
      ctx_.response.CloseAfterResponse();
      return Failed(reader.status());
    }
    Result<std::string> text = (*reader)->ReadAll(limits::kAdminRequestBodyBytesMax);
    if (!text.ok()) {
      ctx_.response.CloseAfterResponse();  // the rest of the body is still on the wire
      if (text.status().code() == ErrorCode::kLimitExceeded) {
        return AdminError{413, "EntityTooLarge",
                          "the request body exceeds limits::kAdminRequestBodyBytesMax (64 KiB)"};
      }
      return Failed(text.status());
    }
    ctx_.outcome.bytes_in += text->size();
    body_ = std::move(text).value();
    return service::kHandled;
  }

  Result<Reply> Execute(const AdminRoute& route, bool enable) {
    switch (route.operation) {
      case AdminOperation::kCreateUser:
        return CreateUser();
      case AdminOperation::kListUsers:
        return ListUsers();
      case AdminOperation::kGetUser:
        return GetUser(route.user, 200);
      case AdminOperation::kUpdateUser:
        SERAC_RETURN_IF_ERROR(identity_.SetUserEnabled(route.user, enable));
        return GetUser(route.user, 200);
      case AdminOperation::kDeleteUser:
        SERAC_RETURN_IF_ERROR(identity_.DeleteUser(route.user));
        return NoContent();
      case AdminOperation::kCreateAccessKey:
        return CreateAccessKey(route.user);
      case AdminOperation::kListUserAccessKeys:
        return ListAccessKeys(route.user);
      case AdminOperation::kListAllAccessKeys:
        return ListAccessKeys("");
      case AdminOperation::kUpdateAccessKey:
        SERAC_RETURN_IF_ERROR(identity_.SetAccessKeyEnabled(route.access_key, enable));
        return NoContent();
      case AdminOperation::kDeleteAccessKey:
        SERAC_RETURN_IF_ERROR(identity_.DeleteAccessKey(route.access_key));
        return NoContent();
      case AdminOperation::kListPolicies:
        return ListPolicies();
      case AdminOperation::kPutPolicy:
        return PutPolicy(route.policy);
      case AdminOperation::kGetPolicy:
        return GetPolicy(route.policy, 200);
      case AdminOperation::kDeletePolicy:
        SERAC_RETURN_IF_ERROR(identity_.DeletePolicy(route.policy));
        return NoContent();
      case AdminOperation::kAttachPolicy:
        SERAC_RETURN_IF_ERROR(identity_.AttachPolicy(route.user, route.policy));
        return NoContent();
      case AdminOperation::kDetachPolicy:
        SERAC_RETURN_IF_ERROR(identity_.DetachPolicy(route.user, route.policy));
        return NoContent();
      case AdminOperation::kSimulatePolicy:
        return SimulatePolicy(route.user);
    }
    return Error(ErrorCode::kInternal, "unhandled admin operation");
  }

  Result<Reply> CreateUser() {
    SERAC_ASSIGN_OR_RETURN(NewUserRequest request, ParseNewUser(body_));
    SERAC_RETURN_IF_ERROR(auth::ValidateUserName(request.name));
    SERAC_RETURN_IF_ERROR(identity_.CreateUser(request.name, request.policies));
    log::Info("admin: " + ctx_.principal.access_key + " created user " + request.name);
    return GetUser(request.name, 201);
  }

  Result<Reply> GetUser(const std::string& name, int status) {
    SERAC_ASSIGN_OR_RETURN(auth::UserInfo user, identity_.GetUser(name));
    return JsonReply(status, UserJson(user));
  }

  Result<Reply> ListUsers() {
    SERAC_ASSIGN_OR_RETURN(std::vector<auth::UserInfo> users, identity_.ListUsers());
    Json list = Json::array();
    for (const auth::UserInfo& user : users) list.push_back(UserJson(user));
    return JsonReply(200, Json{{"users", std::move(list)}});
  }

  Result<Reply> CreateAccessKey(const std::string& user) {
    SERAC_ASSIGN_OR_RETURN(NewKeyRequest request, ParseNewKey(body_));
    SERAC_ASSIGN_OR_RETURN(
        auth::NewAccessKey key,
        identity_.CreateAccessKey(user, request.description, request.access_key, request.secret_key));
    log::Info("admin: " + ctx_.principal.access_key + " created access key " + key.access_key + " for user " +
              user);
    Json reply{{"access-key", key.access_key},
               {"secret-key", key.secret_key},
               {"user", user},
               {"enabled", true},
               {"description", request.description}};
    return JsonReply(201, reply);
  }

  Result<Reply> ListAccessKeys(std::string_view user) {
    if (!user.empty()) {
      SERAC_RETURN_IF_ERROR(identity_.GetUser(user).status());  // an unknown user is 404, not []
    }
    SERAC_ASSIGN_OR_RETURN(std::vector<auth::AccessKeyInfo> keys, identity_.ListAccessKeys(user));
    return JsonReply(200, KeysJson(keys));
  }

  Result<Reply> ListPolicies() {
    SERAC_ASSIGN_OR_RETURN(std::vector<auth::PolicyInfo> policies, identity_.ListPolicies());
    Json list = Json::array();
    for (const auth::PolicyInfo& policy : policies) {
      list.push_back(Json{{"name", policy.name}, {"builtin", policy.builtin}});
    }
    return JsonReply(200, Json{{"policies", std::move(list)}});
  }

  Result<Reply> PutPolicy(const std::string& name) {
    SERAC_RETURN_IF_ERROR(auth::ValidatePolicyName(name));
    if (TrimWhitespace(body_).empty()) {
      return Error(ErrorCode::kInvalidArgument, "the request body must be the policy document (JSON)");
    }
    Result<auth::PolicyInfo> existing = identity_.GetPolicy(name);
    if (!existing.ok() && existing.status().code() != ErrorCode::kNotFound) return existing.status();
    SERAC_RETURN_IF_ERROR(identity_.PutPolicy(name, body_));
    log::Info("admin: " + ctx_.principal.access_key +
              (existing.ok() ? " replaced policy " : " created policy ") + name);
    return GetPolicy(name, existing.ok() ? 200 : 201);
  }

  Result<Reply> SimulatePolicy(const std::string& user) {
    SERAC_ASSIGN_OR_RETURN(Json body, ParseObject(body_));
    SERAC_RETURN_IF_ERROR(CheckFields(body, {"resource", "actions"}));
    SERAC_ASSIGN_OR_RETURN(std::optional<std::string> resource, OptionalString(body, "resource"));
    if (!resource || resource->empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   "'resource' (an ARN such as arn:aws:s3:::bucket/key) is required");
    }
    auto actions = body.find("actions");
    if (actions == body.end() || !actions->is_array() || actions->empty() ||
        actions->size() > kSimulatedActionsMax) {
      return Error(ErrorCode::kInvalidArgument, "'actions' must be an array of 1 to " +
                                                    std::to_string(kSimulatedActionsMax) + " action names");
    }
    SERAC_ASSIGN_OR_RETURN(auth::Principal simulated, identity_.PrincipalForUser(user));
    const auth::ConditionContext context = auth::RequestConditions(simulated, ctx_.request);
    Json results = Json::array();
    for (const Json& action : *actions) {
      if (!action.is_string() || action.get_ref<const std::string&>().empty()) {
        return Error(ErrorCode::kInvalidArgument,
                     "every action must be a non-empty string such as 's3:GetObject'");
      }
      const std::string& name = action.get_ref<const std::string&>();
      const auth::PolicyDecision decision = identity_.Decide(simulated, name, *resource, &context);
      results.push_back(
          Json{{"action", name},
               {"allowed", decision == auth::PolicyDecision::kAllow},
               {"reason", decision == auth::PolicyDecision::kAllow          ? "allowed"
                          : decision == auth::PolicyDecision::kExplicitDeny ? "explicit-deny"
                                                                            : "implicit-deny"}});
    }
    return JsonReply(200, Json{{"user", user}, {"resource", *resource}, {"results", std::move(results)}});
  }

  Result<Reply> GetPolicy(const std::string& name, int status) {
    SERAC_ASSIGN_OR_RETURN(auth::PolicyInfo policy, identity_.GetPolicy(name));
    return JsonReply(status, PolicyJson(policy));
  }

  void Send(int status, std::string_view body) {
    ctx_.response.SetStatus(status);
    ctx_.response.AddHeader("Cache-Control", "no-store");  // replies may hold a secret key
    if (!body.empty()) ctx_.response.AddHeader("Content-Type", kJsonContentType);
    ctx_.outcome.bytes_out += body.size();
    Status sent = ctx_.response.Send(body);
    if (!sent.ok()) log::Debug("admin: response not sent: " + sent.ToString());
  }

  void SendError(AdminError error) {
    if (error.http_status >= 500) {
      log::Warn("admin: " + std::string(ctx_.outcome.operation) + " failed: " + error.code + ": " +
                error.message);
      error.message = "internal error; see the server log";  // no storage details for the client
    }
    if (ctx_.response.started()) {
      ctx_.response.CloseAfterResponse();
      return;
    }
    Send(error.http_status, AdminErrorJson(error.code, error.message));
  }

  auth::IdentityService& identity_;
  const auth::Principal* proven_;
  service::RequestContext ctx_;
  std::string body_;
};

}  // namespace

Result<AdminRoute> MatchAdminRoute(std::string_view method, std::string_view raw_path) {
  if (!raw_path.starts_with(kAdminBasePath)) return NoSuchRoute(raw_path);
  std::string_view rest = raw_path.substr(kAdminBasePath.size());
  if (rest.empty() || rest.front() != '/') return NoSuchRoute(raw_path);
  std::vector<std::string_view> parts = SplitSegments(rest);
  for (std::string_view part : parts) {
    if (part.empty()) return NoSuchRoute(raw_path);  // "//" or a trailing '/'
  }
  if (parts.empty()) return NoSuchRoute(raw_path);
  if (parts[0] == "users") return MatchUserRoute(method, parts, raw_path);
  if (parts[0] == "access-keys") return MatchAccessKeyRoute(method, parts, raw_path);
  if (parts[0] == "policies") return MatchPolicyRoute(method, parts, raw_path);
  return NoSuchRoute(raw_path);
}

std::string_view AdminOperationName(AdminOperation operation) {
  switch (operation) {
    case AdminOperation::kCreateUser:
      return "AdminCreateUser";
    case AdminOperation::kListUsers:
      return "AdminListUsers";
    case AdminOperation::kGetUser:
      return "AdminGetUser";
    case AdminOperation::kUpdateUser:
      return "AdminUpdateUser";
    case AdminOperation::kDeleteUser:
      return "AdminDeleteUser";
    case AdminOperation::kCreateAccessKey:
      return "AdminCreateAccessKey";
    case AdminOperation::kListUserAccessKeys:
      return "AdminListUserAccessKeys";
    case AdminOperation::kListAllAccessKeys:
      return "AdminListAccessKeys";
    case AdminOperation::kUpdateAccessKey:
      return "AdminUpdateAccessKey";
    case AdminOperation::kDeleteAccessKey:
      return "AdminDeleteAccessKey";
    case AdminOperation::kListPolicies:
      return "AdminListPolicies";
    case AdminOperation::kPutPolicy:
      return "AdminPutPolicy";
    case AdminOperation::kGetPolicy:
      return "AdminGetPolicy";
    case AdminOperation::kDeletePolicy:
      return "AdminDeletePolicy";
    case AdminOperation::kAttachPolicy:
      return "AdminAttachPolicy";
    case AdminOperation::kDetachPolicy:
      return "AdminDetachPolicy";
    case AdminOperation::kSimulatePolicy:
      return "AdminSimulatePolicy";
  }
  return "Admin";
}

AdminError AdminErrorFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return {200, ""};
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMalformedDocument:
    case ErrorCode::kValidationFailed:
    case ErrorCode::kTooSmall:
    case ErrorCode::kInvalidRange:
      return {400, "InvalidArgument"};
    case ErrorCode::kLimitExceeded:
      return {400, "LimitExceeded"};
    case ErrorCode::kNotFound:
      return {404, "NotFound"};
    case ErrorCode::kAlreadyExists:
      return {409, "AlreadyExists"};
    case ErrorCode::kNotEmpty:
    case ErrorCode::kConflict:
      return {409, "Conflict"};
    case ErrorCode::kPreconditionFailed:
      return {412, "PreconditionFailed"};
    case ErrorCode::kNotModified:
      return {400, "InvalidArgument"};  // no conditional admin requests
    case ErrorCode::kNotImplemented:
      return {501, "NotImplemented"};
    case ErrorCode::kUnknownAccessKey:
      return {403, "InvalidAccessKeyId"};
    case ErrorCode::kSignatureMismatch:
      return {403, "SignatureDoesNotMatch"};
    case ErrorCode::kAuthorizationMalformed:
      return {400, "AuthorizationHeaderMalformed"};
    case ErrorCode::kClockSkewed:
      return {403, "RequestTimeTooSkewed"};
    case ErrorCode::kExpired:
      return {403, "ExpiredToken"};
    case ErrorCode::kAccessDenied:
      return {403, "AccessDenied"};
    case ErrorCode::kMissingContentLength:
      return {411, "MissingContentLength"};
    case ErrorCode::kBadDigest:
      return {400, "BadDigest"};
    case ErrorCode::kPayloadHashMismatch:
      return {400, "XAmzContentSHA256Mismatch"};
    case ErrorCode::kIncompleteBody:
      return {400, "IncompleteBody"};
    case ErrorCode::kTimeout:
      return {408, "RequestTimeout"};
    case ErrorCode::kUnavailable:
      return {503, "ServiceUnavailable"};
    case ErrorCode::kIoError:
    case ErrorCode::kOutcomeUnknown:
    case ErrorCode::kInternal:
      return {500, "InternalError"};
  }
  return {500, "InternalError"};
}

std::string AdminErrorJson(std::string_view code, std::string_view message) {
  return Dump(Json{{"error", Json{{"code", std::string(code)}, {"message", std::string(message)}}}});
}

void AdminApi::Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
                      http::RequestOutcome& outcome) {
  outcome.operation = "Admin";
  AdminCall call(*identity_, nullptr, request, body, response, outcome);
  call.Run();
}

void AdminApi::HandleAs(const auth::Principal& principal, const http::Request& request,
                        http::BodyReader& body, http::ResponseWriter& response,
                        http::RequestOutcome& outcome) {
  outcome.operation = "Admin";
  AdminCall call(*identity_, &principal, request, body, response, outcome);
  call.Run();
}

http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error) {
  return {"application/json", AdminErrorJson(error.code, error.message)};
}

}  // namespace serac::admin
