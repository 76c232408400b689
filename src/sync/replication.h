// A logical replication connection to PostgreSQL (libpq with replication=database; the header stays
// in replication.cc): the slot created with an exported snapshot, so that a full load read under
// that snapshot and the changes streamed from the slot's consistent point meet with no row missed
// and none twice; the CopyBoth stream of pgoutput messages from a position; keepalives answered; and
// acknowledgements of the flush position, which becomes the slot's confirmed_flush_lsn — given
// only for what is durable in Iceberg. Protocol: ../shared/reference/cdc-and-formats.md §3.2–3.5.
// Thread-safety: one thread per stream.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "sync/config.h"
#include "sync/pgoutput.h"

namespace serac::sync {

class ReplicationStream {
 public:
  static Result<ReplicationStream> Connect(const PostgresSource& source);
  ReplicationStream(ReplicationStream&&) noexcept;
  ReplicationStream& operator=(ReplicationStream&&) noexcept;
  ~ReplicationStream();

  // IDENTIFY_SYSTEM: the server's current flush position.
  Result<pgoutput::Lsn> CurrentPosition();

  struct CreatedSlot {
    pgoutput::Lsn consistent_point = 0;  // streaming from here follows the snapshot exactly
    std::string snapshot_name;           // for SET TRANSACTION SNAPSHOT, until this connection's next command
  };
  // CREATE_REPLICATION_SLOT name [TEMPORARY] LOGICAL pgoutput (SNAPSHOT 'export'). A temporary
  // slot goes with this connection: it serves only for its snapshot (a table loaded later).
  Result<CreatedSlot> CreateSlot(const std::string& name, bool temporary = false);

  struct StartOptions {
    int protocol_version = 2;
    std::string publication;
    bool streaming = true;  // large in-progress transactions in stream blocks (protocol 2 and later)
  };
  // START_REPLICATION SLOT name LOGICAL from (...): the stream begins at the later of `from` and
  // the slot's confirmed_flush_lsn.
  Status Start(const std::string& slot, pgoutput::Lsn from, const StartOptions& options);

  // The next XLogData frame, waiting up to `timeout`; nullopt when none came. Keepalives are
  // answered here (with the last acknowledged position) and not returned. kUnavailable when the
  // server ended the stream or the connection broke.
  struct Frame {
    pgoutput::Lsn wal_start = 0;
    pgoutput::Lsn wal_end = 0;
    std::string payload;  // one pgoutput message
  };
  Result<std::optional<Frame>> Next(std::chrono::milliseconds timeout);

  // Reports `flushed` as written, flushed and applied: the slot may discard what comes before it,
  // and the next session resumes there. Positions never move back.
  Status Acknowledge(pgoutput::Lsn flushed);
  pgoutput::Lsn acknowledged() const;
  // Asks the server for a keepalive now (a status update with the reply flag): how a client that
  // has seen nothing for a while learns how far the server has read (server_wal_end).
  Status RequestKeepalive();
  // How far the server has sent WAL (keepalives and XLogData say): with nothing open, everything
  // before it has been seen.
  pgoutput::Lsn server_wal_end() const;

 private:
  struct Impl;
  explicit ReplicationStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Starts a REPEATABLE READ transaction on `connection` that sees the exported snapshot: the first
// statements of a full-load reader. kInvalidArgument for a name that is not a snapshot name.
class PgConnection;
Status BeginWithSnapshot(PgConnection& connection, const std::string& snapshot_name);

}  // namespace serac::sync
