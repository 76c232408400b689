#!/usr/bin/env bash
# Iceberg REST catalog benchmark: serac's /_iceberg against the Apache Iceberg reference REST
# catalog, the same workloads side by side. Not a test: it prints a table. See bench/README.md.
#
#   bench/catalog_bench.sh [--seconds 5] [--warmup 1] [--clients 1,8,32] [--workloads load,hot,spread]
#                          [--tables 100] [--only serac|reference] [--python-load [--procs 2]]
#                          [--json out.json] [--keep]
#
# Environment: SERAC_BIN (default build/serac; built in Release into build/ when missing),
# CATALOG_LOAD_CLIENT (default: catalog_load_client beside SERAC_BIN; the CMake target
# catalog_load_client, built into build/ when missing and SERAC_BIN is not set),
# BENCH_TMPDIR (where serac's data and the reference warehouse live), REFERENCE_SERVER_JAVA_OPTS.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

command -v java >/dev/null || { echo "catalog_bench: 'java' not found (Java 17+)" >&2; exit 2; }
if [ ! -s build/java/server.classpath ] && [ -z "${SERAC_JAVA_TOOLS_DIR:-}" ]; then
  echo "catalog_bench: reference server missing: run scripts/install-java-tools.sh" >&2
  exit 2
fi

python_load=0
for arg in "$@"; do
  [ "$arg" = "--python-load" ] && python_load=1
done

serac_bin="${SERAC_BIN:-build/serac}"
load_client="${CATALOG_LOAD_CLIENT:-$(dirname "$serac_bin")/catalog_load_client}"
targets=()
if [ ! -x "$serac_bin" ]; then
  if [ -n "${SERAC_BIN:-}" ]; then
    echo "catalog_bench: SERAC_BIN=$SERAC_BIN is not an executable" >&2
    exit 2
  fi
  targets+=(serac)
fi
if [ "$python_load" = 0 ] && [ ! -x "$load_client" ]; then
  if [ -n "${SERAC_BIN:-}${CATALOG_LOAD_CLIENT:-}" ]; then
    echo "catalog_bench: no catalog_load_client at $load_client (build the CMake target catalog_load_client" \
         "and set CATALOG_LOAD_CLIENT, or pass --python-load)" >&2
    exit 2
  fi
  targets+=(catalog_load_client)
fi
if [ "${#targets[@]}" -gt 0 ]; then
  for tool in cmake ninja; do
    command -v "$tool" >/dev/null || { echo "catalog_bench: '$tool' not found" >&2; exit 2; }
  done
  echo "catalog_bench: building ${targets[*]} (Release) into build/" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  ninja -C build -j2 "${targets[@]}" >&2
fi

venv="$repo_root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "catalog_bench: creating .venv with boto3" >&2
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import botocore' 2>/dev/null; then
  "$venv/bin/pip" install --quiet boto3 >&2
fi

export SERAC_BIN="$serac_bin" CATALOG_LOAD_CLIENT="$load_client"
exec "$venv/bin/python" "$repo_root/bench/catalog_bench.py" "$@"
