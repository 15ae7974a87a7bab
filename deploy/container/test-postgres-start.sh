#!/bin/sh
# Entrypoint of the smoke test's PostgreSQL image (deploy/container/build.sh
# --test-postgres; tests/deploy/container_smoke.sh): a fresh cluster in the
# container's own layer, trust authentication, TCP on 127.0.0.1:5432 only (the
# pod's loopback), no unix socket. Extra arguments go to postgres
# (e.g. -c log_statement=all). For tests only: nothing is kept.
set -eu
bin=/usr/lib/postgresql/15/bin
data=/var/lib/shortener/pgdata
if [ ! -f "$data/PG_VERSION" ]; then
  "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
fi
exec "$bin/postgres" -D "$data" -c listen_addresses=127.0.0.1 -c port=5432 \
  -c unix_socket_directories= -c fsync=off -c jit=off "$@"
