#!/usr/bin/env bash
# Debian's PostgreSQL server for CI's run against a real server (the mode production uses).
#   bash .ci/postgres.sh start DIR PORT   installs the `postgresql` package if needed, creates a cluster
#                                          in DIR owned by the postgres user (CI runs as root, which
#                                          PostgreSQL refuses), starts it on 127.0.0.1:PORT and prints a
#                                          DATABASE_URL for a login role that may only create databases
#                                          (no superuser: what docs/deploy.md asks of production)
#   bash .ci/postgres.sh stop DIR          stops it and removes DIR
set -euo pipefail
cmd="${1:?usage: .ci/postgres.sh start DIR PORT | stop DIR}"
dir="${2:?usage: .ci/postgres.sh start DIR PORT | stop DIR}"

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

case "$cmd" in
  start)
    port="${3:?usage: .ci/postgres.sh start DIR PORT}"
    if [ -z "$(bindir)" ]; then
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    bin="$(bindir)"
    password="ci-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
    # The embedded server's settings (src/db/embedded.ts): the suite's two workers open many pools.
    as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c max_connections=200 -c shared_buffers=256MB" >&2
    as_postgres "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
      -c "CREATE ROLE partner LOGIN CREATEDB PASSWORD '$password'" >&2
    echo "postgres://partner:$password@127.0.0.1:$port/postgres"
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_postgres "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true; fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: .ci/postgres.sh start DIR PORT | stop DIR" >&2
    exit 2
    ;;
esac
