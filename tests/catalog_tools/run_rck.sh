#!/usr/bin/env bash
# Runs the Iceberg REST Compatibility Kit (RCK: iceberg-open-api 1.11.0 tests, the newest published,
# driving the Iceberg 1.12.0 REST client) with the JUnit console launcher against an already running
# REST catalog. Needs scripts/install-java-tools.sh.
#
# Required:
#   CATALOG_URI         catalog base URI, e.g. http://127.0.0.1:9000/_iceberg
#   CATALOG_WAREHOUSE   warehouse name (use a dedicated one: the kit purges ns, newdb, ...)
# Optional shorthands (each expands to the RCK's CATALOG_* properties; explicit CATALOG_* wins):
#   RCK_SIGV4=1               rest.auth.type=sigv4, signing name RCK_SIGNING_NAME (s3tables)
#   RCK_S3_ENDPOINT=URL       S3FileIO on that endpoint with path-style addressing
#   RCK_ACCESS_KEY_ID / RCK_SECRET_ACCESS_KEY   keys for both (default AWS_ACCESS_KEY_ID/...)
#   RCK_REGION                signing and client region (default us-east-1)
#   RCK_SUITE=all|catalog|views   which half of the kit to run (default all)
#   RCK_JAVA_OPTS             extra JVM flags, e.g. -Drck.requires-namespace-create=true
#                             -Drck.supports-serverside-retry=true -Drck.overrides-requested-location=true
#   RCK_REPORTS_DIR           where JUnit XML reports go (default: a temporary directory)
#   RCK_TIMEOUT               seconds before the run is stopped (default 1200)
# Any other CATALOG_* variable is passed through to the catalog client unchanged.
# Prints the JUnit summary and a closing "rck: N passed, N failed, N skipped" line; the exit
# status is the launcher's (0 only when no test failed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_java_tools

: "${CATALOG_URI:?set CATALOG_URI to the catalog base URI}"
: "${CATALOG_WAREHOUSE:?set CATALOG_WAREHOUSE to a dedicated warehouse}"
export CATALOG_URI CATALOG_WAREHOUSE

region="${RCK_REGION:-us-east-1}"
access_key="${RCK_ACCESS_KEY_ID:-${AWS_ACCESS_KEY_ID:-}}"
secret_key="${RCK_SECRET_ACCESS_KEY:-${AWS_SECRET_ACCESS_KEY:-}}"

if [ "${RCK_SIGV4:-0}" = 1 ]; then
  [ -n "$access_key" ] && [ -n "$secret_key" ] || { echo "RCK_SIGV4=1 needs access keys" >&2; exit 2; }
  export CATALOG_REST_AUTH_TYPE="${CATALOG_REST_AUTH_TYPE:-sigv4}"
  export CATALOG_REST_SIGNING__NAME="${CATALOG_REST_SIGNING__NAME:-${RCK_SIGNING_NAME:-s3tables}}"
  export CATALOG_REST_SIGNING__REGION="${CATALOG_REST_SIGNING__REGION:-$region}"
  export CATALOG_REST_ACCESS__KEY__ID="${CATALOG_REST_ACCESS__KEY__ID:-$access_key}"
  export CATALOG_REST_SECRET__ACCESS__KEY="${CATALOG_REST_SECRET__ACCESS__KEY:-$secret_key}"
fi

if [ -n "${RCK_S3_ENDPOINT:-}" ]; then
  [ -n "$access_key" ] && [ -n "$secret_key" ] || { echo "RCK_S3_ENDPOINT needs access keys" >&2; exit 2; }
  export CATALOG_IO__IMPL="${CATALOG_IO__IMPL:-org.apache.iceberg.aws.s3.S3FileIO}"
  export CATALOG_S3_ENDPOINT="${CATALOG_S3_ENDPOINT:-$RCK_S3_ENDPOINT}"
  export CATALOG_S3_PATH__STYLE__ACCESS="${CATALOG_S3_PATH__STYLE__ACCESS:-true}"
  export CATALOG_CLIENT_REGION="${CATALOG_CLIENT_REGION:-$region}"
  export CATALOG_S3_ACCESS__KEY__ID="${CATALOG_S3_ACCESS__KEY__ID:-$access_key}"
  export CATALOG_S3_SECRET__ACCESS__KEY="${CATALOG_S3_SECRET__ACCESS__KEY:-$secret_key}"
fi

case "${RCK_SUITE:-all}" in
  all) selection=org.apache.iceberg.rest.RESTCompatibilityKitSuite ;;
  catalog) selection=org.apache.iceberg.rest.RESTCompatibilityKitCatalogTests ;;
  views) selection=org.apache.iceberg.rest.RESTCompatibilityKitViewCatalogTests ;;
  *) echo "RCK_SUITE must be all, catalog or views" >&2; exit 2 ;;
esac

reports_dir="${RCK_REPORTS_DIR:-$(mktemp -d -t rck-reports.XXXXXX)}"
mkdir -p "$reports_dir"
log="$reports_dir/rck-console.log"

# The kit's jars come first in rck.classpath, then the runtime.
rck_classpath="$(classpath "$rck_classpath_file")"

started=$(date +%s)
status=0
# rck.local=false: the kit must not start its own embedded server. JVM system properties become
# catalog properties verbatim, so RCK_JAVA_OPTS can carry any rck.* flag.
# shellcheck disable=SC2086
timeout "${RCK_TIMEOUT:-1200}" java -Xmx2g -Drck.local=false \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=warn ${RCK_JAVA_OPTS:-} \
  -jar "$junit_console_jar" execute \
  --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
  --config rck.local=false --reports-dir "$reports_dir" \
  --class-path "$rck_classpath" --select-class "$selection" >"$log" 2>&1 || status=$?
elapsed=$(( $(date +%s) - started ))

# The tree is long; show failures and the summary, keep the full log.
grep -E '✘|=> ' "$log" | head -200 || true
grep -E '■' "$log" | sed 's/^[│├└─ ]*/skipped: /' || true
sed -n '/^Test run finished/,$p' "$log"
count() { sed -n "s/^\[ *\([0-9]*\) $1 *\]\$/\1/p" "$log" | head -1; }
passed="$(count 'tests successful')"
echo "full log: $log (${elapsed}s)"
if [ -z "$passed" ]; then
  echo "rck: the launcher printed no summary (exit $status); see $log" >&2
  exit $(( status == 0 ? 1 : status ))
fi
# A failed container (e.g. the kit's @BeforeAll cannot reach the catalog) fails all it holds.
failed=$(( $(count 'tests failed') + $(count 'containers failed') ))
skipped=$(( $(count 'tests skipped') + $(count 'tests aborted') ))
echo "rck: $passed passed, $failed failed, $skipped skipped"
exit "$status"
