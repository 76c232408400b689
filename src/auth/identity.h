// Identities and access: who a request acts as, and whether it may do what it asks.
//
// Three kinds of principal sign requests:
//   - root: the server's root key (SERAC_ROOT_USER/PASSWORD or the generated file); may do anything;
//   - IAM users: each has access keys and attached policies (AWS IAM JSON, see policy.h), stored in
//     the MetaStore (meta/iam_store.h) with their secrets sealed by the server key;
//   - sessions: temporary credentials vended to an engine for one table's files (tokens.h); they
//     act for the user (or root) that loaded the table, limited to that table's location.
// OAuth2 bearer tokens (tokens.h) carry an access key and resolve to that key's user.
//
// The service keeps an in-memory view of all users, keys and policies, rebuilt after each change
// it makes and whenever the MetaStore's IAM generation moves (checked at most every
// limits::kIamRefreshInterval), so a change takes effect on the next request, also for existing
// keys and tokens (a token of a disabled or deleted key stops working at once).
// Thread-safe: one instance serves all connections.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"
#include "auth/server_key.h"
#include "auth/sigv4.h"
#include "auth/tokens.h"
#include "common/clock.h"
#include "common/status.h"

namespace serac::meta {
class IamStore;
}

namespace serac::auth {

enum class PrincipalKind { kRoot, kUser, kSession };

// Who a request acts as; resolved once per request, after its signature or token was verified.
struct Principal {
  PrincipalKind kind = PrincipalKind::kRoot;
  std::string access_key;  // the key that signed the request, or that the bearer token names
  std::string user;        // the IAM user; for root (and root's sessions) the root access key
  // The key behind the request as it is now (for a session: its parent's); a token issued to an
  // earlier key of the same id does not match it.
  KeyIdentity key;
  bool acts_as_root = false;  // root itself, or a session vended to root
  // The user's policies at the time the request arrived (empty for root).
  std::vector<std::shared_ptr<const Policy>> policies;
  std::optional<SessionGrant> session;  // kSession: the table location the credentials cover
};

struct IdentityOptions {
  std::chrono::seconds bearer_token_ttl{3600};  // OAuth2 access tokens
  std::chrono::seconds session_ttl{3600};       // vended credentials
};

struct UserInfo {
  std::string name;
  bool enabled = true;
  int64_t created_ms = 0;
  std::vector<std::string> policies;
};

struct AccessKeyInfo {
  std::string access_key;
  std::string user;
  bool enabled = true;
  int64_t created_ms = 0;
  std::string description;
};

struct NewAccessKey {
  std::string access_key;
  std::string secret_key;  // shown once, to the caller that created it
};

struct PolicyInfo {
  std::string name;
  std::string document;  // canonical JSON
  bool builtin = false;
};

class IdentityService {
 public:
  IdentityService(Credentials root, ServerKey server_key, meta::IamStore* store, IdentityOptions options);
  ~IdentityService();
  IdentityService(const IdentityService&) = delete;
  IdentityService& operator=(const IdentityService&) = delete;

  // Registers the built-in policy names with the store and loads the first view. kIoError when
  // the store cannot be read, kAccessDenied when a stored secret cannot be opened with this server
  // key (the key file does not belong to this data directory).
  Status Initialize();

  const std::string& root_access_key() const;

  // --- Authentication ---

  // For auth::Verify: the secret of any key that may sign now (root, enabled keys of enabled
  // users, session keys). kUnknownAccessKey otherwise.
  Result<Credentials> Lookup(std::string_view access_key) const;
  CredentialLookup LookupFunction() const;

  // After auth::Verify succeeded. Session keys must carry a valid, unexpired session token whose
  // parent key is still enabled (kExpired / kAccessDenied); other keys must carry none.
  Result<Principal> PrincipalForSignedRequest(const VerifiedRequest& verified, WallTime now) const;
  // For "Authorization: Bearer": kExpired, or kAccessDenied for a forged token or a key that is
  // gone or disabled.
  Result<Principal> PrincipalForBearerToken(std::string_view token, WallTime now) const;
  // The claims of a bearer token that would authenticate now (as PrincipalForBearerToken decides),
  // for a token exchange, which must not outlive the token it replaces.
  Result<BearerClaims> ValidBearerClaims(std::string_view token, WallTime now) const;

