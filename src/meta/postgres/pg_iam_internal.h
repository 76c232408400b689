// The body of every IamStore call on PostgreSQL. Writes run inside a transaction of PgEngine::Write
// and, like pg_objects_internal.h, never clean up after an error; the caller runs
// BumpIamGenerationTx after every write that succeeded, in the same transaction.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "meta/iam_store.h"
#include "meta/postgres/pg_connection_internal.h"

namespace serac::meta::postgres {

// The names registered with IamStore::SetBuiltinPolicyNames (transparent: looked up by view).
using BuiltinPolicyNames = std::set<std::string, std::less<>>;

Result<IamUserRecord> GetIamUserRead(PgConnection& db, std::string_view name);
Result<AccessKeyRecord> GetAccessKeyRead(PgConnection& db, std::string_view access_key);
Result<PolicyRecord> GetPolicyRead(PgConnection& db, std::string_view name);
Result<IamSnapshot> LoadIamSnapshotRead(PgConnection& db);
Result<uint64_t> IamGenerationRead(PgConnection& db);

Status CreateIamUserTx(PgConnection& db, const IamUserRecord& user, const BuiltinPolicyNames& builtin);
Status SetIamUserEnabledTx(PgConnection& db, std::string_view name, bool enabled);
Status DeleteIamUserTx(PgConnection& db, std::string_view name);
Status CreateAccessKeyTx(PgConnection& db, const AccessKeyRecord& key);
Status SetAccessKeyEnabledTx(PgConnection& db, std::string_view access_key, bool enabled);
Status DeleteAccessKeyTx(PgConnection& db, std::string_view access_key);
Status PutPolicyTx(PgConnection& db, const PolicyRecord& policy, const BuiltinPolicyNames& builtin);
Status DeletePolicyTx(PgConnection& db, std::string_view name, const BuiltinPolicyNames& builtin);
Status AttachPolicyTx(PgConnection& db, std::string_view user, std::string_view policy,
                      const BuiltinPolicyNames& builtin);
Status DetachPolicyTx(PgConnection& db, std::string_view user, std::string_view policy);

// Increments the IAM generation counter.
Status BumpIamGenerationTx(PgConnection& db);

}  // namespace serac::meta::postgres
