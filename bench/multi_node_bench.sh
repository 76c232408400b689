#!/usr/bin/env bash
# serac on one node with SQLite (A), one node with PostgreSQL (B) and three nodes on one PostgreSQL
# behind nginx (C): S3 and catalog cells side by side, with CPU per operation of serac, PostgreSQL
# and nginx. Not a test: it prints a table. See bench/README.md.
#
#   bench/multi_node_bench.sh [--seconds 5] [--large-seconds 8] [--clients 16] [--catalog-clients 8]
#                             [--only A,B,C] [--workloads get4k,put4k,...] [--json out.json] [--keep]
#
# Environment: SERAC_BIN (default build/serac), CATALOG_LOAD_CLIENT (default: catalog_load_client
# beside SERAC_BIN), SERAC_PG_BIN (default /usr/lib/postgresql/15/bin), BENCH_TMPDIR (where
# everything lives). Neither binary is built here: build the CMake targets serac and
# catalog_load_client first (bench/README.md).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

for tool in wrk g++; do
  command -v "$tool" >/dev/null || { echo "multi_node_bench: '$tool' not found (scripts/install-deps.sh --test)" >&2; exit 2; }
done
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
  { echo "multi_node_bench: nginx not found (Debian package nginx-light)" >&2; exit 2; }

serac_bin="${SERAC_BIN:-build/serac}"
load_client="${CATALOG_LOAD_CLIENT:-$(dirname "$serac_bin")/catalog_load_client}"
for binary in "$serac_bin" "$load_client"; do
  [ -x "$binary" ] || { echo "multi_node_bench: no $binary (build the CMake targets serac and catalog_load_client)" >&2; exit 2; }
done

venv="$repo_root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "multi_node_bench: creating .venv with boto3" >&2
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import boto3' 2>/dev/null; then
  "$venv/bin/pip" install --quiet boto3 >&2
fi

export SERAC_BIN="$serac_bin" CATALOG_LOAD_CLIENT="$load_client"
exec "$venv/bin/python" "$repo_root/bench/multi_node_bench.py" "$@"
