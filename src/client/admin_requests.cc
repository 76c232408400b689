#include "client/admin_requests.h"

#include <nlohmann/json.hpp>

#include "common/encoding.h"

namespace serac::client {
namespace {

using Json = nlohmann::json;

// Command-line text need not be UTF-8; replacing bad bytes beats dump() throwing.
std::string Dump(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string Segment(std::string_view text) { return UriEncode(text, true); }

ApiRequest Admin(std::string method, std::string path_below_base, std::string body = "") {
  ApiRequest request;
  request.method = std::move(method);
  request.path = std::string(kAdminApiPath) + path_below_base;
  request.body = std::move(body);
  request.s3_signing = true;
  return request;
}

std::string UserPath(std::string_view name) { return "/users/" + Segment(name); }
std::string KeyPath(std::string_view access_key) { return "/access-keys/" + Segment(access_key); }
std::string PolicyPath(std::string_view name) { return "/policies/" + Segment(name); }
std::string EnabledBody(bool enabled) { return Dump(Json{{"enabled", enabled}}); }

}  // namespace

ApiRequest CreateUserRequest(std::string_view name, const std::vector<std::string>& policies) {
  Json body{{"name", std::string(name)}};
  if (!policies.empty()) body["policies"] = policies;
  return Admin("POST", "/users", Dump(body));
}

ApiRequest ListUsersRequest() { return Admin("GET", "/users"); }
ApiRequest GetUserRequest(std::string_view name) { return Admin("GET", UserPath(name)); }
ApiRequest SetUserEnabledRequest(std::string_view name, bool enabled) {
  return Admin("PATCH", UserPath(name), EnabledBody(enabled));
}
ApiRequest DeleteUserRequest(std::string_view name) { return Admin("DELETE", UserPath(name)); }

ApiRequest CreateAccessKeyRequest(std::string_view user, const std::optional<std::string>& access_key,
                                  const std::optional<std::string>& secret_key,
                                  std::string_view description) {
  Json body = Json::object();
  if (access_key) body["access-key"] = *access_key;
  if (secret_key) body["secret-key"] = *secret_key;
  if (!description.empty()) body["description"] = std::string(description);
  return Admin("POST", UserPath(user) + "/access-keys", Dump(body));
}

ApiRequest ListAccessKeysRequest(std::string_view user) {
  return Admin("GET", user.empty() ? std::string("/access-keys") : UserPath(user) + "/access-keys");
}
ApiRequest SetAccessKeyEnabledRequest(std::string_view access_key, bool enabled) {
  return Admin("PATCH", KeyPath(access_key), EnabledBody(enabled));
}
ApiRequest DeleteAccessKeyRequest(std::string_view access_key) {
  return Admin("DELETE", KeyPath(access_key));
}

ApiRequest PutPolicyRequest(std::string_view name, std::string_view document) {
  return Admin("PUT", PolicyPath(name), std::string(document));
}
ApiRequest ListPoliciesRequest() { return Admin("GET", "/policies"); }
ApiRequest GetPolicyRequest(std::string_view name) { return Admin("GET", PolicyPath(name)); }
ApiRequest DeletePolicyRequest(std::string_view name) { return Admin("DELETE", PolicyPath(name)); }
ApiRequest AttachPolicyRequest(std::string_view policy, std::string_view user) {
  return Admin("PUT", UserPath(user) + PolicyPath(policy));
}
ApiRequest DetachPolicyRequest(std::string_view policy, std::string_view user) {
  return Admin("DELETE", UserPath(user) + PolicyPath(policy));
}

}  // namespace serac::client
