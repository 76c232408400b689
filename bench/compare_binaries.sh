#!/usr/bin/env bash
# Two serac binaries side by side — before and after a change — on the S3 and catalog benchmarks,
# each run once per binary on the same machine, then one table per benchmark (compare_binaries.py).
# Not a test: it prints tables and exits 0 unless a benchmark could not run.
#
#   bench/compare_binaries.sh OLD_SERAC NEW_SERAC [--quick] [--keep-json DIR]
#
# --quick: short cells (S3 3 s / 6 s for 64 MiB, catalog 3 s), about 10 minutes in all.
# The load clients are built from the current tree (build/), so both binaries face the same ones.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 2 ] || { sed -n '2,9p' "$0"; exit 2; }
old_bin="$(realpath "$1")"
new_bin="$(realpath "$2")"
shift 2
s3_args=()
catalog_args=()
json_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) s3_args+=(--seconds 3 --large-seconds 6); catalog_args+=(--seconds 3); shift ;;
    --keep-json) json_dir="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
for bin in "$old_bin" "$new_bin"; do
  [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -n "$json_dir" ] && mkdir -p "$json_dir"

ninja -C build --quiet catalog_load_client
export CATALOG_LOAD_CLIENT="$PWD/build/catalog_load_client"

# Old, new, then the catalog in the opposite order, so that a drift of the machine over the run
# does not always favour the same binary.
SERAC_BIN="$old_bin" bench/s3_bench.sh "${s3_args[@]}" --json "$work/s3-old.json"
SERAC_BIN="$new_bin" bench/s3_bench.sh "${s3_args[@]}" --json "$work/s3-new.json"
SERAC_BIN="$new_bin" bench/catalog_bench.sh "${catalog_args[@]}" --json "$work/catalog-new.json"
SERAC_BIN="$old_bin" bench/catalog_bench.sh "${catalog_args[@]}" --json "$work/catalog-old.json"

[ -n "$json_dir" ] && cp "$work"/*.json "$json_dir"/
python3 bench/compare_binaries.py "$work/s3-old.json" "$work/s3-new.json" \
  "$work/catalog-old.json" "$work/catalog-new.json"
