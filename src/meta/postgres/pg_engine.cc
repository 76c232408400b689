#include <chrono>
#include <cstdlib>
#include <thread>

#include "common/limits.h"
#include "common/random.h"
#include "meta/postgres/pg_engine_internal.h"

namespace serac::meta::postgres {
namespace {

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A unique violation counts too: every body looks for a row before it inserts one, so the row it
// collided with was inserted by a transaction that committed meanwhile, and running again finds it;
// so does a foreign-key violation (the parent a body found was deleted meanwhile: running again
// reports it missing).
bool LostRace(const PgConnection& db) {
  return db.last_sqlstate() == kSqlstateSerializationFailure ||
         db.last_sqlstate() == kSqlstateDeadlockDetected || db.last_sqlstate() == kSqlstateUniqueViolation ||
         db.last_sqlstate() == kSqlstateForeignKeyViolation;
}

// Milliseconds as 16 hex digits, big-endian: tokens that start with them sort by time.
std::string TimeHex(int64_t ms) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(16, '0');
  auto value = static_cast<uint64_t>(ms);
  for (int i = 15; i >= 0; --i, value >>= 4) hex[static_cast<size_t>(i)] = kDigits[value & 0xF];
  return hex;
}

// A write's token (serac_write_tokens), in hex: its start time, then 8 random bytes.
std::string WriteToken(int64_t now_ms) { return TimeHex(now_ms) + RandomHexId(8); }

// Backoff before attempt `attempt` (1-based), with jitter so that racing writers spread out.
void Backoff(uint32_t attempt) {
  const uint32_t base = limits::kPostgresRetryBaseMs << std::min<uint32_t>(attempt, 8);
  const uint32_t jitter = static_cast<uint32_t>(std::rand()) % (base + 1);  // NOLINT: not security
  std::this_thread::sleep_for(std::chrono::milliseconds(base / 2 + jitter));
}

Status Exhausted(const Status& last) {
  return Error(ErrorCode::kUnavailable, "the metadata store is busy: a write lost " +
                                            std::to_string(limits::kPostgresAttemptsMax) +
                                            " races or connections in a row (last: " + last.message() + ")");
}

}  // namespace

Result<std::unique_ptr<PgConnection>> PgPool::Acquire() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (idle_.empty() && open_ >= max_connections_) ++waits_;
    const bool available = released_.wait_for(lock, limits::kPostgresAcquireTimeout,
                                              [&] { return !idle_.empty() || open_ < max_connections_; });
    if (!available) {
      ++timeouts_;
      return Error(ErrorCode::kUnavailable,
                   "no PostgreSQL connection became free within " +
                       std::to_string(limits::kPostgresAcquireTimeout.count()) +
                       " s (limits::kPostgresConnectionsMax = " + std::to_string(max_connections_) + ")");
    }
    if (!idle_.empty()) {
      std::unique_ptr<PgConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
    ++open_;
  }
  Result<std::unique_ptr<PgConnection>> opened = PgConnection::Open(conninfo_);
  if (!opened.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    --open_;
    released_.notify_one();
  }
  return opened;
}

void PgPool::Release(std::unique_ptr<PgConnection> connection) {
  // A call that failed half-way may leave its transaction open; never hand that on.
  if (connection != nullptr && !connection->broken() && connection->InTransaction() &&
      !connection->Exec("ROLLBACK").ok()) {
    connection.reset();
  }
  if (connection != nullptr && connection->broken()) connection.reset();
  std::lock_guard<std::mutex> lock(mutex_);
  if (connection != nullptr) {
    idle_.push_back(std::move(connection));
  } else {
    --open_;
  }
  released_.notify_one();
}

void PgPool::AddStats(PgEngineStats& stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats.connections_open = open_;
  stats.connections_idle = static_cast<uint32_t>(idle_.size());
  stats.acquire_waits = waits_;
  stats.acquire_timeouts = timeouts_;
}

PgEngineStats PgEngine::stats() {
  PgEngineStats stats;
  pool_.AddStats(stats);
  stats.races_lost = races_lost_.load();
  stats.connections_lost = connections_lost_.load();
  stats.outcomes_looked_up = outcomes_looked_up_.load();
  stats.outcomes_unknown = outcomes_unknown_.load();
  return stats;
}

