#!/usr/bin/env bash
# Builds serac with debug info, then runs the unit tests (ctest), every fuzz target for a short
# fixed time (scripts/fuzz.sh, its own sanitized build in build-fuzz/) and the system tests (pytest
# in tests/, against a real `serac server` started by the tests). Exits non-zero if any fails.
# Idempotent: re-running only rebuilds what changed and reinstalls Python packages only when
# tests/requirements.txt changed.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --test
scripts/install-java-tools.sh   # Iceberg REST Compatibility Kit and reference server (Maven)
scripts/install-spark.sh        # Iceberg Spark runtimes (3.5, 4.1) and AWS bundle (Maven), .venv-spark41 (pip)
scripts/install-trino.sh        # Trino server with the Iceberg connector (Maven; needs JDK 24+)

if [ ! -f build/build.ninja ] || ! grep -q '^CMAKE_BUILD_TYPE:STRING=RelWithDebInfo$' build/CMakeCache.txt 2>/dev/null; then
  echo "==> configuring build/ (RelWithDebInfo)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
echo "==> building"
ninja -C build --quiet ${SERAC_BUILD_JOBS:+-j "$SERAC_BUILD_JOBS"}

echo "==> preparing .venv"
[ -x .venv/bin/python ] || python3 -m venv .venv
requirements_hash="$(sha256sum tests/requirements.txt | cut -d' ' -f1)"
stamp=.venv/.requirements.sha256
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$requirements_hash" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
  echo "$requirements_hash" >"$stamp"
fi

echo "==> web console component tests (vitest)"
console_status=0
(cd console && npm test --silent) || console_status=$?

echo "==> unit tests (ctest)"
# One throwaway PostgreSQL for every unit test of the PostgreSQL metadata store (each test takes a
# schema of its own), instead of one server per test process.
pg_dir="$(mktemp -d /tmp/serac-pg-unit-XXXXXX)"
trap 'scripts/pg-throwaway.sh stop "$pg_dir"' EXIT
SERAC_TEST_POSTGRES_URL="$(scripts/pg-throwaway.sh start "$pg_dir")"
export SERAC_TEST_POSTGRES_URL
unit_status=0
ctest --test-dir build --output-on-failure -j2 || unit_status=$?
scripts/pg-throwaway.sh stop "$pg_dir"
unset SERAC_TEST_POSTGRES_URL

echo "==> fuzz targets (libFuzzer, 15 s each; fuzz/README.md)"
fuzz_status=0
scripts/fuzz.sh --seconds "${SERAC_FUZZ_SECONDS:-15}" --jobs 2 || fuzz_status=$?

echo "==> system tests (pytest)"
system_status=0
SERAC_BIN="$PWD/build/serac" .venv/bin/python -m pytest -q tests || system_status=$?

verdict() { [ "$1" -eq 0 ] && echo "passed" || echo "FAILED (exit $1)"; }
echo "==> summary: console component tests $(verdict $console_status), unit tests $(verdict $unit_status)," \
     "fuzz targets $(verdict $fuzz_status), system tests $(verdict $system_status)"
[ $console_status -eq 0 ] && [ $unit_status -eq 0 ] && [ $fuzz_status -eq 0 ] && [ $system_status -eq 0 ]
