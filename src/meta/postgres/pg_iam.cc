#include <string>
#include <utility>
#include <vector>

#include "meta/postgres/pg_iam_internal.h"

namespace serac::meta::postgres {
namespace {

// ---- Reads ----

constexpr const char* kKeyColumns = "access_key, user_name, sealed_secret, enabled, created_ms, description";

// Columns as in kKeyColumns.
AccessKeyRecord ReadKeyColumns(const PgRows& rows, int row) {
  AccessKeyRecord key;
  key.access_key = rows.Text(row, 0);
  key.user = rows.Text(row, 1);
  key.sealed_secret = rows.Text(row, 2);
  key.enabled = rows.Bool(row, 3);
  key.created_ms = rows.Int(row, 4);
  key.description = rows.Text(row, 5);
  return key;
}

// Columns: name, document, created_ms, updated_ms.
PolicyRecord ReadPolicyColumns(const PgRows& rows, int row) {
  return PolicyRecord{rows.Text(row, 0), rows.Text(row, 1), rows.Int(row, 2), rows.Int(row, 3)};
}

// Policy names attached to one user, ascending (the primary key's order).
Result<std::vector<std::string>> AttachedPolicies(PgConnection& db, std::string_view user) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT policy_name FROM iam_attachments WHERE user_name = $1 "
                                               "ORDER BY policy_name",
                                               {PgParam::Text(user)}));
  std::vector<std::string> policies;
  policies.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) policies.push_back(rows.Text(row, 0));
  return policies;
}

Result<std::vector<IamUserRecord>> AllUsers(PgConnection& db) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT name, enabled, created_ms FROM iam_users ORDER BY name"));
  std::vector<IamUserRecord> users;
  users.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    users.push_back(IamUserRecord{rows.Text(row, 0), rows.Bool(row, 1), rows.Int(row, 2), {}});
  }
  return users;
}

// Fills every user's policies from one ordered scan of the attachments; `users` is sorted by name
// (byte order: the "C" collation) and every attachment's user exists (foreign key), so one merge
// pass suffices.
Status FillAttachments(PgConnection& db, std::vector<IamUserRecord>& users) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT user_name, policy_name FROM iam_attachments "
                                               "ORDER BY user_name, policy_name"));
  size_t next = 0;
  for (int row = 0; row < rows.size(); ++row) {
    const std::string user = rows.Text(row, 0);
    while (next < users.size() && users[next].name < user) ++next;
    if (next == users.size() || users[next].name != user) {
      return Error(ErrorCode::kInternal, "policy attachment of a missing user: " + user);
    }
    users[next].policies.push_back(rows.Text(row, 1));
  }
  return Status::Ok();
}

Result<std::vector<AccessKeyRecord>> AllKeys(PgConnection& db) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query(std::string("SELECT ") + kKeyColumns +
                                               " FROM iam_access_keys ORDER BY access_key"));
  std::vector<AccessKeyRecord> keys;
  keys.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) keys.push_back(ReadKeyColumns(rows, row));
  return keys;
}

Result<std::vector<PolicyRecord>> AllPolicies(PgConnection& db) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT name, document, created_ms, updated_ms FROM iam_policies "
                                  "ORDER BY name"));
  std::vector<PolicyRecord> policies;
  policies.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) policies.push_back(ReadPolicyColumns(rows, row));
  return policies;
}

// ---- Writes ----

Status RequireName(std::string_view name, const char* what) {
  if (name.empty()) return Error(ErrorCode::kInvalidArgument, std::string(what) + " cannot be empty");
  return Status::Ok();
}

bool IsBuiltin(const BuiltinPolicyNames& builtin, std::string_view name) {
  return builtin.find(name) != builtin.end();
}

Status RefuseBuiltin(const BuiltinPolicyNames& builtin, std::string_view name) {
  if (!IsBuiltin(builtin, name)) return Status::Ok();
  return Error(ErrorCode::kInvalidArgument, "built-in policy cannot be changed: " + std::string(name));
}

// Runs a statement with one text parameter ($1); its rows.
Result<PgRows> QueryFor(PgConnection& db, const std::string& sql, std::string_view value) {
  return db.Query(sql, {PgParam::Text(value)});
}

Result<bool> HasRow(PgConnection& db, const std::string& sql, std::string_view value) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, QueryFor(db, sql, value));
  return !rows.empty();
}

Status RequireUser(PgConnection& db, std::string_view name) {
  SERAC_ASSIGN_OR_RETURN(bool found, HasRow(db, "SELECT 1 FROM iam_users WHERE name = $1", name));
  if (!found) return Error(ErrorCode::kNotFound, "user does not exist: " + std::string(name));
  return Status::Ok();
}

// A policy may be attached when it is stored or built-in.
Status RequireAttachablePolicy(PgConnection& db, std::string_view name, const BuiltinPolicyNames& builtin) {
  if (IsBuiltin(builtin, name)) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(bool found, HasRow(db, "SELECT 1 FROM iam_policies WHERE name = $1", name));
  if (!found) return Error(ErrorCode::kNotFound, "policy does not exist: " + std::string(name));
  return Status::Ok();
}

