#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, AddressSanitizer, UndefinedBehaviorSanitizer) into
# build-fuzz/ and runs each one from its seed corpus for a fixed time. Exits non-zero when a target
# crashes, leaks, exceeds its memory limit or breaks one of its oracles; the input that did it is
# kept in build-fuzz/artifacts/TARGET/. New inputs a run finds go to build-fuzz/corpus/TARGET/,
# never into the committed seeds.
#   scripts/fuzz.sh                        every target for 15 s (what scripts/test.sh runs)
#   scripts/fuzz.sh --seconds 3600 catalog_request_fuzzer
#   scripts/fuzz.sh --runs 10000000 --seconds 3600   ten million inputs or an hour, whichever first
#   scripts/fuzz.sh --jobs 2 ...           two targets at a time
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=15
runs=-1
jobs=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(ls fuzz/corpus)

# clang and its libFuzzer runtime, from Debian's packages.
if ! command -v clang++-16 >/dev/null || [ ! -e /usr/lib/llvm-16/lib/clang/16/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-16 libclang-rt-16-dev
fi

if [ ! -f build-fuzz/build.ninja ]; then
  echo "==> configuring build-fuzz/ (clang, sanitizers, libFuzzer)"
  CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSERAC_FUZZ=ON >/dev/null
fi
echo "==> building the fuzz targets"
ninja -C build-fuzz --quiet ${SERAC_BUILD_JOBS:+-j "$SERAC_BUILD_JOBS"} fuzzers
[ "${SERAC_FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# Limits a target must stay within: a leak or an input that makes serac allocate without bound
# ends the run as a failure.
fuzz_flags=(-rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=30 -max_len=262144 -print_final_stats=1
            -detect_leaks=1 -close_fd_mask=1)

run_one() {
  local target="$1" work="build-fuzz/corpus/$1" artifacts="build-fuzz/artifacts/$1/" log="build-fuzz/logs/$1.log"
  mkdir -p "$work" "$artifacts" build-fuzz/logs
  # Whichever comes first: the inputs asked for, or the time.
  local limit=(-max_total_time="$seconds")
  [ "$runs" -ge 0 ] && limit+=(-runs="$runs")
  local status=0
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/$target" "${fuzz_flags[@]}" "${limit[@]}" -artifact_prefix="$artifacts" \
    "$work" "fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  local executed
  executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ $status -eq 0 ]; then
    printf '%-26s %12s inputs  ok\n' "$target" "${executed:-?}"
  else
    printf '%-26s %12s inputs  FAILED (exit %d), see %s and %s\n' "$target" "${executed:-?}" "$status" "$log" "$artifacts"
    grep -m 5 -E 'ERROR: |fuzz oracle|SUMMARY' "$log" | sed 's/^/    /' || true
  fi
  return $status
}

echo "==> fuzzing ${#targets[@]} targets (${seconds} s$([ "$runs" -ge 0 ] && echo " or $runs inputs, whichever comes first") each)"
failed=0
pids=()
for target in "${targets[@]}"; do
  [ -x "build-fuzz/fuzz/$target" ] || { echo "no fuzz target $target" >&2; exit 2; }
  run_one "$target" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
exit $failed
