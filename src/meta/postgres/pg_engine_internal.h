// The connections every PostgreSQL MetaStore call runs on: a bounded pool, and the one way to run a
// write (a SERIALIZABLE transaction, run again when it loses a serialization race or its connection
// before COMMIT, its outcome looked up by transaction id when the answer to COMMIT is lost) or a
// read (one statement, or a REPEATABLE READ snapshot for reads of several).
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "meta/postgres/pg_connection_internal.h"

namespace serac::meta::postgres {

// What the pool and the engine have done since start, for the metrics.
struct PgEngineStats {
  uint32_t connections_open = 0;  // lent out and idle
  uint32_t connections_idle = 0;
  uint64_t acquire_waits = 0;       // calls that waited for a connection to come back
  uint64_t acquire_timeouts = 0;    // calls that waited limits::kPostgresAcquireTimeout in vain
  uint64_t races_lost = 0;          // transactions run again after a serialization failure
  uint64_t connections_lost = 0;    // transactions run again after the connection broke
  uint64_t outcomes_looked_up = 0;  // COMMITs whose answer was lost, looked up by txid_status
  uint64_t outcomes_unknown = 0;    // of which the outcome could not be told
};

class PgPool {
 public:
  PgPool(std::string conninfo, uint32_t max_connections)
      : conninfo_(std::move(conninfo)), max_connections_(max_connections) {}

  // An idle connection, a new one while fewer than max are open, else waits for one
  // (kUnavailable after limits::kPostgresAcquireTimeout).
  Result<std::unique_ptr<PgConnection>> Acquire();
  // Keeps the connection for the next caller unless it is broken or still in a transaction.
  void Release(std::unique_ptr<PgConnection> connection);
  // Fills the pool's part of `stats`.
  void AddStats(PgEngineStats& stats);

 private:
  const std::string conninfo_;
  const uint32_t max_connections_;
  std::mutex mutex_;
  std::condition_variable released_;
  std::vector<std::unique_ptr<PgConnection>> idle_;  // guarded by mutex_
  uint32_t open_ = 0;                                // guarded by mutex_: idle and lent out
  uint64_t waits_ = 0;                               // guarded by mutex_
  uint64_t timeouts_ = 0;                            // guarded by mutex_
};

// How a write transaction is isolated. Serializable is the default: a body then runs as if alone,
// as the embedded back end's bodies assume. The hot paths — object writes, uploads, the GC queue,
// leases and catalog commits that move no location — run at READ COMMITTED instead and order
// themselves with row locks (SELECT ... FOR UPDATE), plain INSERTs that collide on a key, and
// conditional UPDATEs: under SERIALIZABLE, PostgreSQL's predicate locks cover index pages, so
// commits to different tables (and PUTs of different keys) that share a page fail each other.
enum class Isolation { kSerializable, kReadCommitted };

class PgEngine {
 public:
  using Work = std::function<Status(PgConnection&)>;

  PgEngine(std::string conninfo, uint32_t max_connections) : pool_(std::move(conninfo), max_connections) {}

  // Runs `work` in one SERIALIZABLE transaction; OK only once it committed. `work` may run more than
  // once (each time on a fresh transaction), so it must not keep state from an attempt that failed.
  // `on_committed`, when set, runs after the commit is known, before Write returns OK.
  Status Write(const Work& work, const std::function<void()>& on_committed = {},
               Isolation isolation = Isolation::kSerializable);

  // A write that also produces a value: the value of the attempt that committed.
  template <typename T>
  Result<T> WriteAndReturn(const std::function<Result<T>(PgConnection&)>& write,
                           Isolation isolation = Isolation::kSerializable) {
    std::optional<T> value;
    Status status = Write(
        [&](PgConnection& db) -> Status {
          value.reset();
          Result<T> result = write(db);
          if (!result.ok()) return result.status();
          value = std::move(result).value();
          return Status::Ok();
        },
        {}, isolation);
    if (!status.ok()) return status;
    return std::move(*value);
  }

  // `snapshot`: inside one REPEATABLE READ READ ONLY transaction, for reads of more than one
  // statement. Run again on a fresh connection when the connection was lost (a fail-over).
  template <typename T>
  Result<T> Read(bool snapshot, const std::function<Result<T>(PgConnection&)>& read) {
    std::optional<Result<T>> result;
    Status status = ReadWork(snapshot, [&](PgConnection& db) -> Status {
      result.emplace(read(db));
      return result->status();
    });
    if (!result.has_value()) return status;
    if (!result->ok()) return result->status();
    return std::move(*result);
  }

  PgEngineStats stats();

  // A connection of the pool outside any transaction (schema migrations).
  Result<std::unique_ptr<PgConnection>> Acquire() { return pool_.Acquire(); }
  void Release(std::unique_ptr<PgConnection> connection) { pool_.Release(std::move(connection)); }

 private:
  Status ReadWork(bool snapshot, const Work& read);
  // What tells, after its COMMIT's answer was lost, whether a write transaction committed.
  struct WriteIdentity {
    std::string token_hex;       // its row in serac_write_tokens
    int64_t xid = 0;             // txid_current()
    std::string server_started;  // pg_postmaster_start_time() of the server it began on
  };
  // True when it committed, false when it did not (the caller runs it again), kOutcomeUnknown
  // when that cannot be told in time.
  Result<bool> CommittedAfterLostAnswer(const WriteIdentity& write);
  // Deletes tokens older than limits::kPostgresWriteTokenAge, at most once per
  // limits::kPostgresWriteTokenSweepInterval on this server.
  void SweepWriteTokens(PgConnection& db);

  PgPool pool_;
  std::atomic<uint64_t> races_lost_{0};
  std::atomic<uint64_t> connections_lost_{0};
  std::atomic<uint64_t> outcomes_looked_up_{0};
  std::atomic<uint64_t> outcomes_unknown_{0};
  std::atomic<int64_t> last_token_sweep_ms_{0};
};

}  // namespace serac::meta::postgres
