// The body of every IamStore call on SQLite. Reads run on a reader connection (LoadSnapshot and
// GetUser inside one read transaction, since they issue more than one statement); writes run on
// the writer inside a savepoint of a group commit and, like sqlite_writes_internal.h, never clean
// up after an error: the caller rolls the savepoint back. The caller also runs
// BumpIamGenerationTx after every write that succeeded, in the same savepoint.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "meta/iam_store.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

// The names registered with IamStore::SetBuiltinPolicyNames (transparent: looked up by view).
using BuiltinPolicyNames = std::set<std::string, std::less<>>;

Result<IamUserRecord> GetIamUserRead(Connection& db, std::string_view name);
Result<AccessKeyRecord> GetAccessKeyRead(Connection& db, std::string_view access_key);
Result<PolicyRecord> GetPolicyRead(Connection& db, std::string_view name);
Result<IamSnapshot> LoadIamSnapshotRead(Connection& db);
Result<uint64_t> IamGenerationRead(Connection& db);

Status CreateIamUserTx(Connection& db, const IamUserRecord& user, const BuiltinPolicyNames& builtin);
Status SetIamUserEnabledTx(Connection& db, std::string_view name, bool enabled);
Status DeleteIamUserTx(Connection& db, std::string_view name);
Status CreateAccessKeyTx(Connection& db, const AccessKeyRecord& key);
Status SetAccessKeyEnabledTx(Connection& db, std::string_view access_key, bool enabled);
Status DeleteAccessKeyTx(Connection& db, std::string_view access_key);
Status PutPolicyTx(Connection& db, const PolicyRecord& policy, const BuiltinPolicyNames& builtin);
Status DeletePolicyTx(Connection& db, std::string_view name, const BuiltinPolicyNames& builtin);
Status AttachPolicyTx(Connection& db, std::string_view user, std::string_view policy,
                      const BuiltinPolicyNames& builtin);
Status DetachPolicyTx(Connection& db, std::string_view user, std::string_view policy);

// Increments the IAM generation counter.
Status BumpIamGenerationTx(Connection& db);

}  // namespace serac::meta::sqlite
