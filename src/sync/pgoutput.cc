// pgoutput and CopyBoth decoding: a bounds-checked big-endian reader over one message, and one
// function per message type.
#include "sync/pgoutput.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace serac::sync::pgoutput {
namespace {

// Reads big-endian fields from one message; every read checks the bytes that remain.
class Reader {
 public:
  Reader(std::string_view bytes, char type) : bytes_(bytes), type_(type) {}

  Status Fail(const std::string& what) const {
    return Error(ErrorCode::kInvalidArgument, std::string("pgoutput message '") + type_ + "': " + what +
                                                  " at byte " + std::to_string(pos_ + 1) + " of " +
                                                  std::to_string(bytes_.size()));
  }
  Result<uint64_t> Unsigned(size_t width, const char* what) {
    if (bytes_.size() - pos_ < width) return Fail(std::string("truncated ") + what);
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) value = (value << 8) | static_cast<uint8_t>(bytes_[pos_ + i]);
    pos_ += width;
    return value;
  }
  Result<uint8_t> Int8(const char* what) {
    SERAC_ASSIGN_OR_RETURN(uint64_t value, Unsigned(1, what));
    return static_cast<uint8_t>(value);
  }
  Result<int16_t> Int16(const char* what) {
    SERAC_ASSIGN_OR_RETURN(uint64_t value, Unsigned(2, what));
    return static_cast<int16_t>(static_cast<uint16_t>(value));
  }
  Result<uint32_t> UInt32(const char* what) {
    SERAC_ASSIGN_OR_RETURN(uint64_t value, Unsigned(4, what));
    return static_cast<uint32_t>(value);
  }
  Result<int32_t> Int32(const char* what) {
    SERAC_ASSIGN_OR_RETURN(uint32_t value, UInt32(what));
    return static_cast<int32_t>(value);
  }
  Result<uint64_t> UInt64(const char* what) { return Unsigned(8, what); }
  Result<int64_t> Int64(const char* what) {
    SERAC_ASSIGN_OR_RETURN(uint64_t value, Unsigned(8, what));
    return static_cast<int64_t>(value);
  }
  Result<std::string> String(const char* what) {
    const size_t end = bytes_.find('\0', pos_);
    if (end == std::string_view::npos) return Fail(std::string("unterminated ") + what);
    std::string value(bytes_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  Result<std::string> Bytes(size_t length, const char* what) {
    if (bytes_.size() - pos_ < length) return Fail(std::string(what) + " longer than the message");
    std::string value(bytes_.substr(pos_, length));
    pos_ += length;
    return value;
  }
  Status End() const {
    if (pos_ != bytes_.size()) return Fail(std::to_string(bytes_.size() - pos_) + " bytes left over");
    return Status::Ok();
  }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  std::string_view bytes_;
  char type_;
  size_t pos_ = 1;  // after the type byte
};

Result<Tuple> ReadTuple(Reader& in) {
  SERAC_ASSIGN_OR_RETURN(int16_t count, in.Int16("column count"));
  // Each column takes at least its kind byte: a count beyond what remains is malformed, not a reason to
  // allocate.
  if (count < 0 || static_cast<size_t>(count) > in.remaining()) return in.Fail("impossible column count");
  Tuple tuple;
  tuple.reserve(static_cast<size_t>(count));
  for (int16_t i = 0; i < count; ++i) {
    SERAC_ASSIGN_OR_RETURN(uint8_t kind, in.Int8("column kind"));
    Value value;
    switch (kind) {
      case 'n':
        value.kind = Value::Kind::kNull;
        break;
      case 'u':
        value.kind = Value::Kind::kUnchangedToast;
        break;
      case 't':
      case 'b': {
        value.kind = kind == 't' ? Value::Kind::kText : Value::Kind::kBinary;
        SERAC_ASSIGN_OR_RETURN(int32_t length, in.Int32("value length"));
        if (length < 0) return in.Fail("negative value length");
        SERAC_ASSIGN_OR_RETURN(value.bytes, in.Bytes(static_cast<size_t>(length), "value"));
        break;
      }
      default:
        return in.Fail(std::string("unknown column kind '") + static_cast<char>(kind) + "'");
    }
    tuple.push_back(std::move(value));
  }
  return tuple;
}

// 'K' or 'O' followed by a tuple, if the next byte is one of them; the caller's `next` then holds
// the byte after it ('N' for an update).
Result<uint8_t> ReadOldTuple(Reader& in, std::optional<Tuple>& old_key, std::optional<Tuple>& old_row) {
  SERAC_ASSIGN_OR_RETURN(uint8_t marker, in.Int8("tuple marker"));
  if (marker == 'K' || marker == 'O') {
    SERAC_ASSIGN_OR_RETURN(Tuple tuple, ReadTuple(in));
    (marker == 'K' ? old_key : old_row) = std::move(tuple);
    if (in.remaining() == 0) return uint8_t{0};
    return in.Int8("tuple marker");
  }
  return marker;
}

}  // namespace

std::string LsnToText(Lsn lsn) {
  char text[32];
  std::snprintf(text, sizeof(text), "%" PRIX32 "/%" PRIX32, static_cast<uint32_t>(lsn >> 32),
                static_cast<uint32_t>(lsn));
  return text;
}

Result<Lsn> ParseLsn(std::string_view text) {
  const size_t slash = text.find('/');
  auto part = [](std::string_view hex, uint32_t& out) {
    if (hex.empty() || hex.size() > 8) return false;
    out = 0;
    for (char c : hex) {
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
      if (digit < 0) return false;
      out = out * 16 + static_cast<uint32_t>(digit);
    }
    return true;
  };
  uint32_t high = 0, low = 0;
  if (slash == std::string_view::npos || !part(text.substr(0, slash), high) ||
      !part(text.substr(slash + 1), low)) {
    return Error(ErrorCode::kInvalidArgument,
                 "not an LSN: \"" + std::string(text) + "\" (expected X/Y in hex)");
  }
  return (static_cast<Lsn>(high) << 32) | low;
}

Result<Message> Decoder::Decode(std::string_view bytes) {
  if (bytes.empty()) return Error(ErrorCode::kInvalidArgument, "empty pgoutput message");
  Message message;
  message.type = bytes[0];
  Reader in(bytes, message.type);
  // Changes inside a stream block carry the streamed transaction's xid (protocol 2 and later).
  auto read_xid = [&]() -> Status {
    if (in_stream_) {
      SERAC_ASSIGN_OR_RETURN(uint32_t xid, in.UInt32("xid"));
      message.xid = xid;
    }
    return Status::Ok();
  };
  auto needs_protocol = [&](int version) -> Status {
    if (protocol_version_ < version) {
      return in.Fail("needs protocol version " + std::to_string(version) + ", the stream uses " +
                     std::to_string(protocol_version_));
    }
    return Status::Ok();
  };
  switch (message.type) {
    case 'B': {
      Begin begin;
      SERAC_ASSIGN_OR_RETURN(begin.final_lsn, in.UInt64("final LSN"));
      SERAC_ASSIGN_OR_RETURN(begin.commit_time, in.Int64("commit time"));
      SERAC_ASSIGN_OR_RETURN(begin.xid, in.UInt32("xid"));
      message.body = begin;
      break;
    }
    case 'C': {
      Commit commit;
      SERAC_ASSIGN_OR_RETURN(commit.flags, in.Int8("flags"));
      SERAC_ASSIGN_OR_RETURN(commit.commit_lsn, in.UInt64("commit LSN"));
      SERAC_ASSIGN_OR_RETURN(commit.end_lsn, in.UInt64("end LSN"));
      SERAC_ASSIGN_OR_RETURN(commit.commit_time, in.Int64("commit time"));
      message.body = commit;
      break;
    }
    case 'O': {
      Origin origin;
      SERAC_ASSIGN_OR_RETURN(origin.commit_lsn, in.UInt64("origin LSN"));
      SERAC_ASSIGN_OR_RETURN(origin.name, in.String("origin name"));
      message.body = std::move(origin);
      break;
    }
    case 'R': {
      SERAC_RETURN_IF_ERROR(read_xid());
      Relation relation;
      SERAC_ASSIGN_OR_RETURN(relation.oid, in.UInt32("relation OID"));
      SERAC_ASSIGN_OR_RETURN(relation.namespace_name, in.String("namespace"));
      SERAC_ASSIGN_OR_RETURN(relation.name, in.String("relation name"));
      SERAC_ASSIGN_OR_RETURN(uint8_t identity, in.Int8("replica identity"));
      relation.replica_identity = static_cast<char>(identity);
      SERAC_ASSIGN_OR_RETURN(int16_t count, in.Int16("column count"));
      if (count < 0 || static_cast<size_t>(count) > in.remaining()) return in.Fail("impossible column count");
      for (int16_t i = 0; i < count; ++i) {
        Column column;
        SERAC_ASSIGN_OR_RETURN(uint8_t flags, in.Int8("column flags"));
        column.is_key = (flags & 1) != 0;
        SERAC_ASSIGN_OR_RETURN(column.name, in.String("column name"));
        SERAC_ASSIGN_OR_RETURN(column.type_oid, in.UInt32("type OID"));
        SERAC_ASSIGN_OR_RETURN(column.type_modifier, in.Int32("type modifier"));
        relation.columns.push_back(std::move(column));
      }
      message.body = std::move(relation);
      break;
    }
    case 'Y': {
      SERAC_RETURN_IF_ERROR(read_xid());
      TypeInfo type;
      SERAC_ASSIGN_OR_RETURN(type.oid, in.UInt32("type OID"));
      SERAC_ASSIGN_OR_RETURN(type.namespace_name, in.String("type namespace"));
      SERAC_ASSIGN_OR_RETURN(type.name, in.String("type name"));
      message.body = std::move(type);
      break;
    }
    case 'I': {
      SERAC_RETURN_IF_ERROR(read_xid());
      Insert insert;
      SERAC_ASSIGN_OR_RETURN(insert.relation, in.UInt32("relation OID"));
      SERAC_ASSIGN_OR_RETURN(uint8_t marker, in.Int8("tuple marker"));
      if (marker != 'N') return in.Fail("an insert's tuple starts with 'N'");
      SERAC_ASSIGN_OR_RETURN(insert.row, ReadTuple(in));
      message.body = std::move(insert);
      break;
    }
    case 'U': {
      SERAC_RETURN_IF_ERROR(read_xid());
      Update update;
      SERAC_ASSIGN_OR_RETURN(update.relation, in.UInt32("relation OID"));
      SERAC_ASSIGN_OR_RETURN(uint8_t marker, ReadOldTuple(in, update.old_key, update.old_row));
      if (marker != 'N') return in.Fail("an update's new tuple starts with 'N'");
      SERAC_ASSIGN_OR_RETURN(update.row, ReadTuple(in));
      message.body = std::move(update);
      break;
    }
    case 'D': {
      SERAC_RETURN_IF_ERROR(read_xid());
      Delete deleted;
      SERAC_ASSIGN_OR_RETURN(deleted.relation, in.UInt32("relation OID"));
      SERAC_ASSIGN_OR_RETURN(uint8_t marker, in.Int8("tuple marker"));
      if (marker != 'K' && marker != 'O') return in.Fail("a delete's old tuple starts with 'K' or 'O'");
      SERAC_ASSIGN_OR_RETURN(Tuple tuple, ReadTuple(in));
      (marker == 'K' ? deleted.old_key : deleted.old_row) = std::move(tuple);
      message.body = std::move(deleted);
      break;
    }
    case 'T': {
      SERAC_RETURN_IF_ERROR(read_xid());
      Truncate truncate;
      SERAC_ASSIGN_OR_RETURN(uint32_t count, in.UInt32("relation count"));
      SERAC_ASSIGN_OR_RETURN(uint8_t options, in.Int8("options"));
      truncate.cascade = (options & 1) != 0;
      truncate.restart_identity = (options & 2) != 0;
      if (count > in.remaining() / 4) return in.Fail("impossible relation count");
      for (uint32_t i = 0; i < count; ++i) {
        SERAC_ASSIGN_OR_RETURN(uint32_t oid, in.UInt32("relation OID"));
        truncate.relations.push_back(oid);
      }
      message.body = std::move(truncate);
      break;
    }
    case 'M': {
      SERAC_RETURN_IF_ERROR(read_xid());
      LogicalMessage logical;
      SERAC_ASSIGN_OR_RETURN(uint8_t flags, in.Int8("flags"));
      logical.transactional = (flags & 1) != 0;
      SERAC_ASSIGN_OR_RETURN(logical.lsn, in.UInt64("message LSN"));
      SERAC_ASSIGN_OR_RETURN(logical.prefix, in.String("prefix"));
      SERAC_ASSIGN_OR_RETURN(uint32_t length, in.UInt32("content length"));
      SERAC_ASSIGN_OR_RETURN(logical.content, in.Bytes(length, "content"));
      message.body = std::move(logical);
      break;
    }
    case 'S': {
      SERAC_RETURN_IF_ERROR(needs_protocol(2));
      if (in_stream_) return in.Fail("a stream block started inside another");
      StreamStart start;
      SERAC_ASSIGN_OR_RETURN(start.xid, in.UInt32("xid"));
      SERAC_ASSIGN_OR_RETURN(uint8_t first, in.Int8("first-segment flag"));
      start.first_segment = first == 1;
      in_stream_ = true;
      message.body = start;
      break;
    }
    case 'E': {
      SERAC_RETURN_IF_ERROR(needs_protocol(2));
      if (!in_stream_) return in.Fail("a stream block ended that was not started");
      in_stream_ = false;
      message.body = StreamStop{};
      break;
    }
    case 'c': {
      SERAC_RETURN_IF_ERROR(needs_protocol(2));
      StreamCommit commit;
      SERAC_ASSIGN_OR_RETURN(commit.xid, in.UInt32("xid"));
      SERAC_ASSIGN_OR_RETURN(commit.flags, in.Int8("flags"));
      SERAC_ASSIGN_OR_RETURN(commit.commit_lsn, in.UInt64("commit LSN"));
      SERAC_ASSIGN_OR_RETURN(commit.end_lsn, in.UInt64("end LSN"));
      SERAC_ASSIGN_OR_RETURN(commit.commit_time, in.Int64("commit time"));
      message.body = commit;
      break;
    }
    case 'A': {
      SERAC_RETURN_IF_ERROR(needs_protocol(2));
      StreamAbort abort;
      SERAC_ASSIGN_OR_RETURN(abort.xid, in.UInt32("xid"));
      SERAC_ASSIGN_OR_RETURN(abort.subtransaction_xid, in.UInt32("subtransaction xid"));
      // Protocol 4 adds the abort's LSN and time (sent when the subscriber applies in parallel).
      if (protocol_version_ >= 4 && in.remaining() >= 16) {
        SERAC_ASSIGN_OR_RETURN(abort.abort_lsn, in.UInt64("abort LSN"));
        SERAC_ASSIGN_OR_RETURN(abort.abort_time, in.Int64("abort time"));
      }
      message.body = abort;
      break;
    }
    case 'b':
    case 'P':
    case 'K':
    case 'r':
    case 'p': {
      SERAC_RETURN_IF_ERROR(needs_protocol(3));
      TwoPhase two_phase;
      two_phase.type = message.type;
      if (message.type != 'b') {
        SERAC_ASSIGN_OR_RETURN(two_phase.flags, in.Int8("flags"));
      }
      SERAC_ASSIGN_OR_RETURN(two_phase.lsn, in.UInt64("LSN"));
      SERAC_ASSIGN_OR_RETURN(two_phase.end_lsn, in.UInt64("end LSN"));
      SERAC_ASSIGN_OR_RETURN(two_phase.time, in.Int64("time"));
      if (message.type == 'r') {
        SERAC_ASSIGN_OR_RETURN(two_phase.rollback_time, in.Int64("rollback time"));
      }
      SERAC_ASSIGN_OR_RETURN(two_phase.xid, in.UInt32("xid"));
      SERAC_ASSIGN_OR_RETURN(two_phase.gid, in.String("gid"));
      message.body = std::move(two_phase);
      break;
    }
    default:
      return in.Fail("unknown message type");
  }
  SERAC_RETURN_IF_ERROR(in.End());
  return message;
}

Result<std::variant<XLogData, Keepalive>> DecodeCopyData(std::string_view frame) {
  if (frame.empty()) return Error(ErrorCode::kInvalidArgument, "empty CopyData frame");
  Reader in(frame, frame[0]);
  if (frame[0] == 'w') {
    XLogData data;
    SERAC_ASSIGN_OR_RETURN(data.wal_start, in.UInt64("WAL start"));
    SERAC_ASSIGN_OR_RETURN(data.wal_end, in.UInt64("WAL end"));
    SERAC_ASSIGN_OR_RETURN(data.server_time, in.Int64("server time"));
    data.payload = frame.substr(25);
    return std::variant<XLogData, Keepalive>(data);
  }
  if (frame[0] == 'k') {
    Keepalive keepalive;
    SERAC_ASSIGN_OR_RETURN(keepalive.wal_end, in.UInt64("WAL end"));
    SERAC_ASSIGN_OR_RETURN(keepalive.server_time, in.Int64("server time"));
    SERAC_ASSIGN_OR_RETURN(uint8_t reply, in.Int8("reply flag"));
    keepalive.reply_requested = reply != 0;
    SERAC_RETURN_IF_ERROR(in.End());
    return std::variant<XLogData, Keepalive>(keepalive);
  }
  return Error(ErrorCode::kInvalidArgument, std::string("unknown CopyData frame '") + frame[0] + "'");
}

std::string StandbyStatusUpdate(Lsn written, Lsn flushed, Lsn applied, int64_t client_time,
                                bool reply_requested) {
  std::string frame(1, 'r');
  for (uint64_t value : {written, flushed, applied, static_cast<uint64_t>(client_time)}) {
    for (int shift = 56; shift >= 0; shift -= 8) frame.push_back(static_cast<char>(value >> shift));
  }
  frame.push_back(reply_requested ? 1 : 0);
  return frame;
}

}  // namespace serac::sync::pgoutput