// Attaching an attached policy again is not an error.
Status InsertAttachment(PgConnection& db, std::string_view user, std::string_view policy) {
  return db
      .Query(
          "INSERT INTO iam_attachments(user_name, policy_name) VALUES ($1, $2) "
          "ON CONFLICT (user_name, policy_name) DO NOTHING",
          {PgParam::Text(user), PgParam::Text(policy)})
      .status();
}

// Sets `enabled` on the row whose $1 matches; kNotFound (with `what`) when there is none.
Status SetEnabled(PgConnection& db, const std::string& sql, std::string_view name, bool enabled,
                  const char* what) {
  SERAC_ASSIGN_OR_RETURN(PgRows done, db.Query(sql, {PgParam::Text(name), PgParam::Bool(enabled)}));
  if (done.affected() == 0) {
    return Error(ErrorCode::kNotFound, std::string(what) + " does not exist: " + std::string(name));
  }
  return Status::Ok();
}

}  // namespace

Result<IamUserRecord> GetIamUserRead(PgConnection& db, std::string_view name) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         QueryFor(db, "SELECT enabled, created_ms FROM iam_users WHERE name = $1", name));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "user does not exist: " + std::string(name));
  IamUserRecord user{std::string(name), rows.Bool(0, 0), rows.Int(0, 1), {}};
  SERAC_ASSIGN_OR_RETURN(user.policies, AttachedPolicies(db, name));
  return user;
}

Result<AccessKeyRecord> GetAccessKeyRead(PgConnection& db, std::string_view access_key) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      QueryFor(db, std::string("SELECT ") + kKeyColumns + " FROM iam_access_keys WHERE access_key = $1",
               access_key));
  if (rows.empty())
    return Error(ErrorCode::kNotFound, "access key does not exist: " + std::string(access_key));
  return ReadKeyColumns(rows, 0);
}

Result<PolicyRecord> GetPolicyRead(PgConnection& db, std::string_view name) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      QueryFor(db, "SELECT name, document, created_ms, updated_ms FROM iam_policies WHERE name = $1", name));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "policy does not exist: " + std::string(name));
  return ReadPolicyColumns(rows, 0);
}

Result<IamSnapshot> LoadIamSnapshotRead(PgConnection& db) {
  IamSnapshot snapshot;
  SERAC_ASSIGN_OR_RETURN(snapshot.generation, IamGenerationRead(db));
  SERAC_ASSIGN_OR_RETURN(snapshot.users, AllUsers(db));
  SERAC_RETURN_IF_ERROR(FillAttachments(db, snapshot.users));
  SERAC_ASSIGN_OR_RETURN(snapshot.keys, AllKeys(db));
  SERAC_ASSIGN_OR_RETURN(snapshot.policies, AllPolicies(db));
  return snapshot;
}

Result<uint64_t> IamGenerationRead(PgConnection& db) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT generation FROM iam_generation WHERE id = 0"));
  if (rows.empty()) return Error(ErrorCode::kIoError, "the IAM generation row is missing");
  return static_cast<uint64_t>(rows.Int(0, 0));
}

Status CreateIamUserTx(PgConnection& db, const IamUserRecord& user, const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireName(user.name, "a user name"));
  SERAC_ASSIGN_OR_RETURN(
      PgRows inserted,
      db.Query("INSERT INTO iam_users(name, enabled, created_ms) VALUES ($1, $2, $3) "
               "ON CONFLICT (name) DO NOTHING",
               {PgParam::Text(user.name), PgParam::Bool(user.enabled), PgParam::Int(user.created_ms)}));
  if (inserted.affected() == 0) return Error(ErrorCode::kAlreadyExists, "user already exists: " + user.name);
  for (const std::string& policy : user.policies) {
    SERAC_RETURN_IF_ERROR(RequireAttachablePolicy(db, policy, builtin));
    SERAC_RETURN_IF_ERROR(InsertAttachment(db, user.name, policy));
  }
  return Status::Ok();
}

Status SetIamUserEnabledTx(PgConnection& db, std::string_view name, bool enabled) {
  return SetEnabled(db, "UPDATE iam_users SET enabled = $2 WHERE name = $1", name, enabled, "user");
}

Status DeleteIamUserTx(PgConnection& db, std::string_view name) {
  SERAC_RETURN_IF_ERROR(RequireUser(db, name));
  // Children first: the foreign keys are checked statement by statement.
  SERAC_RETURN_IF_ERROR(QueryFor(db, "DELETE FROM iam_access_keys WHERE user_name = $1", name).status());
  SERAC_RETURN_IF_ERROR(QueryFor(db, "DELETE FROM iam_attachments WHERE user_name = $1", name).status());
  return QueryFor(db, "DELETE FROM iam_users WHERE name = $1", name).status();
}

