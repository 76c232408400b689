#include "auth/identity.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <utility>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/random.h"
#include "meta/iam_store.h"

namespace serac::auth {
namespace {

// Sealed secrets are bound to their access key, so a sealed value moved to another key's row
// does not open.
std::string SealContext(std::string_view access_key) { return "serac-access-key:" + std::string(access_key); }

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         std::string_view("+=,.@_-").find(c) != std::string_view::npos;
}

Status ValidateName(std::string_view what, std::string_view name, size_t bytes_max) {
  if (name.empty() || name.size() > bytes_max) {
    return Error(ErrorCode::kInvalidArgument,
                 std::string(what) + " must be 1 to " + std::to_string(bytes_max) + " characters");
  }
  if (!std::all_of(name.begin(), name.end(), IsNameChar)) {
    return Error(ErrorCode::kInvalidArgument,
                 std::string(what) + " may contain only letters, digits and + = , . @ _ -");
  }
  return Status::Ok();
}

// 20 characters of [A-Z0-9] like AWS key ids; the first letters tell a user key ("SK") apart.
std::string GenerateAccessKeyId() {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string random = RandomBytes(18);
  std::string id = "SK";
  for (char byte : random) id += kAlphabet[static_cast<uint8_t>(byte) % kAlphabet.size()];
  return id;
}

std::string GenerateSecretKey() {
  std::string secret = Base64Encode(RandomBytes(30));  // 40 characters
  std::replace(secret.begin(), secret.end(), '/', 'x');
  std::replace(secret.begin(), secret.end(), '+', 'z');
  return secret;
}

Status Denied(std::string_view action) {
  return Error(ErrorCode::kAccessDenied, "not authorized to perform " + std::string(action));
}

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) { return AsciiLower(a) == AsciiLower(b); }

// What vended credentials may do: read (and, with a write grant, write) objects under the
// grant's prefix, and list that prefix. Catalog and admin actions are never allowed.
bool SessionReadAction(std::string_view action) {
  return EqualsIgnoreCase(action, "s3:GetObject") || EqualsIgnoreCase(action, "s3:ListBucket") ||
         EqualsIgnoreCase(action, "s3:GetBucketLocation") || EqualsIgnoreCase(action, "s3:GetObjectTagging");
}

bool SessionWriteAction(std::string_view action) {
  return EqualsIgnoreCase(action, "s3:PutObject") || EqualsIgnoreCase(action, "s3:DeleteObject") ||
         EqualsIgnoreCase(action, "s3:AbortMultipartUpload") ||
         EqualsIgnoreCase(action, "s3:ListMultipartUploadParts") ||
         EqualsIgnoreCase(action, "s3:ListBucketMultipartUploads");
}

bool WithinGrant(const SessionGrant& grant, std::string_view action, std::string_view resource,
                 const ConditionContext* context) {
  bool read = SessionReadAction(action);
  if (!read && !(grant.write && SessionWriteAction(action))) return false;
  const std::string object_prefix = S3ObjectArn(grant.bucket, grant.prefix);
  if (StartsWith(resource, object_prefix)) return true;
  if (resource != S3BucketArn(grant.bucket)) return false;
  // Bucket-level: only listings, and only inside the prefix.
  if (EqualsIgnoreCase(action, "s3:GetBucketLocation")) return true;
  if (!EqualsIgnoreCase(action, "s3:ListBucket") &&
      !EqualsIgnoreCase(action, "s3:ListBucketMultipartUploads")) {
    return false;
  }
  const std::vector<std::string>* prefixes = context ? context->Find(condition_keys::kS3Prefix) : nullptr;
  if (prefixes == nullptr || prefixes->empty()) return false;
  return std::all_of(prefixes->begin(), prefixes->end(),
                     [&](const std::string& requested) { return StartsWith(requested, grant.prefix); });
}

constexpr std::string_view kIpv4MappedPrefix = "::ffff:";

}  // namespace

