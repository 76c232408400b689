#include "blob/open_blob_store.h"

#include "blob/local/local_blob_store.h"
#include "common/store_url.h"

namespace serac::blob {

namespace {

constexpr std::string_view kFileScheme = "file:";

constexpr std::string_view kStoreKind = "blob store";
constexpr std::string_view kAcceptedUrls = "file:DIR";

}  // namespace

Result<std::unique_ptr<BlobStore>> OpenBlobStore(std::string_view url, const BlobStoreOpenOptions& options) {
  if (std::optional<std::string_view> root = StoreUrlLocation(url, kFileScheme)) {
    LocalBlobStoreOptions local;
    local.root = std::string(*root);
    local.fsync = options.fsync;
    return OpenLocalBlobStore(local);
  }
  return UnknownStoreUrl(kStoreKind, url, kAcceptedUrls);
}

std::string DefaultBlobStoreUrl(std::string_view data_dir) {
  return std::string(kFileScheme) + std::string(data_dir) + "/blobs";
}

}  // namespace serac::blob
