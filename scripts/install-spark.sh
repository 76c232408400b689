#!/usr/bin/env bash
# Fetches the jars Spark needs to talk to serac's Iceberg REST catalog, through Maven's ordinary
# client (into ~/.m2), and copies them into a project-local directory that the Spark tests hand to
# `spark.jars` (so Spark never resolves packages at run time):
#   - iceberg-spark-runtime for each Spark/Scala line the tests run: 3.5/2.12 and 4.1/2.13
#   - iceberg-aws-bundle (S3FileIO, SigV4 signing of catalog requests, the AWS SDK v2), which
#     both lines share
# The file names carry the line, so tests/spark_util.py picks the runtime of the PySpark it runs
# under. PySpark 3.5 comes from tests/requirements.txt (.venv). PySpark 4.1 cannot share that
# venv, so this script also makes .venv-spark41 from tests/requirements-spark41.txt, in which
# tests/test_spark41.py runs tests/test_spark.py a second time.
# Idempotent: present jars are not fetched again, jars no longer listed are removed, and the venv
# is only reinstalled when its requirements file changes.
#   scripts/install-spark.sh                 (jars land in build/java/spark/, the venv in .venv-spark41/)
#   SERAC_SPARK_JARS_DIR=/elsewhere SERAC_SPARK41_VENV=/elsewhere-venv scripts/install-spark.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jars_dir="${SERAC_SPARK_JARS_DIR:-$repo_root/build/java/spark}"
spark41_venv="${SERAC_SPARK41_VENV:-$repo_root/.venv-spark41}"
spark41_requirements="$repo_root/tests/requirements-spark41.txt"
# shellcheck source=lib/fetch.sh
source "$repo_root/scripts/lib/fetch.sh"

# Iceberg 1.12.0 is the current release; it publishes a runtime for Spark 3.5 (Scala 2.12) and
# for Spark 4.1 (Scala 2.13). Both lines run on Java 17, Debian 12's default JDK.
iceberg_version=1.12.0
spark_lines=("3.5_2.12" "4.1_2.13")   # <spark line>_<scala line>, as in the artifact names

artifacts=("org.apache.iceberg:iceberg-aws-bundle:$iceberg_version")
for line in "${spark_lines[@]}"; do
  artifacts+=("org.apache.iceberg:iceberg-spark-runtime-${line}:$iceberg_version")
done

# The Spark 4.1 venv, reinstalled only when tests/requirements-spark41.txt changes (the same
# stamp scripts/test.sh keeps for .venv).
prepare_spark41_venv() {
  local stamp="$spark41_venv/.requirements.sha256" hash
  [ -x "$spark41_venv/bin/python" ] || python3 -m venv "$spark41_venv"
  hash="$(sha256sum "$spark41_requirements" | cut -d' ' -f1)"
  [ "$(cat "$stamp" 2>/dev/null || true)" = "$hash" ] && return 0
  echo "installing $spark41_requirements into $spark41_venv"
  "$spark41_venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$spark41_venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$spark41_requirements"
  echo "$hash" >"$stamp"
}

need_tool java default-jdk-headless
need_tool mvn maven
need_tool python3 python3-venv
maven_copy "$jars_dir" "${artifacts[@]}"
prune_jars "$jars_dir" "${artifacts[@]}"   # drops what earlier versions fetched (the 1.10.1 runtime, say)
prepare_spark41_venv
echo "spark jars ready in $jars_dir (iceberg $iceberg_version, spark/scala ${spark_lines[*]});" \
     "pyspark $("$spark41_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("pyspark"))')" \
     "in $spark41_venv"
