#!/usr/bin/env bash
# Fetches the Trino server distribution (io.trino:trino-server, a tar.gz on Maven Central) through
# Maven's ordinary client and unpacks it into a project-local directory, keeping only the launcher,
# the core libraries and the plugins the tests load (iceberg; tpch for generated data). Also finds
# a JDK new enough for this Trino and records its home in java-home beside the server, for
# tests/trino_util.py. Idempotent; nothing is downloaded afterwards when Trino runs.
#   scripts/install-trino.sh                 (Trino lands in build/trino/)
#   SERAC_TRINO_DIR=/elsewhere scripts/install-trino.sh
#   SERAC_TRINO_JAVA_HOME=/path/to/jdk scripts/install-trino.sh   (pick the JDK explicitly)
#
# Java: Trino 476 needs Java 24 or newer. Debian 12 packages only OpenJDK 17, so a newer JDK must
# already be installed (for example a Temurin 25 package under /usr/lib/jvm); the script looks at
# SERAC_TRINO_JAVA_HOME, JAVA_HOME and every JDK under /usr/lib/jvm and fails, saying so, if none
# is new enough.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
trino_dir="${SERAC_TRINO_DIR:-$repo_root/build/trino}"
# shellcheck source=lib/fetch.sh
source "$repo_root/scripts/lib/fetch.sh"

# 476 is the newest trino-server distribution published to Maven Central (later releases ship
# the tarball elsewhere).
trino_version=476
java_major_required=24
plugins_kept=(iceberg tpch)

server_dir="$trino_dir/trino-server-$trino_version"
stamp="$server_dir/.installed"

find_java_home() {
  local candidate major
  for candidate in "${SERAC_TRINO_JAVA_HOME:-}" "${JAVA_HOME:-}" /usr/lib/jvm/*; do
    [ -n "$candidate" ] && [ -d "$candidate" ] || continue
    major="$(jdk_major "$candidate")"
    if [ -n "$major" ] && [ "$major" -ge "$java_major_required" ] 2>/dev/null; then
      (cd "$candidate" && pwd -P)
      return 0
    fi
  done
  return 1
}

fetch_and_unpack() {
  local download_dir="$trino_dir/download"
  local archive="$download_dir/trino-server-$trino_version.tar.gz"
  mkdir -p "$download_dir"
  if [ ! -s "$archive" ]; then
    maven_copy "$download_dir" "io.trino:trino-server:$trino_version:tar.gz" || exit 1
  fi
  rm -rf "$server_dir"
  # The archive stores jars shared between plugins as hard links to their first copy, so the
  # whole plugin tree is unpacked and the unused plugins removed afterwards.
  tar -xzf "$archive" -C "$trino_dir" "trino-server-$trino_version/bin" \
      "trino-server-$trino_version/lib" "trino-server-$trino_version/plugin"
  local plugin_dir keep plugin
  for plugin_dir in "$server_dir"/plugin/*; do
    keep=false
    for plugin in "${plugins_kept[@]}"; do
      [ "$(basename "$plugin_dir")" = "$plugin" ] && keep=true
    done
    $keep || rm -rf "$plugin_dir"
  done
  rm -f "$archive"   # Maven keeps its own copy; the unpacked tree is all the tests need
  rmdir "$download_dir" 2>/dev/null || true
  touch "$stamp"
}

need_tool mvn maven
need_tool tar tar
if ! java_home="$(find_java_home)"; then
  echo "Trino $trino_version needs a JDK $java_major_required or newer; none found in" \
       "SERAC_TRINO_JAVA_HOME, JAVA_HOME or /usr/lib/jvm (Debian 12 packages only 17)" >&2
  exit 1
fi
[ -f "$stamp" ] || fetch_and_unpack
echo "$java_home" >"$trino_dir/java-home"
echo "trino $trino_version ready in $server_dir (java $(jdk_major "$java_home") at $java_home)"
