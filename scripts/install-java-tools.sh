#!/usr/bin/env bash
# Fetches the Java tools the Iceberg catalog is tested and benchmarked with, through Maven's
# ordinary client (into ~/.m2), and copies them into a project-local directory:
#   - the Iceberg REST Compatibility Kit (RCK) test classes and the JUnit console launcher
#   - the Iceberg runtime the kit drives (REST client, SigV4, S3FileIO) and the reference REST
#     catalog server (RESTCatalogAdapter behind Jetty, JdbcCatalog on SQLite, HadoopFileIO)
# and writes the two class paths, one jar a line, beside them for tests/catalog_tools/common.sh:
#   server.classpath   the reference server (tests/catalog_tools/run_reference_server.sh)
#   rck.classpath      the kit (tests/catalog_tools/run_rck.sh)
# Idempotent; jars no longer listed are removed; nothing is downloaded when the tools run.
#   scripts/install-java-tools.sh            (tools land in build/java/)
#   SERAC_JAVA_TOOLS_DIR=/elsewhere scripts/install-java-tools.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools_dir="${SERAC_JAVA_TOOLS_DIR:-$repo_root/build/java}"
lib_dir="$tools_dir/lib"
classes_dir="$tools_dir/classes"
# shellcheck source=lib/fetch.sh
source "$repo_root/scripts/lib/fetch.sh"

# The runtime under test is Iceberg 1.12.0: the REST client the kit drives (iceberg-core, SigV4
# and S3FileIO from iceberg-aws) and the catalog code behind the reference server. The kit itself
# cannot be 1.12.0: 1.10.x was the last line whose plain iceberg-open-api jar was the runnable,
# shaded fixture; 1.11.0 publishes only its `tests` (the kit) and `test-fixtures` classifiers; and
# 1.12.0 publishes no iceberg-open-api at all and no `tests` jar of any module. So the kit, the
# test bodies it runs (iceberg-core `tests`: CatalogTests, ViewCatalogTests, and also the
# RESTCatalogAdapter/RESTCatalogServlet the reference server is made of; iceberg-api `tests`:
# TestHelpers) come from 1.11.0, the newest published, on top of the 1.12.0 runtime. Against the
# reference server that mix runs the whole kit clean (144 passed, 13 skipped, 0 failed).
iceberg_version=1.12.0
rck_version=1.11.0
jetty_version=12.1.8        # what Iceberg 1.11 builds its fixtures with (Jetty 12, EE10 servlets)
sqlite_jdbc_version=3.53.0.0
hadoop_version=3.4.3        # HadoopFileIO: file: warehouses of JdbcCatalog and ResolvingFileIO
junit_console_version=1.14.1
assertj_version=3.27.7
byte_buddy_version=1.18.3   # assertj's runtime dependency (soft assertions need it)