std::string SourceIpFromPeer(std::string_view remote_address) {
  std::string_view address = remote_address;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    address = close == std::string_view::npos ? address.substr(1) : address.substr(1, close - 1);
  } else if (size_t colon = address.find(':');
             colon != std::string_view::npos && address.find(':', colon + 1) == std::string_view::npos) {
    address = address.substr(0, colon);  // "a.b.c.d:port"; a bare IPv6 address has several colons
  }
  bool ipv4_mapped = address.size() > kIpv4MappedPrefix.size() &&
                     AsciiEqualsIgnoreCase(address.substr(0, kIpv4MappedPrefix.size()), kIpv4MappedPrefix) &&
                     address.find('.') != std::string_view::npos;
  if (ipv4_mapped) address.remove_prefix(kIpv4MappedPrefix.size());
  return std::string(address);
}

ConditionContext RequestConditions(const Principal& principal, const http::Request& request) {
  ConditionContext context;
  if (IsUnrestricted(principal)) return context;  // no policy will read it
  context.Set(condition_keys::kUsername, principal.user);
  context.Set(condition_keys::kUserId, principal.user);
  std::string source_ip = SourceIpFromPeer(request.remote_address);
  if (!source_ip.empty()) context.Set(condition_keys::kSourceIp, std::move(source_ip));
  context.Set(condition_keys::kSecureTransport, request.tls ? "true" : "false");
  return context;
}

Status ValidateUserName(std::string_view name) { return ValidateName("a user name", name, 64); }
Status ValidatePolicyName(std::string_view name) { return ValidateName("a policy name", name, 128); }

Status ValidateAccessKeyId(std::string_view id) {
  if (id.size() < 3 || id.size() > 128) {
    return Error(ErrorCode::kInvalidArgument, "an access key id must be 3 to 128 characters");
  }
  for (char c : id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    if (!ok)
      return Error(ErrorCode::kInvalidArgument,
                   "an access key id may contain only letters, digits and _ . -");
  }
  if (IsSessionAccessKey(id)) {
    return Error(ErrorCode::kInvalidArgument,
                 "access key ids starting with " + std::string(kSessionAccessKeyPrefix) + " are reserved");
  }
  return Status::Ok();
}

