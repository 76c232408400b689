#include "auth/tokens.h"

#include <algorithm>
#include <optional>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/random.h"

namespace serac::auth {

namespace {

// ---- base64url without padding (RFC 4648 §5) ----

std::string Base64UrlEncode(std::string_view bytes) {
  std::string text = Base64Encode(bytes);
  while (!text.empty() && text.back() == '=') text.pop_back();
  for (char& c : text) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return text;
}

// Strict: only the URL-safe alphabet, canonical trailing bits (Base64Decode checks those).
std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string standard(text);
  for (char& c : standard) {
    if (c == '+' || c == '/' || c == '=') return std::nullopt;
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  standard.append((4 - standard.size() % 4) % 4, '=');
  return Base64Decode(standard);
}

// ---- binary payloads: big-endian integers, u32-length-prefixed strings ----

void PutUint64(std::string& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

void PutString(std::string& out, std::string_view value) {
  auto size = static_cast<uint32_t>(value.size());
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((size >> shift) & 0xFF));
  out.append(value.substr(0, size));
}

class PayloadReader {
 public:
  explicit PayloadReader(std::string_view data) : data_(data) {}

  bool ReadUint64(uint64_t* value) {
    if (data_.size() < 8) return false;
    *value = 0;
    for (int i = 0; i < 8; ++i) *value = (*value << 8) | static_cast<unsigned char>(data_[i]);
    data_.remove_prefix(8);
    return true;
  }
  bool ReadByte(uint8_t* value) {
    if (data_.empty()) return false;
    *value = static_cast<uint8_t>(data_[0]);
    data_.remove_prefix(1);
    return true;
  }
  bool ReadBytes(size_t count, std::string* value) {
    if (data_.size() < count) return false;
    value->assign(data_.substr(0, count));
    data_.remove_prefix(count);
    return true;
  }
  bool ReadString(std::string* value) {
    if (data_.size() < 4) return false;
    uint32_t size = 0;
    for (int i = 0; i < 4; ++i) size = (size << 8) | static_cast<unsigned char>(data_[i]);
    data_.remove_prefix(4);
    return ReadBytes(size, value);
  }
  bool ReadIdentity(KeyIdentity* identity) {
    uint64_t created = 0;
    if (!ReadUint64(&created) || !ReadString(&identity->user)) return false;
    identity->created_ms = static_cast<int64_t>(created);
    return true;
  }
  bool AtEnd() const { return data_.empty(); }

