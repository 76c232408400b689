#!/usr/bin/env bash
# Builds serac in Release and starts `serac server`. Every argument is passed on to it, e.g.
#   scripts/run.sh --address :9000 --data ./data
# On a fresh Debian 12 machine this is the only command needed (run as root or with sudo rights).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

if [ ! -f build/build.ninja ] || ! grep -q '^CMAKE_BUILD_TYPE:STRING=RelWithDebInfo$' build/CMakeCache.txt 2>/dev/null; then
  echo "==> configuring build/ (RelWithDebInfo)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
echo "==> building build/serac"
ninja -C build --quiet ${SERAC_BUILD_JOBS:+-j "$SERAC_BUILD_JOBS"} serac

exec build/serac server "$@"
