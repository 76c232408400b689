// The console's built page, embedded at build time (CMake generates console_assets.cc from the
// output of `npm run build` in ../console; embed_assets.cmake). Private to console/.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace serac::console {

struct EmbeddedAsset {
  std::string_view path;     // relative to the console's root: "index.html", "assets/index-1a2b.js"
  std::string_view body;     // the file as built
  std::string_view gzipped;  // the same, gzip-compressed; empty when not worth it
};

// Every file of the built page; empty in a build without the console.
std::span<const EmbeddedAsset> EmbeddedAssets();

}  // namespace serac::console
