#!/usr/bin/env bash
# S3 benchmark: serac against nginx (GET) and an fsync'd plain writer (PUT), side by side.
# Not a test: it prints a table. See bench/README.md.
#
#   bench/s3_bench.sh [--seconds 6] [--large-seconds 12] [--clients 1,16] [--sizes 4k,1m,64m]
#                     [--ops GET,PUT] [--references-only] [--json out.json] [--keep]
#
# Environment: SERAC_BIN (default build/serac; built in Release into build/ when missing),
# BENCH_TMPDIR (where temp data lives), CC (compiler for bench/fsync_writer.c).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

for tool in wrk cmake ninja cc; do
  command -v "$tool" >/dev/null || { echo "s3_bench: '$tool' not found (scripts/install-deps.sh --test)" >&2; exit 2; }
done
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
  { echo "s3_bench: nginx not found (Debian package nginx-light)" >&2; exit 2; }

serac_bin="${SERAC_BIN:-build/serac}"
if [ ! -x "$serac_bin" ]; then
  if [ -n "${SERAC_BIN:-}" ]; then
    echo "s3_bench: SERAC_BIN=$SERAC_BIN is not an executable" >&2
    exit 2
  fi
  echo "s3_bench: building serac (Release) into build/" >&2
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >&2
  ninja -C build -j2 serac >&2
fi

venv="$repo_root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "s3_bench: creating .venv with boto3" >&2
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import boto3' 2>/dev/null; then
  "$venv/bin/pip" install --quiet boto3 >&2
fi

export SERAC_BIN="$serac_bin"
exec "$venv/bin/python" "$repo_root/bench/s3_bench.py" "$@"
