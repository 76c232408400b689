#include <sqlite3.h>

#include <chrono>
#include <string>

#include "common/limits.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message(what);
  message += ": ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (sqlite code ";
  message += std::to_string(rc);
  message += ")";
  return Error(ErrorCode::kIoError, std::move(message));
}

Statement::~Statement() { Reset(); }

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = 0;
}

void Statement::NoteBindResult(int rc) {
  if (rc != SQLITE_OK && bind_error_ == 0) bind_error_ = rc;
}

Statement& Statement::BindInt(int index, int64_t value) {
  NoteBindResult(sqlite3_bind_int64(stmt_, index, value));
  return *this;
}

Statement& Statement::BindText(int index, std::string_view value) {
  NoteBindResult(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::BindBlob(int index, std::string_view value) {
  // A zero-length blob must still be a BLOB (not NULL) so byte-order comparisons hold.
  static const char kEmpty = 0;
  const char* data = value.empty() ? &kEmpty : value.data();
  NoteBindResult(sqlite3_bind_blob64(stmt_, index, data, value.size(), SQLITE_TRANSIENT));
  return *this;
}

Statement& Statement::BindNull(int index) {
  NoteBindResult(sqlite3_bind_null(stmt_, index));
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_error_ != 0) return SqliteError(db_, bind_error_, "bind");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, "step");
}

Status Statement::Run() {
  Result<bool> row = Step();
  if (!row.ok()) return row.status();
  return Status::Ok();
}

bool Statement::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string Statement::Blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

Result<std::unique_ptr<Connection>> Connection::Open(const ConnectionOptions& options) {
  if (sqlite3_threadsafe() == 0) {
    return Error(ErrorCode::kInternal, "SQLite was built without thread support");
  }
  sqlite3* db = nullptr;
  // NOMUTEX: each connection is confined to one thread at a time by its owner.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(options.path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(db, rc, "open " + options.path);
    sqlite3_close_v2(db);
    return status;
  }
  std::unique_ptr<Connection> connection(new Connection(db));
  SERAC_RETURN_IF_ERROR(connection->ApplyPragmas(options));
  return connection;
}

Status Connection::ApplyPragmas(const ConnectionOptions& options) {
  auto busy_ms = std::chrono::duration_cast<std::chrono::milliseconds>(limits::kMetaBusyTimeout);
  int rc = sqlite3_busy_timeout(db_, static_cast<int>(busy_ms.count()));
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "busy_timeout");
  if (!options.writer) return Exec("PRAGMA query_only=ON;");
  SERAC_RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL;"));
  // The group committer fsyncs the log itself (WalFile), apart from the COMMIT.
  SERAC_RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL;"));
  // Some builds (Debian's) zero every freed page, which the log then carries: a catalog commit
  // that trims a metadata file wrote its freed pages once more. FAST still clears deleted content
  // from the pages a write touches anyway.
  SERAC_RETURN_IF_ERROR(Exec("PRAGMA secure_delete=FAST;"));
  return Exec("PRAGMA foreign_keys=ON;");
}

void Connection::SetWalCommitHook(WalCommitHook hook) {
  wal_commit_hook_ = std::move(hook);
  if (wal_commit_hook_) {
    sqlite3_wal_hook(db_, &Connection::OnWalCommit, this);  // replaces the automatic checkpoint
  } else {
    constexpr int kSqliteDefaultAutocheckpointPages = 1000;
    sqlite3_wal_autocheckpoint(db_, kSqliteDefaultAutocheckpointPages);
  }
}

int Connection::OnWalCommit(void* self, sqlite3*, const char*, int wal_pages) {
  auto* connection = static_cast<Connection*>(self);
  connection->wal_commit_hook_(*connection, wal_pages);
  return SQLITE_OK;
}

Status Connection::CheckpointPassive() {
  int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  if (rc == SQLITE_OK || rc == SQLITE_BUSY) return Status::Ok();  // busy: another checkpoint is running
  return SqliteError(db_, rc, "wal checkpoint");
}

Connection::~Connection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Status Connection::Exec(const char* sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string message = error != nullptr ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  return Error(ErrorCode::kIoError, "exec: " + message + " (sqlite code " + std::to_string(rc) + ")");
}

Status Connection::ExecCached(const std::string& sql) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, Prepare(sql));
  return stmt->Run();
}

Result<std::unique_ptr<Statement>> Connection::Prepare(const std::string& sql) {
  auto found = statements_.find(sql);
  if (found == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                &stmt, nullptr);
    if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare");
    found = statements_.emplace(sql, stmt).first;
  }
  return std::make_unique<Statement>(db_, found->second);
}

int64_t Connection::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int Connection::Changes() const { return sqlite3_changes(db_); }

bool Connection::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

}  // namespace serac::meta::sqlite
