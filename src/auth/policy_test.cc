#include "auth/policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/limits.h"

namespace serac::auth {
namespace {

using D = PolicyDecision;

Policy MustParse(std::string_view json) {
  Result<Policy> policy = Policy::Parse(json);
  if (!policy.ok()) ADD_FAILURE() << policy.status().ToString() << "\nin: " << json;
  return std::move(policy).value();
}

// A 2012-10-17 document around a statement array's contents.
std::string Doc(std::string_view statements) {
  return R"({"Version":"2012-10-17","Statement":[)" + std::string(statements) + "]}";
}

D Decide(const Policy& policy, std::string_view action, std::string_view resource,
         const ConditionContext* context = nullptr) {
  return policy.Evaluate(AccessRequest{action, resource, context});
}

// An Allow statement for s3:GetObject on everything, with the given Condition block.
Policy WithCondition(std::string_view condition) {
  return MustParse(Doc(R"({"Effect":"Allow","Action":"s3:GetObject","Resource":"*","Condition":)" +
                       std::string(condition) + "}"));
}

// Whether WithCondition(condition) allows a request with `context`.
bool Holds(std::string_view condition, const ConditionContext& context) {
  return Decide(WithCondition(condition), "s3:GetObject", "arn:aws:s3:::b/k", &context) == D::kAllow;
}

ConditionContext Context(std::initializer_list<std::pair<std::string_view, std::string>> values) {
  ConditionContext context;
  for (const auto& [key, value] : values) context.Add(key, value);
  return context;
}

// --- Parsing -------------------------------------------------------------------------------------

struct BadPolicy {
  std::string json;
  std::string message_part;  // the error message must contain this
};

std::string Stmt(std::string_view fields) { return Doc("{" + std::string(fields) + "}"); }
const std::string kOk = R"("Effect":"Allow","Action":"s3:GetObject","Resource":"*")";

TEST(PolicyParse, RefusesMalformedDocumentsNamingTheField) {
  const std::vector<BadPolicy> cases = {
      {"{", "not valid JSON"},
      {"[]", "document: must be a JSON object"},
      {R"({"Statement":[{)" + kOk + "}]}", "policy Version: missing"},
      {R"({"Version":"2012-10-18","Statement":[{)" + kOk + "}]}", "policy Version: must be"},
      {R"({"Version":2012,"Statement":[{)" + kOk + "}]}", "policy Version: must be"},
      {R"({"Version":"2012-10-17","Id":5,"Statement":[{)" + kOk + "}]}", "policy Id: must be a string"},
      {R"({"Version":"2012-10-17","Extra":1,"Statement":[{)" + kOk + "}]}", "policy Extra: unknown field"},
      {R"({"Version":"2012-10-17","Version":"2012-10-17","Statement":[{)" + kOk + "}]}",
       "\"Version\" appears twice"},
      {R"({"Version":"2012-10-17"})", "policy Statement: missing"},
      {R"({"Version":"2012-10-17","Statement":"x"})", "policy Statement: must be an object or an array"},
      {R"({"Version":"2012-10-17","Statement":[]})", "policy Statement: must hold at least one"},
      {R"({"Version":"2012-10-17","Statement":[1]})", "policy Statement[0]: must be an object"},
      {Stmt(kOk + R"(,"Principal":"*")"), "policy Statement[0].Principal: not allowed"},
      {Stmt(kOk + R"(,"NotPrincipal":{"AWS":"x"})"), "policy Statement[0].NotPrincipal: not allowed"},
      {Stmt(kOk + R"(,"Effects":"Allow")"), "policy Statement[0].Effects: unknown field"},
      {Stmt(kOk + R"(,"Effect":"Deny")"), "\"Effect\" appears twice"},
      {Stmt(R"("Action":"s3:*","Resource":"*")"), "policy Statement[0]: needs an Effect"},
      {Stmt(R"("Effect":"allow","Action":"s3:*","Resource":"*")"), "policy Statement[0].Effect: must be"},
      {Stmt(R"("Effect":"Allow","Resource":"*")"), "policy Statement[0]: needs one of Action or NotAction"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","NotAction":"s3:Get*","Resource":"*")"),
       "policy Statement[0]: has both Action and NotAction"},
      {Stmt(R"("Effect":"Allow","Action":[],"Resource":"*")"),
       "policy Statement[0].Action: must not be an empty"},
      {Stmt(R"("Effect":"Allow","Action":5,"Resource":"*")"), "policy Statement[0].Action: must be a string"},
      {Stmt(R"("Effect":"Allow","Action":["s3:GetObject",3],"Resource":"*")"),
       "policy Statement[0].Action[1]: must be a string"},
      {Stmt(R"("Effect":"Allow","Action":"GetObject","Resource":"*")"),
       "policy Statement[0].Action: \"GetObject\""},
      {Stmt(R"("Effect":"Allow","Action":"s3:Get Object","Resource":"*")"), "policy Statement[0].Action:"},
      {Stmt(R"("Effect":"Allow","Action":"s3:","Resource":"*")"), "policy Statement[0].Action:"},
      {Stmt(R"("Effect":"Allow","NotAction":"s3","Resource":"*")"), "policy Statement[0].NotAction:"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*")"),
       "policy Statement[0]: needs one of Resource or NotResource"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"*","NotResource":"*")"),
       "policy Statement[0]: has both Resource and NotResource"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"bucket/*")"),
       "policy Statement[0].Resource: \"bucket/*\" is not"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3")"), "policy Statement[0].Resource:"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:us-east-1:123456789012:b")"),
       "no regions or accounts"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","NotResource":["*",""])"),
       "policy Statement[0].NotResource:"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::${aws:username")"),
       "policy Statement[0].Resource: unterminated policy variable"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::${username}")"),
       "policy Statement[0].Resource: policy variable ${username} must name a condition key"},
      {Stmt(R"("Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::${aws:username, anon}")"),
       "single quotes"},
      {Stmt(kOk + R"(,"Sid":5)"), "policy Statement[0].Sid: must be a string"},
      {Doc("{" + kOk + R"(,"Sid":"A"},{)" + kOk + R"(,"Sid":"A"})"),
       "policy Statement[1].Sid: \"A\" is used"},
      {Stmt(kOk + R"(,"Condition":"x")"), "policy Statement[0].Condition: must be an object"},
      {Stmt(kOk + R"(,"Condition":{"StringEqualz":{"s3:prefix":"a"}})"),
       "policy Statement[0].Condition.StringEqualz: unknown condition operator"},
      {Stmt(kOk + R"(,"Condition":{"ForSomeValues:StringEquals":{"s3:prefix":"a"}})"),
       "unknown condition operator"},
      {Stmt(kOk + R"(,"Condition":{"StringEquals":{}})"),
       "policy Statement[0].Condition.StringEquals: must be a non-empty"},
      {Stmt(kOk + R"(,"Condition":{"StringEquals":"a"})"),
       "policy Statement[0].Condition.StringEquals: must be a non-empty"},
      {Stmt(kOk + R"(,"Condition":{"StringEquals":{"s3:prefix":[]}})"),
       "policy Statement[0].Condition.StringEquals.s3:prefix: must not be an empty array"},
      {Stmt(kOk + R"(,"Condition":{"StringEquals":{"s3:prefix":{"a":"b"}}})"),
       "policy Statement[0].Condition.StringEquals.s3:prefix: must be a string"},
      {Stmt(kOk + R"(,"Condition":{"StringEquals":{"s3:prefix":["a",null]}})"),
       "policy Statement[0].Condition.StringEquals.s3:prefix[1]: must be a string"},
      {Stmt(kOk + R"(,"Condition":{"StringEquals":{"prefix":"a"}})"), "must have the form prefix:name"},
      {Stmt(kOk + R"(,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}})"),
       "policy Statement[0].Condition.IpAddress.aws:SourceIp: \"10.0.0.0/33\" is not an IPv4 or IPv6"},
      {Stmt(kOk + R"(,"Condition":{"NotIpAddress":{"aws:SourceIp":["10.0.0.0/8","300.1.1.1"]}})"),
       "policy Statement[0].Condition.NotIpAddress.aws:SourceIp[1]"},
      {Stmt(kOk + R"(,"Condition":{"IpAddress":{"aws:SourceIp":"::1/129"}})"), "is not an IPv4 or IPv6"},
      {Stmt(kOk + R"(,"Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/"}})"), "is not an IPv4 or IPv6"},
      {Stmt(kOk + R"(,"Condition":{"Bool":{"aws:SecureTransport":"yes"}})"),
       "\"yes\" is not \"true\" or \"false\""},
      {Stmt(kOk + R"(,"Condition":{"Null":{"aws:username":"maybe"}})"), "is not \"true\" or \"false\""},
      {Stmt(kOk + R"(,"Condition":{"NullIfExists":{"aws:username":"true"}})"), "the Null operator takes no"},
      {Stmt(kOk + R"(,"Condition":{"ForAnyValue:Null":{"aws:username":"true"}})"),
       "the Null operator takes no"},
      {Stmt(kOk + R"(,"Condition":{"NumericLessThan":{"s3:max-keys":"ten"}})"), "\"ten\" is not a number"},
  };
  for (const BadPolicy& bad : cases) {
    Result<Policy> policy = Policy::Parse(bad.json);
    ASSERT_FALSE(policy.ok()) << bad.json;
    EXPECT_EQ(policy.status().code(), ErrorCode::kInvalidArgument) << bad.json;
    EXPECT_NE(policy.status().message().find(bad.message_part), std::string::npos)
        << "message: " << policy.status().message() << "\nwanted: " << bad.message_part
        << "\nin: " << bad.json;
  }
}