# Every jar is listed and fetched without transitive resolution: the published POMs of the kit
# list no dependencies, and of hadoop-common's large tree (Jersey, Netty, Jetty 9, ZooKeeper, ...)
# the file: paths used here load only the few jars below (found by running the server and the kit).
runtime_artifacts=(
  "org.apache.iceberg:iceberg-api:$iceberg_version"
  "org.apache.iceberg:iceberg-common:$iceberg_version"
  "org.apache.iceberg:iceberg-core:$iceberg_version"
  "org.apache.iceberg:iceberg-bundled-guava:$iceberg_version"
  # iceberg-core's own runtime dependencies, at the versions its 1.12.0 POM resolves to
  "org.apache.avro:avro:1.12.2"
  "com.fasterxml.jackson.core:jackson-core:2.22.2"
  "com.fasterxml.jackson.core:jackson-databind:2.22.2"
  "com.fasterxml.jackson.core:jackson-annotations:2.22"
  "com.github.ben-manes.caffeine:caffeine:3.2.4"
  "org.jspecify:jspecify:1.0.0"
  "com.google.errorprone:error_prone_annotations:2.49.0"
  "org.roaringbitmap:RoaringBitmap:1.6.23"
  "io.airlift:aircompressor:2.0.3"
  "org.apache.httpcomponents.client5:httpclient5:5.6.4"
  "org.apache.httpcomponents.core5:httpcore5:5.4.3"
  "org.apache.httpcomponents.core5:httpcore5-h2:5.4.3"
  "org.slf4j:slf4j-api:2.0.18"
  "org.slf4j:slf4j-simple:2.0.18"
  # HadoopFileIO for file: locations, trimmed as Iceberg's own fixtures trim it
  "org.apache.hadoop:hadoop-common:$hadoop_version"
  "org.apache.hadoop:hadoop-auth:$hadoop_version"
  "org.apache.hadoop.thirdparty:hadoop-shaded-guava:1.5.0"
  "org.codehaus.woodstox:stax2-api:4.2.1"
  "com.fasterxml.woodstox:woodstox-core:5.4.0"
  "org.apache.commons:commons-configuration2:2.10.1"
  "org.apache.commons:commons-collections4:4.4"
  "org.apache.commons:commons-text:1.14.0"
  "org.apache.commons:commons-lang3:3.18.0"
  "org.apache.commons:commons-compress:1.28.0"
  "commons-io:commons-io:2.20.0"
  "commons-codec:commons-codec:1.19.0"
  "commons-logging:commons-logging:1.2"
)
# The reference server: the REST adapter and servlet (iceberg-core tests), Jetty, SQLite.
server_artifacts=(
  "org.apache.iceberg:iceberg-core:$rck_version:jar:tests"
  "org.eclipse.jetty.ee10:jetty-ee10-servlet:$jetty_version"
  "org.eclipse.jetty:jetty-server:$jetty_version"
  "org.eclipse.jetty:jetty-http:$jetty_version"
  "org.eclipse.jetty:jetty-io:$jetty_version"
  "org.eclipse.jetty:jetty-util:$jetty_version"
  "org.eclipse.jetty:jetty-security:$jetty_version"
  "org.eclipse.jetty:jetty-session:$jetty_version"
  "org.eclipse.jetty.compression:jetty-compression-common:$jetty_version"
  "org.eclipse.jetty.compression:jetty-compression-server:$jetty_version"
  "org.eclipse.jetty.compression:jetty-compression-gzip:$jetty_version"
  "jakarta.servlet:jakarta.servlet-api:6.0.0"
  "org.xerial:sqlite-jdbc:$sqlite_jdbc_version"
)
# The kit and what only its client side needs (SigV4 signing and S3FileIO with the AWS SDK).
# The test jars come first so their classes win over anything the runtime repeats.
rck_artifacts=(
  "org.apache.iceberg:iceberg-open-api:$rck_version:jar:tests"           # the kit's suites
  "org.apache.iceberg:iceberg-open-api:$rck_version:jar:test-fixtures"   # RESTServerExtension, RCKUtils
  "org.apache.iceberg:iceberg-api:$rck_version:jar:tests"                # TestHelpers
  "org.apache.iceberg:iceberg-core:$rck_version:jar:tests"               # CatalogTests, ViewCatalogTests
  "org.assertj:assertj-core:$assertj_version"
  "net.bytebuddy:byte-buddy:$byte_buddy_version"
  "org.apache.iceberg:iceberg-aws:$iceberg_version"
  "org.apache.iceberg:iceberg-aws-bundle:$iceberg_version"
  "dev.failsafe:failsafe:3.3.2"                                          # iceberg-aws's retries
)
launcher_artifacts=(
  "org.junit.platform:junit-platform-console-standalone:$junit_console_version"
)

java_major() {
  java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'
}

# write_classpath FILE COORDINATE...: the jars of the coordinates in lib_dir, one a line. FILE is
# only replaced when its content changes, so the launcher is not recompiled on every run.
write_classpath() {
  local file="$1" coordinate
  shift
  for coordinate in "$@"; do
    echo "$lib_dir/$(artifact_file_name "$coordinate")"
  done >"$file.new"
  if cmp -s "$file.new" "$file"; then
    rm -f "$file.new"
  else
    mv "$file.new" "$file"
  fi
}

compile_launcher() {
  local source="$repo_root/tests/catalog_tools/java/LoopbackCatalogServer.java"
  local target="$classes_dir/LoopbackCatalogServer.class"
  if [ -f "$target" ] && [ "$target" -nt "$source" ] && [ "$target" -nt "$tools_dir/server.classpath" ]; then
    return 0
  fi
  mkdir -p "$classes_dir"
  javac -nowarn -d "$classes_dir" -cp "$(paste -sd: "$tools_dir/server.classpath")" "$source"
}

need_tool java default-jdk-headless
need_tool javac default-jdk-headless
need_tool mvn maven
if [ "$(java_major)" -lt 17 ] 2>/dev/null; then
  echo "Java 17 or newer is required (found $(java_major))" >&2
  exit 1
fi
maven_copy "$lib_dir" "${runtime_artifacts[@]}" "${server_artifacts[@]}" "${rck_artifacts[@]}" \
  "${launcher_artifacts[@]}"
prune_jars "$lib_dir" "${runtime_artifacts[@]}" "${server_artifacts[@]}" "${rck_artifacts[@]}" \
  "${launcher_artifacts[@]}"   # drops what earlier versions fetched (the 226 MB shaded 1.10 fixture, say)
write_classpath "$tools_dir/server.classpath" "${server_artifacts[@]}" "${runtime_artifacts[@]}"
write_classpath "$tools_dir/rck.classpath" "${rck_artifacts[@]}" "${runtime_artifacts[@]}"
compile_launcher
echo "java tools ready in $tools_dir (iceberg $iceberg_version, kit $rck_version," \
     "junit console $junit_console_version)"
