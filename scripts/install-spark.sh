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
# shellcheck source=lib/fetch.sh
source "$repo_root/scripts/lib/fetch.sh"

# Iceberg 1.10.x writes format v3 with deletion vectors (≥1.8) and supports Spark 3.5 on Java 17.
iceberg_version=1.10.1
spark_line=3.5
scala_line=2.12

artifacts=(
  "org.apache.iceberg:iceberg-spark-runtime-${spark_line}_${scala_line}:$iceberg_version"
  "org.apache.iceberg:iceberg-aws-bundle:$iceberg_version"
)

need_tool java default-jdk-headless
need_tool mvn maven
maven_copy "$jars_dir" "${artifacts[@]}"
echo "spark jars ready in $jars_dir (iceberg $iceberg_version, spark $spark_line, scala $scala_line)"
