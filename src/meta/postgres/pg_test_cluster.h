// A PostgreSQL server for tests of the PostgreSQL back end. SERAC_TEST_POSTGRES_URL names one to use
// (scripts/test.sh starts one for the whole unit-test run); without it the first call starts a
// throwaway server for this process (initdb into a temporary directory, a free loopback port, run
// as the `postgres` user when the process is root), stopped and removed at exit. Each test gets a
// schema of its own, dropped at exit, so tests never see each other's rows. Tests only.
#pragma once

#include <string>

#include "common/status.h"

namespace serac::meta::testing {

// A URL of the test server whose search_path is a schema kept for `key` (the same key, the same
// schema: a reopened store finds its rows), created on first use.
Result<std::string> TestPostgresUrl(const std::string& key);

}  // namespace serac::meta::testing
