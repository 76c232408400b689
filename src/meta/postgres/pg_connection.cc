#include <libpq-fe.h>

#include <cstdlib>
#include <cstring>
#include <utility>

#include "common/blocking.h"
#include "meta/postgres/pg_connection_internal.h"

namespace serac::meta::postgres {
namespace {

// Type oids of pg_type, fixed since PostgreSQL's first releases.
constexpr uint32_t kBoolOid = 16;
constexpr uint32_t kByteaOid = 17;
constexpr uint32_t kInt8Oid = 20;
constexpr uint32_t kTextOid = 25;

constexpr int kBinaryFormat = 1;

std::string BigEndian(uint64_t value, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(value & 0xFF);
    value >>= 8;
  }
  return out;
}

int64_t ReadBigEndian(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | static_cast<unsigned char>(data[i]);
  // Sign-extend values narrower than 64 bits.
  if (bytes < 8 && bytes > 0 && (value >> (bytes * 8 - 1)) != 0) value |= ~uint64_t{0} << (bytes * 8);
  return static_cast<int64_t>(value);
}

// libpq prints notices (for example "relation already exists, skipping") on stderr by default.
void IgnoreNotice(void*, const PGresult*) {}

}  // namespace

PgParam PgParam::Text(std::string_view value) { return PgParam(kTextOid, std::string(value), false); }
PgParam PgParam::Bytes(std::string_view value) { return PgParam(kByteaOid, std::string(value), false); }
PgParam PgParam::Int(int64_t value) {
  return PgParam(kInt8Oid, BigEndian(static_cast<uint64_t>(value), 8), false);
}
PgParam PgParam::Bool(bool value) { return PgParam(kBoolOid, std::string(1, value ? '\1' : '\0'), false); }
PgParam PgParam::NullText() { return PgParam(kTextOid, std::string(), true); }
PgParam PgParam::NullBytes() { return PgParam(kByteaOid, std::string(), true); }

PgRows::PgRows(pg_result* result) : result_(result) {}
PgRows::~PgRows() {
  if (result_ != nullptr) PQclear(result_);
}
PgRows::PgRows(PgRows&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}

int PgRows::size() const { return result_ == nullptr ? 0 : PQntuples(result_); }

int64_t PgRows::affected() const {
  if (result_ == nullptr) return 0;
  const char* count = PQcmdTuples(result_);
  return count == nullptr || *count == '\0' ? 0 : std::strtoll(count, nullptr, 10);
}

bool PgRows::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }

int64_t PgRows::Int(int row, int column) const {
  if (IsNull(row, column)) return 0;
  return ReadBigEndian(PQgetvalue(result_, row, column), PQgetlength(result_, row, column));
}

bool PgRows::Bool(int row, int column) const {
  return !IsNull(row, column) && PQgetvalue(result_, row, column)[0] != 0;
}

std::string PgRows::Text(int row, int column) const {
  if (IsNull(row, column)) return {};
  return std::string(PQgetvalue(result_, row, column),
                     static_cast<size_t>(PQgetlength(result_, row, column)));
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (conn == nullptr)
    return Error(ErrorCode::kUnavailable, "PostgreSQL: out of memory opening a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    // libpq's message names the host and the reason, never the password.
    std::string message = PQerrorMessage(conn);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    PQfinish(conn);
    return Error(ErrorCode::kUnavailable, "cannot connect to PostgreSQL: " + message);
  }
  PQsetNoticeReceiver(conn, IgnoreNotice, nullptr);
  return std::unique_ptr<PgConnection>(new PgConnection(conn));
}

PgConnection::~PgConnection() { PQfinish(conn_); }

bool PgConnection::broken() const { return PQstatus(conn_) != CONNECTION_OK; }

bool PgConnection::InTransaction() const {
  const PGTransactionStatusType status = PQtransactionStatus(conn_);
  return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE;
}

Status PgConnection::ResultError(pg_result* result, std::string_view what) {
  const char* sqlstate = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_SQLSTATE);
  last_sqlstate_ = sqlstate == nullptr ? "" : sqlstate;
  const char* primary = result == nullptr ? nullptr : PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
  std::string message = primary != nullptr ? primary : PQerrorMessage(conn_);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (result != nullptr) PQclear(result);
  std::string text = "PostgreSQL " + std::string(what) + ": " + message;
  if (!last_sqlstate_.empty()) text += " (SQLSTATE " + last_sqlstate_ + ")";
  return Error(broken() ? ErrorCode::kUnavailable : ErrorCode::kIoError, text);
}

Result<PgRows> PgConnection::Finish(pg_result* result, std::string_view what) {
  const ExecStatusType status = result == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return ResultError(result, what);
  last_sqlstate_.clear();
  return PgRows(result);
}

// Every statement is a round trip to the database server: marked, so that an event-loop thread
// hands its other connections on before it waits (common/blocking.h).
Result<PgRows> PgConnection::Exec(const std::string& sql) {
  const blocking::Region round_trip;
  return Finish(PQexec(conn_, sql.c_str()), "statement");
}

Result<PgRows> PgConnection::Query(const std::string& sql, const PgParams& params) {
  const blocking::Region round_trip;
  auto found = prepared_.find(sql);
  if (found == prepared_.end()) {
    std::vector<unsigned int> types;
    types.reserve(params.size());
    for (const PgParam& param : params) types.push_back(param.type());
    std::string name = "s" + std::to_string(prepared_.size());
    Result<PgRows> prepared =
        Finish(PQprepare(conn_, name.c_str(), sql.c_str(), static_cast<int>(params.size()), types.data()),
               "prepare");
    if (!prepared.ok()) return prepared.status();
    found = prepared_.emplace(sql, std::move(name)).first;
  }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats(params.size(), kBinaryFormat);
  values.reserve(params.size());
  lengths.reserve(params.size());
  for (const PgParam& param : params) {
    values.push_back(param.is_null() ? nullptr : param.value().data());
    lengths.push_back(static_cast<int>(param.value().size()));
  }
  return Finish(PQexecPrepared(conn_, found->second.c_str(), static_cast<int>(params.size()), values.data(),
                               lengths.data(), formats.data(), kBinaryFormat),
                "query");
}

}  // namespace serac::meta::postgres