 private:
  std::string_view data_;
};

int64_t UnixSeconds(WallTime t) {
  return std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count();
}

WallTime FromUnixSeconds(int64_t seconds) { return WallTime(std::chrono::seconds(seconds)); }

int64_t ExpirySeconds(int64_t issued_seconds, std::chrono::seconds ttl) {
  int64_t ttl_seconds = ttl.count() > 0 ? ttl.count() : 0;
  // Clamp rather than overflow for absurd ttls.
  constexpr int64_t kLatest = int64_t{1} << 40;
  return ttl_seconds > kLatest ? issued_seconds + kLatest : issued_seconds + ttl_seconds;
}

// prefix + base64url(Seal(payload)), the prefix (the token's kind and version) bound in as
// associated data, so that a token of one kind never opens as another.
std::string Assemble(const ServerKey& key, KeyPurpose purpose, std::string_view prefix,
                     std::string_view payload) {
  return std::string(prefix) + Base64UrlEncode(key.Seal(payload, prefix, purpose));
}

// The payload of an authentic token, or nullopt: anything malformed, changed, too long, of another
// kind or sealed under another key.
std::optional<std::string> Disassemble(const ServerKey& key, KeyPurpose purpose, std::string_view prefix,
                                       std::string_view token, uint64_t token_bytes_max) {
  if (token.size() > token_bytes_max || !token.starts_with(prefix)) return std::nullopt;
  std::optional<std::string> sealed = Base64UrlDecode(token.substr(prefix.size()));
  if (!sealed) return std::nullopt;
  Result<std::string> payload = key.Open(*sealed, prefix, purpose);
  if (!payload.ok()) return std::nullopt;
  return std::move(payload).value();
}

void PutIdentity(std::string& out, const KeyIdentity& identity) {
  PutUint64(out, static_cast<uint64_t>(identity.created_ms));
  PutString(out, identity.user);
}

Status Forged(std::string_view what) {
  return Error(ErrorCode::kAccessDenied,
               "the " + std::string(what) + " is malformed or not issued by this server");
}

std::string RandomSessionAccessKey() {
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  constexpr unsigned kAcceptBelow = 256 - 256 % kAlphabet.size();  // unbiased: reject the top bytes
  std::string key(kSessionAccessKeyPrefix);
  while (key.size() < kSessionAccessKeyBytes) {
    for (unsigned char byte : RandomBytes(kSessionAccessKeyBytes)) {
      if (byte >= kAcceptBelow || key.size() == kSessionAccessKeyBytes) continue;
      key.push_back(kAlphabet[byte % kAlphabet.size()]);
    }
  }
  return key;
}

}  // namespace

std::string IssueBearerToken(const ServerKey& key, std::string_view access_key, const KeyIdentity& identity,
                             WallTime now, WallTime expires_at) {
  const int64_t issued = UnixSeconds(now);
  const int64_t expires = std::max(issued, UnixSeconds(expires_at));
  std::string payload;
  PutUint64(payload, static_cast<uint64_t>(issued));
  PutUint64(payload, static_cast<uint64_t>(expires));
  PutString(payload, access_key);
  PutIdentity(payload, identity);
  return Assemble(key, KeyPurpose::kBearerToken, kBearerTokenPrefix, payload);
}

Result<BearerClaims> VerifyBearerToken(const ServerKey& key, std::string_view token, WallTime now) {
  std::optional<std::string> payload =
      Disassemble(key, KeyPurpose::kBearerToken, kBearerTokenPrefix, token, limits::kBearerTokenBytesMax);
  if (!payload.has_value()) return Forged("bearer token");
  PayloadReader reader(*payload);
  uint64_t issued = 0;
  uint64_t expires = 0;
  BearerClaims claims;
  if (!reader.ReadUint64(&issued) || !reader.ReadUint64(&expires) || !reader.ReadString(&claims.access_key) ||
      !reader.ReadIdentity(&claims.key) || !reader.AtEnd() || claims.access_key.empty() ||
      claims.access_key.size() > limits::kTokenAccessKeyBytesMax) {
    return Forged("bearer token");
  }
  claims.issued_at = FromUnixSeconds(static_cast<int64_t>(issued));
  claims.expires_at = FromUnixSeconds(static_cast<int64_t>(expires));
  if (now >= claims.expires_at) return Error(ErrorCode::kExpired, "the bearer token has expired");
  return claims;
}

ConsoleSession IssueConsoleSession(const ServerKey& key, std::string_view access_key,
                                   const KeyIdentity& identity, WallTime now, WallTime expires_at) {
  ConsoleSession session;
  ConsoleSessionClaims& claims = session.claims;
  claims.session_id = HexEncode(RandomBytes(16));
  claims.access_key = std::string(access_key);
  claims.key = identity;
  const int64_t issued = UnixSeconds(now);
  const int64_t expires = std::max(issued, UnixSeconds(expires_at));
  claims.issued_at = FromUnixSeconds(issued);
  claims.expires_at = FromUnixSeconds(expires);
  std::string payload;
  PutUint64(payload, static_cast<uint64_t>(issued));
  PutUint64(payload, static_cast<uint64_t>(expires));
  PutString(payload, claims.session_id);
  PutString(payload, access_key);
  PutIdentity(payload, identity);
  session.token = Assemble(key, KeyPurpose::kConsoleSession, kConsoleSessionTokenPrefix, payload);
  return session;
}

Result<ConsoleSessionClaims> VerifyConsoleSession(const ServerKey& key, std::string_view token,
                                                  WallTime now) {
  std::optional<std::string> payload =
      Disassemble(key, KeyPurpose::kConsoleSession, kConsoleSessionTokenPrefix, token,
                  limits::kConsoleSessionTokenBytesMax);
  if (!payload.has_value()) return Forged("console session");
  PayloadReader reader(*payload);
  uint64_t issued = 0;
  uint64_t expires = 0;
  ConsoleSessionClaims claims;
  if (!reader.ReadUint64(&issued) || !reader.ReadUint64(&expires) || !reader.ReadString(&claims.session_id) ||
      !reader.ReadString(&claims.access_key) || !reader.ReadIdentity(&claims.key) || !reader.AtEnd() ||
      claims.session_id.size() != 32 || claims.access_key.empty() ||
      claims.access_key.size() > limits::kTokenAccessKeyBytesMax) {
    return Forged("console session");
  }
  claims.issued_at = FromUnixSeconds(static_cast<int64_t>(issued));
  claims.expires_at = FromUnixSeconds(static_cast<int64_t>(expires));
  if (now >= claims.expires_at) return Error(ErrorCode::kExpired, "the console session has expired");
  return claims;
}

std::string ConsoleCsrfToken(std::string_view session_token) {
  // The token is a secret the page never sees, so a one-way function of it is as unguessable.
  Sha256Digest digest = Sha256("serac/console-csrf/v1\n" + std::string(session_token));
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), 24));
}

