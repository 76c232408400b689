#include "sync/streamed_transactions.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace serac::sync {

namespace {

// A spill record: the payload's length (4 bytes), whether it is a change a rolled-back
// subtransaction takes with it (1 byte), the message's xid (4 bytes), then the payload.
constexpr size_t kRecordHeaderBytes = 9;

void PutUInt32(char* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * (3 - i))) & 0xFF);
}

uint32_t GetUInt32(const char* in) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(in[i]);
  return value;
}

bool IsChange(const pgoutput::Message& message) {
  return std::holds_alternative<pgoutput::Insert>(message.body) ||
         std::holds_alternative<pgoutput::Update>(message.body) ||
         std::holds_alternative<pgoutput::Delete>(message.body) ||
         std::holds_alternative<pgoutput::Truncate>(message.body) ||
         std::holds_alternative<pgoutput::LogicalMessage>(message.body);
}

Status SpillError(const std::string& what, uint32_t xid, const std::string& directory) {
  return Error(ErrorCode::kIoError, what + " the spill file of streamed transaction " + std::to_string(xid) +
                                        " in " + directory + ": " + std::strerror(errno));
}

}  // namespace

uint64_t StreamedTransactions::spilled_bytes() const {
  uint64_t bytes = 0;
  for (const auto& [xid, spill] : spills_) bytes += spill.bytes;
  return bytes;
}

Status StreamedTransactions::Append(uint32_t xid, const pgoutput::Message& message,
                                    std::string_view payload) {
  Spill& spill = spills_[xid];
  if (spill.file == nullptr) {
    std::string path = directory_ + "/.serac-sync-transaction-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
      spills_.erase(xid);
      return SpillError("making", xid, directory_);
    }
    ::unlink(path.c_str());  // gone with the descriptor: nothing left behind
    spill.file.reset(::fdopen(fd, "w+b"));
    if (spill.file == nullptr) {
      ::close(fd);
      spills_.erase(xid);
      return SpillError("opening", xid, directory_);
    }
  }
  char header[kRecordHeaderBytes];
  PutUInt32(header, static_cast<uint32_t>(payload.size()));
  header[4] = IsChange(message) ? 1 : 0;
  PutUInt32(header + 5, message.xid.value_or(xid));
  if (std::fwrite(header, 1, sizeof(header), spill.file.get()) != sizeof(header) ||
      std::fwrite(payload.data(), 1, payload.size(), spill.file.get()) != payload.size()) {
    return SpillError("writing", xid, directory_);
  }
  spill.bytes += sizeof(header) + payload.size();
  return Status::Ok();
}

void StreamedTransactions::Abort(uint32_t xid, uint32_t subtransaction_xid) {
  auto found = spills_.find(xid);
  if (found == spills_.end()) return;
  if (subtransaction_xid == xid) {
    spills_.erase(found);
    return;
  }
  // Relation and Type messages sent in the subtransaction stay: PostgreSQL counts them as sent
  // for the whole transaction and does not send them again.
  found->second.aborted.insert(subtransaction_xid);
}

Status StreamedTransactions::Replay(uint32_t xid,
                                    const std::function<Status(const pgoutput::Message&)>& apply) {
  auto found = spills_.find(xid);
  if (found == spills_.end()) return Status::Ok();
  Spill spill = std::move(found->second);
  spills_.erase(found);
  std::FILE* file = spill.file.get();
  if (std::fflush(file) != 0 || std::fseek(file, 0, SEEK_SET) != 0) {
    return SpillError("rewinding", xid, directory_);
  }
  // The payloads are the messages of stream blocks: decoded as inside one.
  pgoutput::Decoder decoder(2);
  std::string start(6, '\0');
  start[0] = 'S';
  PutUInt32(start.data() + 1, xid);
  SERAC_RETURN_IF_ERROR(decoder.Decode(start).status());
  std::string payload;
  char header[kRecordHeaderBytes];
  while (true) {
    const size_t read = std::fread(header, 1, sizeof(header), file);
    if (read == 0 && std::feof(file)) break;
    if (read != sizeof(header)) return SpillError("reading", xid, directory_);
    payload.resize(GetUInt32(header));
    if (std::fread(payload.data(), 1, payload.size(), file) != payload.size()) {
      return SpillError("reading", xid, directory_);
    }
    if (header[4] != 0 && spill.aborted.count(GetUInt32(header + 5)) > 0) continue;
    SERAC_ASSIGN_OR_RETURN(pgoutput::Message message, decoder.Decode(payload));
    SERAC_RETURN_IF_ERROR(apply(message));
  }
  return Status::Ok();
}

}  // namespace serac::sync
