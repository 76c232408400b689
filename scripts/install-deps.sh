#!/usr/bin/env bash
# Installs every Debian package serac needs to build, run and test. Idempotent.
#   scripts/install-deps.sh          build + run dependencies
#   scripts/install-deps.sh --test   also the test and benchmark tools (system packages + Python)
set -euo pipefail
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

build_packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libssl-dev nlohmann-json3-dev libpugixml-dev
  libsqlite3-dev libpq-dev zlib1g-dev libzstd-dev libsnappy-dev libroaring-dev libjemalloc-dev
  libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  openssl python3 python3-pip unzip
)
test_packages=(
  python3 python3-venv python3-pip awscli rclone s3cmd wrk nginx-light curl
  clang-format clang-tidy
  clang-16 libclang-rt-16-dev   # libFuzzer and the sanitizers (scripts/fuzz.sh)
  postgresql-15                 # the source `serac sync` tests replicate (tests/pg_util.py)
  golang-go                     # builds the linearizability checker (tests/linearizability/)
  chromium                      # the web console's browser tests (tests/test_console_browser.py)
)

missing=()
check=("${build_packages[@]}")
[ $want_test -eq 1 ] && check+=("${test_packages[@]}")
for p in "${check[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Node.js 18 or later and npm build the web console (console/, embedded in the binary). Debian 12's
# nodejs and npm packages are enough; a newer Node.js already installed is used as it is.
node_major="$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\).*/\1/p')"
if [ -z "$node_major" ] || [ "$node_major" -lt 18 ] || ! command -v npm >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi

# Apache Arrow C++ with Parquet. Debian 12 packages none, so the C++ libraries and headers that the
# official pyarrow wheel ships are installed into a prefix of their own (CMake looks there when no
# system Arrow is found; the binaries find the libraries by rpath). Pinned: one version, checked.
ARROW_VERSION=26.0.1
ARROW_SOVERSION=2600
ARROW_PREFIX="${SERAC_ARROW_PREFIX:-/opt/serac/arrow-$ARROW_VERSION}"
if [ ! -f "$ARROW_PREFIX/lib/libparquet.so.$ARROW_SOVERSION" ] || [ ! -f "$ARROW_PREFIX/include/parquet/api/writer.h" ]; then
  wheel_dir="$(mktemp -d)"
  trap 'rm -rf "$wheel_dir"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheel_dir" "pyarrow==$ARROW_VERSION"
  unzip -q "$wheel_dir"/pyarrow-*.whl 'pyarrow/libarrow.so.*' 'pyarrow/libparquet.so.*' 'pyarrow/include/arrow/*' \
    'pyarrow/include/parquet/*' -d "$wheel_dir/unpacked"
  $SUDO mkdir -p "$ARROW_PREFIX/lib" "$ARROW_PREFIX/include"
  $SUDO cp -a "$wheel_dir/unpacked/pyarrow/libarrow.so.$ARROW_SOVERSION" \
    "$wheel_dir/unpacked/pyarrow/libparquet.so.$ARROW_SOVERSION" "$ARROW_PREFIX/lib/"
  $SUDO cp -a "$wheel_dir/unpacked/pyarrow/include/arrow" "$wheel_dir/unpacked/pyarrow/include/parquet" \
    "$ARROW_PREFIX/include/"
  echo "$ARROW_VERSION" | $SUDO tee "$ARROW_PREFIX/VERSION" > /dev/null
fi

# The linearizability checker the system tests run (tests/linearizability/, on Porcupine), built into
# build/tools/ with the Go in /usr/local/go if there is one, else Debian's. Its module comes from the
# Go module proxy here, never while the tests run. Skipped while the binary is newer than its sources.
if [ $want_test -eq 1 ]; then
  repo_root="$(cd "$(dirname "$0")/.." && pwd)"
  lincheck_src="$repo_root/tests/linearizability" lincheck_bin="$repo_root/build/tools/serac-lincheck"
  if [ ! -x "$lincheck_bin" ] || [ -n "$(find "$lincheck_src" -name '*.go' -newer "$lincheck_bin" -o -name 'go.*' -newer "$lincheck_bin")" ]; then
    go_bin=go
    [ ! -x /usr/local/go/bin/go ] || go_bin=/usr/local/go/bin/go
    mkdir -p "$(dirname "$lincheck_bin")"
    (cd "$lincheck_src" && GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local "$go_bin" build -o "$lincheck_bin" .)
  fi
fi
