#include "blob/open_blob_store.h"

#include <map>
#include <mutex>

#include "blob/local/local_blob_store.h"
#include "common/store_url.h"

namespace serac::blob {

namespace {

constexpr std::string_view kFileScheme = "file:";

constexpr std::string_view kStoreKind = "blob store";
constexpr std::string_view kAcceptedUrls = "file:DIR";

struct RegisteredSchemes {
  std::mutex mutex;
  std::map<std::string, BlobStoreOpener> openers;  // by scheme
};
RegisteredSchemes& Registered() {
  static RegisteredSchemes registered;
  return registered;
}

}  // namespace

void RegisterBlobStoreScheme(std::string scheme, BlobStoreOpener open) {
  RegisteredSchemes& registered = Registered();
  std::lock_guard lock(registered.mutex);
  registered.openers[std::move(scheme)] = std::move(open);
}

Result<std::unique_ptr<BlobStore>> OpenBlobStore(std::string_view url, const BlobStoreOpenOptions& options) {
  if (std::optional<std::string_view> root = StoreUrlLocation(url, kFileScheme)) {
    LocalBlobStoreOptions local;
    local.root = std::string(*root);
    local.fsync = options.fsync;
    return OpenLocalBlobStore(local);
  }
  std::string accepted(kAcceptedUrls);
  {
    RegisteredSchemes& registered = Registered();
    std::lock_guard lock(registered.mutex);
    for (const auto& [scheme, open] : registered.openers) {
      if (url.substr(0, scheme.size()) == scheme) return open(url, options);
      accepted += ", " + scheme + "...";
    }
  }
  return UnknownStoreUrl(kStoreKind, url, accepted);
}

std::string DefaultBlobStoreUrl(std::string_view data_dir) {
  return std::string(kFileScheme) + std::string(data_dir) + "/blobs";
}

}  // namespace serac::blob
