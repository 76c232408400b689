// What every MetaStore contract suite (objects, catalog, IAM) shares: the back ends each test runs
// on (opened through OpenMetaStore) — SQLite and PostgreSQL, each also behind the fault-injecting
// wrapper — and a fixture
// base that opens the store in a fresh directory and reopens it (a simulated crash for the wrapper). Tests
// only.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "meta/fault_injection_meta_store.h"
#include "meta/meta_store.h"
#include "meta/meta_store_test_util.h"
#include "meta/open_meta_store.h"
#include "meta/postgres/pg_test_cluster.h"

namespace serac::meta::testing {

// Every back end is opened through OpenMetaStore, as the server opens it.
inline Result<std::unique_ptr<MetaStore>> OpenSqlite(const std::filesystem::path& dir) {
  return OpenMetaStore("sqlite:" + (dir / "meta.db").string());
}

inline Result<std::unique_ptr<MetaStore>> OpenFaultInjected(const std::filesystem::path& dir) {
  auto opened = FaultInjectionMetaStore::Open([dir] { return OpenSqlite(dir); });
  if (!opened.ok()) return opened.status();
  return std::unique_ptr<MetaStore>(std::move(opened).value());
}

// A schema of its own per test directory on the test PostgreSQL server (meta/postgres/pg_test_cluster.h).
inline Result<std::unique_ptr<MetaStore>> OpenPostgres(const std::filesystem::path& dir) {
  SERAC_ASSIGN_OR_RETURN(std::string url, TestPostgresUrl(dir.string()));
  return OpenMetaStore(url);
}

inline Result<std::unique_ptr<MetaStore>> OpenFaultInjectedPostgres(const std::filesystem::path& dir) {
  auto opened = FaultInjectionMetaStore::Open([dir] { return OpenPostgres(dir); });
  if (!opened.ok()) return opened.status();
  return std::unique_ptr<MetaStore>(std::move(opened).value());
}

struct Backend {
  std::string name;
  Result<std::unique_ptr<MetaStore>> (*open)(const std::filesystem::path& dir);
};

inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) { return info.param.name; }

class ContractTestBase : public ::testing::TestWithParam<Backend> {
 protected:
  void Open() {
    auto opened = GetParam().open(dir_.path());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  // Closes and reopens the store from its files (a simulated crash for the fault wrapper).
  void Reopen() {
    if (auto* faulty = dynamic_cast<FaultInjectionMetaStore*>(store_.get())) {
      SERAC_ASSERT_OK(faulty->SimulateCrash());
      return;
    }
    store_.reset();
    Open();
  }

  TempDir dir_;
  std::unique_ptr<MetaStore> store_;
};

}  // namespace serac::meta::testing

#define SERAC_CONTRACT_BACKEND(name, open) \
  ::serac::meta::testing::Backend { name, ::serac::meta::testing::open }

// Runs a contract suite on every back end.
#define SERAC_INSTANTIATE_CONTRACT_SUITE(suite)                                                      \
  INSTANTIATE_TEST_SUITE_P(                                                                          \
      Backends, suite,                                                                               \
      ::testing::Values(SERAC_CONTRACT_BACKEND("Sqlite", OpenSqlite),                                \
                        SERAC_CONTRACT_BACKEND("FaultInjectedSqlite", OpenFaultInjected),            \
                        SERAC_CONTRACT_BACKEND("Postgres", OpenPostgres),                            \
                        SERAC_CONTRACT_BACKEND("FaultInjectedPostgres", OpenFaultInjectedPostgres)), \
      ::serac::meta::testing::BackendName)

// Runs a suite of fault cases on every back end behind the fault-injecting wrapper. Such a suite's
// fixture reaches the wrapper through `store_`.
#define SERAC_INSTANTIATE_FAULT_SUITE(suite)                                                         \
  INSTANTIATE_TEST_SUITE_P(                                                                          \
      Backends, suite,                                                                               \
      ::testing::Values(SERAC_CONTRACT_BACKEND("FaultInjectedSqlite", OpenFaultInjected),            \
                        SERAC_CONTRACT_BACKEND("FaultInjectedPostgres", OpenFaultInjectedPostgres)), \
      ::serac::meta::testing::BackendName)