Status ValidateSecretKey(std::string_view secret) {
  if (secret.size() < limits::kUserSecretKeyBytesMin || secret.size() > 128) {
    return Error(ErrorCode::kInvalidArgument, "a secret key must be " +
                                                  std::to_string(limits::kUserSecretKeyBytesMin) +
                                                  " to 128 characters (limits::kUserSecretKeyBytesMin)");
  }
  for (char c : secret) {
    if (c <= ' ' || c > '~') {
      return Error(ErrorCode::kInvalidArgument,
                   "a secret key may contain only printable ASCII without spaces");
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// The in-memory view: immutable once built, swapped whole.

struct IdentityService::View {
  struct Key {
    meta::AccessKeyRecord record;
    std::string secret;
  };
  struct User {
    meta::IamUserRecord record;
    std::vector<std::shared_ptr<const Policy>> policies;
  };
  uint64_t generation = 0;
  std::map<std::string, Key, std::less<>> keys;
  std::map<std::string, User, std::less<>> users;
  std::map<std::string, std::pair<meta::PolicyRecord, std::shared_ptr<const Policy>>, std::less<>> policies;
};

struct IdentityService::Impl {
  Impl(Credentials root_credentials, ServerKey key, meta::IamStore* iam_store,
       IdentityOptions identity_options)
      : root(std::move(root_credentials)),
        server_key(std::move(key)),
        store(iam_store),
        options(identity_options) {}

  Credentials root;
  ServerKey server_key;
  meta::IamStore* store;
  IdentityOptions options;

  mutable std::shared_mutex view_mutex;
  std::shared_ptr<const View> view;  // guarded by view_mutex
  mutable std::mutex refresh_mutex;  // one refresher at a time
  mutable std::atomic<int64_t> last_check_ms{0};
  std::mutex write_mutex;  // admin writes: store change + view rebuild in order

  Result<std::shared_ptr<const View>> Build() const;
  Status Reload();
  std::shared_ptr<const View> Current() const;
  void MaybeRefresh() const;
  Result<Principal> PrincipalForKey(const View& view, std::string_view access_key) const;
  Status AfterWrite(Status written);
};

Result<std::shared_ptr<const IdentityService::View>> IdentityService::Impl::Build() const {
  SERAC_ASSIGN_OR_RETURN(meta::IamSnapshot snapshot, store->LoadSnapshot());
  auto built = std::make_shared<View>();
  built->generation = snapshot.generation;
  for (meta::PolicyRecord& record : snapshot.policies) {
    auto parsed = Policy::Parse(record.document);
    if (!parsed.ok()) {
      return Error(ErrorCode::kInternal,
                   "stored policy " + record.name + " no longer parses: " + parsed.status().message());
    }
    auto policy = std::make_shared<const Policy>(std::move(parsed).value());
    std::string name = record.name;
    built->policies.emplace(std::move(name), std::make_pair(std::move(record), std::move(policy)));
  }
  for (meta::IamUserRecord& record : snapshot.users) {
    View::User user;
    for (const std::string& name : record.policies) {
      if (const Policy* builtin = BuiltinPolicy(name)) {
        user.policies.push_back(std::shared_ptr<const Policy>(std::shared_ptr<const Policy>(), builtin));
      } else if (auto found = built->policies.find(name); found != built->policies.end()) {
        user.policies.push_back(found->second.second);
      }
    }
    user.record = std::move(record);
    std::string name = user.record.name;
    built->users.emplace(std::move(name), std::move(user));
  }
  for (meta::AccessKeyRecord& record : snapshot.keys) {
    auto secret = server_key.Open(record.sealed_secret, SealContext(record.access_key));
    if (!secret.ok()) {
      return Error(ErrorCode::kAccessDenied,
                   "the secret of access key " + record.access_key +
                       " cannot be opened with this server key (is the server key file the one this data "
                       "directory was created with?)");
    }
    View::Key key{std::move(record), std::move(secret).value()};
    std::string id = key.record.access_key;
    built->keys.emplace(std::move(id), std::move(key));
  }
  return std::shared_ptr<const View>(std::move(built));
}

Status IdentityService::Impl::Reload() {
  SERAC_ASSIGN_OR_RETURN(std::shared_ptr<const View> built, Build());
  std::unique_lock lock(view_mutex);
  if (!view || built->generation >= view->generation) view = std::move(built);
  return Status::Ok();
}

std::shared_ptr<const IdentityService::View> IdentityService::Impl::Current() const {
  MaybeRefresh();
  std::shared_lock lock(view_mutex);
  return view;
}

// Another server sharing the MetaStore may have changed IAM: look at the generation now and then.
void IdentityService::Impl::MaybeRefresh() const {
  const int64_t now_ms = ToUnixMillis(Now());
  const int64_t interval_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(limits::kIamRefreshInterval).count();
  if (now_ms - last_check_ms.load(std::memory_order_relaxed) < interval_ms) return;
  std::unique_lock refresh(refresh_mutex, std::try_to_lock);
  if (!refresh.owns_lock()) return;  // someone else is checking; the current view serves meanwhile
  last_check_ms.store(now_ms, std::memory_order_relaxed);
  auto generation = store->Generation();
  if (!generation.ok()) return;
  {
    std::shared_lock lock(view_mutex);
    if (view && view->generation == *generation) return;
  }
  (void)const_cast<Impl*>(this)->Reload();  // a failed reload keeps the last good view
}

Status IdentityService::Impl::AfterWrite(Status written) {
  if (!written.ok()) return written;
  return Reload();
}

Result<Principal> IdentityService::Impl::PrincipalForKey(const View& current,
                                                         std::string_view access_key) const {
  Principal principal;
  principal.access_key = std::string(access_key);
  if (access_key == root.access_key) {
    principal.kind = PrincipalKind::kRoot;
    principal.user = root.access_key;
    principal.key = KeyIdentity{root.access_key, 0};
    principal.acts_as_root = true;
    return principal;
  }
  auto key = current.keys.find(access_key);
  if (key == current.keys.end() || !key->second.record.enabled) {
    return Error(ErrorCode::kAccessDenied, "the access key does not exist or is disabled");
  }
  auto user = current.users.find(key->second.record.user);
  if (user == current.users.end() || !user->second.record.enabled) {
    return Error(ErrorCode::kAccessDenied, "the user of this access key does not exist or is disabled");
  }
  principal.kind = PrincipalKind::kUser;
  principal.user = user->second.record.name;
  principal.key = KeyIdentity{key->second.record.user, key->second.record.created_ms};
  principal.policies = user->second.policies;
  return principal;
}

// ---------------------------------------------------------------------------------------------

IdentityService::IdentityService(Credentials root, ServerKey server_key, meta::IamStore* store,
                                 IdentityOptions options)
    : impl_(std::make_unique<Impl>(std::move(root), std::move(server_key), store, options)) {}

IdentityService::~IdentityService() = default;

Status IdentityService::Initialize() {
  std::vector<std::string> names;
  for (std::string_view name : BuiltinPolicyNames()) names.emplace_back(name);
  impl_->store->SetBuiltinPolicyNames(std::move(names));
  SERAC_RETURN_IF_ERROR(impl_->Reload());
  impl_->last_check_ms.store(ToUnixMillis(Now()));
  return Status::Ok();
}

const std::string& IdentityService::root_access_key() const { return impl_->root.access_key; }

Result<Credentials> IdentityService::Lookup(std::string_view access_key) const {
  if (access_key == impl_->root.access_key) return impl_->root;
  if (IsSessionAccessKey(access_key)) {
    Credentials session;
    session.access_key = std::string(access_key);
    session.secret_key = DeriveSessionSecret(impl_->server_key, access_key);
    return session;  // the token itself is checked by PrincipalForSignedRequest
  }
  std::shared_ptr<const View> current = impl_->Current();
  auto key = current->keys.find(access_key);
  if (key == current->keys.end() || !key->second.record.enabled) {
    return Error(ErrorCode::kUnknownAccessKey,
                 "The AWS Access Key Id you provided does not exist in our records.");
  }
  auto user = current->users.find(key->second.record.user);
  if (user == current->users.end() || !user->second.record.enabled) {
    return Error(ErrorCode::kUnknownAccessKey,
                 "The AWS Access Key Id you provided does not exist in our records.");
  }
  Credentials credentials;
  credentials.access_key = key->second.record.access_key;
  credentials.secret_key = key->second.secret;
  return credentials;
}

CredentialLookup IdentityService::LookupFunction() const {
  return [this](std::string_view access_key) { return Lookup(access_key); };
}

Result<Principal> IdentityService::PrincipalForSignedRequest(const VerifiedRequest& verified,
                                                             WallTime now) const {
  if (!IsSessionAccessKey(verified.access_key)) {
    if (!verified.session_token.empty()) {
      return Error(ErrorCode::kAccessDenied, "The provided token is not valid for this access key.");
    }
    std::shared_ptr<const View> current = impl_->Current();
    return impl_->PrincipalForKey(*current, verified.access_key);
  }
  SERAC_ASSIGN_OR_RETURN(SessionGrant grant, VerifySessionToken(impl_->server_key, verified.access_key,
                                                                verified.session_token, now));
  std::shared_ptr<const View> current = impl_->Current();
  // Vended credentials die with the key that obtained them (and do not pass to a key made later
  // under the same id).
  SERAC_ASSIGN_OR_RETURN(Principal parent, impl_->PrincipalForKey(*current, grant.parent_access_key));
  if (parent.key != grant.parent_key) {
    return Error(ErrorCode::kAccessDenied, "the access key that obtained these credentials no longer exists");
  }
  Principal principal = std::move(parent);
  principal.kind = PrincipalKind::kSession;
  principal.access_key = verified.access_key;
  principal.session = std::move(grant);
  return principal;
}

Result<Principal> IdentityService::PrincipalForBearerToken(std::string_view token, WallTime now) const {
  SERAC_ASSIGN_OR_RETURN(BearerClaims claims, VerifyBearerToken(impl_->server_key, token, now));
  std::shared_ptr<const View> current = impl_->Current();
  SERAC_ASSIGN_OR_RETURN(Principal principal, impl_->PrincipalForKey(*current, claims.access_key));
  // A key deleted and made again under the same id is another key: its predecessor's tokens fail.
  if (principal.key != claims.key) {
    return Error(ErrorCode::kAccessDenied, "the access key this token was issued to no longer exists");
  }
  return principal;
}

Result<BearerClaims> IdentityService::ValidBearerClaims(std::string_view token, WallTime now) const {
  SERAC_RETURN_IF_ERROR(PrincipalForBearerToken(token, now).status());
  return VerifyBearerToken(impl_->server_key, token, now);
}

Status IdentityService::CheckClientSecret(std::string_view access_key, std::string_view secret) const {
  if (IsSessionAccessKey(access_key)) return Error(ErrorCode::kAccessDenied, "invalid client credentials");
  auto credentials = Lookup(access_key);
  if (!credentials.ok() || !ConstantTimeEquals(credentials->secret_key, secret)) {
    return Error(ErrorCode::kAccessDenied, "invalid client credentials");
  }
  return Status::Ok();
}

Result<std::string> IdentityService::IssueBearerToken(std::string_view access_key, WallTime now,
                                                      std::optional<WallTime> expires_at) const {
  std::shared_ptr<const View> current = impl_->Current();
  SERAC_ASSIGN_OR_RETURN(Principal principal, impl_->PrincipalForKey(*current, access_key));
  return auth::IssueBearerToken(impl_->server_key, access_key, principal.key, now,
                                expires_at.value_or(now + impl_->options.bearer_token_ttl));
}

Result<ConsoleSession> IdentityService::IssueConsoleSession(std::string_view access_key, WallTime now) const {
  std::shared_ptr<const View> current = impl_->Current();
  SERAC_ASSIGN_OR_RETURN(Principal principal, impl_->PrincipalForKey(*current, access_key));
  return auth::IssueConsoleSession(impl_->server_key, access_key, principal.key, now,
                                   now + limits::kConsoleSessionTtl);
}

Result<Principal> IdentityService::PrincipalForConsoleSession(const ConsoleSessionClaims& claims) const {
  std::shared_ptr<const View> current = impl_->Current();
  SERAC_ASSIGN_OR_RETURN(Principal principal, impl_->PrincipalForKey(*current, claims.access_key));
  if (principal.key != claims.key) {
    return Error(ErrorCode::kAccessDenied, "the access key this session signed in with no longer exists");
  }
  return principal;
}

Result<Principal> IdentityService::PrincipalForUser(std::string_view name) const {
  if (name == impl_->root.access_key) return impl_->PrincipalForKey(*impl_->Current(), name);
  std::shared_ptr<const View> current = impl_->Current();
  auto user = current->users.find(std::string(name));
  if (user == current->users.end()) return Error(ErrorCode::kNotFound, "no such user: " + std::string(name));
  Principal principal;
  principal.kind = PrincipalKind::kUser;
  principal.user = user->second.record.name;
  principal.policies = user->second.policies;
  return principal;
}

std::chrono::seconds IdentityService::bearer_token_ttl() const { return impl_->options.bearer_token_ttl; }

const ServerKey& IdentityService::server_key() const { return impl_->server_key; }

bool IdentityService::IsAllowed(const Principal& principal, std::string_view action,
                                std::string_view resource, const ConditionContext* context) const {
  return Decide(principal, action, resource, context) == PolicyDecision::kAllow;
}

PolicyDecision IdentityService::Decide(const Principal& principal, std::string_view action,
                                       std::string_view resource, const ConditionContext* context) const {
  if (principal.session && !WithinGrant(*principal.session, action, resource, context)) {
    return PolicyDecision::kImplicitDeny;
  }
  if (principal.acts_as_root) return PolicyDecision::kAllow;  // a session was checked above
  std::vector<const Policy*> policies;
  policies.reserve(principal.policies.size());
  for (const auto& policy : principal.policies) policies.push_back(policy.get());
  ConditionContext with_user;
  if (context == nullptr) context = &with_user;
  if (context->Find(condition_keys::kUsername) == nullptr) {
    // Policies may name ${aws:username}; a caller that did not set it still gets it right.
    with_user = *context;
    with_user.Set(condition_keys::kUsername, principal.user);
    context = &with_user;
  }
  AccessRequest request{action, resource, context};
  return Evaluate(policies, request);
}

Status IdentityService::Authorize(const Principal& principal, std::string_view action,
                                  std::string_view resource, const ConditionContext* context) const {
  return IsAllowed(principal, action, resource, context) ? Status::Ok() : Denied(action);
}

Result<SessionCredentials> IdentityService::VendCredentials(const Principal& principal,
                                                            std::string_view bucket, std::string_view prefix,
                                                            bool want_write, WallTime now) const {
  if (principal.kind == PrincipalKind::kSession) {
    return Error(ErrorCode::kAccessDenied, "temporary credentials cannot obtain further credentials");
  }
  const std::string objects = S3ObjectArn(bucket, std::string(prefix) + "*");
  if (!IsAllowed(principal, "s3:GetObject", objects)) return Denied("s3:GetObject");
  SessionGrant grant;
  grant.parent_access_key = principal.access_key;
  grant.parent_key = principal.key;
  grant.bucket = std::string(bucket);
  grant.prefix = std::string(prefix);
  grant.write = want_write && IsAllowed(principal, "s3:PutObject", objects);
  return MintSessionCredentials(impl_->server_key, grant, now, impl_->options.session_ttl);
}

// ---------------------------------------------------------------------------------------------
// Administration

Status IdentityService::CreateUser(std::string_view name, const std::vector<std::string>& policies) {
  SERAC_RETURN_IF_ERROR(ValidateUserName(name));
  if (name == impl_->root.access_key) {
    return Error(ErrorCode::kAlreadyExists, "the name of the root user cannot be used for another user");
  }
  std::lock_guard lock(impl_->write_mutex);
  if (impl_->Current()->users.size() >= limits::kIamUsersMax) {
    return Error(ErrorCode::kLimitExceeded, "too many users (limits::kIamUsersMax)");
  }
  meta::IamUserRecord record;
  record.name = std::string(name);
  record.created_ms = ToUnixMillis(Now());
  record.policies = policies;
  return impl_->AfterWrite(impl_->store->CreateUser(record));
}

Status IdentityService::SetUserEnabled(std::string_view name, bool enabled) {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->SetUserEnabled(name, enabled));
}

Status IdentityService::DeleteUser(std::string_view name) {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->DeleteUser(name));
}

Result<std::vector<UserInfo>> IdentityService::ListUsers() const {
  std::shared_ptr<const View> current = impl_->Current();
  std::vector<UserInfo> users;
  for (const auto& [name, user] : current->users) {
    users.push_back({user.record.name, user.record.enabled, user.record.created_ms, user.record.policies});
  }
  return users;
}

Result<UserInfo> IdentityService::GetUser(std::string_view name) const {
  std::shared_ptr<const View> current = impl_->Current();
  auto user = current->users.find(name);
  if (user == current->users.end()) return Error(ErrorCode::kNotFound, "no such user: " + std::string(name));
  return UserInfo{user->second.record.name, user->second.record.enabled, user->second.record.created_ms,
                  user->second.record.policies};
}

Result<NewAccessKey> IdentityService::CreateAccessKey(std::string_view user, std::string_view description,
                                                      std::optional<std::string> access_key,
                                                      std::optional<std::string> secret_key) {
  NewAccessKey created;
  created.access_key = access_key ? std::move(*access_key) : GenerateAccessKeyId();
  created.secret_key = secret_key ? std::move(*secret_key) : GenerateSecretKey();
  SERAC_RETURN_IF_ERROR(ValidateAccessKeyId(created.access_key));
  SERAC_RETURN_IF_ERROR(ValidateSecretKey(created.secret_key));
  if (created.access_key == impl_->root.access_key) {
    return Error(ErrorCode::kAlreadyExists, "access key already exists: " + created.access_key);
  }
  if (description.size() > 256)
    return Error(ErrorCode::kInvalidArgument, "a description is at most 256 characters");
  std::lock_guard lock(impl_->write_mutex);
  std::shared_ptr<const View> current = impl_->Current();
  size_t keys_of_user =
      static_cast<size_t>(std::count_if(current->keys.begin(), current->keys.end(),
                                        [&](const auto& entry) { return entry.second.record.user == user; }));
  if (keys_of_user >= limits::kIamAccessKeysPerUserMax) {
    return Error(ErrorCode::kLimitExceeded,
                 "too many access keys for this user (limits::kIamAccessKeysPerUserMax)");
  }
  meta::AccessKeyRecord record;
  record.access_key = created.access_key;
  record.user = std::string(user);
  record.sealed_secret = impl_->server_key.Seal(created.secret_key, SealContext(created.access_key));
  record.created_ms = ToUnixMillis(Now());
  record.description = std::string(description);
  SERAC_RETURN_IF_ERROR(impl_->AfterWrite(impl_->store->CreateAccessKey(record)));
  return created;
}

Status IdentityService::SetAccessKeyEnabled(std::string_view access_key, bool enabled) {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->SetAccessKeyEnabled(access_key, enabled));
}

