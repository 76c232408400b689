// The replication connection over libpq: replication commands by simple query, then the CopyBoth
// stream read without blocking (PQgetCopyData async, poll on the socket for the rest of the wait).
#include "sync/replication.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cctype>
#include <chrono>

#include "sync/postgres.h"
#include "sync/postgres_internal.h"

namespace serac::sync {
namespace {

// Microseconds since 2000-01-01, the protocol's clock.
int64_t PostgresNow() {
  const auto since_unix = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return since_unix.count() - 946'684'800'000'000;
}

bool IsIdentifier(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

struct ReplicationStream::Impl {
  PGconn* connection = nullptr;
  pgoutput::Lsn acknowledged = 0;
  pgoutput::Lsn server_wal_end = 0;
  bool streaming = false;
  ~Impl() {
    if (connection) PQfinish(connection);
  }

  // One replication command's rows; kInvalidArgument with the server's message when it fails.
  Result<PgRows> Command(const std::string& command) {
    PGresult* result = PQexec(connection, command.c_str());
    const ExecStatusType status = PQresultStatus(result);
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      std::string message = TrimmedMessage(PQresultErrorMessage(result));
      PQclear(result);
      return Error(
          PQstatus(connection) == CONNECTION_OK ? ErrorCode::kInvalidArgument : ErrorCode::kUnavailable,
          command.substr(0, command.find(' ')) + ": " + message);
    }
    PgRows rows;
    for (int r = 0; r < PQntuples(result); ++r) {
      auto& row = rows.rows.emplace_back();
      for (int f = 0; f < PQnfields(result); ++f) {
        if (PQgetisnull(result, r, f)) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(PQgetvalue(result, r, f)));
        }
      }
    }
    PQclear(result);
    return rows;
  }

  Status Send(const std::string& frame) {
    if (PQputCopyData(connection, frame.data(), static_cast<int>(frame.size())) != 1 ||
        PQflush(connection) != 0) {
      return Error(ErrorCode::kUnavailable,
                   "replication stream: " + TrimmedMessage(PQerrorMessage(connection)));
    }
    return Status::Ok();
  }
};

ReplicationStream::ReplicationStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ReplicationStream::ReplicationStream(ReplicationStream&&) noexcept = default;
ReplicationStream& ReplicationStream::operator=(ReplicationStream&&) noexcept = default;
ReplicationStream::~ReplicationStream() = default;

Result<ReplicationStream> ReplicationStream::Connect(const PostgresSource& source) {
  auto impl = std::make_unique<Impl>();
  SERAC_ASSIGN_OR_RETURN(impl->connection, OpenLibpqConnection(source, true));
  return ReplicationStream(std::move(impl));
}

Result<pgoutput::Lsn> ReplicationStream::CurrentPosition() {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, impl_->Command("IDENTIFY_SYSTEM"));
  if (rows.rows.empty() || rows.rows[0].size() < 3 || !rows.rows[0][2]) {
    return Error(ErrorCode::kInvalidArgument, "IDENTIFY_SYSTEM: no position in the answer");
  }
  return pgoutput::ParseLsn(*rows.rows[0][2]);
}

Result<ReplicationStream::CreatedSlot> ReplicationStream::CreateSlot(const std::string& name,
                                                                     bool temporary) {
  if (!IsIdentifier(name)) {
    return Error(ErrorCode::kInvalidArgument,
                 "replication slot names are letters, digits and _ (at most 63): " + name);
  }
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         impl_->Command("CREATE_REPLICATION_SLOT " + name + (temporary ? " TEMPORARY" : "") +
                                        " LOGICAL pgoutput (SNAPSHOT 'export')"));
  if (rows.rows.empty() || rows.rows[0].size() < 3 || !rows.rows[0][1] || !rows.rows[0][2]) {
    return Error(ErrorCode::kInvalidArgument, "CREATE_REPLICATION_SLOT: no consistent point or snapshot");
  }
  CreatedSlot slot;
  SERAC_ASSIGN_OR_RETURN(slot.consistent_point, pgoutput::ParseLsn(*rows.rows[0][1]));
  slot.snapshot_name = *rows.rows[0][2];
  return slot;
}

