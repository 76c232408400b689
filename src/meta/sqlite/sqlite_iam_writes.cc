#include <string>

#include "meta/sqlite/sqlite_iam_internal.h"

namespace serac::meta::sqlite {
namespace {

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

// Runs a statement with one text parameter (?1).
Result<bool> HasRow(Connection& db, const std::string& sql, std::string_view value) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, value).Step();
}

Status RunFor(Connection& db, const std::string& sql, std::string_view value) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, value).Run();
}

Status RequireUser(Connection& db, std::string_view name) {
  SERAC_ASSIGN_OR_RETURN(bool found, HasRow(db, "SELECT 1 FROM iam_users WHERE name = ?1;", name));
  if (!found) return Error(ErrorCode::kNotFound, "user does not exist: " + std::string(name));
  return Status::Ok();
}

// A policy may be attached when it is stored or built-in.
Status RequireAttachablePolicy(Connection& db, std::string_view name, const BuiltinPolicyNames& builtin) {
  if (IsBuiltin(builtin, name)) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(bool found, HasRow(db, "SELECT 1 FROM iam_policies WHERE name = ?1;", name));
  if (!found) return Error(ErrorCode::kNotFound, "policy does not exist: " + std::string(name));
  return Status::Ok();
}

Status InsertAttachment(Connection& db, std::string_view user, std::string_view policy) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("INSERT OR IGNORE INTO iam_attachments(user_name, policy_name) "
                                    "VALUES (?1, ?2);"));
  return stmt->BindText(1, user).BindText(2, policy).Run();
}

// Sets `enabled` on the row whose ?1 matches; kNotFound (with `what`) when there is none.
Status SetEnabled(Connection& db, const std::string& sql, std::string_view name, bool enabled,
                  const char* what) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  SERAC_RETURN_IF_ERROR(stmt->BindText(1, name).BindInt(2, enabled ? 1 : 0).Run());
  if (db.Changes() == 0)
    return Error(ErrorCode::kNotFound, std::string(what) + " does not exist: " + std::string(name));
  return Status::Ok();
}

}  // namespace

Status CreateIamUserTx(Connection& db, const IamUserRecord& user, const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireName(user.name, "a user name"));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT OR IGNORE INTO iam_users(name, enabled, created_ms) "
                                               "VALUES (?1, ?2, ?3);"));
  SERAC_RETURN_IF_ERROR(
      stmt->BindText(1, user.name).BindInt(2, user.enabled ? 1 : 0).BindInt(3, user.created_ms).Run());
  if (db.Changes() == 0) return Error(ErrorCode::kAlreadyExists, "user already exists: " + user.name);
  for (const std::string& policy : user.policies) {
    SERAC_RETURN_IF_ERROR(RequireAttachablePolicy(db, policy, builtin));
    SERAC_RETURN_IF_ERROR(InsertAttachment(db, user.name, policy));
  }
  return Status::Ok();
}

Status SetIamUserEnabledTx(Connection& db, std::string_view name, bool enabled) {
  return SetEnabled(db, "UPDATE iam_users SET enabled = ?2 WHERE name = ?1;", name, enabled, "user");
}

Status DeleteIamUserTx(Connection& db, std::string_view name) {
  SERAC_RETURN_IF_ERROR(RequireUser(db, name));
  // Children first: the foreign keys are checked statement by statement.
  SERAC_RETURN_IF_ERROR(RunFor(db, "DELETE FROM iam_access_keys WHERE user_name = ?1;", name));
  SERAC_RETURN_IF_ERROR(RunFor(db, "DELETE FROM iam_attachments WHERE user_name = ?1;", name));
  return RunFor(db, "DELETE FROM iam_users WHERE name = ?1;", name);
}

Status CreateAccessKeyTx(Connection& db, const AccessKeyRecord& key) {
  SERAC_RETURN_IF_ERROR(RequireName(key.access_key, "an access key id"));
  SERAC_RETURN_IF_ERROR(RequireName(key.sealed_secret, "a sealed secret"));
  SERAC_RETURN_IF_ERROR(RequireUser(db, key.user));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT OR IGNORE INTO iam_access_keys(access_key, user_name, "
                                               "sealed_secret, enabled, created_ms, description) "
                                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6);"));
  stmt->BindText(1, key.access_key).BindText(2, key.user).BindBlob(3, key.sealed_secret);
  stmt->BindInt(4, key.enabled ? 1 : 0).BindInt(5, key.created_ms).BindText(6, key.description);
  SERAC_RETURN_IF_ERROR(stmt->Run());
  if (db.Changes() == 0)
    return Error(ErrorCode::kAlreadyExists, "access key already exists: " + key.access_key);
  return Status::Ok();
}

