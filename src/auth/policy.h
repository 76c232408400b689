// IAM identity policies: parsing and validating AWS-style JSON policy documents, and deciding
// whether a request is allowed by the policies attached to its identity.
//
// Evaluation follows AWS's rules for identity policies: an explicit Deny in any applicable
// statement wins; otherwise an applicable Allow allows; otherwise the request is implicitly
// denied. A statement applies when its Action (or NotAction), its Resource (or NotResource) and
// every one of its Conditions match the request.
//
// Everything that can be checked or prepared ahead is done once in Policy::Parse (patterns split
// into pieces, condition operators resolved, CIDR blocks and numbers parsed), so Evaluate does no
// parsing and allocates nothing.
//
// Resources are ARNs. serac has one region and no accounts, so the ARNs it builds leave both
// fields empty ("arn:aws:s3:::bucket/key"), and a policy's Resource must leave them empty or "*".
// Account-level actions (s3:ListAllMyBuckets, s3tables:ListWarehouses) are checked against the
// service ARNs below, which "arn:aws:s3:::*" and "arn:aws:s3tables:::bucket/*" match.
//
// Policy variables ("${aws:username}", any context key; "${key, 'default'}"; escapes "${*}",
// "${?}", "${$}") are substituted in Resource and in string condition values, as literal text.
// A pattern naming a variable the request lacks (and with no default) matches nothing.
//
// Thread-safety: Policy is immutable and safe to share between threads; copies are cheap (they
// share the compiled form). ConditionContext is a plain value.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace serac::auth {

// Condition keys serac fills in. Keys are matched case-insensitively.
namespace condition_keys {
inline constexpr std::string_view kUsername = "aws:username";
inline constexpr std::string_view kUserId = "aws:userid";
inline constexpr std::string_view kSourceIp = "aws:SourceIp";
inline constexpr std::string_view kSecureTransport = "aws:SecureTransport";  // "true" / "false"
inline constexpr std::string_view kS3Prefix = "s3:prefix";
inline constexpr std::string_view kS3Delimiter = "s3:delimiter";
inline constexpr std::string_view kS3MaxKeys = "s3:max-keys";
inline constexpr std::string_view kTablesNamespace = "s3tables:namespace";  // dotted: "a.b"
inline constexpr std::string_view kTablesTableName = "s3tables:tableName";
inline constexpr std::string_view kTablesViewName = "s3tables:viewName";
}  // namespace condition_keys

// The facts about one request that conditions and policy variables refer to: key -> values.
// Most keys carry one value; multi-valued keys (for ForAnyValue/ForAllValues) carry several.
class ConditionContext {
 public:
  // Adds one value to `key` (keys are case-insensitive; values are kept as given).
  void Add(std::string_view key, std::string value);
  // Replaces every value of `key` with `value`.
  void Set(std::string_view key, std::string value);
  // The values of `key`, or nullptr when the request has no such key.
  const std::vector<std::string>* Find(std::string_view key) const;

 private:
  struct Entry {
    std::string key_lower;
    std::vector<std::string> values;
  };
  std::vector<Entry> entries_;
};

struct AccessRequest {
  // "s3:GetObject", "s3tables:GetTable", "admin:CreateUser"; matched case-insensitively.
  std::string_view action;
  // The ARN of what is acted on (see the builders below); matched case-sensitively.
  std::string_view resource;
  // Condition keys and policy variables; nullptr means an empty context.
  const ConditionContext* context = nullptr;
};

enum class PolicyDecision {
  kAllow,         // some statement allows and none denies
  kExplicitDeny,  // some statement denies
  kImplicitDeny,  // no statement applies
};

class Policy {
 public:
  // Parses and validates one policy document:
  //   Version "2012-10-17" (or "2008-10-17", under which "${...}" is plain text), optional Id,
  //   Statement as one object or a non-empty array; in each statement an optional Sid (unique),
  //   Effect "Allow" | "Deny", exactly one of Action / NotAction and of Resource / NotResource
  //   (a string or a non-empty array of strings), and an optional
  //   Condition { operator: { key: value | [values] } }.
  // Principal / NotPrincipal and unknown fields are refused, as are duplicate fields.
  // Errors: kInvalidArgument with a message naming the field ("Statement[1].Effect: ..."),
  // kLimitExceeded when the document exceeds limits::kPolicyDocumentBytesMax or
  // limits::kPolicyStatementsMax.
  static Result<Policy> Parse(std::string_view json);

  // The document as compact JSON with the fields in a fixed order; Parse(json()) gives an
  // equivalent policy. This is the form to store and to show.
  const std::string& json() const;

  // This policy alone: kExplicitDeny, kAllow or kImplicitDeny.
  PolicyDecision Evaluate(const AccessRequest& request) const;

  struct Compiled;  // the pre-processed statements; defined in policy.cc

 private:
  friend PolicyDecision Evaluate(std::span<const Policy* const> policies, const AccessRequest& request);

  explicit Policy(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

// The decision of all `policies` together (null entries are skipped): any explicit Deny wins,
// then any Allow; no policies at all means kImplicitDeny.
PolicyDecision Evaluate(std::span<const Policy* const> policies, const AccessRequest& request);

// ARNs of the things serac's actions act on.
std::string S3BucketArn(std::string_view bucket);                        // arn:aws:s3:::bucket
std::string S3ObjectArn(std::string_view bucket, std::string_view key);  // arn:aws:s3:::bucket/key
std::string TablesWarehouseArn(std::string_view warehouse);              // arn:aws:s3tables:::bucket/wh
std::string TablesTableArn(std::string_view warehouse, std::string_view table_uuid);  // .../table/uuid
std::string TablesViewArn(std::string_view warehouse, std::string_view view_uuid);    // .../view/uuid
// What serac's admin:* actions act on, so that a grant can be narrow ("rotate your own keys":
// admin:CreateAccessKey, admin:ListAccessKeys on arn:aws:admin:::user/${aws:username} and
// admin:DeleteAccessKey on arn:aws:admin:::user/${aws:username}/access-key/*).
std::string AdminUserArn(std::string_view user);  // arn:aws:admin:::user/NAME
std::string AdminAccessKeyArn(std::string_view user,
                              std::string_view access_key);  // .../user/NAME/access-key/KEY
std::string AdminPolicyArn(std::string_view policy);         // arn:aws:admin:::policy/NAME
// Account-level actions: s3:ListAllMyBuckets ("arn:aws:s3:::"), s3tables:ListWarehouses and
// s3tables:CreateWarehouse before the name is known ("arn:aws:s3tables:::bucket/"), and the admin
// listings of every user, key or policy ("arn:aws:admin:::").
std::string_view S3ServiceArn();
std::string_view TablesServiceArn();
std::string_view AdminServiceArn();

// Built-in policies every server has: "readwrite", "readonly", "writeonly", "consoleAdmin".
// Returns nullptr for any other name (names are case-sensitive). json() gives the text.
const Policy* BuiltinPolicy(std::string_view name);
std::span<const std::string_view> BuiltinPolicyNames();

}  // namespace serac::auth