Status CreateAccessKeyTx(PgConnection& db, const AccessKeyRecord& key) {
  SERAC_RETURN_IF_ERROR(RequireName(key.access_key, "an access key id"));
  SERAC_RETURN_IF_ERROR(RequireName(key.sealed_secret, "a sealed secret"));
  SERAC_RETURN_IF_ERROR(RequireUser(db, key.user));
  SERAC_ASSIGN_OR_RETURN(
      PgRows inserted,
      db.Query("INSERT INTO iam_access_keys(access_key, user_name, sealed_secret, enabled, "
               "created_ms, description) VALUES ($1, $2, $3, $4, $5, $6) "
               "ON CONFLICT (access_key) DO NOTHING",
               {PgParam::Text(key.access_key), PgParam::Text(key.user), PgParam::Bytes(key.sealed_secret),
                PgParam::Bool(key.enabled), PgParam::Int(key.created_ms), PgParam::Text(key.description)}));
  if (inserted.affected() == 0) {
    return Error(ErrorCode::kAlreadyExists, "access key already exists: " + key.access_key);
  }
  return Status::Ok();
}

Status SetAccessKeyEnabledTx(PgConnection& db, std::string_view access_key, bool enabled) {
  return SetEnabled(db, "UPDATE iam_access_keys SET enabled = $2 WHERE access_key = $1", access_key, enabled,
                    "access key");
}

Status DeleteAccessKeyTx(PgConnection& db, std::string_view access_key) {
  SERAC_ASSIGN_OR_RETURN(PgRows deleted,
                         QueryFor(db, "DELETE FROM iam_access_keys WHERE access_key = $1", access_key));
  if (deleted.affected() == 0) {
    return Error(ErrorCode::kNotFound, "access key does not exist: " + std::string(access_key));
  }
  return Status::Ok();
}

Status PutPolicyTx(PgConnection& db, const PolicyRecord& policy, const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireName(policy.name, "a policy name"));
  SERAC_RETURN_IF_ERROR(RefuseBuiltin(builtin, policy.name));
  // On replace the stored created_ms stays: the contract keeps a policy's creation time.
  return db
      .Query(
          "INSERT INTO iam_policies(name, document, created_ms, updated_ms) VALUES ($1, $2, $3, $4) "
          "ON CONFLICT (name) DO UPDATE SET document = excluded.document, updated_ms = excluded.updated_ms",
          {PgParam::Text(policy.name), PgParam::Text(policy.document), PgParam::Int(policy.created_ms),
           PgParam::Int(policy.updated_ms)})
      .status();
}

Status DeletePolicyTx(PgConnection& db, std::string_view name, const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireName(name, "a policy name"));
  SERAC_RETURN_IF_ERROR(RefuseBuiltin(builtin, name));
  SERAC_ASSIGN_OR_RETURN(bool found, HasRow(db, "SELECT 1 FROM iam_policies WHERE name = $1", name));
  if (!found) return Error(ErrorCode::kNotFound, "policy does not exist: " + std::string(name));
  SERAC_ASSIGN_OR_RETURN(PgRows holder,
                         QueryFor(db,
                                  "SELECT user_name FROM iam_attachments WHERE policy_name = $1 "
                                  "ORDER BY user_name LIMIT 1",
                                  name));
  if (!holder.empty()) {
    return Error(ErrorCode::kConflict, "policy " + std::string(name) + " is still attached to user " +
                                           holder.Text(0, 0) + "; detach it first");
  }
  return QueryFor(db, "DELETE FROM iam_policies WHERE name = $1", name).status();
}

Status AttachPolicyTx(PgConnection& db, std::string_view user, std::string_view policy,
                      const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireUser(db, user));
  SERAC_RETURN_IF_ERROR(RequireAttachablePolicy(db, policy, builtin));
  return InsertAttachment(db, user, policy);
}

Status DetachPolicyTx(PgConnection& db, std::string_view user, std::string_view policy) {
  SERAC_RETURN_IF_ERROR(RequireUser(db, user));
  SERAC_ASSIGN_OR_RETURN(PgRows deleted,
                         db.Query("DELETE FROM iam_attachments WHERE user_name = $1 AND policy_name = $2",
                                  {PgParam::Text(user), PgParam::Text(policy)}));
  if (deleted.affected() == 0) {
    return Error(ErrorCode::kNotFound,
                 "policy " + std::string(policy) + " is not attached to user " + std::string(user));
  }
  return Status::Ok();
}

Status BumpIamGenerationTx(PgConnection& db) {
  SERAC_ASSIGN_OR_RETURN(PgRows bumped,
                         db.Query("UPDATE iam_generation SET generation = generation + 1 WHERE id = 0"));
  if (bumped.affected() != 1) return Error(ErrorCode::kIoError, "the IAM generation row is missing");
  return Status::Ok();
}

}  // namespace serac::meta::postgres
