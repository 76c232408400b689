#include "auth/identity.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "common/limits.h"
#include "meta/meta_store_test_util.h"
#include "meta/open_meta_store.h"

namespace serac::auth {
namespace {

using meta::testing::TempDir;

ServerKey TestKey(char fill) { return ServerKey::FromBytes(std::string(ServerKey::kKeyBytes, fill)).value(); }

Credentials Root() { return {"rootkey", "rootsecret123", ""}; }

class IdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = meta::OpenMetaStore("sqlite:" + (dir_.path() / "meta.db").string(), {.fsync = false}).value();
    identity_ = std::make_unique<IdentityService>(Root(), TestKey('k'), &store_->iam(), IdentityOptions{});
    ASSERT_TRUE(identity_->Initialize().ok());
  }

  Principal SignedAs(const std::string& access_key, const std::string& token = "") {
    VerifiedRequest verified;
    verified.access_key = access_key;
    verified.session_token = token;
    auto principal = identity_->PrincipalForSignedRequest(verified, Now());
    EXPECT_TRUE(principal.ok()) << principal.status().ToString();
    return principal.ok() ? *principal : Principal{};
  }

  NewAccessKey UserWithPolicy(const std::string& user, const std::string& policy) {
    EXPECT_TRUE(identity_->CreateUser(user, {policy}).ok());
    return identity_->CreateAccessKey(user, "test").value();
  }

  TempDir dir_;
  std::unique_ptr<meta::MetaStore> store_;
  std::unique_ptr<IdentityService> identity_;
};

TEST(RequestConditionsTest, SourceIpDropsPortAndBrackets) {
  EXPECT_EQ(SourceIpFromPeer("127.0.0.1:54321"), "127.0.0.1");
  EXPECT_EQ(SourceIpFromPeer("[::1]:9000"), "::1");
  EXPECT_EQ(SourceIpFromPeer("[2001:db8::7]:1"), "2001:db8::7");
  EXPECT_EQ(SourceIpFromPeer("[::ffff:10.1.2.3]:80"), "10.1.2.3");
  EXPECT_EQ(SourceIpFromPeer("2001:db8::7"), "2001:db8::7");
  EXPECT_EQ(SourceIpFromPeer("10.0.0.1"), "10.0.0.1");
  EXPECT_EQ(SourceIpFromPeer(""), "");
}

TEST_F(IdentityTest, RootMayDoAnything) {
  EXPECT_EQ(identity_->Lookup("rootkey")->secret_key, "rootsecret123");
  Principal root = SignedAs("rootkey");
  EXPECT_EQ(root.kind, PrincipalKind::kRoot);
  EXPECT_TRUE(identity_->Authorize(root, "s3:PutObject", S3ObjectArn("b", "k")).ok());
  EXPECT_TRUE(identity_->Authorize(root, "admin:CreateUser", AdminServiceArn()).ok());
  EXPECT_EQ(identity_->Lookup("nobody").status().code(), ErrorCode::kUnknownAccessKey);
}

TEST_F(IdentityTest, UserKeysFollowPoliciesAndStateAtOnce) {
  NewAccessKey key = UserWithPolicy("alice", "readonly");
  EXPECT_EQ(key.access_key.size(), 20u);
  EXPECT_EQ(identity_->Lookup(key.access_key)->secret_key, key.secret_key);
  Principal alice = SignedAs(key.access_key);
  EXPECT_EQ(alice.user, "alice");
  EXPECT_TRUE(identity_->Authorize(alice, "s3:GetObject", S3ObjectArn("b", "k")).ok());
  EXPECT_EQ(identity_->Authorize(alice, "s3:PutObject", S3ObjectArn("b", "k")).code(),
            ErrorCode::kAccessDenied);

  // Policy changes and key state take effect on the next lookup.
  ASSERT_TRUE(identity_->AttachPolicy("alice", "readwrite").ok());
  EXPECT_TRUE(identity_->Authorize(SignedAs(key.access_key), "s3:PutObject", S3ObjectArn("b", "k")).ok());
  ASSERT_TRUE(identity_->SetAccessKeyEnabled(key.access_key, false).ok());
  EXPECT_EQ(identity_->Lookup(key.access_key).status().code(), ErrorCode::kUnknownAccessKey);
  ASSERT_TRUE(identity_->SetAccessKeyEnabled(key.access_key, true).ok());
  ASSERT_TRUE(identity_->SetUserEnabled("alice", false).ok());
  EXPECT_EQ(identity_->Lookup(key.access_key).status().code(), ErrorCode::kUnknownAccessKey);
}