TEST(PolicyParse, SingleStatementObjectPathsHaveNoIndex) {
  Result<Policy> policy =
      Policy::Parse(R"({"Version":"2012-10-17","Statement":{"Effect":"Maybe","Action":"*","Resource":"*"}})");
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("policy Statement.Effect:"), std::string::npos)
      << policy.status().message();
}

TEST(PolicyParse, EnforcesSizeLimits) {
  std::string big =
      Doc("{" + kOk + R"(,"Sid":")" + std::string(limits::kPolicyDocumentBytesMax, 'x') + "\"}");
  Result<Policy> too_big = Policy::Parse(big);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(too_big.status().message().find("kPolicyDocumentBytesMax"), std::string::npos);

  auto statements = [](uint32_t count) {
    std::string list;
    for (uint32_t i = 0; i < count; ++i) list += (i ? ",{" : "{") + kOk + "}";
    return Doc(list);
  };
  EXPECT_TRUE(Policy::Parse(statements(limits::kPolicyStatementsMax)).ok());
  Result<Policy> too_many = Policy::Parse(statements(limits::kPolicyStatementsMax + 1));
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), ErrorCode::kLimitExceeded);
  EXPECT_NE(too_many.status().message().find("kPolicyStatementsMax"), std::string::npos);
}

TEST(PolicyParse, AcceptsTheUsualShapesAndWritesCanonicalJson) {
  Policy policy = MustParse(R"({
    "Statement": [{
      "Condition": {"StringLike": {"s3:prefix": ["home/", "home/*"]}, "Bool": {"aws:SecureTransport": true}},
      "Resource": "arn:aws:s3:::b",
      "Action": ["s3:ListBucket"],
      "Effect": "Allow",
      "Sid": "List"
    }],
    "Id": "p1",
    "Version": "2012-10-17"
  })");
  EXPECT_EQ(policy.json(),
            R"({"Version":"2012-10-17","Id":"p1","Statement":[{"Sid":"List","Effect":"Allow",)"
            R"("Action":["s3:ListBucket"],"Resource":"arn:aws:s3:::b","Condition":{"StringLike":)"
            R"({"s3:prefix":["home/","home/*"]},"Bool":{"aws:SecureTransport":true}}}]})");
  Policy again = MustParse(policy.json());
  EXPECT_EQ(again.json(), policy.json());

  Policy single = MustParse(R"({"Version":"2008-10-17","Statement":{"Effect":"Deny","NotAction":"s3:*",)"
                            R"("NotResource":["arn:aws:s3:::*"]}})");
  EXPECT_EQ(single.json(), R"({"Version":"2008-10-17","Statement":{"Effect":"Deny","NotAction":"s3:*",)"
                           R"("NotResource":["arn:aws:s3:::*"]}})");
  // Every operator form parses.
  MustParse(Stmt(kOk + R"(,"Condition":{
      "StringEquals":{"a:b":"x"},"StringNotEquals":{"a:b":"x"},"StringEqualsIgnoreCase":{"a:b":"x"},
      "StringNotEqualsIgnoreCase":{"a:b":"x"},"StringLike":{"a:b":"x*"},"StringNotLike":{"a:b":"x?"},
      "ArnEquals":{"aws:SourceArn":"arn:aws:s3:::b"},"ArnLike":{"aws:SourceArn":"arn:*"},
      "ArnNotEquals":{"aws:SourceArn":"x"},"ArnNotLike":{"aws:SourceArn":"x"},
      "NumericEquals":{"s3:max-keys":1},"NumericNotEquals":{"s3:max-keys":"1"},"NumericLessThan":{"s3:max-keys":1.5},
      "NumericLessThanEquals":{"s3:max-keys":1},"NumericGreaterThan":{"s3:max-keys":-1},
      "NumericGreaterThanEquals":{"s3:max-keys":1e3},"Bool":{"aws:SecureTransport":"TRUE"},
      "IpAddress":{"aws:SourceIp":["10.0.0.0/8","192.0.2.7","2001:db8::/32"]},"NotIpAddress":{"aws:SourceIp":"::1"},
      "Null":{"aws:username":false},"StringEqualsIfExists":{"a:b":"x"},"ForAnyValue:StringLike":{"a:b":"x"},
      "ForAllValues:StringEqualsIgnoreCaseIfExists":{"a:b":"x"}})"));
}

TEST(PolicyParse, CopiesShareTheCompiledForm) {
  Policy policy = MustParse(Stmt(kOk));
  Policy copy = policy;
  EXPECT_EQ(&copy.json(), &policy.json());
}

// --- Actions, resources, precedence ----------------------------------------------------------------

TEST(PolicyEvaluate, AllowDenyAndImplicitDenyWithinOnePolicy) {
  Policy policy = MustParse(Doc(R"({"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/*"},
                                   {"Effect":"Deny","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::b/keep/*"})"));
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::b/x"), D::kAllow);
  EXPECT_EQ(Decide(policy, "s3:DeleteObject", "arn:aws:s3:::b/x"), D::kAllow);
  EXPECT_EQ(Decide(policy, "s3:DeleteObject", "arn:aws:s3:::b/keep/x"), D::kExplicitDeny);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::other/x"), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3tables:GetTable", "arn:aws:s3:::b/x"), D::kImplicitDeny);
}

TEST(PolicyEvaluate, ExplicitDenyInAnyPolicyWins) {
  Policy allow = MustParse(Stmt(R"("Effect":"Allow","Action":"*","Resource":"*")"));
  Policy deny = MustParse(Stmt(R"("Effect":"Deny","Action":"s3:PutObject","Resource":"arn:aws:s3:::b/*")"));
  Policy other = MustParse(Stmt(R"("Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::c/*")"));
  AccessRequest put{"s3:PutObject", "arn:aws:s3:::b/k"};
  AccessRequest get{"s3:GetObject", "arn:aws:s3:::b/k"};
  std::vector<const Policy*> both = {&allow, &deny};
  std::vector<const Policy*> reversed = {&deny, &allow};
  EXPECT_EQ(Evaluate(both, put), D::kExplicitDeny);
  EXPECT_EQ(Evaluate(reversed, put), D::kExplicitDeny);
  EXPECT_EQ(Evaluate(both, get), D::kAllow);
  EXPECT_EQ(Evaluate(reversed, get), D::kAllow);
  std::vector<const Policy*> deny_only = {&deny, nullptr};
  EXPECT_EQ(Evaluate(deny_only, get), D::kImplicitDeny);
  std::vector<const Policy*> unrelated = {&other};
  EXPECT_EQ(Evaluate(unrelated, get), D::kImplicitDeny);
  EXPECT_EQ(Evaluate({}, get), D::kImplicitDeny);
}

TEST(PolicyEvaluate, NotActionAndNotResource) {
  Policy not_action =
      MustParse(Stmt(R"("Effect":"Allow","NotAction":["s3:Delete*","admin:*"],"Resource":"*")"));
  EXPECT_EQ(Decide(not_action, "s3:GetObject", "arn:aws:s3:::b/k"), D::kAllow);
  EXPECT_EQ(Decide(not_action, "s3tables:GetTable", "arn:aws:s3tables:::bucket/w"), D::kAllow);
  EXPECT_EQ(Decide(not_action, "s3:DeleteObject", "arn:aws:s3:::b/k"), D::kImplicitDeny);
  EXPECT_EQ(Decide(not_action, "admin:CreateUser", "arn:aws:admin:::"), D::kImplicitDeny);

  Policy fence = MustParse(Doc(R"({"Effect":"Allow","Action":"s3:*","Resource":"*"},
      {"Effect":"Deny","Action":"s3:*","NotResource":["arn:aws:s3:::public","arn:aws:s3:::public/*"]})"));
  EXPECT_EQ(Decide(fence, "s3:GetObject", "arn:aws:s3:::public/x"), D::kAllow);
  EXPECT_EQ(Decide(fence, "s3:ListBucket", "arn:aws:s3:::public"), D::kAllow);
  EXPECT_EQ(Decide(fence, "s3:GetObject", "arn:aws:s3:::private/x"), D::kExplicitDeny);

  Policy deny_not_action = MustParse(Doc(R"({"Effect":"Allow","Action":"*","Resource":"*"},
      {"Effect":"Deny","NotAction":"s3:Get*","Resource":"*"})"));
  EXPECT_EQ(Decide(deny_not_action, "s3:GetObject", "arn:aws:s3:::b/k"), D::kAllow);
  EXPECT_EQ(Decide(deny_not_action, "s3:PutObject", "arn:aws:s3:::b/k"), D::kExplicitDeny);
}

TEST(PolicyEvaluate, ActionsMatchCaseInsensitivelyWithWildcards) {
  auto allows = [](std::string_view pattern, std::string_view action) {
    Policy policy =
        MustParse(Stmt(R"("Effect":"Allow","Action":")" + std::string(pattern) + R"(","Resource":"*")"));
    return Decide(policy, action, "arn:aws:s3:::b/k") == D::kAllow;
  };
  EXPECT_TRUE(allows("s3:GetObject", "s3:GetObject"));
  EXPECT_TRUE(allows("S3:getobject", "s3:GetObject"));
  EXPECT_TRUE(allows("s3:GetObject", "S3:GETOBJECT"));
  EXPECT_TRUE(allows("s3:Get*", "s3:GetObjectTagging"));
  EXPECT_TRUE(allows("s3:*Object", "s3:PutObject"));
  EXPECT_TRUE(allows("s3:Get?bject", "s3:GetObject"));
  EXPECT_TRUE(allows("*", "admin:CreateUser"));
  EXPECT_TRUE(allows("s3*:*", "s3tables:GetTable"));
  EXPECT_FALSE(allows("s3:*", "s3tables:GetTable"));
  EXPECT_FALSE(allows("s3:Get?bject", "s3:Getbject"));
  EXPECT_FALSE(allows("s3:GetObject", "s3:GetObjectTagging"));
  EXPECT_FALSE(allows("s3:Get*", "s3:PutObject"));
}

bool ResourceMatches(std::string_view pattern, std::string_view resource) {
  Policy policy =
      MustParse(Stmt(R"("Effect":"Allow","Action":"*","Resource":")" + std::string(pattern) + "\""));
  return Decide(policy, "s3:GetObject", resource) == D::kAllow;
}

TEST(PolicyEvaluate, ResourcesMatchCaseSensitivelyWithWildcards) {
  EXPECT_TRUE(ResourceMatches("*", "arn:aws:s3:::b/k"));
  EXPECT_TRUE(ResourceMatches("*", "not-an-arn"));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b/logs/*", "arn:aws:s3:::b/logs/2024/01/a.gz"));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b/logs/*", "arn:aws:s3:::b/logs/"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b/logs/*", "arn:aws:s3:::b/logs"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b/logs/*", "arn:aws:s3:::b/log/x"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b/logs/*", "arn:aws:s3:::bb/logs/x"));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b?cket", "arn:aws:s3:::bucket"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b?cket", "arn:aws:s3:::bcket"));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b/?", "arn:aws:s3:::b/\xC3\xA9"));  // "?" is one character
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b/*.csv", "arn:aws:s3:::b/x.csv.old/y.csv"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b/*.csv", "arn:aws:s3:::b/x.csv.old"));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b/*a*b*c", "arn:aws:s3:::b/xxaxxbxxaxxbc"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::Bucket/*", "arn:aws:s3:::bucket/x"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::*", "not-an-arn"));
  // Bucket and object ARNs are different resources.
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b", S3BucketArn("b")));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b", S3ObjectArn("b", "k")));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::b/*", S3ObjectArn("b", "k")));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b/*", S3BucketArn("b")));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:::*", S3ServiceArn()));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::b*", S3ServiceArn()));
  // Wildcards in the partition, service, region and account fields.
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:*:*:b/*", "arn:aws:s3:::b/k"));
  EXPECT_TRUE(ResourceMatches("arn:*:s3:::b/*", "arn:aws:s3:::b/k"));
  EXPECT_TRUE(ResourceMatches("arn:aws:*:::*", "arn:aws:s3tables:::bucket/w"));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:::*", "arn:aws:s3tables:::bucket/w"));
  // A wildcard in the region or account field stays in that field.
  EXPECT_FALSE(ResourceMatches("arn:aws:s3:*:*:b", "arn:aws:s3:::a:b:b"));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3:*:*:a:*", "arn:aws:s3:::a:b:b"));
}

TEST(PolicyEvaluate, TablesArns) {
  EXPECT_EQ(S3BucketArn("b"), "arn:aws:s3:::b");
  EXPECT_EQ(S3ObjectArn("b", "a/k"), "arn:aws:s3:::b/a/k");
  EXPECT_EQ(TablesWarehouseArn("wh"), "arn:aws:s3tables:::bucket/wh");
  EXPECT_EQ(TablesTableArn("wh", "u1"), "arn:aws:s3tables:::bucket/wh/table/u1");
  EXPECT_EQ(TablesViewArn("wh", "u2"), "arn:aws:s3tables:::bucket/wh/view/u2");

  for (const std::string& arn : {TablesWarehouseArn("wh"), TablesTableArn("wh", "u1"),
                                 TablesViewArn("wh", "u2"), std::string(TablesServiceArn())}) {
    EXPECT_TRUE(ResourceMatches("arn:aws:s3tables:::bucket/*", arn)) << arn;
    EXPECT_TRUE(ResourceMatches("arn:aws:s3tables:*:*:bucket/*", arn)) << arn;
    EXPECT_FALSE(ResourceMatches("arn:aws:s3:::*", arn)) << arn;
  }
  EXPECT_TRUE(ResourceMatches("arn:aws:s3tables:::bucket/wh/table/*", TablesTableArn("wh", "u1")));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3tables:::bucket/wh/table/*", TablesViewArn("wh", "u2")));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3tables:::bucket/wh/table/*", TablesTableArn("wh2", "u1")));
  EXPECT_FALSE(ResourceMatches("arn:aws:s3tables:::bucket/wh", TablesTableArn("wh", "u1")));
  EXPECT_TRUE(ResourceMatches("arn:aws:s3tables:::bucket/wh", TablesWarehouseArn("wh")));
}

TEST(PolicyEvaluate, TablesNamespaceCondition) {
  Policy policy = MustParse(Stmt(R"("Effect":"Allow","Action":"s3tables:GetTable",
      "Resource":"arn:aws:s3tables:::bucket/wh/table/*",
      "Condition":{"StringEquals":{"s3tables:namespace":"sales"}})"));
  std::string table = TablesTableArn("wh", "0b4c8f3e-1d2a-4c55-9a61-7f1e2d3c4b5a");
  ConditionContext sales =
      Context({{condition_keys::kTablesNamespace, "sales"}, {"s3tables:tableName", "orders"}});
  ConditionContext hr = Context({{condition_keys::kTablesNamespace, "hr"}});
  ConditionContext upper = Context({{"S3TABLES:NAMESPACE", "sales"}});  // keys are case-insensitive
  EXPECT_EQ(Decide(policy, "s3tables:GetTable", table, &sales), D::kAllow);
  EXPECT_EQ(Decide(policy, "s3tables:gettable", table, &upper), D::kAllow);
  EXPECT_EQ(Decide(policy, "s3tables:GetTable", table, &hr), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3tables:GetTable", table, nullptr), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3tables:DeleteTable", table, &sales), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3tables:GetTable", TablesTableArn("other", "u"), &sales), D::kImplicitDeny);
}

// --- Conditions ------------------------------------------------------------------------------------

TEST(PolicyCondition, StringOperators) {
  ConditionContext alice = Context({{"aws:username", "Alice"}});
  ConditionContext none;
  EXPECT_TRUE(Holds(R"({"StringEquals":{"aws:username":"Alice"}})", alice));
  EXPECT_FALSE(Holds(R"({"StringEquals":{"aws:username":"alice"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringEquals":{"aws:username":["bob","Alice"]}})", alice));  // values OR
  EXPECT_FALSE(Holds(R"({"StringEquals":{"aws:username":"Al*"}})", alice));           // no wildcards
  EXPECT_FALSE(Holds(R"({"StringEquals":{"aws:username":"Alice"}})", none));
  EXPECT_TRUE(Holds(R"({"StringEquals":{"AWS:UserName":"Alice"}})", alice));  // key case

  EXPECT_FALSE(Holds(R"({"StringNotEquals":{"aws:username":"Alice"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringNotEquals":{"aws:username":"alice"}})", alice));
  EXPECT_FALSE(Holds(R"({"StringNotEquals":{"aws:username":["bob","Alice"]}})", alice));
  EXPECT_TRUE(Holds(R"({"StringNotEquals":{"aws:username":"Alice"}})", none));  // absent: true

  EXPECT_TRUE(Holds(R"({"StringEqualsIgnoreCase":{"aws:username":"ALICE"}})", alice));
  EXPECT_FALSE(Holds(R"({"StringEqualsIgnoreCase":{"aws:username":"bob"}})", alice));
  EXPECT_FALSE(Holds(R"({"StringEqualsIgnoreCase":{"aws:username":"ALICE"}})", none));
  EXPECT_FALSE(Holds(R"({"StringNotEqualsIgnoreCase":{"aws:username":"aLiCe"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringNotEqualsIgnoreCase":{"aws:username":"bob"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringNotEqualsIgnoreCase":{"aws:username":"bob"}})", none));

  EXPECT_TRUE(Holds(R"({"StringLike":{"aws:username":"Al*"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringLike":{"aws:username":"?lice"}})", alice));
  EXPECT_FALSE(Holds(R"({"StringLike":{"aws:username":"al*"}})", alice));
  EXPECT_FALSE(Holds(R"({"StringLike":{"aws:username":"*"}})", none));
  EXPECT_FALSE(Holds(R"({"StringNotLike":{"aws:username":"A*"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringNotLike":{"aws:username":"B*"}})", alice));
  EXPECT_TRUE(Holds(R"({"StringNotLike":{"aws:username":"*"}})", none));

  EXPECT_TRUE(Holds(R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::b/*"}})",
                    Context({{"aws:SourceArn", "arn:aws:s3:::b/k"}})));
  EXPECT_TRUE(Holds(R"({"ArnNotEquals":{"aws:SourceArn":"arn:aws:s3:::b/*"}})",
                    Context({{"aws:SourceArn", "arn:aws:s3:::c/k"}})));
}

TEST(PolicyCondition, KeysAndOperatorsAreAnded) {
  std::string condition = R"({"StringEquals":{"aws:username":"alice","s3:prefix":"home/"},
                              "Bool":{"aws:SecureTransport":"true"}})";
  EXPECT_TRUE(
      Holds(condition,
            Context({{"aws:username", "alice"}, {"s3:prefix", "home/"}, {"aws:SecureTransport", "true"}})));
  EXPECT_FALSE(
      Holds(condition,
            Context({{"aws:username", "alice"}, {"s3:prefix", "home/"}, {"aws:SecureTransport", "false"}})));
  EXPECT_FALSE(Holds(condition, Context({{"aws:username", "alice"}, {"aws:SecureTransport", "true"}})));
}

TEST(PolicyCondition, BoolNumericAndNull) {
  ConditionContext tls = Context({{"aws:SecureTransport", "true"}});
  ConditionContext plain = Context({{"aws:SecureTransport", "false"}});
  EXPECT_TRUE(Holds(R"({"Bool":{"aws:SecureTransport":"true"}})", tls));
  EXPECT_TRUE(Holds(R"({"Bool":{"aws:SecureTransport":true}})", tls));
  EXPECT_FALSE(Holds(R"({"Bool":{"aws:SecureTransport":"true"}})", plain));
  EXPECT_TRUE(Holds(R"({"Bool":{"aws:SecureTransport":false}})", plain));
  EXPECT_FALSE(Holds(R"({"Bool":{"aws:SecureTransport":false}})", ConditionContext()));
  EXPECT_TRUE(Holds(R"({"BoolIfExists":{"aws:SecureTransport":false}})", ConditionContext()));

  ConditionContext keys = Context({{"s3:max-keys", "100"}});
  EXPECT_TRUE(Holds(R"({"NumericLessThanEquals":{"s3:max-keys":100}})", keys));
  EXPECT_FALSE(Holds(R"({"NumericLessThan":{"s3:max-keys":"100"}})", keys));
  EXPECT_TRUE(Holds(R"({"NumericGreaterThan":{"s3:max-keys":99.5}})", keys));
  EXPECT_TRUE(Holds(R"({"NumericGreaterThanEquals":{"s3:max-keys":100}})", keys));
  EXPECT_TRUE(Holds(R"({"NumericEquals":{"s3:max-keys":[1,100]}})", keys));
  EXPECT_FALSE(Holds(R"({"NumericNotEquals":{"s3:max-keys":100}})", keys));
  EXPECT_FALSE(Holds(R"({"NumericEquals":{"s3:max-keys":100}})", Context({{"s3:max-keys", "lots"}})));
  EXPECT_FALSE(Holds(R"({"NumericEquals":{"s3:max-keys":100}})", ConditionContext()));

  ConditionContext named = Context({{"aws:username", "alice"}});
  EXPECT_TRUE(Holds(R"({"Null":{"aws:username":"true"}})", ConditionContext()));
  EXPECT_FALSE(Holds(R"({"Null":{"aws:username":"true"}})", named));
  EXPECT_TRUE(Holds(R"({"Null":{"aws:username":false}})", named));
  EXPECT_FALSE(Holds(R"({"Null":{"aws:username":"false"}})", ConditionContext()));
}

TEST(PolicyCondition, IpAddressCidrs) {
  auto from = [](std::string ip) { return Context({{"aws:SourceIp", std::move(ip)}}); };
  std::string v4 = R"({"IpAddress":{"aws:SourceIp":["192.0.2.0/24","203.0.113.7"]}})";
  EXPECT_TRUE(Holds(v4, from("192.0.2.200")));
  EXPECT_TRUE(Holds(v4, from("203.0.113.7")));
  EXPECT_FALSE(Holds(v4, from("203.0.113.8")));
  EXPECT_FALSE(Holds(v4, from("192.0.3.1")));
  EXPECT_TRUE(Holds(v4, from("::ffff:192.0.2.9")));  // IPv4-mapped IPv6
  EXPECT_FALSE(Holds(v4, from("2001:db8::1")));
  EXPECT_FALSE(Holds(v4, from("not-an-ip")));
  EXPECT_FALSE(Holds(v4, ConditionContext()));
  EXPECT_TRUE(
      Holds(R"({"IpAddress":{"aws:SourceIp":"10.1.2.3/12"}})", from("10.15.255.255")));  // host bits ignored
  EXPECT_FALSE(Holds(R"({"IpAddress":{"aws:SourceIp":"10.1.2.3/12"}})", from("10.16.0.0")));
  EXPECT_TRUE(Holds(R"({"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}})", from("8.8.8.8")));

  std::string v6 = R"({"IpAddress":{"aws:SourceIp":"2001:db8:abcd::/49"}})";
  EXPECT_TRUE(Holds(v6, from("2001:db8:abcd:7fff::1")));
  EXPECT_FALSE(Holds(v6, from("2001:db8:abcd:8000::1")));
  EXPECT_FALSE(Holds(v6, from("192.0.2.1")));
  EXPECT_TRUE(Holds(R"({"IpAddress":{"aws:SourceIp":"::1"}})", from("::1")));

  std::string not_v4 = R"({"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}})";
  EXPECT_FALSE(Holds(not_v4, from("192.0.2.1")));
  EXPECT_TRUE(Holds(not_v4, from("198.51.100.1")));
  EXPECT_TRUE(Holds(not_v4, ConditionContext()));  // absent: true
}

TEST(PolicyCondition, IfExists) {
  std::string condition = R"({"StringEqualsIfExists":{"s3tables:namespace":"sales"}})";
  EXPECT_TRUE(Holds(condition, ConditionContext()));
  EXPECT_TRUE(Holds(condition, Context({{"s3tables:namespace", "sales"}})));
  EXPECT_FALSE(Holds(condition, Context({{"s3tables:namespace", "hr"}})));
  EXPECT_TRUE(Holds(R"({"IpAddressIfExists":{"aws:SourceIp":"10.0.0.0/8"}})", ConditionContext()));
  EXPECT_FALSE(Holds(R"({"IpAddressIfExists":{"aws:SourceIp":"10.0.0.0/8"}})",
                     Context({{"aws:SourceIp", "11.0.0.1"}})));
  EXPECT_FALSE(
      Holds(R"({"StringNotLikeIfExists":{"s3:prefix":"secret/*"}})", Context({{"s3:prefix", "secret/x"}})));
}

TEST(PolicyCondition, SetQualifiers) {
  ConditionContext tags;
  tags.Add("aws:TagKeys", "team");
  tags.Add("aws:TagKeys", "cost");
  ConditionContext one_bad = tags;
  one_bad.Add("aws:TagKeys", "secret");
  ConditionContext none;

  std::string any = R"({"ForAnyValue:StringEquals":{"aws:TagKeys":["cost","owner"]}})";
  EXPECT_TRUE(Holds(any, tags));
  EXPECT_FALSE(Holds(any, Context({{"aws:TagKeys", "team"}})));
  EXPECT_FALSE(Holds(any, none));  // absent: false

  std::string all = R"({"ForAllValues:StringLike":{"aws:TagKeys":["team","co*"]}})";
  EXPECT_TRUE(Holds(all, tags));
  EXPECT_FALSE(Holds(all, one_bad));
  EXPECT_TRUE(Holds(all, none));  // absent: true

  // Negated operators under the qualifiers apply the negation to each request value.
  std::string any_not = R"({"ForAnyValue:StringNotEquals":{"aws:TagKeys":["team","cost"]}})";
  EXPECT_FALSE(Holds(any_not, tags));
  EXPECT_TRUE(Holds(any_not, one_bad));
  std::string all_not = R"({"ForAllValues:StringNotEquals":{"aws:TagKeys":"secret"}})";
  EXPECT_TRUE(Holds(all_not, tags));
  EXPECT_FALSE(Holds(all_not, one_bad));

  // Without a qualifier, a positive operator needs one request value to match, a negated one none.
  EXPECT_TRUE(Holds(R"({"StringEquals":{"aws:TagKeys":"cost"}})", tags));
  EXPECT_FALSE(Holds(R"({"StringNotEquals":{"aws:TagKeys":"cost"}})", tags));
  EXPECT_TRUE(Holds(R"({"StringNotEquals":{"aws:TagKeys":"secret"}})", tags));
  EXPECT_TRUE(Holds(R"({"ForAnyValue:StringEqualsIfExists":{"aws:TagKeys":"x"}})", none));
}

// --- Policy variables ------------------------------------------------------------------------------

TEST(PolicyVariables, SubstitutedInResources) {
  Policy policy = MustParse(Stmt(R"("Effect":"Allow","Action":"s3:*",
      "Resource":["arn:aws:s3:::home/${aws:username}/*","arn:aws:s3:::${s3tables:namespace}-logs"])"));
  ConditionContext alice = Context({{"aws:username", "alice"}});
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/alice/a.txt", &alice), D::kAllow);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/bob/a.txt", &alice), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/alice/a.txt", nullptr), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/${aws:username}/a", nullptr), D::kImplicitDeny);
  ConditionContext sales = Context({{"S3Tables:Namespace", "sales"}});
  EXPECT_EQ(Decide(policy, "s3:ListBucket", "arn:aws:s3:::sales-logs", &sales), D::kAllow);

  // A substituted value is literal text: "*" in a value is no wildcard.
  ConditionContext starry = Context({{"aws:username", "a*"}});
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/a*/x", &starry), D::kAllow);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/abc/x", &starry), D::kImplicitDeny);

  // A key with several values cannot stand for one string.
  ConditionContext two;
  two.Add("aws:username", "alice");
  two.Add("aws:username", "bob");
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/alice/x", &two), D::kImplicitDeny);
}

