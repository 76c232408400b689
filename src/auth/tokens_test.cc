#include "auth/tokens.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "common/encoding.h"

namespace serac::auth {
namespace {

using std::chrono::seconds;

ServerKey KeyOf(char fill) {
  return std::move(ServerKey::FromBytes(std::string(ServerKey::kKeyBytes, fill))).value();
}

const WallTime kNow = FromUnixMillis(1'760'000'000'000);  // whole seconds

bool IsUrlSafe(std::string_view text) {
  for (char c : text) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

const KeyIdentity kUserKey{"alice", 1'700'000'000'123};

SessionGrant Grant() {
  return SessionGrant{"AKIDPARENT", kUserKey, "warehouse-bucket", "ns/0192-table-uuid/", true};
}

// A token for AKIDUSER (alice's key) issued at `now`, valid for `ttl`.
std::string Issue(const ServerKey& key, std::string_view access_key, WallTime now, seconds ttl) {
  return IssueBearerToken(key, access_key, kUserKey, now, now + ttl);
}

// ---- bearer tokens ----

TEST(BearerTokenTest, RoundTrip) {
  ServerKey key = KeyOf('k');
  std::string token = Issue(key, "AKIDUSER", kNow, seconds(3600));
  EXPECT_TRUE(token.starts_with(kBearerTokenPrefix));
  EXPECT_TRUE(IsUrlSafe(token)) << token;
  EXPECT_LE(token.size(), limits::kBearerTokenBytesMax);
  Result<BearerClaims> claims = VerifyBearerToken(key, token, kNow);
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->access_key, "AKIDUSER");
  EXPECT_EQ(claims->key, kUserKey);
  EXPECT_EQ(claims->issued_at, kNow);
  EXPECT_EQ(claims->expires_at, kNow + seconds(3600));
}

TEST(BearerTokenTest, TokensAreDistinctEvenWithinOneSecond) {
  ServerKey key = KeyOf('k');
  EXPECT_NE(Issue(key, "AKIDUSER", kNow, seconds(60)), Issue(key, "AKIDUSER", kNow, seconds(60)));
}

TEST(BearerTokenTest, ExpiryBoundary) {
  ServerKey key = KeyOf('k');
  std::string token = Issue(key, "AKIDUSER", kNow + std::chrono::milliseconds(999), seconds(60));
  EXPECT_TRUE(VerifyBearerToken(key, token, kNow + seconds(60) - std::chrono::milliseconds(1)).ok());
  Result<BearerClaims> at_expiry = VerifyBearerToken(key, token, kNow + seconds(60));
  ASSERT_FALSE(at_expiry.ok());
  EXPECT_EQ(at_expiry.status().code(), ErrorCode::kExpired);
  EXPECT_EQ(VerifyBearerToken(key, token, kNow + seconds(86400)).status().code(), ErrorCode::kExpired);
  EXPECT_EQ(VerifyBearerToken(key, Issue(key, "AKIDUSER", kNow, seconds(0)), kNow).status().code(),
            ErrorCode::kExpired);
  EXPECT_EQ(VerifyBearerToken(key, Issue(key, "AKIDUSER", kNow, seconds(-5)), kNow).status().code(),
            ErrorCode::kExpired);
}

TEST(BearerTokenTest, AnyTamperedByteIsDenied) {
  ServerKey key = KeyOf('k');
  const std::string token = Issue(key, "AKIDUSER", kNow, seconds(3600));
  for (size_t i = 0; i < token.size(); ++i) {
    for (char replacement : {'A', 'b', '_', '-', '.', '9'}) {
      if (token[i] == replacement) continue;
      std::string tampered = token;
      tampered[i] = replacement;
      Result<BearerClaims> claims = VerifyBearerToken(key, tampered, kNow);
      ASSERT_FALSE(claims.ok()) << "byte " << i << " -> " << replacement;
      EXPECT_EQ(claims.status().code(), ErrorCode::kAccessDenied);
    }
  }
  for (size_t size = 0; size < token.size(); ++size) {
    EXPECT_FALSE(VerifyBearerToken(key, token.substr(0, size), kNow).ok());
  }
  EXPECT_FALSE(VerifyBearerToken(key, token + "A", kNow).ok());
  EXPECT_FALSE(VerifyBearerToken(key, " " + token, kNow).ok());
}

TEST(BearerTokenTest, WrongKeyAndGarbageAreDenied) {
  std::string token = Issue(KeyOf('k'), "AKIDUSER", kNow, seconds(3600));
  EXPECT_EQ(VerifyBearerToken(KeyOf('x'), token, kNow).status().code(), ErrorCode::kAccessDenied);
  ServerKey key = KeyOf('k');
  for (std::string_view garbage :
       {"", "serac2.", "serac2..", "serac2.a.b", "Bearer x", "eyJhbGciOi.e30.sig", "serac1.AAAA.BBBB"}) {
    EXPECT_EQ(VerifyBearerToken(key, garbage, kNow).status().code(), ErrorCode::kAccessDenied) << garbage;
  }
  EXPECT_FALSE(VerifyBearerToken(key, std::string(limits::kBearerTokenBytesMax + 1, 'a'), kNow).ok());
}

// A token is sealed: whoever holds one learns nothing from it (not whose key it is, nor, for a
// session token, the parent key, bucket or prefix it covers).
TEST(BearerTokenTest, TokensRevealNothing) {
  ServerKey key = KeyOf('k');
  std::string token = Issue(key, "AKIDUSERVISIBLE", kNow, seconds(3600));
  SessionCredentials session = MintSessionCredentials(key, Grant(), kNow, seconds(3600));
  for (const std::string& text : {token, session.session_token}) {
    std::string decoded = text.substr(text.find('.') + 1);
    for (char& c : decoded) c = c == '-' ? '+' : c == '_' ? '/' : c;
    decoded.append((4 - decoded.size() % 4) % 4, '=');
    std::optional<std::string> bytes = Base64Decode(decoded);
    ASSERT_TRUE(bytes) << text;
    for (std::string_view secret :
         {"AKIDUSERVISIBLE", "alice", "AKIDPARENT", "warehouse-bucket", "0192-table"}) {
      EXPECT_EQ(bytes->find(secret), std::string::npos) << secret;
      EXPECT_EQ(text.find(secret), std::string::npos) << secret;
    }
  }
}

TEST(BearerTokenTest, BearerAndSessionTokensAreNotInterchangeable) {
  ServerKey key = KeyOf('k');
  SessionCredentials session = MintSessionCredentials(key, Grant(), kNow, seconds(3600));
  EXPECT_FALSE(VerifyBearerToken(key, session.session_token, kNow).ok());
  std::string bearer = Issue(key, session.access_key, kNow, seconds(3600));
  EXPECT_FALSE(VerifySessionToken(key, session.access_key, bearer, kNow).ok());
}

TEST(BearerTokenTest, OverlongAccessKeyNeverVerifies) {
  ServerKey key = KeyOf('k');
  std::string token = Issue(key, std::string(limits::kTokenAccessKeyBytesMax + 1, 'A'), kNow, seconds(60));
  EXPECT_FALSE(VerifyBearerToken(key, token, kNow).ok());
  token = Issue(key, std::string(limits::kTokenAccessKeyBytesMax, 'A'), kNow, seconds(60));
  EXPECT_TRUE(VerifyBearerToken(key, token, kNow).ok());
}

// ---- session credentials ----

TEST(SessionCredentialsTest, MintAndVerifyRoundTrip) {
  ServerKey key = KeyOf('k');
  SessionCredentials credentials = MintSessionCredentials(key, Grant(), kNow, seconds(900));
  EXPECT_TRUE(IsSessionAccessKey(credentials.access_key)) << credentials.access_key;
  EXPECT_EQ(credentials.access_key.size(), kSessionAccessKeyBytes);
  EXPECT_EQ(credentials.secret_key, DeriveSessionSecret(key, credentials.access_key));
  EXPECT_EQ(credentials.secret_key.size(), kSessionSecretKeyBytes);
  EXPECT_EQ(credentials.expires_at, kNow + seconds(900));
  EXPECT_TRUE(credentials.session_token.starts_with(kSessionTokenPrefix));
  EXPECT_TRUE(IsUrlSafe(credentials.session_token));
  EXPECT_EQ(credentials.session_token.find(credentials.secret_key), std::string::npos);

  Result<SessionGrant> grant =
      VerifySessionToken(key, credentials.access_key, credentials.session_token, kNow);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  EXPECT_EQ(*grant, Grant());

  SessionGrant read_only = Grant();
  read_only.write = false;
  SessionCredentials read = MintSessionCredentials(key, read_only, kNow, seconds(900));
  EXPECT_EQ(*VerifySessionToken(key, read.access_key, read.session_token, kNow), read_only);
}

TEST(SessionCredentialsTest, AccessKeysAreFreshEachTime) {
  ServerKey key = KeyOf('k');
  std::set<std::string> keys;
  for (int i = 0; i < 100; ++i)
    keys.insert(MintSessionCredentials(key, Grant(), kNow, seconds(60)).access_key);
  EXPECT_EQ(keys.size(), 100u);
}

TEST(SessionCredentialsTest, IsSessionAccessKeyChecksTheShape) {
  EXPECT_TRUE(IsSessionAccessKey("SRCS0123456789ABCDEF"));
  EXPECT_FALSE(IsSessionAccessKey("SRCS0123456789ABCDE"));    // short
  EXPECT_FALSE(IsSessionAccessKey("SRCS0123456789ABCDEFG"));  // long
  EXPECT_FALSE(IsSessionAccessKey("SRCS0123456789abcdef"));   // lower case
  EXPECT_FALSE(IsSessionAccessKey("AKIA0123456789ABCDEF"));   // other prefix
  EXPECT_FALSE(IsSessionAccessKey("SRCS0123456789ABCDE/"));
  EXPECT_FALSE(IsSessionAccessKey(""));
}

TEST(SessionCredentialsTest, DerivedSecretIsStableAndKeyDependent) {
  ServerKey key = KeyOf('k');
  std::string secret = DeriveSessionSecret(key, "SRCS0123456789ABCDEF");
  EXPECT_EQ(secret, DeriveSessionSecret(KeyOf('k'), "SRCS0123456789ABCDEF"));
  EXPECT_NE(secret, DeriveSessionSecret(KeyOf('x'), "SRCS0123456789ABCDEF"));
  EXPECT_NE(secret, DeriveSessionSecret(key, "SRCS0123456789ABCDEG"));
  EXPECT_EQ(secret.size(), kSessionSecretKeyBytes);
  EXPECT_TRUE(IsUrlSafe(secret));
}

TEST(SessionCredentialsTest, ExpiryBoundary) {
  ServerKey key = KeyOf('k');
  SessionCredentials credentials = MintSessionCredentials(key, Grant(), kNow, seconds(60));
  EXPECT_TRUE(VerifySessionToken(key, credentials.access_key, credentials.session_token,
                                 kNow + seconds(60) - std::chrono::milliseconds(1))
                  .ok());
  Result<SessionGrant> expired =
      VerifySessionToken(key, credentials.access_key, credentials.session_token, kNow + seconds(60));
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.status().code(), ErrorCode::kExpired);
}

TEST(SessionCredentialsTest, TokenOfAnotherAccessKeyIsDenied) {
  ServerKey key = KeyOf('k');
  SessionCredentials first = MintSessionCredentials(key, Grant(), kNow, seconds(60));
  SessionCredentials second = MintSessionCredentials(key, Grant(), kNow, seconds(60));
  Result<SessionGrant> swapped = VerifySessionToken(key, first.access_key, second.session_token, kNow);
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.status().code(), ErrorCode::kAccessDenied);
  EXPECT_FALSE(VerifySessionToken(key, "AKIDPARENT", first.session_token, kNow).ok());
  // Expired and for another key: still denied, never reported as merely expired.
  EXPECT_EQ(
      VerifySessionToken(key, first.access_key, second.session_token, kNow + seconds(120)).status().code(),
      ErrorCode::kAccessDenied);
}

