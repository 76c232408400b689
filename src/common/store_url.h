// Back ends named by URL ("sqlite:/var/lib/serac/meta.db", "file:/srv/blobs"): the one reading of such
// a URL that every OpenXxxStore uses, so that the forms accepted and the refusal's wording are the
// same for each kind of store.
#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"

namespace serac {

// The location after SCHEME (which includes its colon: "file:") when URL uses that scheme, as
// "scheme:PATH" or as "scheme:///abs/path" (a URL with an empty authority) writes it; nullopt when the
// URL has another scheme or names no location.
std::optional<std::string_view> StoreUrlLocation(std::string_view url, std::string_view scheme);

// The error for a URL no back end of this build opens. STORE names the kind ("metadata store"),
// ACCEPTED the forms that are understood ("sqlite:PATH").
Status UnknownStoreUrl(std::string_view store, std::string_view url, std::string_view accepted);

}  // namespace serac
