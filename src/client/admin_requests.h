// Pure mapping from `serac user|key|policy` arguments to requests of the admin API under
// /_serac/admin/v1 (admin/admin_api.h documents the routes), so the encoding can be tested
// without a server. Each request is marked for S3-style signing (service "s3", S3 URI encoding),
// which is what the admin API verifies.
// Thread-safe: free functions without state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/catalog_requests.h"

namespace serac::client {

inline constexpr std::string_view kAdminApiPath = "/_serac/admin/v1";

// Users.
ApiRequest CreateUserRequest(std::string_view name, const std::vector<std::string>& policies);
ApiRequest ListUsersRequest();
ApiRequest GetUserRequest(std::string_view name);
ApiRequest SetUserEnabledRequest(std::string_view name, bool enabled);
ApiRequest DeleteUserRequest(std::string_view name);

// Access keys. The id and secret are optional (the server generates them); a secret needs an id.
ApiRequest CreateAccessKeyRequest(std::string_view user, const std::optional<std::string>& access_key,
                                  const std::optional<std::string>& secret_key, std::string_view description);
ApiRequest ListAccessKeysRequest(std::string_view user);  // every user's keys when `user` is empty
ApiRequest SetAccessKeyEnabledRequest(std::string_view access_key, bool enabled);
ApiRequest DeleteAccessKeyRequest(std::string_view access_key);

// Policies. `document` is sent as given; the server validates it.
ApiRequest PutPolicyRequest(std::string_view name, std::string_view document);
ApiRequest ListPoliciesRequest();
ApiRequest GetPolicyRequest(std::string_view name);
ApiRequest DeletePolicyRequest(std::string_view name);
ApiRequest AttachPolicyRequest(std::string_view policy, std::string_view user);
ApiRequest DetachPolicyRequest(std::string_view policy, std::string_view user);

}  // namespace serac::client
