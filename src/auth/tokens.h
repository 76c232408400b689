// Self-contained credentials that need no storage: OAuth2 bearer tokens for the catalog and
// table-scoped temporary S3 credentials ("vended credentials"). Both are sealed (AES-256-GCM,
// ServerKey::Seal, with the token's kind as associated data): a holder learns nothing from one —
// not the access key it was issued to, not the bucket or prefix it covers — and any changed byte
// fails. Every node that shares the server key opens what any node issued, and changing the key
// revokes them all.
//
// Neither kind can be revoked one by one here: the caller checks, on every use, that the access
// key behind a token still exists, is enabled, and is the same key (KeyIdentity: a key deleted and
// made again under the same id is another key), so disabling or deleting a key revokes its tokens
// and session credentials at once.
//
// Token text is URL-safe ASCII: a versioned prefix, then base64url (no padding) of the sealed
// binary payload. All functions are pure apart from randomness; thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/server_key.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/status.h"

namespace serac::auth {

inline constexpr std::string_view kBearerTokenPrefix = "serac2.";
inline constexpr std::string_view kSessionTokenPrefix = "serac2s.";
inline constexpr std::string_view kConsoleSessionTokenPrefix = "serac2c.";
inline constexpr std::string_view kSessionAccessKeyPrefix = "SRCS";
inline constexpr size_t kSessionAccessKeyBytes = 20;  // prefix + 16 of [A-Z0-9], like AWS key ids
inline constexpr size_t kSessionSecretKeyBytes = 40;  // base64url, like AWS secret keys

// Which key an access key id named when a token was issued: its user and when the key was made
// (root: its own id and 0). A token holds only while the id still names that key.
struct KeyIdentity {
  std::string user;
  int64_t created_ms = 0;

  bool operator==(const KeyIdentity&) const = default;
};

// ---- OAuth2 bearer tokens ----

struct BearerClaims {
  std::string access_key;  // the IAM access key the token was issued to
  KeyIdentity key;         // that key, as it was then
  WallTime issued_at;      // whole seconds
  WallTime expires_at;     // whole seconds; the token is valid while now < expires_at
};

// A token for `access_key` (the key `identity`) issued at `now`, valid until `expires_at` (both
// truncated to whole seconds). The access key must be at most limits::kTokenAccessKeyBytesMax
// bytes; a longer one yields a token that never verifies. An expiry not after `now` yields an
// expired token.
std::string IssueBearerToken(const ServerKey& key, std::string_view access_key, const KeyIdentity& identity,
                             WallTime now, WallTime expires_at);
// kExpired when the token is authentic but now >= expires_at; kAccessDenied for anything
// malformed, forged, too long (limits::kBearerTokenBytesMax) or issued under another key.
Result<BearerClaims> VerifyBearerToken(const ServerKey& key, std::string_view token, WallTime now);

// ---- Web console sessions ----
// The value of the console's HttpOnly session cookie: who signed in, when, and a random session id
// by which a sign-out is remembered until the session would have expired (the caller keeps that
// record; the token itself cannot be revoked). A kind of its own, so that a console session is
// never a bearer token and a bearer token never a console session.

struct ConsoleSessionClaims {
  std::string session_id;  // 32 hex digits, random
  std::string access_key;  // the key that signed in
  KeyIdentity key;         // that key, as it was then
  WallTime issued_at;      // whole seconds
  WallTime expires_at;     // whole seconds; valid while now < expires_at
};

struct ConsoleSession {
  std::string token;
  ConsoleSessionClaims claims;
};

// A new session for `access_key` (the key `identity`), valid from `now` until `expires_at`.
ConsoleSession IssueConsoleSession(const ServerKey& key, std::string_view access_key,
                                   const KeyIdentity& identity, WallTime now, WallTime expires_at);
// kExpired when authentic but expired; kAccessDenied for anything malformed, forged, too long
// (limits::kConsoleSessionTokenBytesMax) or of another kind.
Result<ConsoleSessionClaims> VerifyConsoleSession(const ServerKey& key, std::string_view token, WallTime now);
// The anti-forgery value a page must echo in a header with every request of the session: derived
// from the token (which the page cannot read), so it names one session and nothing else.
std::string ConsoleCsrfToken(std::string_view session_token);

// ---- Session (vended) credentials ----

// What a set of session credentials may touch: objects in `bucket` whose key starts with `prefix`
// (a table location's key prefix, e.g. bucket "warehouse-bucket", prefix "ns/table-uuid/"), read
// only or read-write. The caller enforces it, and also that the parent key still may do so.
struct SessionGrant {
  std::string parent_access_key;
  KeyIdentity parent_key;  // the parent key as it was when the credentials were vended
  std::string bucket;
  std::string prefix;
  bool write = false;

  bool operator==(const SessionGrant&) const = default;
};

struct SessionCredentials {
  std::string access_key;     // kSessionAccessKeyPrefix + random; IsSessionAccessKey() is true
  std::string secret_key;     // DeriveSessionSecret(key, access_key): nothing to store
  std::string session_token;  // the grant, the access key and the expiry under a MAC
  WallTime expires_at;        // whole seconds
};

// Fresh credentials for `grant`, valid for `ttl` from `now`. The grant's fields must respect the
// limits they come from (access key: limits::kTokenAccessKeyBytesMax, bucket name, object key
// length); within those the token always fits limits::kSessionTokenBytesMax.
SessionCredentials MintSessionCredentials(const ServerKey& key, const SessionGrant& grant, WallTime now,
                                          std::chrono::seconds ttl);
// True for the shape of a session access key (prefix, length, alphabet). IAM access keys must
// never take this shape; the S3 authenticator uses it to pick the session path.
bool IsSessionAccessKey(std::string_view access_key);
// The secret key of a session access key: base64url of HMAC-SHA256(session-secret sub-key,
// access_key), 40 characters. Stable for a given server key, different under another.
std::string DeriveSessionSecret(const ServerKey& key, std::string_view access_key);
// Checks the MAC, that the token was minted for `access_key`, and the expiry (kExpired when
// now >= expires_at); kAccessDenied for anything malformed, forged, too long or minted for
// another access key.
Result<SessionGrant> VerifySessionToken(const ServerKey& key, std::string_view access_key,
                                        std::string_view session_token, WallTime now);

}  // namespace serac::auth