SessionCredentials MintSessionCredentials(const ServerKey& key, const SessionGrant& grant, WallTime now,
                                          std::chrono::seconds ttl) {
  SessionCredentials credentials;
  credentials.access_key = RandomSessionAccessKey();
  credentials.secret_key = DeriveSessionSecret(key, credentials.access_key);
  int64_t expires = ExpirySeconds(UnixSeconds(now), ttl);
  credentials.expires_at = FromUnixSeconds(expires);
  std::string payload;
  PutUint64(payload, static_cast<uint64_t>(expires));
  payload.push_back(grant.write ? '\x01' : '\x00');
  PutString(payload, credentials.access_key);
  PutString(payload, grant.parent_access_key);
  PutIdentity(payload, grant.parent_key);
  PutString(payload, grant.bucket);
  PutString(payload, grant.prefix);
  credentials.session_token = Assemble(key, KeyPurpose::kSessionToken, kSessionTokenPrefix, payload);
  return credentials;
}

bool IsSessionAccessKey(std::string_view access_key) {
  if (access_key.size() != kSessionAccessKeyBytes || !access_key.starts_with(kSessionAccessKeyPrefix))
    return false;
  for (char c : access_key.substr(kSessionAccessKeyPrefix.size())) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::string DeriveSessionSecret(const ServerKey& key, std::string_view access_key) {
  Sha256Digest digest = HmacSha256(key.MacKey(KeyPurpose::kSessionSecret), access_key);
  constexpr size_t kSecretSourceBytes = kSessionSecretKeyBytes / 4 * 3;  // 30 bytes → 40 characters
  return Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), kSecretSourceBytes));
}

Result<SessionGrant> VerifySessionToken(const ServerKey& key, std::string_view access_key,
                                        std::string_view session_token, WallTime now) {
  std::optional<std::string> payload = Disassemble(key, KeyPurpose::kSessionToken, kSessionTokenPrefix,
                                                   session_token, limits::kSessionTokenBytesMax);
  if (!payload.has_value()) return Forged("session token");
  PayloadReader reader(*payload);
  uint64_t expires = 0;
  uint8_t write = 0;
  std::string token_access_key;
  SessionGrant grant;
  if (!reader.ReadUint64(&expires) || !reader.ReadByte(&write) || write > 1 ||
      !reader.ReadString(&token_access_key) || !reader.ReadString(&grant.parent_access_key) ||
      !reader.ReadIdentity(&grant.parent_key) || !reader.ReadString(&grant.bucket) ||
      !reader.ReadString(&grant.prefix) || !reader.AtEnd()) {
    return Forged("session token");
  }
  // Access keys are public; the comparison need not be constant-time.
  if (token_access_key != access_key || !IsSessionAccessKey(access_key)) {
    return Error(ErrorCode::kAccessDenied, "the session token does not belong to this access key");
  }
  grant.write = write == 1;
  if (now >= FromUnixSeconds(static_cast<int64_t>(expires))) {
    return Error(ErrorCode::kExpired, "the session credentials have expired");
  }
  return grant;
}

}  // namespace serac::auth
