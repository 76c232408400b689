#!/usr/bin/env bash
# Builds the console's page into OUT_DIR (default: console/dist): installs the locked packages when
# the lock file is newer than what is installed, type-checks and bundles, then writes a gzip copy
# beside every text file over 1 KiB (the server sends it to browsers that accept gzip). The CMake
# build runs it (src/console/CMakeLists.txt) and embeds the result in the binary.
set -euo pipefail
cd "$(dirname "$0")"
out="$(realpath -m "${1:-dist}")"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
rm -rf "$out"
SERAC_CONSOLE_OUT_DIR="$out" npm run --silent build
find "$out" -type f \( -name '*.js' -o -name '*.css' -o -name '*.html' -o -name '*.svg' -o -name '*.json' \) \
  -size +1k -exec gzip -9 -k -n -f {} \;
