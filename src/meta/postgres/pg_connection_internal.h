// Thin RAII over one libpq connection: statements prepared once per connection, parameters and
// results in binary form, errors as Status with PostgreSQL's SQLSTATE kept for the caller to
// classify (a lost race, a lost connection). A PgConnection is used by one thread at a time; the
// pool (pg_engine_internal.h) hands it out. Only pg_connection.cc includes libpq-fe.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

struct pg_conn;
struct pg_result;

namespace serac::meta::postgres {

// SQLSTATEs the engine acts on.
inline constexpr std::string_view kSqlstateSerializationFailure = "40001";
inline constexpr std::string_view kSqlstateDeadlockDetected = "40P01";
inline constexpr std::string_view kSqlstateUniqueViolation = "23505";
inline constexpr std::string_view kSqlstateForeignKeyViolation = "23503";

// One statement parameter: its type (a PostgreSQL type oid) and its value in binary form.
class PgParam {
 public:
  static PgParam Text(std::string_view value);
  static PgParam Bytes(std::string_view value);  // bytea: object keys and paths, ordered as raw bytes
  static PgParam Int(int64_t value);             // int8
  static PgParam Bool(bool value);
  static PgParam NullText();
  static PgParam NullBytes();

  uint32_t type() const { return type_; }
  bool is_null() const { return is_null_; }
  const std::string& value() const { return value_; }

 private:
  PgParam(uint32_t type, std::string value, bool is_null)
      : type_(type), value_(std::move(value)), is_null_(is_null) {}
  uint32_t type_;
  std::string value_;
  bool is_null_;
};

using PgParams = std::vector<PgParam>;

// The rows of one statement, in binary form. Column and row indices are 0-based.
class PgRows {
 public:
  explicit PgRows(pg_result* result);
  ~PgRows();
  PgRows(PgRows&& other) noexcept;
  PgRows& operator=(PgRows&& other) = delete;
  PgRows(const PgRows&) = delete;
  PgRows& operator=(const PgRows&) = delete;

  int size() const;
  bool empty() const { return size() == 0; }
  // Rows an INSERT, UPDATE or DELETE touched.
  int64_t affected() const;

  bool IsNull(int row, int column) const;
  int64_t Int(int row, int column) const;       // int2, int4 or int8; NULL reads as 0
  bool Bool(int row, int column) const;         // NULL reads as false
  std::string Text(int row, int column) const;  // text or bytea bytes; NULL reads as ""

 private:
  pg_result* result_;
};

class PgConnection {
 public:
  // `conninfo`: a libpq connection string or URL. Never logged: it may hold a password.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one or more statements without parameters (transaction control, DDL); the last one's rows.
  Result<PgRows> Exec(const std::string& sql);
  // Runs one statement with $1.. parameters, prepared on first use by this connection.
  Result<PgRows> Query(const std::string& sql, const PgParams& params = {});

  // The SQLSTATE of the last failed call ("" when it did not come from the server).
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  // A body found a race its isolation level does not report (a conditional UPDATE that matched no
  // row): the engine runs the transaction again, as after a serialization failure.
  void MarkLostRace() { last_sqlstate_ = std::string(kSqlstateSerializationFailure); }
  // True when the connection to the server is gone (a call failed for that reason).
  bool broken() const;
  // True when a transaction is open or failed and not yet ended.
  bool InTransaction() const;

 private:
  explicit PgConnection(pg_conn* conn) : conn_(conn) {}
  Status ResultError(pg_result* result, std::string_view what);
  Result<PgRows> Finish(pg_result* result, std::string_view what);

  pg_conn* conn_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL text → statement name
  std::string last_sqlstate_;
};

}  // namespace serac::meta::postgres