Status ReplicationStream::Start(const std::string& slot, pgoutput::Lsn from, const StartOptions& options) {
  if (!IsIdentifier(slot)) return Error(ErrorCode::kInvalidArgument, "not a replication slot name: " + slot);
  if (options.protocol_version < 1 || options.protocol_version > 4) {
    return Error(ErrorCode::kInvalidArgument, "pgoutput protocol versions are 1 to 4");
  }
  std::string publication = "'";
  for (char c : options.publication) {
    if (c == '\'') publication += '\'';
    publication += c;
  }
  publication += "'";
  std::string command = "START_REPLICATION SLOT " + slot + " LOGICAL " + pgoutput::LsnToText(from) +
                        " (proto_version '" + std::to_string(options.protocol_version) +
                        "', publication_names " + publication;
  if (options.streaming && options.protocol_version >= 2) command += ", streaming 'on'";
  command += ")";
  PGresult* result = PQexec(impl_->connection, command.c_str());
  const ExecStatusType status = PQresultStatus(result);
  std::string message = TrimmedMessage(PQresultErrorMessage(result));
  PQclear(result);
  if (status != PGRES_COPY_BOTH) return Error(ErrorCode::kInvalidArgument, "START_REPLICATION: " + message);
  impl_->streaming = true;
  impl_->acknowledged = std::max(impl_->acknowledged, from);
  return Status::Ok();
}

Result<std::optional<ReplicationStream::Frame>> ReplicationStream::Next(std::chrono::milliseconds timeout) {
  if (!impl_->streaming) return Error(ErrorCode::kInvalidArgument, "the replication stream was not started");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    char* buffer = nullptr;
    const int length = PQgetCopyData(impl_->connection, &buffer, 1);
    if (length > 0) {
      std::string bytes(buffer, static_cast<size_t>(length));
      PQfreemem(buffer);
      SERAC_ASSIGN_OR_RETURN(auto frame, pgoutput::DecodeCopyData(bytes));
      if (auto* keepalive = std::get_if<pgoutput::Keepalive>(&frame)) {
        impl_->server_wal_end = std::max(impl_->server_wal_end, keepalive->wal_end);
        if (keepalive->reply_requested) {
          SERAC_RETURN_IF_ERROR(Acknowledge(impl_->acknowledged));
        }
        continue;
      }
      const auto& data = std::get<pgoutput::XLogData>(frame);
      impl_->server_wal_end = std::max(impl_->server_wal_end, data.wal_end);
      return std::optional<Frame>(Frame{data.wal_start, data.wal_end, std::string(data.payload)});
    }
    if (length == -1) {
      impl_->streaming = false;
      return Error(ErrorCode::kUnavailable, "the server ended the replication stream");
    }
    if (length < -1) {
      return Error(ErrorCode::kUnavailable,
                   "replication stream: " + TrimmedMessage(PQerrorMessage(impl_->connection)));
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::optional<Frame>();
    pollfd wait{PQsocket(impl_->connection), POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    ::poll(&wait, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (PQconsumeInput(impl_->connection) != 1) {
      return Error(ErrorCode::kUnavailable,
                   "replication stream: " + TrimmedMessage(PQerrorMessage(impl_->connection)));
    }
  }
}

Status ReplicationStream::Acknowledge(pgoutput::Lsn flushed) {
  impl_->acknowledged = std::max(impl_->acknowledged, flushed);
  const pgoutput::Lsn position = impl_->acknowledged;
  return impl_->Send(pgoutput::StandbyStatusUpdate(position, position, position, PostgresNow(), false));
}

Status ReplicationStream::RequestKeepalive() {
  const pgoutput::Lsn position = impl_->acknowledged;
  return impl_->Send(pgoutput::StandbyStatusUpdate(position, position, position, PostgresNow(), true));
}

pgoutput::Lsn ReplicationStream::acknowledged() const { return impl_->acknowledged; }
pgoutput::Lsn ReplicationStream::server_wal_end() const { return impl_->server_wal_end; }

Status BeginWithSnapshot(PgConnection& connection, const std::string& snapshot_name) {
  for (char c : snapshot_name) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-') {
      return Error(ErrorCode::kInvalidArgument, "not a snapshot name: " + snapshot_name);
    }
  }
  SERAC_RETURN_IF_ERROR(connection.Query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
  return connection.Query("SET TRANSACTION SNAPSHOT '" + snapshot_name + "'").status();
}

}  // namespace serac::sync
