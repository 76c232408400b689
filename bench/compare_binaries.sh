#!/usr/bin/env bash
# Two serac binaries side by side — before and after a change — on the S3 and catalog benchmarks,
# each run once per binary on the same machine, then one table per benchmark (compare_binaries.py).
# Not a test: it prints tables and exits 0 unless a benchmark could not run.
#
#   bench/compare_binaries.sh OLD_SERAC NEW_SERAC [--quick] [--commits N] [--rounds N]
#                             [--s3-arg ARG]... [--catalog-arg ARG]... [--keep-json DIR]
#
# --quick: short cells (S3 3 s / 6 s for 64 MiB, catalog 3 s), about 10 minutes in all.
# --commits N: measured commits per commit cell (catalog_bench.py's default is 400; a few thousand
#   make the 1-client cells last long enough to stand out of the machine's noise).
# --rounds N: run both binaries N times, alternating which goes first, and compare the median of
#   the per-round ratios (a machine whose speed drifts by a third between runs needs this).
# --s3-arg / --catalog-arg: passed to the benchmark, e.g. --s3-arg=--sizes=4k,1m to re-run the
#   cells a first comparison flagged.
# The load clients are built from the current tree (build/), so both binaries face the same ones.
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 2 ] || { sed -n '2,17p' "$0"; exit 2; }
old_bin="$(realpath "$1")"
new_bin="$(realpath "$2")"
shift 2
s3_args=()
catalog_args=()
json_dir=""
rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) s3_args+=(--seconds 3 --large-seconds 6); catalog_args+=(--seconds 3); shift ;;
    --commits) catalog_args+=(--commits "$2"); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --s3-arg=*) s3_args+=("${1#--s3-arg=}"); shift ;;
    --catalog-arg=*) catalog_args+=("${1#--catalog-arg=}"); shift ;;
    --s3-arg) s3_args+=("$2"); shift 2 ;;
    --catalog-arg) catalog_args+=("$2"); shift 2 ;;
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

# Each round runs old then new (even rounds new then old), and the catalog in the opposite order,
# so that a drift of the machine over the run does not always favour the same binary.
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then first=old; second=new; else first=new; second=old; fi
  for which in "$first" "$second"; do
    bin="$old_bin"; [ "$which" = new ] && bin="$new_bin"
    SERAC_BIN="$bin" bench/s3_bench.sh "${s3_args[@]}" --json "$work/s3-$which-$round.json"
  done
  for which in "$second" "$first"; do
    bin="$old_bin"; [ "$which" = new ] && bin="$new_bin"
    SERAC_BIN="$bin" bench/catalog_bench.sh "${catalog_args[@]}" --json "$work/catalog-$which-$round.json"
  done
done

[ -n "$json_dir" ] && cp "$work"/*.json "$json_dir"/
python3 bench/compare_binaries.py "$work" "$rounds"