Status IdentityService::DeleteAccessKey(std::string_view access_key) {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->DeleteAccessKey(access_key));
}

Result<std::vector<AccessKeyInfo>> IdentityService::ListAccessKeys(std::string_view user) const {
  std::shared_ptr<const View> current = impl_->Current();
  if (!user.empty() && current->users.find(user) == current->users.end()) {
    return Error(ErrorCode::kNotFound, "no such user: " + std::string(user));
  }
  std::vector<AccessKeyInfo> keys;
  for (const auto& [id, key] : current->keys) {
    if (!user.empty() && key.record.user != user) continue;
    keys.push_back({key.record.access_key, key.record.user, key.record.enabled, key.record.created_ms,
                    key.record.description});
  }
  return keys;
}

Status IdentityService::PutPolicy(std::string_view name, std::string_view document) {
  SERAC_RETURN_IF_ERROR(ValidatePolicyName(name));
  if (BuiltinPolicy(name) != nullptr) {
    return Error(ErrorCode::kInvalidArgument, "built-in policy " + std::string(name) + " cannot be changed");
  }
  SERAC_ASSIGN_OR_RETURN(Policy policy, Policy::Parse(document));
  std::lock_guard lock(impl_->write_mutex);
  std::shared_ptr<const View> current = impl_->Current();
  if (current->policies.find(name) == current->policies.end() &&
      current->policies.size() >= limits::kIamPoliciesMax) {
    return Error(ErrorCode::kLimitExceeded, "too many policies (limits::kIamPoliciesMax)");
  }
  meta::PolicyRecord record;
  record.name = std::string(name);
  record.document = policy.json();
  record.created_ms = record.updated_ms = ToUnixMillis(Now());
  return impl_->AfterWrite(impl_->store->PutPolicy(record));
}