TEST(PolicyVariables, EscapesAndDefaults) {
  Policy escapes = MustParse(Stmt(R"("Effect":"Allow","Action":"s3:*",
      "Resource":["arn:aws:s3:::b/${*}","arn:aws:s3:::b/q${?}","arn:aws:s3:::b/${$}{x}"])"));
  EXPECT_EQ(Decide(escapes, "s3:GetObject", "arn:aws:s3:::b/*"), D::kAllow);
  EXPECT_EQ(Decide(escapes, "s3:GetObject", "arn:aws:s3:::b/x"), D::kImplicitDeny);
  EXPECT_EQ(Decide(escapes, "s3:GetObject", "arn:aws:s3:::b/q?"), D::kAllow);
  EXPECT_EQ(Decide(escapes, "s3:GetObject", "arn:aws:s3:::b/qq"), D::kImplicitDeny);
  EXPECT_EQ(Decide(escapes, "s3:GetObject", "arn:aws:s3:::b/${x}"), D::kAllow);

  Policy fallback = MustParse(Stmt(R"("Effect":"Allow","Action":"s3:*",
      "Resource":"arn:aws:s3:::home/${aws:username, 'anonymous'}/*")"));
  ConditionContext alice = Context({{"aws:username", "alice"}});
  EXPECT_EQ(Decide(fallback, "s3:GetObject", "arn:aws:s3:::home/anonymous/x"), D::kAllow);
  EXPECT_EQ(Decide(fallback, "s3:GetObject", "arn:aws:s3:::home/alice/x", &alice), D::kAllow);
  EXPECT_EQ(Decide(fallback, "s3:GetObject", "arn:aws:s3:::home/anonymous/x", &alice), D::kImplicitDeny);
}

TEST(PolicyVariables, SubstitutedInConditionValues) {
  ConditionContext alice = Context({{"aws:username", "alice"}, {"s3:prefix", "home/alice/docs"}});
  ConditionContext sneaky = Context({{"aws:username", "alice"}, {"s3:prefix", "home/bob/"}});
  std::string like = R"({"StringLike":{"s3:prefix":["home/${aws:username}/*"]}})";
  EXPECT_TRUE(Holds(like, alice));
  EXPECT_FALSE(Holds(like, sneaky));
  EXPECT_FALSE(Holds(like, Context({{"s3:prefix", "home//x"}})));  // no username: no match
  EXPECT_TRUE(Holds(R"({"StringEquals":{"s3tables:namespace":"${aws:username}"}})",
                    Context({{"aws:username", "alice"}, {"s3tables:namespace", "alice"}})));
  EXPECT_TRUE(Holds(R"({"StringEqualsIgnoreCase":{"s3tables:namespace":"${aws:username}"}})",
                    Context({{"aws:username", "alice"}, {"s3tables:namespace", "ALICE"}})));
}

TEST(PolicyVariables, PlainTextInVersion2008) {
  Policy policy = MustParse(R"({"Version":"2008-10-17","Statement":[{"Effect":"Allow","Action":"s3:*",)"
                            R"("Resource":"arn:aws:s3:::home/${aws:username}/*"}]})");
  ConditionContext alice = Context({{"aws:username", "alice"}});
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/alice/x", &alice), D::kImplicitDeny);
  EXPECT_EQ(Decide(policy, "s3:GetObject", "arn:aws:s3:::home/${aws:username}/x", &alice), D::kAllow);
}

// --- Condition context -----------------------------------------------------------------------------

TEST(PolicyContext, KeysAreCaseInsensitiveAndMultiValued) {
  ConditionContext context;
  EXPECT_EQ(context.Find("aws:username"), nullptr);
  context.Add("AWS:UserName", "alice");
  context.Add("aws:username", "bob");
  ASSERT_NE(context.Find("aws:USERNAME"), nullptr);
  EXPECT_EQ(*context.Find("aws:username"), (std::vector<std::string>{"alice", "bob"}));
  context.Set("aws:username", "carol");
  EXPECT_EQ(*context.Find("aws:username"), (std::vector<std::string>{"carol"}));
}

// --- Built-in policies -----------------------------------------------------------------------------

TEST(PolicyBuiltin, NamesAndLookup) {
  std::vector<std::string_view> names(BuiltinPolicyNames().begin(), BuiltinPolicyNames().end());
  EXPECT_EQ(names, (std::vector<std::string_view>{"readwrite", "readonly", "writeonly", "consoleAdmin"}));
  for (std::string_view name : names) {
    const Policy* policy = BuiltinPolicy(name);
    ASSERT_NE(policy, nullptr) << name;
    EXPECT_EQ(MustParse(policy->json()).json(), policy->json());
  }
  EXPECT_EQ(BuiltinPolicy("ReadOnly"), nullptr);
  EXPECT_EQ(BuiltinPolicy("diagnostics"), nullptr);
  EXPECT_EQ(BuiltinPolicy(""), nullptr);
}

D DecideBuiltin(std::string_view name, std::string_view action, std::string_view resource) {
  const Policy* policy = BuiltinPolicy(name);
  if (policy == nullptr) return D::kExplicitDeny;
  return policy->Evaluate(AccessRequest{action, resource});
}

TEST(PolicyBuiltin, ReadOnly) {
  std::string object = S3ObjectArn("b", "k");
  std::string table = TablesTableArn("wh", "u");
  EXPECT_EQ(DecideBuiltin("readonly", "s3:GetObject", object), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3:GetBucketLocation", S3BucketArn("b")), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3:ListBucket", S3BucketArn("b")), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3:ListAllMyBuckets", S3ServiceArn()), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3:PutObject", object), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("readonly", "s3:DeleteObject", object), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("readonly", "s3tables:GetTable", table), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3tables:ListNamespaces", TablesWarehouseArn("wh")), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3tables:ListWarehouses", TablesServiceArn()), D::kAllow);
  EXPECT_EQ(DecideBuiltin("readonly", "s3tables:CreateTable", TablesWarehouseArn("wh")), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("readonly", "s3tables:DeleteWarehouse", TablesWarehouseArn("wh")),
            D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("readonly", "admin:ListUsers", AdminServiceArn()), D::kImplicitDeny);
}

TEST(PolicyBuiltin, WriteOnly) {
  std::string object = S3ObjectArn("b", "k");
  EXPECT_EQ(DecideBuiltin("writeonly", "s3:PutObject", object), D::kAllow);
  EXPECT_EQ(DecideBuiltin("writeonly", "s3:AbortMultipartUpload", object), D::kAllow);
  EXPECT_EQ(DecideBuiltin("writeonly", "s3:GetObject", object), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("writeonly", "s3:ListBucket", S3BucketArn("b")), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("writeonly", "s3:DeleteObject", object), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("writeonly", "s3tables:GetTable", TablesTableArn("wh", "u")), D::kImplicitDeny);
}

TEST(PolicyBuiltin, ReadWriteAndConsoleAdmin) {
  std::string object = S3ObjectArn("b", "k");
  for (std::string_view name : {"readwrite", "consoleAdmin"}) {
    EXPECT_EQ(DecideBuiltin(name, "s3:GetObject", object), D::kAllow) << name;
    EXPECT_EQ(DecideBuiltin(name, "s3:PutObject", object), D::kAllow) << name;
    EXPECT_EQ(DecideBuiltin(name, "s3:DeleteBucket", S3BucketArn("b")), D::kAllow) << name;
    EXPECT_EQ(DecideBuiltin(name, "s3tables:CreateTable", TablesWarehouseArn("wh")), D::kAllow) << name;
    EXPECT_EQ(DecideBuiltin(name, "s3tables:DeleteTable", TablesTableArn("wh", "u")), D::kAllow) << name;
    EXPECT_EQ(DecideBuiltin(name, "s3tables:ReplaceView", TablesViewArn("wh", "u")), D::kAllow) << name;
  }
  EXPECT_EQ(DecideBuiltin("readwrite", "admin:CreateUser", AdminServiceArn()), D::kImplicitDeny);
  EXPECT_EQ(DecideBuiltin("consoleAdmin", "admin:CreateUser", AdminServiceArn()), D::kAllow);
}

}  // namespace
}  // namespace serac::auth
