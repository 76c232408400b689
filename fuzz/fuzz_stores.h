// The stores behind the in-process service fuzz targets: a SQLite MetaStore and a local BlobStore
// under a fresh temporary directory (no fsync: a fuzz run needs speed, not durability) and an
// initialised IdentityService whose root key signs the fuzz requests. One per process; the
// directory is removed when the process exits normally.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "auth/identity.h"
#include "auth/server_key.h"
#include "blob/open_blob_store.h"
#include "common/random.h"
#include "fuzz_request.h"
#include "meta/open_meta_store.h"

namespace serac::fuzz {

struct FuzzStores {
  std::filesystem::path root;
  std::unique_ptr<meta::MetaStore> meta;
  std::unique_ptr<blob::BlobStore> blobs;
  std::unique_ptr<auth::IdentityService> identity;

  explicit FuzzStores(const std::string& name) {
    root = std::filesystem::temp_directory_path() / ("serac_fuzz_" + name + "_" + RandomHexId(8));
    std::filesystem::create_directories(root);
    auto opened_meta = meta::OpenMetaStore("sqlite:" + (root / "meta.db").string(), {.fsync = false});
    auto opened_blobs = blob::OpenBlobStore("file:" + (root / "data").string(), {.fsync = false});
    auto key = auth::ServerKey::FromBytes(std::string(auth::ServerKey::kKeyBytes, '\x5a'));
    if (!opened_meta.ok() || !opened_blobs.ok() || !key.ok()) Die("cannot open the fuzz stores");
    meta = std::move(opened_meta).value();
    blobs = std::move(opened_blobs).value();
    identity = std::make_unique<auth::IdentityService>(
        auth::Credentials{std::string(kRootAccessKey), std::string(kRootSecretKey), ""},
        std::move(key).value(), &meta->iam(), auth::IdentityOptions{});
    if (!identity->Initialize().ok()) Die("cannot initialise the identity service");
  }
  ~FuzzStores() {
    identity.reset();
    blobs.reset();
    meta.reset();
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
  }
  FuzzStores(const FuzzStores&) = delete;
  FuzzStores& operator=(const FuzzStores&) = delete;

 private:
  [[noreturn]] static void Die(const char* what) {
    std::fprintf(stderr, "fuzz set-up failed: %s\n", what);
    std::abort();
  }
};

}  // namespace serac::fuzz