TEST(SessionCredentialsTest, AnyTamperedByteOrWrongKeyIsDenied) {
  ServerKey key = KeyOf('k');
  SessionCredentials credentials = MintSessionCredentials(key, Grant(), kNow, seconds(60));
  const std::string& token = credentials.session_token;
  for (size_t i = 0; i < token.size(); ++i) {
    for (char replacement : {'A', 'z', '_', '.'}) {
      if (token[i] == replacement) continue;
      std::string tampered = token;
      tampered[i] = replacement;
      Result<SessionGrant> grant = VerifySessionToken(key, credentials.access_key, tampered, kNow);
      ASSERT_FALSE(grant.ok()) << "byte " << i;
      EXPECT_EQ(grant.status().code(), ErrorCode::kAccessDenied);
    }
  }
  EXPECT_EQ(VerifySessionToken(KeyOf('x'), credentials.access_key, token, kNow).status().code(),
            ErrorCode::kAccessDenied);
  EXPECT_FALSE(VerifySessionToken(key, credentials.access_key, "", kNow).ok());
  EXPECT_FALSE(VerifySessionToken(key, credentials.access_key, token.substr(0, token.size() - 1), kNow).ok());
}

TEST(SessionCredentialsTest, LargestGrantFitsTheTokenLimit) {
  ServerKey key = KeyOf('k');
  SessionGrant grant{std::string(limits::kTokenAccessKeyBytesMax, 'P'), KeyIdentity{std::string(128, 'u'), 1},
                     std::string(limits::kBucketNameBytesMax, 'b'),
                     std::string(limits::kObjectKeyBytesMax, 'p'), true};
  SessionCredentials credentials = MintSessionCredentials(key, grant, kNow, seconds(60));
  EXPECT_LE(credentials.session_token.size(), limits::kSessionTokenBytesMax);
  Result<SessionGrant> verified =
      VerifySessionToken(key, credentials.access_key, credentials.session_token, kNow);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(*verified, grant);
  EXPECT_FALSE(VerifySessionToken(key, credentials.access_key,
                                  std::string(limits::kSessionTokenBytesMax + 1, 'a'), kNow)
                   .ok());
}