Status SetAccessKeyEnabledTx(Connection& db, std::string_view access_key, bool enabled) {
  return SetEnabled(db, "UPDATE iam_access_keys SET enabled = ?2 WHERE access_key = ?1;", access_key, enabled,
                    "access key");
}

Status DeleteAccessKeyTx(Connection& db, std::string_view access_key) {
  SERAC_RETURN_IF_ERROR(RunFor(db, "DELETE FROM iam_access_keys WHERE access_key = ?1;", access_key));
  if (db.Changes() == 0) {
    return Error(ErrorCode::kNotFound, "access key does not exist: " + std::string(access_key));
  }
  return Status::Ok();
}

Status PutPolicyTx(Connection& db, const PolicyRecord& policy, const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireName(policy.name, "a policy name"));
  SERAC_RETURN_IF_ERROR(RefuseBuiltin(builtin, policy.name));
  // An upsert rather than INSERT OR REPLACE, which would drop the stored created_ms.
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("INSERT INTO iam_policies(name, document, created_ms, updated_ms) "
                                    "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(name) DO UPDATE SET "
                                    "document = excluded.document, updated_ms = excluded.updated_ms;"));
  stmt->BindText(1, policy.name).BindText(2, policy.document);
  return stmt->BindInt(3, policy.created_ms).BindInt(4, policy.updated_ms).Run();
}

Status DeletePolicyTx(Connection& db, std::string_view name, const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireName(name, "a policy name"));
  SERAC_RETURN_IF_ERROR(RefuseBuiltin(builtin, name));
  SERAC_ASSIGN_OR_RETURN(bool found, HasRow(db, "SELECT 1 FROM iam_policies WHERE name = ?1;", name));
  if (!found) return Error(ErrorCode::kNotFound, "policy does not exist: " + std::string(name));
  SERAC_ASSIGN_OR_RETURN(auto holder,
                         db.Prepare("SELECT user_name FROM iam_attachments WHERE policy_name = ?1 "
                                    "ORDER BY user_name LIMIT 1;"));
  SERAC_ASSIGN_OR_RETURN(bool attached, holder->BindText(1, name).Step());
  if (attached) {
    return Error(ErrorCode::kConflict, "policy " + std::string(name) + " is still attached to user " +
                                           holder->Text(0) + "; detach it first");
  }
  return RunFor(db, "DELETE FROM iam_policies WHERE name = ?1;", name);
}

Status AttachPolicyTx(Connection& db, std::string_view user, std::string_view policy,
                      const BuiltinPolicyNames& builtin) {
  SERAC_RETURN_IF_ERROR(RequireUser(db, user));
  SERAC_RETURN_IF_ERROR(RequireAttachablePolicy(db, policy, builtin));
  return InsertAttachment(db, user, policy);
}

Status DetachPolicyTx(Connection& db, std::string_view user, std::string_view policy) {
  SERAC_RETURN_IF_ERROR(RequireUser(db, user));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM iam_attachments WHERE user_name = ?1 AND "
                                               "policy_name = ?2;"));
  SERAC_RETURN_IF_ERROR(stmt->BindText(1, user).BindText(2, policy).Run());
  if (db.Changes() == 0) {
    return Error(ErrorCode::kNotFound,
                 "policy " + std::string(policy) + " is not attached to user " + std::string(user));
  }
  return Status::Ok();
}

Status BumpIamGenerationTx(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("UPDATE iam_generation SET generation = generation + 1 "
                                               "WHERE id = 0;"));
  SERAC_RETURN_IF_ERROR(stmt->Run());
  if (db.Changes() != 1) return Error(ErrorCode::kIoError, "the IAM generation row is missing");
  return Status::Ok();
}

}  // namespace serac::meta::sqlite