Status PgEngine::Write(const Work& work, const std::function<void()>& on_committed, Isolation isolation) {
  const char* begin = isolation == Isolation::kSerializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE; "
                                                            : "BEGIN ISOLATION LEVEL READ COMMITTED; ";
  Status last = Status::Ok();
  for (uint32_t attempt = 0; attempt < limits::kPostgresAttemptsMax; ++attempt) {
    if (attempt > 0) Backoff(attempt);
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, pool_.Acquire());
    // What identifies the transaction, taken in the same round trip as BEGIN, so that a COMMIT
    // whose answer is lost can be looked up instead of reported unknown: its id (txid_status tells
    // committed, aborted or still in progress) while the server has not restarted, and its token
    // (committed exactly when the token's row is there) when it has, since ids are handed out
    // again after a crash.
    const WriteIdentity identity{WriteToken(NowMillis()), 0, {}};
    Result<PgRows> begun =
        db->Exec(std::string(begin) + "INSERT INTO serac_write_tokens(token) VALUES ('\\x" +
                 identity.token_hex + "'); SELECT txid_current(), pg_postmaster_start_time()::text");
    if (!begun.ok()) {
      last = begun.status();
      const bool retry = db->broken();
      pool_.Release(std::move(db));
      if (retry) ++connections_lost_;
      if (retry) continue;
      return last;
    }
    WriteIdentity written = identity;
    written.xid = std::strtoll(begun->Text(0, 0).c_str(), nullptr, 10);
    written.server_started = begun->Text(0, 1);
    Status done = work(*db);
    if (!done.ok()) {
      last = done;
      const bool broken = db->broken();
      const bool lost_race = !broken && LostRace(*db);
      pool_.Release(std::move(db));  // rolls the transaction back
      if (broken) ++connections_lost_;
      if (lost_race) ++races_lost_;
      if (broken || lost_race) continue;
      return done;
    }
    Result<PgRows> committed = db->Exec("COMMIT");
    if (committed.ok()) {
      SweepWriteTokens(*db);
      pool_.Release(std::move(db));
      if (on_committed) on_committed();
      return Status::Ok();
    }
    last = committed.status();
    const bool lost_race = LostRace(*db);
    const bool lost_answer = db->broken();
    pool_.Release(std::move(db));
    if (lost_race) ++races_lost_;
    if (lost_race) continue;
    if (!lost_answer) return last;
    ++outcomes_looked_up_;
    Result<bool> looked_up = CommittedAfterLostAnswer(written);
    if (!looked_up.ok()) ++outcomes_unknown_;
    SERAC_ASSIGN_OR_RETURN(bool landed, std::move(looked_up));
    if (landed) {
      if (on_committed) on_committed();
      return Status::Ok();
    }
  }
  return Exhausted(last);
}

Result<bool> PgEngine::CommittedAfterLostAnswer(const WriteIdentity& write) {
  const auto deadline = std::chrono::steady_clock::now() + limits::kPostgresOutcomeCheckTimeout;
  Status last = Status::Ok();
  while (std::chrono::steady_clock::now() < deadline) {
    Result<std::unique_ptr<PgConnection>> db = pool_.Acquire();
    if (db.ok()) {
      Result<PgRows> found = (*db)->Query(
          "SELECT pg_postmaster_start_time()::text, txid_status($1), "
          "EXISTS (SELECT 1 FROM serac_write_tokens WHERE token = decode($2, 'hex'))",
          {PgParam::Int(write.xid), PgParam::Text(write.token_hex)});
      pool_.Release(std::move(*db));
      if (found.ok()) {
        // Another server process than the one the transaction began on (a restart, a fail-over):
        // every backend of the old one is gone, so the token's row is the whole answer.
        if (found->Text(0, 0) != write.server_started) return found->Bool(0, 2);
        const std::string state = found->Text(0, 1);
        if (state == "committed") return true;
        // NULL: too old to know, which a transaction of a moment ago is not on the same server.
        if (state == "aborted" || found->IsNull(0, 1)) return false;
      } else {
        last = found.status();
      }
    } else {
      last = db.status();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // "in progress", or no server yet
  }
  return Error(ErrorCode::kOutcomeUnknown,
               "the connection to PostgreSQL was lost while a write committed, and whether it did could not "
               "be found out within " +
                   std::to_string(limits::kPostgresOutcomeCheckTimeout.count()) + " s" +
                   (last.ok() ? std::string() : " (" + last.message() + ")"));
}

void PgEngine::SweepWriteTokens(PgConnection& db) {
  const int64_t now_ms = NowMillis();
  const int64_t interval_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(limits::kPostgresWriteTokenSweepInterval).count();
  int64_t last = last_token_sweep_ms_.load();
  if (now_ms - last < interval_ms || !last_token_sweep_ms_.compare_exchange_strong(last, now_ms)) return;
  const int64_t age_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(limits::kPostgresWriteTokenAge).count();
  // Outside any transaction: nothing waits on it, and a failure only leaves the rows for next time.
  (void)db.Query("DELETE FROM serac_write_tokens WHERE token < decode($1, 'hex')",
                 {PgParam::Text(TimeHex(now_ms - age_ms))});
}

Status PgEngine::ReadWork(bool snapshot, const Work& read) {
  Status last = Status::Ok();
  for (uint32_t attempt = 0; attempt < limits::kPostgresAttemptsMax; ++attempt) {
    if (attempt > 0) Backoff(attempt);
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, pool_.Acquire());
    Status done =
        snapshot ? db->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status() : Status::Ok();
    if (done.ok()) done = read(*db);
    if (done.ok() && snapshot) done = db->Exec("COMMIT").status();
    const bool retry = !done.ok() && (db->broken() || LostRace(*db));
    pool_.Release(std::move(db));
    if (!retry) return done;
    last = done;
  }
  return Exhausted(last);
}

}  // namespace serac::meta::postgres
