// Streamed in-progress transactions (pgoutput protocol 2 and later: PostgreSQL sends a transaction
// larger than its logical_decoding_work_mem in stream blocks before it commits) kept on disk until
// their end: each message of a block appended as received to its transaction's spill file, and
// replayed in order at Stream Commit without the changes of subtransactions that rolled back; a
// transaction that aborts is dropped. The files are unlinked as soon as they are made, so that
// nothing is left behind by a crash (PostgreSQL streams the transaction again to the next run).
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "sync/pgoutput.h"

namespace serac::sync {

class StreamedTransactions {
 public:
  // Spill files are made in `directory`.
  explicit StreamedTransactions(std::string directory) : directory_(std::move(directory)) {}

  // A message of a stream block of transaction `xid` (what Stream Start named), sent as `payload`
  // (with its own xid: a subtransaction's for its changes).
  Status Append(uint32_t xid, const pgoutput::Message& message, std::string_view payload);
  // Stream Abort: the whole transaction (subtransaction_xid == xid) or one subtransaction.
  void Abort(uint32_t xid, uint32_t subtransaction_xid);
  // Stream Commit: `apply` gets the transaction's messages in order, decoded, without the changes
  // of subtransactions that aborted; then the transaction is forgotten. A transaction with no
  // stream block (all its changes in subtransactions that rolled back) replays nothing.
  Status Replay(uint32_t xid, const std::function<Status(const pgoutput::Message&)>& apply);

  size_t open_transactions() const { return spills_.size(); }
  uint64_t spilled_bytes() const;

 private:
  struct CloseFile {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };
  struct Spill {
    std::unique_ptr<std::FILE, CloseFile> file;
    std::set<uint32_t> aborted;  // subtransactions whose changes are not applied
    uint64_t bytes = 0;
  };

  std::string directory_;
  std::map<uint32_t, Spill> spills_;
};

}  // namespace serac::sync
