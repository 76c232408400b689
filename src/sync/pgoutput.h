// PostgreSQL's logical replication stream, decoded: the CopyBoth frames of a replication connection
// (XLogData, primary keepalive; the standby status update a client sends back) and the pgoutput
// messages inside XLogData, protocol versions 1 to 4 — transactions (Begin, Commit, Origin),
// relations and types, Insert, Update, Delete and Truncate with their tuples (null, unchanged
// TOAST, text and binary values), logical messages, streamed in-progress transactions (Stream
// Start/Stop/Commit/Abort, the xid of every change inside a stream block) and two-phase commits.
// Every length and count is checked against the bytes that are there: a malformed message is
// kInvalidArgument naming what is wrong, never a read past its end. Formats:
// ../shared/reference/cdc-and-formats.md §3.5–3.7 and PostgreSQL's "Logical Replication Message
// Formats".
// Thread-safety: plain values; a Decoder is used by one thread (it knows whether a stream block is open).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/status.h"

namespace serac::sync::pgoutput {

using Lsn = uint64_t;
// "16/B374D848" as PostgreSQL writes an LSN, and back.
std::string LsnToText(Lsn lsn);
Result<Lsn> ParseLsn(std::string_view text);

// Microseconds since 2000-01-01 (PostgreSQL's epoch) to microseconds since 1970-01-01.
inline int64_t UnixMicrosFromPostgres(int64_t postgres_micros) {
  return postgres_micros + 946'684'800'000'000;
}

struct Column {
  bool is_key = false;  // part of the replica identity
  std::string name;
  uint32_t type_oid = 0;
  int32_t type_modifier = -1;  // numeric(p,s), varchar(n), ...: as pg_attribute.atttypmod
};

struct Relation {
  uint32_t oid = 0;
  std::string namespace_name;  // "" for pg_catalog
  std::string name;
  char replica_identity = 'd';  // d default, n nothing, f full, i index
  std::vector<Column> columns;
};

struct TypeInfo {
  uint32_t oid = 0;
  std::string namespace_name;
  std::string name;
};

// One column value of a tuple.
struct Value {
  enum class Kind : uint8_t { kNull, kUnchangedToast, kText, kBinary };
  Kind kind = Kind::kNull;
  std::string bytes;  // kText, kBinary
};
using Tuple = std::vector<Value>;

struct Begin {
  Lsn final_lsn = 0;
  int64_t commit_time = 0;  // microseconds since 2000-01-01
  uint32_t xid = 0;
};
struct Commit {
  uint8_t flags = 0;
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;
  int64_t commit_time = 0;
};
struct Origin {
  Lsn commit_lsn = 0;
  std::string name;
};
struct Insert {
  uint32_t relation = 0;
  Tuple row;
};
struct Update {
  uint32_t relation = 0;
  std::optional<Tuple> old_key;  // 'K': the old key, when the key changed
  std::optional<Tuple> old_row;  // 'O': the whole old row, REPLICA IDENTITY FULL
  Tuple row;
};
struct Delete {
  uint32_t relation = 0;
  std::optional<Tuple> old_key;
  std::optional<Tuple> old_row;
};
struct Truncate {
  std::vector<uint32_t> relations;
  bool cascade = false;
  bool restart_identity = false;
};
struct LogicalMessage {
  bool transactional = false;
  Lsn lsn = 0;
  std::string prefix;
  std::string content;
};
struct StreamStart {
  uint32_t xid = 0;
  bool first_segment = false;
};
struct StreamStop {};
struct StreamCommit {
  uint32_t xid = 0;
  uint8_t flags = 0;
  Lsn commit_lsn = 0;
  Lsn end_lsn = 0;
  int64_t commit_time = 0;
};
struct StreamAbort {
  uint32_t xid = 0;
  uint32_t subtransaction_xid = 0;  // equal to xid when the whole transaction aborted
  std::optional<Lsn> abort_lsn;     // protocol 4
  std::optional<int64_t> abort_time;
};
// Begin Prepare 'b', Prepare 'P', Commit Prepared 'K', Rollback Prepared 'r', Stream Prepare 'p'.
struct TwoPhase {
  char type = 'P';
  uint8_t flags = 0;
  Lsn lsn = 0;      // prepare LSN ('b', 'P', 'p'), commit LSN ('K'), the prepared transaction's end ('r')
  Lsn end_lsn = 0;  // the transaction's ('b', 'P', 'p', 'K') or the rollback's ('r') end
  int64_t time = 0;
  std::optional<int64_t> rollback_time;  // 'r'
  uint32_t xid = 0;
  std::string gid;
};

struct Message {
  std::variant<Begin, Commit, Origin, Relation, TypeInfo, Insert, Update, Delete, Truncate, LogicalMessage,
               StreamStart, StreamStop, StreamCommit, StreamAbort, TwoPhase>
      body;
  std::optional<uint32_t> xid;  // the streamed transaction a change inside a stream block belongs to
  char type = 0;                // the message's type byte
};

class Decoder {
 public:
  // protocol_version: what START_REPLICATION asked for (1 to 4).
  explicit Decoder(int protocol_version) : protocol_version_(protocol_version) {}
  // One pgoutput message: the payload of an XLogData frame.
  Result<Message> Decode(std::string_view bytes);
  bool in_stream() const { return in_stream_; }

 private:
  int protocol_version_;
  bool in_stream_ = false;
};

// The frames of the CopyBoth stream.
struct XLogData {
  Lsn wal_start = 0;  // 0 for messages that are not WAL records (a Relation)
  Lsn wal_end = 0;
  int64_t server_time = 0;
  std::string_view payload;  // points into the frame given to DecodeCopyData
};
struct Keepalive {
  Lsn wal_end = 0;
  int64_t server_time = 0;
  bool reply_requested = false;
};
Result<std::variant<XLogData, Keepalive>> DecodeCopyData(std::string_view frame);
// The client's 'r' frame: positions written, flushed (becomes the slot's confirmed_flush_lsn) and
// applied, the client's clock (microseconds since 2000-01-01), whether the server should answer.
std::string StandbyStatusUpdate(Lsn written, Lsn flushed, Lsn applied, int64_t client_time,
                                bool reply_requested);

}  // namespace serac::sync::pgoutput
