#!/usr/bin/env bash
# Fetches the Java tools the Iceberg catalog is tested and benchmarked with, through Maven's
# ordinary client (into ~/.m2), and copies them into a project-local directory:
#   - the Iceberg REST Compatibility Kit (RCK) test classes and the JUnit console launcher
#   - the Iceberg reference REST catalog server (iceberg-open-api runtime jar)
# Idempotent; nothing is downloaded afterwards when the tools run.
#   scripts/install-java-tools.sh            (tools land in build/java/)
#   SERAC_JAVA_TOOLS_DIR=/elsewhere scripts/install-java-tools.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${SERAC_JAVA_TOOLS_DIR:-$repo_root/build/java}"
lib_dir="$tools_dir/lib"
classes_dir="$tools_dir/classes"
# shellcheck source=lib/fetch.sh
source "$repo_root/scripts/lib/fetch.sh"

# 1.10.x is the last line whose plain iceberg-open-api jar is the runnable fixture server
# (a shaded jar that also carries iceberg-core, the core test bodies, S3FileIO, SigV4, Hadoop,
# Jetty, SQLite JDBC). It doubles as the RCK runtime classpath.
iceberg_version=1.10.1
junit_console_version=1.14.1
assertj_version=3.27.7
byte_buddy_version=1.18.3   # assertj's runtime dependency (soft assertions need it)

artifacts=(
  "org.apache.iceberg:iceberg-open-api:$iceberg_version"              # reference server + runtime
  "org.apache.iceberg:iceberg-open-api:$iceberg_version:jar:tests"    # RCK suite classes
  "org.apache.iceberg:iceberg-api:$iceberg_version:jar:tests"         # TestHelpers used by the test bodies
  "org.assertj:assertj-core:$assertj_version"
  "net.bytebuddy:byte-buddy:$byte_buddy_version"
  "org.junit.platform:junit-platform-console-standalone:$junit_console_version"
)

java_major() {
  java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'
}

compile_launcher() {
  local source="$repo_root/tests/catalog_tools/java/LoopbackCatalogServer.java"
  local target="$classes_dir/LoopbackCatalogServer.class"
  if [ -f "$target" ] && [ "$target" -nt "$source" ]; then
    return 0
  fi
  mkdir -p "$classes_dir"
  javac -nowarn -d "$classes_dir" -cp "$lib_dir/iceberg-open-api-$iceberg_version.jar" "$source"
}

need_tool java default-jdk-headless
need_tool javac default-jdk-headless
need_tool mvn maven
if [ "$(java_major)" -lt 17 ] 2>/dev/null; then
  echo "Java 17 or newer is required (found $(java_major))" >&2
  exit 1
fi
maven_copy "$lib_dir" "${artifacts[@]}"
compile_launcher
echo "java tools ready in $tools_dir (iceberg $iceberg_version, junit console $junit_console_version)"
