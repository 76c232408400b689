#!/usr/bin/env bash
# Fetches the jars Spark needs to talk to serac's Iceberg REST catalog, through Maven's ordinary
# client (into ~/.m2), and copies them into a project-local directory that the Spark tests hand to
# `spark.jars` (so Spark never resolves packages at run time):
#   - iceberg-spark-runtime for the Spark/Scala line of the PySpark pinned in tests/requirements.txt
#   - iceberg-aws-bundle (S3FileIO, SigV4 signing of catalog requests, the AWS SDK v2)
# PySpark itself comes from tests/requirements.txt. Idempotent: present jars are not fetched again.
#   scripts/install-spark.sh                 (jars land in build/java/spark/)
#   SERAC_SPARK_JARS_DIR=/elsewhere scripts/install-spark.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jars_dir="${SERAC_SPARK_JARS_DIR:-$repo_root/build/java/spark}"

# Iceberg 1.10.x writes format v3 with deletion vectors (≥1.8) and supports Spark 3.5 on Java 17.
iceberg_version=1.10.1
spark_line=3.5
scala_line=2.12

artifacts=(
  "org.apache.iceberg:iceberg-spark-runtime-${spark_line}_${scala_line}:$iceberg_version"
  "org.apache.iceberg:iceberg-aws-bundle:$iceberg_version"
)

need_tool() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$2"
}

# Maps G:A:V to the file name dependency:copy writes.
jar_name() {
  local IFS=':'
  read -r _group artifact version <<<"$1"
  echo "$artifact-$version.jar"
}

fetch_artifacts() {
  mkdir -p "$jars_dir"
  for coordinate in "${artifacts[@]}"; do
    local name
    name="$(jar_name "$coordinate")"
    if [ -s "$jars_dir/$name" ]; then
      continue
    fi
    echo "fetching $coordinate"
    local output
    if ! output="$(mvn -B -q -Dstyle.color=never dependency:copy -Dartifact="$coordinate" \
                     -DoutputDirectory="$jars_dir" -Dmdep.overWriteReleases=true 2>&1)"; then
      echo "$output" >&2
      exit 1
    fi
    [ -s "$jars_dir/$name" ] || { echo "missing $jars_dir/$name after fetch" >&2; exit 1; }
  done
}

need_tool java default-jdk-headless
need_tool mvn maven
fetch_artifacts
echo "spark jars ready in $jars_dir (iceberg $iceberg_version, spark $spark_line, scala $scala_line)"
