// The PostgreSQL the sync module's live tests run against: SERAC_TEST_PG=HOST:PORT of a server
// with wal_level=logical and the user postgres trusted (tests/test_sync.py starts one and runs
// them). Without it they are skipped; the suite's run through tests/test_sync.py is what counts.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include "sync/config.h"

namespace serac::sync {

inline std::optional<PostgresSource> TestPostgres() {
  const char* target = std::getenv("SERAC_TEST_PG");
  if (target == nullptr) return std::nullopt;
  const std::string host_port = target;
  PostgresSource source;
  source.host = host_port.substr(0, host_port.find(':'));
  source.port = std::stoi(host_port.substr(host_port.find(':') + 1));
  source.username = "postgres";
  source.database = "postgres";
  return source;
}

}  // namespace serac::sync
