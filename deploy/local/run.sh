#!/usr/bin/env bash
# Runs the whole system in the foreground on this machine:
#   installs missing packages, builds into build/, starts a private
#   PostgreSQL 15 under .run/ (unix socket only), starts shorten-service and
#   redirect-edge, shortens a demo URL and prints what to curl.
# Ctrl-C (or SIGTERM) stops everything it started.
#
#   deploy/local/run.sh [--port 50051] [--http_port 8080] [--admin_port 9090] [--api_port 8081]
set -euo pipefail
cd "$(dirname "$0")/../.."
root_dir=$(pwd)
port=50051
http_port=8080
admin_port=9090  # the edge's /metrics, /healthz, /readyz (loopback only)
api_port=8081    # the service's HTTP/JSON API (loopback only)
while [ $# -gt 0 ]; do
  case "$1" in
    --port) port="$2"; shift 2 ;;
    --http_port) http_port="$2"; shift 2 ;;
    --admin_port) admin_port="$2"; shift 2 ;;
    --api_port) api_port="$2"; shift 2 ;;
    *) echo "usage: $0 [--port PORT] [--http_port PORT] [--admin_port PORT] [--api_port PORT]" >&2; exit 2 ;;
  esac
done

source deploy/local/deps.sh
shortener_install_deps

echo "== building (build/)"
# Same build dir and type as test.sh (only the three binaries are built here).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target shorten-service shortenctl redirect-edge

pg_bin=/usr/lib/postgresql/15/bin
run_dir="$root_dir/.run"
mkdir -p "$run_dir"
# initdb and postgres refuse to run as root: as root, the cluster belongs to
# the `postgres` user, which must be able to reach the folder. A checkout in
# root's home (mode 0700) is not reachable: then the cluster lives in /var/tmp.
as_owner=()
pg_dir="$run_dir/pg"
if [ "$(id -u)" -eq 0 ]; then
  as_owner=(runuser -u postgres --)
  if ! runuser -u postgres -- test -x "$run_dir"; then
    pg_dir="/var/tmp/shortener-$(echo "$root_dir" | md5sum | cut -c1-8)/pg"
  fi
