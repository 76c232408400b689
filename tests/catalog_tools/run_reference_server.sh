#!/usr/bin/env bash
# Runs the Iceberg reference REST catalog (RESTCatalogAdapter of the iceberg-core 1.11.0 test jar
# on the Iceberg 1.12.0 runtime, behind Jetty 12) in the foreground, bound to loopback only.
#   tests/catalog_tools/run_reference_server.sh [PORT] [WAREHOUSE_DIR]
# PORT defaults to 8181 (0 picks a free port; the chosen one is printed). WAREHOUSE_DIR defaults
# to a fresh temporary directory. The backend is a JdbcCatalog on in-memory SQLite unless
# CATALOG_* variables say otherwise (e.g. CATALOG_URI=jdbc:sqlite:/path/cat.db for a file).
# It prints "reference catalog listening on http://127.0.0.1:PORT/ ..." once it serves.
# Catalog URI for clients: http://127.0.0.1:PORT/ (no prefix; the server ignores "warehouse").
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
require_java_tools

port="${1:-8181}"
if [ -n "${2:-}" ]; then
  mkdir -p "$2"
  export CATALOG_WAREHOUSE="$(cd "$2" && pwd)"
fi
host="${REFERENCE_SERVER_HOST:-127.0.0.1}"

launcher_class_dir="$java_tools_dir/classes"
launcher=(LoopbackCatalogServer)
if [ ! -f "$launcher_class_dir/LoopbackCatalogServer.class" ]; then
  # Not compiled by the install script: Java's source-file mode compiles it in memory.
  launcher=("$catalog_tools_dir/java/LoopbackCatalogServer.java")
fi

exec java ${REFERENCE_SERVER_JAVA_OPTS:--Xmx1g} -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$launcher_class_dir:$(classpath "$server_classpath_file")" "${launcher[@]}" "$port" "$host"
