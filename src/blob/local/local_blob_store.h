// BlobStore on a local directory. Layout: <root>/blobs/<id[0:2]>/<id[2:4]>/<id>, temporaries in
// <root>/tmp/. Commit = fsync(file) → rename into place → fsync(parent directory).
#pragma once

#include <memory>
#include <string>

#include "blob/blob_store.h"

namespace serac::blob {

struct LocalBlobStoreOptions {
  std::string root;   // created if missing
  bool fsync = true;  // false only for benchmarks that measure without durability
};

Result<std::unique_ptr<BlobStore>> OpenLocalBlobStore(const LocalBlobStoreOptions& options);

}  // namespace serac::blob