TEST_F(IdentityTest, CustomPoliciesWithUsernameVariable) {
  ASSERT_TRUE(identity_
                  ->PutPolicy("home", R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",
                    "Action":["s3:*"],"Resource":["arn:aws:s3:::data/home/${aws:username}/*"]}]})")
                  .ok());
  NewAccessKey key = UserWithPolicy("bob", "home");
  Principal bob = SignedAs(key.access_key);
  EXPECT_TRUE(identity_->IsAllowed(bob, "s3:PutObject", S3ObjectArn("data", "home/bob/x")));
  EXPECT_FALSE(identity_->IsAllowed(bob, "s3:PutObject", S3ObjectArn("data", "home/carol/x")));
  EXPECT_EQ(
      identity_->PutPolicy("bad", R"({"Version":"2012-10-17","Statement":[{"Effect":"Maybe"}]})").code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(identity_->PutPolicy("readonly", R"({})").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(identity_->DeletePolicy("home").code(), ErrorCode::kConflict);
}

TEST_F(IdentityTest, DecideTellsAnExplicitDenyFromNoAllow) {
  ASSERT_TRUE(identity_
                  ->PutPolicy("no-listing", R"({"Version":"2012-10-17","Statement":[
                    {"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::*"},
                    {"Effect":"Deny","Action":"s3:ListAllMyBuckets","Resource":"*"}]})")
                  .ok());
  Principal denied = SignedAs(UserWithPolicy("dave", "no-listing").access_key);
  Principal writer = SignedAs(UserWithPolicy("erin", "writeonly").access_key);
  EXPECT_EQ(identity_->Decide(denied, "s3:ListAllMyBuckets", S3ServiceArn()), PolicyDecision::kExplicitDeny);
  EXPECT_EQ(identity_->Decide(denied, "s3:GetObject", S3ObjectArn("b", "k")), PolicyDecision::kAllow);
  EXPECT_EQ(identity_->Decide(writer, "s3:ListAllMyBuckets", S3ServiceArn()), PolicyDecision::kImplicitDeny);
  EXPECT_EQ(identity_->Decide(SignedAs("rootkey"), "s3:ListAllMyBuckets", S3ServiceArn()),
            PolicyDecision::kAllow);
  EXPECT_FALSE(identity_->IsAllowed(denied, "s3:ListAllMyBuckets", S3ServiceArn()));
}

