// The console's page in a build without it (-DSERAC_CONSOLE=OFF): no files.
#include <span>

#include "console/console_assets_internal.h"

namespace serac::console {

std::span<const EmbeddedAsset> EmbeddedAssets() { return {}; }

}  // namespace serac::console
