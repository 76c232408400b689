# Shared settings for the catalog tool scripts; sourced, not run.
catalog_tools_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$catalog_tools_dir/../.." && pwd)"
java_tools_dir="${SERAC_JAVA_TOOLS_DIR:-$repo_root/build/java}"
java_lib_dir="$java_tools_dir/lib"
iceberg_version=1.10.1
junit_console_version=1.14.1
reference_jar="$java_lib_dir/iceberg-open-api-$iceberg_version.jar"

require_java_tools() {
  if [ ! -s "$reference_jar" ]; then
    echo "Java tools missing in $java_tools_dir: run scripts/install-java-tools.sh first" >&2
    exit 2
  fi
}
