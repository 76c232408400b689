// IamStore: identity and access state in the MetaStore — users, their access keys, stored
// policies and which policies are attached to which user. The auth module builds its in-memory
// view of all this from LoadSnapshot() and reloads it whenever Generation() has moved.
//
// What the store does NOT do: it never sees a secret in clear (AccessKeyRecord::sealed_secret is
// sealed by the caller and stored as opaque bytes), it does not parse policy documents (the caller
// validates the JSON), and it does not judge names beyond "not empty" (the caller applies the
// naming rules).
//
// Built-in policies (readwrite, readonly, ...) live in the caller's code, not in the database. The
// caller registers their names once with SetBuiltinPolicyNames(); from then on AttachPolicy and
// CreateUser accept those names without a stored row, and PutPolicy/DeletePolicy refuse them with
// kInvalidArgument. GetPolicy and LoadSnapshot only ever return stored policies; attachments of
// built-in names do appear in IamUserRecord::policies.
//
// Same guarantees as MetaStore: each mutating call is one transaction, durable when it returns OK.
// Every successful mutating call also increments the stored generation counter in that same
// transaction (a call that fails changes neither the state nor the counter); reads never change
// it. Because the counter lives in the database, several servers sharing one MetaStore see each
// other's changes by polling Generation().
//
// Reached through MetaStore::iam(); lives as long as the MetaStore.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace serac::meta {

struct IamUserRecord {
  std::string name;
  bool enabled = true;
  int64_t created_ms = 0;  // Unix epoch milliseconds, set by the caller
  // Names of the attached policies, sorted and without repeats when read. CreateUser attaches the
  // ones given (each stored or built-in, else kNotFound).
  std::vector<std::string> policies;
};

struct AccessKeyRecord {
  std::string access_key;     // unique across all users
  std::string user;           // the owning user, who must exist
  std::string sealed_secret;  // opaque bytes: the secret encrypted by the caller; never stored in clear
  bool enabled = true;
  int64_t created_ms = 0;
  std::string description;
};

struct PolicyRecord {
  std::string name;
  std::string document;  // JSON text, validated by the caller
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

// The whole IAM state as of one instant (read in one transaction). Users sorted by name, keys by
// access key, policies by name.
struct IamSnapshot {
  std::vector<IamUserRecord> users;
  std::vector<AccessKeyRecord> keys;
  std::vector<PolicyRecord> policies;
  uint64_t generation = 0;  // the counter the contents belong to
};

class IamStore {
 public:
  virtual ~IamStore() = default;

  // Registers the names of the built-in policies (replacing any earlier list). Not a write: it
  // changes no stored state and does not move the generation. Call it before serving requests.
  virtual void SetBuiltinPolicyNames(std::vector<std::string> names) = 0;

  // Users. Create: kAlreadyExists; kInvalidArgument for an empty name; kNotFound if a listed
  // policy is neither stored nor built-in.
  virtual Status CreateUser(const IamUserRecord& user) = 0;
  virtual Status SetUserEnabled(std::string_view name, bool enabled) = 0;  // kNotFound
  // kNotFound; removes the user's access keys and policy attachments in the same transaction.
  virtual Status DeleteUser(std::string_view name) = 0;

  // Access keys. Create: kAlreadyExists (ids are unique across users), kNotFound (no such user),
  // kInvalidArgument (empty id or sealed secret). Set/Delete: kNotFound.
  virtual Status CreateAccessKey(const AccessKeyRecord& key) = 0;
  virtual Status SetAccessKeyEnabled(std::string_view access_key, bool enabled) = 0;
  virtual Status DeleteAccessKey(std::string_view access_key) = 0;

  // Policies. Put creates or replaces: on replace the stored created_ms is kept and document and
  // updated_ms are taken from `policy`. Delete: kNotFound; kConflict while attached to any user.
  // Both: kInvalidArgument for an empty or built-in name.
  virtual Status PutPolicy(const PolicyRecord& policy) = 0;
  virtual Status DeletePolicy(std::string_view name) = 0;

  // Attach: kNotFound if the user is missing or the policy is neither stored nor built-in;
  // attaching an attached policy again is OK. Detach: kNotFound if the user is missing or the
  // policy is not attached to it.
  virtual Status AttachPolicy(std::string_view user, std::string_view policy) = 0;
  virtual Status DetachPolicy(std::string_view user, std::string_view policy) = 0;

  virtual Result<IamUserRecord> GetUser(std::string_view name) = 0;               // kNotFound
  virtual Result<AccessKeyRecord> GetAccessKey(std::string_view access_key) = 0;  // kNotFound
  virtual Result<PolicyRecord> GetPolicy(std::string_view name) = 0;              // kNotFound

  // Everything at once, consistent with the generation it reports.
  virtual Result<IamSnapshot> LoadSnapshot() = 0;
  // The counter bumped by every successful IAM write; 0 for a store that never had one.
  virtual Result<uint64_t> Generation() = 0;
};

}  // namespace serac::meta
