// Thin RAII wrappers over one SQLite connection and its prepared statements, turning SQLite
// result codes into Status. A Connection is used by one thread at a time (opened NOMUTEX); the
// owner serialises access. Only sqlite_db.cc includes sqlite3.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace serac::meta::sqlite {

// A prepared statement borrowed from a Connection's cache; at most one borrower per SQL text at a
// time. Binding indices are 1-based like
// SQLite's `?N`; column indices are 0-based. Destruction resets it for the next user.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& BindInt(int index, int64_t value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindBlob(int index, std::string_view value);  // keys: ordered as raw bytes
  Statement& BindNull(int index);

  // true when a row is available, false when done.
  Result<bool> Step();
  // Runs a statement that returns no rows.
  Status Run();
  // Makes the statement ready to be bound and run again.
  void Reset();

  bool IsNull(int column) const;
  int64_t Int(int column) const;
  std::string Text(int column) const;  // NULL reads as ""
  std::string Blob(int column) const;  // NULL reads as ""

 private:
  void NoteBindResult(int rc);

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_error_ = 0;  // first failing bind's result code, 0 = none
};

struct ConnectionOptions {
  std::string path;
  // false: read-only (PRAGMA query_only). A writer runs with synchronous=NORMAL: a COMMIT writes
  // the log without fsync (the group committer syncs it, WalFile), a checkpoint fsyncs.
  bool writer = false;
};

class Connection {
 public:
  static Result<std::unique_ptr<Connection>> Open(const ConnectionOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs one or more statements without parameters.
  Status Exec(const char* sql);
  // Runs one statement without parameters, prepared once (for hot statements like COMMIT).
  Status ExecCached(const std::string& sql);
  // Prepares (once per connection) and returns the statement for `sql`.
  Result<std::unique_ptr<Statement>> Prepare(const std::string& sql);

  int64_t LastInsertRowId() const;
  int Changes() const;
  bool InTransaction() const;

  // Called after every commit on this connection with the write-ahead log's length in pages,
  // instead of SQLite's automatic checkpoint (see WalCheckpointer).
  using WalCommitHook = std::function<void(Connection& self, int wal_pages)>;
  void SetWalCommitHook(WalCommitHook hook);
  // Copies what it can of the log into the database without waiting for readers or writers.
  Status CheckpointPassive();

 private:
  explicit Connection(sqlite3* db) : db_(db) {}
  Status ApplyPragmas(const ConnectionOptions& options);

  static int OnWalCommit(void* self, sqlite3* db, const char* database, int wal_pages);

  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
  WalCommitHook wal_commit_hook_;
};

// Error from the connection's last failing call, as kIoError with SQLite's message.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

// Runs `read` inside one read transaction on `db`, so that its statements see one snapshot.
template <typename T>
Result<T> RunInReadTransaction(Connection& db, const std::function<Result<T>(Connection&)>& read) {
  SERAC_RETURN_IF_ERROR(db.Exec("BEGIN;"));
  Result<T> result = read(db);
  Status ended = db.Exec("COMMIT;");
  if (result.ok() && !ended.ok()) return ended;
  return result;
}

}  // namespace serac::meta::sqlite