TEST_F(IdentityTest, SecretsAreSealedAtRestAndNeedTheServerKey) {
  NewAccessKey key = UserWithPolicy("carol", "readwrite");
  store_.reset();
  std::ifstream file(dir_.path() / "meta.db", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::ifstream wal(dir_.path() / "meta.db-wal", std::ios::binary);
  bytes.append((std::istreambuf_iterator<char>(wal)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find(key.secret_key), std::string::npos);

  store_ = meta::OpenMetaStore("sqlite:" + (dir_.path() / "meta.db").string()).value();
  IdentityService wrong_key(Root(), TestKey('x'), &store_->iam(), IdentityOptions{});
  EXPECT_EQ(wrong_key.Initialize().code(), ErrorCode::kAccessDenied);
  IdentityService right_key(Root(), TestKey('k'), &store_->iam(), IdentityOptions{});
  ASSERT_TRUE(right_key.Initialize().ok());
  EXPECT_EQ(right_key.Lookup(key.access_key)->secret_key, key.secret_key);
}

TEST_F(IdentityTest, BearerTokensDieWithTheirKey) {
  NewAccessKey key = UserWithPolicy("dave", "readonly");
  ASSERT_TRUE(identity_->CheckClientSecret(key.access_key, key.secret_key).ok());
  EXPECT_EQ(identity_->CheckClientSecret(key.access_key, "wrong-secret").code(), ErrorCode::kAccessDenied);
  std::string token = identity_->IssueBearerToken(key.access_key, Now()).value();
  auto principal = identity_->PrincipalForBearerToken(token, Now());
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->user, "dave");
  EXPECT_EQ(identity_->PrincipalForBearerToken(token, Now() + std::chrono::hours(2)).status().code(),
            ErrorCode::kExpired);
  ASSERT_TRUE(identity_->DeleteAccessKey(key.access_key).ok());
  EXPECT_EQ(identity_->PrincipalForBearerToken(token, Now()).status().code(), ErrorCode::kAccessDenied);
  EXPECT_FALSE(identity_->IssueBearerToken(key.access_key, Now()).ok());
}

// An access key id deleted and made again is another key: neither for another user nor for the
// same one do the old key's tokens and vended credentials hold.
TEST_F(IdentityTest, AKeyMadeAgainUnderTheSameIdInheritsNoTokens) {
  ASSERT_TRUE(identity_->CreateUser("frank", {"readwrite"}).ok());
  ASSERT_TRUE(identity_->CreateUser("mallory", {"readwrite"}).ok());
  const std::string id = "AKREUSEDKEYID000001";
  const std::string secret = "a-secret-of-twenty-or-more";
  ASSERT_TRUE(identity_->CreateAccessKey("frank", "first", id, secret).ok());
  std::string token = identity_->IssueBearerToken(id, Now()).value();
  auto vended = identity_->VendCredentials(SignedAs(id), "wh", "ns/t/", false, Now());
  ASSERT_TRUE(vended.ok()) << vended.status().ToString();
  ASSERT_TRUE(identity_->PrincipalForBearerToken(token, Now()).ok());
  for (const char* owner : {"mallory", "frank"}) {
    ASSERT_TRUE(identity_->DeleteAccessKey(id).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a key made later is another key
    ASSERT_TRUE(identity_->CreateAccessKey(owner, "again", id, secret).ok());
    EXPECT_EQ(identity_->PrincipalForBearerToken(token, Now()).status().code(), ErrorCode::kAccessDenied)
        << owner;
    VerifiedRequest session;
    session.access_key = vended->access_key;
    session.session_token = vended->session_token;
    EXPECT_EQ(identity_->PrincipalForSignedRequest(session, Now()).status().code(), ErrorCode::kAccessDenied)
        << owner;
  }
}

TEST_F(IdentityTest, ChosenSecretsAreLongEnough) {
  ASSERT_TRUE(identity_->CreateUser("gina", {"readonly"}).ok());
  EXPECT_EQ(identity_->CreateAccessKey("gina", "", "AKGINA0000000000001", "eight-ch").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(identity_
                ->CreateAccessKey("gina", "", "AKGINA0000000000001",
                                  std::string(limits::kUserSecretKeyBytesMin - 1, 's'))
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_TRUE(identity_
                  ->CreateAccessKey("gina", "", "AKGINA0000000000001",
                                    std::string(limits::kUserSecretKeyBytesMin, 's'))
                  .ok());
}

TEST_F(IdentityTest, VendedCredentialsStayInsideTheirGrant) {
  NewAccessKey key = UserWithPolicy("erin", "readonly");
  Principal erin = SignedAs(key.access_key);
  auto vended = identity_->VendCredentials(erin, "wh", "ns/t1-abc/", /*want_write=*/true, Now());
  ASSERT_TRUE(vended.ok()) << vended.status().ToString();
  EXPECT_TRUE(IsSessionAccessKey(vended->access_key));
  EXPECT_EQ(identity_->Lookup(vended->access_key)->secret_key, vended->secret_key);

  Principal session = SignedAs(vended->access_key, vended->session_token);
  EXPECT_EQ(session.kind, PrincipalKind::kSession);
  EXPECT_TRUE(identity_->IsAllowed(session, "s3:GetObject", S3ObjectArn("wh", "ns/t1-abc/data/f.parquet")));
  EXPECT_FALSE(identity_->IsAllowed(session, "s3:GetObject", S3ObjectArn("wh", "ns/t2-def/data/f.parquet")));
  EXPECT_FALSE(identity_->IsAllowed(session, "s3:PutObject", S3ObjectArn("wh", "ns/t1-abc/x")))
      << "a read-only user gets read-only credentials";
  EXPECT_FALSE(identity_->IsAllowed(session, "s3tables:GetTable", TablesWarehouseArn("wh")));
  ConditionContext inside;
  inside.Set(condition_keys::kS3Prefix, "ns/t1-abc/metadata/");
  EXPECT_TRUE(identity_->IsAllowed(session, "s3:ListBucket", S3BucketArn("wh"), &inside));
  ConditionContext outside;
  outside.Set(condition_keys::kS3Prefix, "ns/");
  EXPECT_FALSE(identity_->IsAllowed(session, "s3:ListBucket", S3BucketArn("wh"), &outside));

  // The token is checked: missing, for another key, or expired.
  VerifiedRequest no_token;
  no_token.access_key = vended->access_key;
  EXPECT_FALSE(identity_->PrincipalForSignedRequest(no_token, Now()).ok());
  VerifiedRequest late = no_token;
  late.session_token = vended->session_token;
  EXPECT_EQ(identity_->PrincipalForSignedRequest(late, Now() + std::chrono::hours(2)).status().code(),
            ErrorCode::kExpired);
  // A long-term key with a session token is refused.
  VerifiedRequest mixed;
  mixed.access_key = key.access_key;
  mixed.session_token = vended->session_token;
  EXPECT_EQ(identity_->PrincipalForSignedRequest(mixed, Now()).status().code(), ErrorCode::kAccessDenied);
  // Sessions cannot chain, and they die with the parent key.
  EXPECT_FALSE(identity_->VendCredentials(session, "wh", "ns/", false, Now()).ok());
  ASSERT_TRUE(identity_->SetAccessKeyEnabled(key.access_key, false).ok());
  VerifiedRequest after = late;
  EXPECT_FALSE(identity_->PrincipalForSignedRequest(after, Now()).ok());
}

TEST_F(IdentityTest, WriteGrantOnlyWhenTheCallerMayWrite) {
  NewAccessKey key = UserWithPolicy("frank", "readwrite");
  auto vended = identity_->VendCredentials(SignedAs(key.access_key), "wh", "ns/t/", true, Now());
  ASSERT_TRUE(vended.ok());
  Principal session = SignedAs(vended->access_key, vended->session_token);
  EXPECT_TRUE(identity_->IsAllowed(session, "s3:PutObject", S3ObjectArn("wh", "ns/t/data/new.parquet")));
  EXPECT_FALSE(identity_->IsAllowed(session, "s3:PutObject", S3ObjectArn("wh", "ns/other/x")));

  ASSERT_TRUE(identity_->CreateUser("nobody", {}).ok());
  NewAccessKey none = identity_->CreateAccessKey("nobody", "").value();
  EXPECT_EQ(
      identity_->VendCredentials(SignedAs(none.access_key), "wh", "ns/t/", false, Now()).status().code(),
      ErrorCode::kAccessDenied);
}

TEST_F(IdentityTest, AdminValidation) {
  EXPECT_EQ(identity_->CreateUser("bad name", {}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(identity_->CreateUser("rootkey", {}).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(identity_->CreateUser("gina", {"no-such-policy"}).code(), ErrorCode::kNotFound);
  ASSERT_TRUE(identity_->CreateUser("gina", {}).ok());
  EXPECT_EQ(identity_->CreateUser("gina", {}).code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(identity_->CreateAccessKey("gina", "", std::string("SRCSXXXXXXXXXXXXXXXX")).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      identity_->CreateAccessKey("gina", "", std::string("fixedkey"), std::string("short")).status().code(),
      ErrorCode::kInvalidArgument);
  auto fixed = identity_->CreateAccessKey("gina", "ci", std::string("fixedkey"),
                                          std::string("fixedsecret-0123456789"));
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(identity_->CreateAccessKey("gina", "", std::string("fixedkey")).status().code(),
            ErrorCode::kAlreadyExists);
  EXPECT_EQ(identity_->CreateAccessKey("nobody-here", "").status().code(), ErrorCode::kNotFound);
  auto keys = identity_->ListAccessKeys("gina");
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].description, "ci");
  ASSERT_TRUE(identity_->DeleteUser("gina").ok());
  EXPECT_EQ(identity_->Lookup("fixedkey").status().code(), ErrorCode::kUnknownAccessKey);
  auto policies = identity_->ListPolicies();
  ASSERT_TRUE(policies.ok());
  EXPECT_GE(policies->size(), 4u);
  EXPECT_TRUE((*policies)[0].builtin);
}

}  // namespace
}  // namespace serac::auth