// ---- Web console sessions ----

TEST(ConsoleSessionTest, RoundTripNamesTheKeyAndAFreshSessionId) {
  ServerKey key = KeyOf('k');
  ConsoleSession first = IssueConsoleSession(key, "AKIDUSER", kUserKey, kNow, kNow + seconds(3600));
  ConsoleSession second = IssueConsoleSession(key, "AKIDUSER", kUserKey, kNow, kNow + seconds(3600));
  EXPECT_TRUE(first.token.starts_with(kConsoleSessionTokenPrefix));
  EXPECT_TRUE(IsUrlSafe(first.token));
  EXPECT_LE(first.token.size(), limits::kConsoleSessionTokenBytesMax);
  Result<ConsoleSessionClaims> claims = VerifyConsoleSession(key, first.token, kNow + seconds(10));
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->access_key, "AKIDUSER");
  EXPECT_EQ(claims->key, kUserKey);
  EXPECT_EQ(claims->session_id, first.claims.session_id);
  EXPECT_EQ(claims->session_id.size(), 32u);
  EXPECT_EQ(claims->expires_at, kNow + seconds(3600));
  EXPECT_NE(first.claims.session_id, second.claims.session_id);
  EXPECT_NE(first.token, second.token);
}

TEST(ConsoleSessionTest, ExpiresAtItsEnd) {
  ServerKey key = KeyOf('k');
  ConsoleSession session = IssueConsoleSession(key, "AKIDUSER", kUserKey, kNow, kNow + seconds(60));
  EXPECT_TRUE(VerifyConsoleSession(key, session.token, kNow + seconds(59)).ok());
  EXPECT_EQ(VerifyConsoleSession(key, session.token, kNow + seconds(60)).status().code(),
            ErrorCode::kExpired);
}

