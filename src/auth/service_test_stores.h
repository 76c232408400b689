// Test support for the S3 and catalog service tests: fresh stores under a new temporary directory
// (SQLite MetaStore behind the fault-injecting wrapper, and local blob store, both without fsync)
// and an initialised IdentityService over them. Header-only; the test targets that include it link
// serac_meta, serac_meta_fault_injection and serac_blob.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "auth/identity.h"
#include "auth/server_key.h"
#include "blob/open_blob_store.h"
#include "common/random.h"
#include "meta/fault_injection_meta_store.h"
#include "meta/open_meta_store.h"

namespace serac::auth::testing {

struct ServiceTestStores {
  std::filesystem::path root;
  std::unique_ptr<meta::MetaStore> meta;
  meta::FaultInjectionMetaStore* faults = nullptr;  // the same store, to inject failures with
  std::unique_ptr<blob::BlobStore> blobs;
  std::unique_ptr<IdentityService> identity;

  ServiceTestStores() = default;
  ServiceTestStores(const ServiceTestStores&) = delete;
  ServiceTestStores& operator=(const ServiceTestStores&) = delete;
  // The identity service reads the MetaStore, so it goes first; the directory goes last.
  ~ServiceTestStores() {
    identity.reset();
    blobs.reset();
    meta.reset();
    if (!root.empty()) std::filesystem::remove_all(root);
  }

  // Opens everything under <tmp>/<name>_<random>; call it from SetUp (it fails the test on error).
  void Open(const std::string& name, const Credentials& root_user, const IdentityOptions& options) {
    root = std::filesystem::temp_directory_path() / (name + "_" + RandomHexId(8));
    std::filesystem::create_directories(root);
    const std::string meta_path = (root / "meta.db").string();
    auto opened_meta = meta::FaultInjectionMetaStore::Open(
        [meta_path] { return meta::OpenMetaStore("sqlite:" + meta_path, {.fsync = false}); });
    ASSERT_TRUE(opened_meta.ok()) << opened_meta.status().ToString();
    faults = opened_meta->get();
    meta = std::move(opened_meta).value();
    auto opened_blobs = blob::OpenBlobStore("file:" + (root / "data").string(), {.fsync = false});
    ASSERT_TRUE(opened_blobs.ok()) << opened_blobs.status().ToString();
    blobs = std::move(opened_blobs).value();
    auto key = ServerKey::FromBytes(std::string(ServerKey::kKeyBytes, '\x5a'));
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    identity = std::make_unique<IdentityService>(root_user, std::move(key).value(), &meta->iam(), options);
    Status initialized = identity->Initialize();
    ASSERT_TRUE(initialized.ok()) << initialized.ToString();
  }
};

}  // namespace serac::auth::testing
