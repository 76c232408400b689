// The one way to open a BlobStore: a URL names the back end and where its blobs live, so the server
// and the contract suite open every back end alike and a new one plugs in here without touching its
// callers.
//   file:DIR   blobs in files under DIR (created if missing; local/; file:///abs/dir also reads as
//              /abs/dir); the default,
//              file:DATA_DIR/blobs
// Back ends that need modules above blob/ (the upstream-S3 store of client/, s3://BUCKET/PREFIX)
// are registered by the composition root with RegisterBlobStoreScheme before any store is opened.
// Thread-safety: OpenBlobStore may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "blob/blob_store.h"
#include "common/status.h"

namespace serac::blob {

struct BlobStoreOpenOptions {
  bool fsync = true;  // false only for benchmarks that measure without durability
};

// kInvalidArgument, naming the URL and the back ends this build has, for an unknown scheme or an
// empty location; the back end's own error when it cannot open.
Result<std::unique_ptr<BlobStore>> OpenBlobStore(std::string_view url,
                                                 const BlobStoreOpenOptions& options = {});

// Opens the stores whose URLs start with `scheme` ("s3://"): the URL whole is handed to `open`.
using BlobStoreOpener = std::function<Result<std::unique_ptr<BlobStore>>(
    std::string_view url, const BlobStoreOpenOptions& options)>;
void RegisterBlobStoreScheme(std::string scheme, BlobStoreOpener open);

// "file:DIR/blobs": the default store of a data directory.
std::string DefaultBlobStoreUrl(std::string_view data_dir);

}  // namespace serac::blob