TEST(ConsoleSessionTest, TamperedForgedOrForeignTokensAreDenied) {
  ServerKey key = KeyOf('k');
  const std::string token = IssueConsoleSession(key, "AKIDUSER", kUserKey, kNow, kNow + seconds(3600)).token;
  for (size_t i = 0; i < token.size(); ++i) {
    // Flip the highest of the character's six bits: a bit every position carries.
    constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string tampered = token;
    const size_t index = kAlphabet.find(tampered[i]);
    tampered[i] = index == std::string_view::npos ? 'A' : kAlphabet[index ^ 32];
    EXPECT_EQ(VerifyConsoleSession(key, tampered, kNow).status().code(), ErrorCode::kAccessDenied) << i;
  }
  EXPECT_EQ(VerifyConsoleSession(KeyOf('x'), token, kNow).status().code(), ErrorCode::kAccessDenied);
  EXPECT_FALSE(
      VerifyConsoleSession(key, std::string(limits::kConsoleSessionTokenBytesMax + 1, 'a'), kNow).ok());
  // Neither a bearer token nor a vended session token is a console session, nor the reverse.
  const std::string bearer = Issue(key, "AKIDUSER", kNow, seconds(3600));
  EXPECT_FALSE(VerifyConsoleSession(key, bearer, kNow).ok());
  EXPECT_FALSE(
      VerifyConsoleSession(key, MintSessionCredentials(key, Grant(), kNow, seconds(60)).session_token, kNow)
          .ok());
  EXPECT_FALSE(VerifyBearerToken(key, token, kNow).ok());
}

TEST(ConsoleSessionTest, CsrfValueNamesOneSessionAndRevealsNothing) {
  ServerKey key = KeyOf('k');
  const std::string one = IssueConsoleSession(key, "AKIDUSER", kUserKey, kNow, kNow + seconds(3600)).token;
  const std::string two = IssueConsoleSession(key, "AKIDUSER", kUserKey, kNow, kNow + seconds(3600)).token;
  EXPECT_EQ(ConsoleCsrfToken(one), ConsoleCsrfToken(one));
  EXPECT_NE(ConsoleCsrfToken(one), ConsoleCsrfToken(two));
  EXPECT_EQ(ConsoleCsrfToken(one).size(), 32u);
  EXPECT_TRUE(IsUrlSafe(ConsoleCsrfToken(one)));
  EXPECT_EQ(one.find(ConsoleCsrfToken(one)), std::string::npos);
}

}  // namespace
}  // namespace serac::auth