Status IdentityService::DeletePolicy(std::string_view name) {
  if (BuiltinPolicy(name) != nullptr) {
    return Error(ErrorCode::kInvalidArgument, "built-in policy " + std::string(name) + " cannot be removed");
  }
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->DeletePolicy(name));
}

Result<PolicyInfo> IdentityService::GetPolicy(std::string_view name) const {
  if (const Policy* builtin = BuiltinPolicy(name))
    return PolicyInfo{std::string(name), builtin->json(), true};
  std::shared_ptr<const View> current = impl_->Current();
  auto found = current->policies.find(name);
  if (found == current->policies.end())
    return Error(ErrorCode::kNotFound, "no such policy: " + std::string(name));
  return PolicyInfo{found->first, found->second.first.document, false};
}

Result<std::vector<PolicyInfo>> IdentityService::ListPolicies() const {
  std::vector<PolicyInfo> policies;
  for (std::string_view name : BuiltinPolicyNames()) {
    policies.push_back({std::string(name), BuiltinPolicy(name)->json(), true});
  }
  std::shared_ptr<const View> current = impl_->Current();
  for (const auto& [name, entry] : current->policies) policies.push_back({name, entry.first.document, false});
  return policies;
}

Status IdentityService::AttachPolicy(std::string_view user, std::string_view policy) {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->AttachPolicy(user, policy));
}

Status IdentityService::DetachPolicy(std::string_view user, std::string_view policy) {
  std::lock_guard lock(impl_->write_mutex);
  return impl_->AfterWrite(impl_->store->DetachPolicy(user, policy));
}

}  // namespace serac::auth
