#!/usr/bin/env bash
# Builds the MinIO server from source with the Go toolchain, for bench/s3_bench.sh --minio: the
# S3 server people would run instead of serac, measured in the same run on the same objects.
# Not part of the test suite. Needs Go 1.24 or later and the Go module proxy (at build time only).
#
#   bench/build_minio.sh [OUT_DIR]     (default build/minio; prints the binary's path)
set -euo pipefail
cd "$(dirname "$0")/.."
# A fixed source version, so that figures from different days compare the same MinIO.
version="v0.0.0-20260212201848-7aac2a2c5b7c"
out_dir="$(realpath -m "${1:-build/minio}")"
command -v go >/dev/null || { echo "build_minio: go not found" >&2; exit 2; }
if [ ! -x "$out_dir/minio" ]; then
  mkdir -p "$out_dir"
  GOBIN="$out_dir" go install "github.com/minio/minio@$version" >&2
fi
echo "$out_dir/minio"