  // OAuth2 client_credentials: Ok when the pair names an enabled key (root or an enabled user's).
  // The comparison of the secret is constant-time. kAccessDenied otherwise.
  Status CheckClientSecret(std::string_view access_key, std::string_view secret) const;
  // A bearer token for an enabled key, valid until `expires_at` (the token lifetime from now when
  // not given). kAccessDenied for a key that cannot be used.
  Result<std::string> IssueBearerToken(std::string_view access_key, WallTime now,
                                       std::optional<WallTime> expires_at = std::nullopt) const;
  std::chrono::seconds bearer_token_ttl() const;
  // The web console: a session for an enabled key (after CheckClientSecret), valid for
  // limits::kConsoleSessionTtl; and the principal of a verified session's claims, refused
  // (kAccessDenied) once its key is gone, disabled or made again under the same id.
  Result<ConsoleSession> IssueConsoleSession(std::string_view access_key, WallTime now) const;
  Result<Principal> PrincipalForConsoleSession(const ConsoleSessionClaims& claims) const;
  // The principal a request of user `name` would act as (its policies now), to ask what it may
  // do (the admin API's simulation); root's name is the root access key. kNotFound for no such
  // user; a disabled user's principal is returned (its requests are refused at authentication).
  Result<Principal> PrincipalForUser(std::string_view name) const;
  // The key tokens are issued and verified under (for the OAuth2 token endpoint's own issuing).
  const ServerKey& server_key() const;

  // --- Authorisation ---

  // Ok, or kAccessDenied naming the action. Root is always allowed. A user needs an Allow and no
  // Deny among its policies. A session must stay inside its grant (read, or read-write, of objects
  // under one prefix of one bucket) and its parent must be allowed the action too.
  Status Authorize(const Principal& principal, std::string_view action, std::string_view resource,
                   const ConditionContext* context = nullptr) const;
  bool IsAllowed(const Principal& principal, std::string_view action, std::string_view resource,
                 const ConditionContext* context = nullptr) const;
  // The decision behind IsAllowed, for callers that treat an explicit Deny differently from no
  // Allow (account-level listings filter on no Allow but refuse on a Deny). Root: kAllow; a
  // session outside its grant: kImplicitDeny.
  PolicyDecision Decide(const Principal& principal, std::string_view action, std::string_view resource,
                        const ConditionContext* context = nullptr) const;

  // Temporary credentials for objects under s3://bucket/prefix, for the caller of a table load.
  // Write access only when asked for and the caller may s3:PutObject there. kAccessDenied when the
  // caller may not even s3:GetObject there, or when the caller is itself a session.
  Result<SessionCredentials> VendCredentials(const Principal& principal, std::string_view bucket,
                                             std::string_view prefix, bool want_write, WallTime now) const;

  // --- Administration (each change is durable before it returns, and visible at once) ---

  Status CreateUser(std::string_view name,
                    const std::vector<std::string>& policies);  // kAlreadyExists, kNotFound (policy)
  Status SetUserEnabled(std::string_view name, bool enabled);   // kNotFound
  Status DeleteUser(std::string_view name);                     // kNotFound; also its keys
  Result<std::vector<UserInfo>> ListUsers() const;
  Result<UserInfo> GetUser(std::string_view name) const;

  // Generates the key and secret when not given. kInvalidArgument for a malformed id or secret.
  Result<NewAccessKey> CreateAccessKey(std::string_view user, std::string_view description,
                                       std::optional<std::string> access_key = std::nullopt,
                                       std::optional<std::string> secret_key = std::nullopt);
  Status SetAccessKeyEnabled(std::string_view access_key, bool enabled);
  Status DeleteAccessKey(std::string_view access_key);
  // Keys of one user, or of every user when `user` is empty.
  Result<std::vector<AccessKeyInfo>> ListAccessKeys(std::string_view user) const;

  // Validates the document (policy.h) before storing it. kInvalidArgument for built-in names.
  Status PutPolicy(std::string_view name, std::string_view document);
  Status DeletePolicy(std::string_view name);  // kConflict while attached
  Result<PolicyInfo> GetPolicy(std::string_view name) const;
  Result<std::vector<PolicyInfo>> ListPolicies() const;  // built-ins first
  Status AttachPolicy(std::string_view user, std::string_view policy);
  Status DetachPolicy(std::string_view user, std::string_view policy);

 private:
  struct View;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The client's IP address from the peer "host:port" ("[v6]:port"), without the port or the
// brackets; an IPv4-mapped IPv6 address is given in its IPv4 form so IPv4 CIDR conditions apply.
std::string SourceIpFromPeer(std::string_view remote_address);

// Root acting with its own keys (not a session vended to it): every action on every resource
// is allowed, whatever the request's conditions, so callers need not gather them.
inline bool IsUnrestricted(const Principal& principal) {
  return principal.acts_as_root && !principal.session;
}

// The condition keys every request carries, whatever it addresses: aws:username and aws:userid
// (the principal's user), aws:SourceIp (when the peer is known) and aws:SecureTransport. S3, the
// catalog and the admin API add their own keys to it. Empty for an unrestricted principal.
ConditionContext RequestConditions(const Principal& principal, const http::Request& request);

// Name rules, shared with the admin API and the CLI for early errors.
Status ValidateUserName(std::string_view name);     // 1-64 of [A-Za-z0-9+=,.@_-]
Status ValidatePolicyName(std::string_view name);   // 1-128 of [A-Za-z0-9+=,.@_-]
Status ValidateAccessKeyId(std::string_view id);    // 3-128 of [A-Za-z0-9_.-]
Status ValidateSecretKey(std::string_view secret);  // 8-128 printable ASCII, no spaces

}  // namespace serac::auth
