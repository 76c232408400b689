# Shared settings for the catalog tool scripts; sourced, not run.
catalog_tools_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$catalog_tools_dir/../.." && pwd)"
java_tools_dir="${SERAC_JAVA_TOOLS_DIR:-$repo_root/build/java}"
java_lib_dir="$java_tools_dir/lib"
junit_console_version=1.14.1
# Written by scripts/install-java-tools.sh, one jar a line: Iceberg 1.12.0 runtime, the 1.11.0
# kit and test bodies (1.12.0 publishes none), Jetty 12, SQLite JDBC, a trimmed Hadoop.
server_classpath_file="$java_tools_dir/server.classpath"
rck_classpath_file="$java_tools_dir/rck.classpath"
junit_console_jar="$java_lib_dir/junit-platform-console-standalone-$junit_console_version.jar"

# classpath FILE: the jars listed in FILE joined with ':' (JUnit's --class-path takes no wildcards).
classpath() {
  paste -sd: "$1"
}

require_java_tools() {
  local file jar
  for file in "$server_classpath_file" "$rck_classpath_file"; do
    if [ ! -s "$file" ]; then
      echo "Java tools missing in $java_tools_dir: run scripts/install-java-tools.sh first" >&2
      exit 2
    fi
    while IFS= read -r jar; do
      if [ ! -s "$jar" ]; then
        echo "$jar missing: run scripts/install-java-tools.sh again" >&2
        exit 2
      fi
    done <"$file"
  done
}
