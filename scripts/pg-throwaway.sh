#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for tests: `start DIR` runs initdb into DIR, starts the server on
# a free loopback port (as the `postgres` user when run as root: PostgreSQL refuses root) and
# prints its URL; `stop DIR` stops it and removes DIR. The unit tests of the PostgreSQL metadata
# store share one such server through SERAC_TEST_POSTGRES_URL (scripts/test.sh).
set -euo pipefail
pg_bin="${SERAC_PG_BIN:-/usr/lib/postgresql/15/bin}"
command="${1:?usage: pg-throwaway.sh start|stop DIR}"
dir="${2:?usage: pg-throwaway.sh start|stop DIR}"

as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir"
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_server_user "$pg_bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 >"$dir/initdb.log" 2>&1
    as_server_user "$pg_bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
      -o "-c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -p $port -c fsync=off -c max_connections=400" \
      start >/dev/null
    echo "postgresql://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    [ -d "$dir/data" ] && as_server_user "$pg_bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
    ;;
  *)
    echo "usage: pg-throwaway.sh start|stop DIR" >&2
    exit 2
    ;;
esac
