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
  openssl
)
test_packages=(
  python3 python3-venv python3-pip awscli rclone s3cmd wrk nginx-light curl
  clang-format clang-tidy
  clang-16 libclang-rt-16-dev   # libFuzzer and the sanitizers (scripts/fuzz.sh)
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
