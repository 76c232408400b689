#include "blob/open_blob_store.h"

#include "blob/local/local_blob_store.h"

namespace serac::blob {

namespace {

constexpr std::string_view kFileScheme = "file:";

Status UnknownBackEnd(std::string_view url) {
  return Error(ErrorCode::kInvalidArgument, "cannot open blob store \"" + std::string(url) +
                                                "\": the URL must be file:DIR (the back end this build has)");
}

// "scheme:PATH", or "scheme:///abs/path" as a URL with an empty authority writes it.
std::string_view LocationAfterScheme(std::string_view url, std::string_view scheme) {
  std::string_view location = url.substr(scheme.size());
  if (location.starts_with("///")) location.remove_prefix(2);
  return location;
}

}  // namespace

Result<std::unique_ptr<BlobStore>> OpenBlobStore(std::string_view url, const BlobStoreOpenOptions& options) {
  if (url.starts_with(kFileScheme)) {
    LocalBlobStoreOptions local;
    local.root = std::string(LocationAfterScheme(url, kFileScheme));
    local.fsync = options.fsync;
    if (local.root.empty()) return UnknownBackEnd(url);
    return OpenLocalBlobStore(local);
  }
  return UnknownBackEnd(url);
}

std::string DefaultBlobStoreUrl(std::string_view data_dir) {
  return std::string(kFileScheme) + std::string(data_dir) + "/blobs";
}

}  // namespace serac::blob