fi
# A unix socket path is limited to 107 bytes: a deep checkout falls back to a
# short folder.
if [ ${#pg_dir} -gt 80 ]; then
  pg_dir="/var/tmp/shortener-$(echo "$root_dir" | md5sum | cut -c1-8)/pg"
fi
mkdir -p "$pg_dir"
if [ "$(id -u)" -eq 0 ]; then
  chown postgres:postgres "$pg_dir"
  chmod 700 "$pg_dir"
fi
pg_user=$(if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi)
if [ ! -f "$pg_dir/data/PG_VERSION" ]; then
  echo "== creating a private PostgreSQL cluster in $pg_dir"
  "${as_owner[@]}" "$pg_bin/initdb" -D "$pg_dir/data" -U "$pg_user" --auth=trust -E UTF8 \
    --locale=C.UTF-8 >"$run_dir/initdb.log" 2>&1 || { cat "$run_dir/initdb.log"; exit 1; }
fi

service_pid=""
edge_pid=""
# SIGTERM, then SIGKILL if still running after 15 s (both drain for at most
# their --shutdown_grace, 10 s).
stop_process() {
  local pid=$1
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 150); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
}
cleanup() {
  # Ignore further Ctrl-C while draining, so a second one cannot leave
  # PostgreSQL running.
  trap '' INT TERM
  trap - EXIT
  echo
  echo "== stopping"
  # The edge first: its in-flight requests may still need the service.
  stop_process "$edge_pid"
  stop_process "$service_pid"
  "${as_owner[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -m fast -w stop >/dev/null 2>&1 || true
  echo "stopped (data kept in $pg_dir and $run_dir)"
}
trap cleanup INT TERM EXIT

echo "== starting PostgreSQL (socket in $pg_dir)"
"${as_owner[@]}" "$pg_bin/pg_ctl" -D "$pg_dir/data" -l "$pg_dir/server.log" -w -o \
  "-c listen_addresses= -c unix_socket_directories=$pg_dir -p 5432" start >/dev/null
conninfo="host=$pg_dir port=5432 user=$pg_user dbname=postgres"
if ! psql "$conninfo" -tAc "SELECT 1 FROM pg_database WHERE datname = 'shortener'" | grep -q 1; then
  psql "$conninfo" -qc "CREATE DATABASE shortener"
fi
conninfo="host=$pg_dir port=5432 user=$pg_user dbname=shortener"

echo "== starting shorten-service on 127.0.0.1:$port, HTTP/JSON API on 127.0.0.1:$api_port (log: $run_dir/service.log)"
build/bin/shorten-service --listen="127.0.0.1:$port" --http_listen="127.0.0.1:$api_port" \
  --postgres="$conninfo" \
  --base_url="http://localhost:$http_port/" --codec_secret_file="$run_dir/codec.secret" \
  --create_codec_secret --bootstrap_admin_key_file="$run_dir/admin.key" \
  >>"$run_dir/service.log" 2>&1 &
service_pid=$!

# The service writes an admin API key there on its first start (mode 0600).
ctl=(build/bin/shortenctl --service="127.0.0.1:$port" --api_key_file="$run_dir/admin.key")
for _ in $(seq 1 100); do
  if ! kill -0 "$service_pid" 2>/dev/null; then
    echo "shorten-service exited; its log:" >&2
    tail -20 "$run_dir/service.log" >&2
    exit 1
  fi
  if "${ctl[@]}" --timeout=1s resolve healthcheck-probe 2>&1 | grep -q NOT_FOUND; then break; fi
  sleep 0.2
done

# The edge gets a key of its own, with only the scopes it needs: an
# infrastructure key (no tenant), the only kind that may record clicks and
# watch invalidations. An edge.key made by an earlier version of this script
# (a tenant key with resolve,record_clicks) became one when the service
# applied migration 0008: it is kept.
if [ ! -s "$run_dir/edge.key" ]; then
  echo "== creating the edge's API key ($run_dir/edge.key)"
  edge_key=$("${ctl[@]}" --json keys create --name edge --infrastructure \
    --scopes resolve,record_clicks,watch_invalidations |
    sed -n 's/.*"key":"\([^"]*\)".*/\1/p')
  if [ -z "$edge_key" ]; then
    echo "could not create the edge's API key" >&2
    exit 1
  fi
  (umask 077 && printf '%s\n' "$edge_key" >"$run_dir/edge.key")
fi

echo "== starting redirect-edge on 127.0.0.1:$http_port, metrics on 127.0.0.1:$admin_port" \
  "(log: $run_dir/edge.log)"
build/bin/redirect-edge --listen="127.0.0.1:$http_port" --admin_listen="127.0.0.1:$admin_port" \
  --service="127.0.0.1:$port" --codec_secret_file="$run_dir/codec.secret" \
  --api_key_file="$run_dir/edge.key" >>"$run_dir/edge.log" 2>&1 &
edge_pid=$!
for _ in $(seq 1 100); do
  if ! kill -0 "$edge_pid" 2>/dev/null; then
    echo "redirect-edge exited; its log:" >&2
    tail -20 "$run_dir/edge.log" >&2
    exit 1
  fi
  if curl -fsS "http://127.0.0.1:$http_port/readyz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done

echo "== shortening a demo URL"
"${ctl[@]}" shorten "https://www.debian.org/releases/bookworm/"
code=$("${ctl[@]}" --json shorten "https://www.debian.org/releases/bookworm/" |
  sed -n 's/.*"code":"\([^"]*\)".*/\1/p')

echo "== curl -sI http://127.0.0.1:$http_port/$code"
curl -sI "http://127.0.0.1:$http_port/$code" | grep -iE '^(HTTP|location|cache-control)' || true

cat <<EOT

shorten-service is running on 127.0.0.1:$port (PostgreSQL: $conninfo), its
HTTP/JSON API on 127.0.0.1:$api_port, redirect-edge on 127.0.0.1:$http_port
(metrics: 127.0.0.1:$admin_port/metrics).
Every RPC needs an API key; the admin key is in $run_dir/admin.key.
Try:
  curl -i http://127.0.0.1:$http_port/$code
  curl -i -H "Authorization: Bearer \$(cat $run_dir/admin.key)" -H 'Content-Type: application/json' -d '{"longUrl":"https://example.com/from-curl"}' http://127.0.0.1:$api_port/v1/links
  curl -s -H "Authorization: Bearer \$(cat $run_dir/admin.key)" http://127.0.0.1:$api_port/v1/links/$code
  curl -s -H "Authorization: Bearer \$(cat $run_dir/admin.key)" -o qr.png http://127.0.0.1:$api_port/v1/links/$code/qr.png
  ${ctl[*]} shorten https://example.com/some/long/path
  ${ctl[*]} resolve $code
  ${ctl[*]} get $code
  ${ctl[*]} revoke $code
  ${ctl[*]} keys create --name campaigns --scopes shorten,stats --domains '*.example.com' --rate 50
  ${ctl[*]} keys list
  grpcurl -plaintext 127.0.0.1:$port list
  grpcurl -plaintext -H "authorization: Bearer \$(cat $run_dir/admin.key)" -d '{"long_url":"https://example.com/"}' 127.0.0.1:$port shortener.v1.ShortenService/Shorten
  grpcurl -plaintext -H "authorization: Bearer \$(cat $run_dir/admin.key)" -d '{"code":"$code"}' 127.0.0.1:$port shortener.v1.ShortenService/Resolve
  curl -s http://127.0.0.1:$admin_port/metrics | grep ^edge_http_responses_total
Press Ctrl-C to stop everything.
EOT
# Until Ctrl-C, or until either process dies.
wait -n "$service_pid" "$edge_pid"
