#include <utility>
#include <vector>

#include "meta/sqlite/sqlite_iam_internal.h"

namespace serac::meta::sqlite {
namespace {

constexpr const char* kKeyColumns = "access_key, user_name, sealed_secret, enabled, created_ms, description";

// Columns as in kKeyColumns.
AccessKeyRecord ReadKeyColumns(const Statement& row) {
  AccessKeyRecord key;
  key.access_key = row.Text(0);
  key.user = row.Text(1);
  key.sealed_secret = row.Blob(2);
  key.enabled = row.Int(3) != 0;
  key.created_ms = row.Int(4);
  key.description = row.Text(5);
  return key;
}

// Columns: name, document, created_ms, updated_ms.
PolicyRecord ReadPolicyColumns(const Statement& row) {
  return PolicyRecord{row.Text(0), row.Text(1), row.Int(2), row.Int(3)};
}

// Policy names attached to one user, ascending (the primary key's order).
Result<std::vector<std::string>> AttachedPolicies(Connection& db, std::string_view user) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT policy_name FROM iam_attachments WHERE user_name = ?1 "
                                               "ORDER BY policy_name;"));
  stmt->BindText(1, user);
  std::vector<std::string> policies;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return policies;
    policies.push_back(stmt->Text(0));
  }
}

Result<std::vector<IamUserRecord>> AllUsers(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT name, enabled, created_ms FROM iam_users ORDER BY name;"));
  std::vector<IamUserRecord> users;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return users;
    users.push_back(IamUserRecord{stmt->Text(0), stmt->Int(1) != 0, stmt->Int(2), {}});
  }
}

// Fills every user's policies from one ordered scan of the attachments; `users` is sorted by name
// and every attachment's user exists (foreign key), so one merge pass suffices.
Status FillAttachments(Connection& db, std::vector<IamUserRecord>& users) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT user_name, policy_name FROM iam_attachments "
                                               "ORDER BY user_name, policy_name;"));
  size_t next = 0;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Ok();
    const std::string user = stmt->Text(0);
    while (next < users.size() && users[next].name < user) ++next;
    if (next == users.size() || users[next].name != user) {
      return Error(ErrorCode::kInternal, "policy attachment of a missing user: " + user);
    }
    users[next].policies.push_back(stmt->Text(1));
  }
}

Result<std::vector<AccessKeyRecord>> AllKeys(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(std::string("SELECT ") + kKeyColumns +
                                               " FROM iam_access_keys ORDER BY access_key;"));
  std::vector<AccessKeyRecord> keys;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return keys;
    keys.push_back(ReadKeyColumns(*stmt));
  }
}

Result<std::vector<PolicyRecord>> AllPolicies(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT name, document, created_ms, updated_ms FROM iam_policies "
                                    "ORDER BY name;"));
  std::vector<PolicyRecord> policies;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return policies;
    policies.push_back(ReadPolicyColumns(*stmt));
  }
}

}  // namespace

Result<IamUserRecord> GetIamUserRead(Connection& db, std::string_view name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT enabled, created_ms FROM iam_users WHERE name = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, name).Step());
  if (!found) return Error(ErrorCode::kNotFound, "user does not exist: " + std::string(name));
  IamUserRecord user{std::string(name), stmt->Int(0) != 0, stmt->Int(1), {}};
  SERAC_ASSIGN_OR_RETURN(user.policies, AttachedPolicies(db, name));
  return user;
}

Result<AccessKeyRecord> GetAccessKeyRead(Connection& db, std::string_view access_key) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(std::string("SELECT ") + kKeyColumns +
                                               " FROM iam_access_keys WHERE access_key = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, access_key).Step());
  if (!found) return Error(ErrorCode::kNotFound, "access key does not exist: " + std::string(access_key));
  return ReadKeyColumns(*stmt);
}

Result<PolicyRecord> GetPolicyRead(Connection& db, std::string_view name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT name, document, created_ms, updated_ms FROM iam_policies "
                                    "WHERE name = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, name).Step());
  if (!found) return Error(ErrorCode::kNotFound, "policy does not exist: " + std::string(name));
  return ReadPolicyColumns(*stmt);
}

Result<IamSnapshot> LoadIamSnapshotRead(Connection& db) {
  IamSnapshot snapshot;
  SERAC_ASSIGN_OR_RETURN(snapshot.generation, IamGenerationRead(db));
  SERAC_ASSIGN_OR_RETURN(snapshot.users, AllUsers(db));
  SERAC_RETURN_IF_ERROR(FillAttachments(db, snapshot.users));
  SERAC_ASSIGN_OR_RETURN(snapshot.keys, AllKeys(db));
  SERAC_ASSIGN_OR_RETURN(snapshot.policies, AllPolicies(db));
  return snapshot;
}

Result<uint64_t> IamGenerationRead(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT generation FROM iam_generation WHERE id = 0;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->Step());
  if (!found) return Error(ErrorCode::kIoError, "the IAM generation row is missing");
  return static_cast<uint64_t>(stmt->Int(0));
}

}  // namespace serac::meta::sqlite
