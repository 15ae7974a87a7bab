#!/usr/bin/env bash
# Smoke test of the container images (deploy/container/build.sh; docs/deploy.md,
# "Container images"): builds them under a tag of its own, then on one pod
# network runs Debian's PostgreSQL 15 (the --test-postgres image), the
# migrations as Kubernetes' Job does (the service image with --migrate=only,
# checked in schema_migrations), shorten-service (--migrate=off) and
# redirect-edge as containers, shortens a link with shortenctl from the service image,
# follows it with curl through the edge's port (published on 127.0.0.1 only:
# 302 and the Location), then stops the edge and the service with SIGTERM
# (podman stop) and checks that each exited 0 by itself and that the click,
# held in the edge's queue until then, reached the service's statistics.
# Prints "skipped: <reason>" and exits 0 where podman cannot run a container
# here (tried first with a trivial one). Removes every container, pod and
# image tag it made.
#   tests/deploy/container_smoke.sh                      # Release build in build/container first
#   tests/deploy/container_smoke.sh --binaries build/bin # the binaries of an existing build
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s)

binaries_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --binaries) binaries_args=(--binaries "$2"); shift 2 ;;
    *) echo "usage: $0 [--binaries DIR]" >&2; exit 2 ;;
  esac
done

# phase TEXT: a heading with the seconds since the start.
phase() {
  echo "== [$(($(date +%s) - started)) s] $*"
}

skip() {
  echo "container smoke test skipped: $*"
  exit 0
}

# shellcheck source=deploy/local/deps.sh
source deploy/local/deps.sh
if ! shortener_install_container_deps; then
  skip "podman, runc and mmdebstrap could not be installed (deploy/local/deps.sh --containers)"
fi

id=$$
tag="smoke-$id"
pod="shortener-smoke-$id"
work=$(mktemp -d /tmp/shortener-smoke.XXXXXX)
secrets="$work/secrets"
service_image="localhost/shortener/shorten-service:$tag"
edge_image="localhost/shortener/redirect-edge:$tag"
pg_image="localhost/shortener/test-postgres:$tag"
probe_image="localhost/shortener/smoke-probe:$tag"
images_made=()
pause_existed=$(podman images --quiet localhost/podman-pause 2>/dev/null || true)

# This machine's facts (docs/deploy.md): podman's default rlimits (nofile
# 1048576) are above the hard limit a container may get here, and Debian's
# default runtime crun is not installed. A configuration of our own, for the
# pod's infra container too, which takes no --ulimit.
cat >"$work/containers.conf" <<'EOT'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
EOT
export CONTAINERS_CONF="$work/containers.conf"

cleanup() {
  local status=$?
  trap - EXIT
  if [ "$status" -ne 0 ]; then
    if [ -s "$work/service_probe.out" ]; then
      echo "--- shortenctl's last answer while waiting for the service" >&2
      cat "$work/service_probe.out" >&2
    fi
    for c in "$pod-edge" "$pod-service" "$pod-pg"; do
      if podman container exists "$c" 2>/dev/null; then
        echo "--- last lines of $c's log" >&2
        podman logs --tail 15 "$c" >&2 2>&1 || true
      fi
    done
  fi
  podman pod rm --force --time 5 "$pod" >/dev/null 2>&1 || true
  podman rm --force "$pod-probe" "$pod-migrate" >/dev/null 2>&1 || true
  for image in "${images_made[@]}"; do
    podman rmi "$image" >/dev/null 2>&1 || true
  done
  if [ -z "$pause_existed" ]; then
    # podman builds its pause image for the pod's infra container on first use.
    podman rmi --force localhost/podman-pause >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

fail() {
  echo "container smoke test FAILED: $*" >&2
  exit 1
}

# wait_for SECONDS WHAT CONTAINER COMMAND...: polls COMMAND until it
# succeeds, for at most SECONDS, failing at once if CONTAINER has exited.
wait_for() {
  local seconds=$1 what=$2 container=$3
  shift 3
  local deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$(podman inspect --format '{{.State.Running}}' "$container")" != true ]; then
      fail "$container exited before $what"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then fail "$what within ${seconds}s"; fi
    sleep 0.2
  done
}

phase "container smoke test: can podman run a container here?"
# The trivial container: /usr/bin/true and the libraries it loads, imported
# as an image, run in a pod with a published port (the infra container, its
# network and port forwarding are what fails on some machines).
mkdir -p "$work/probe"
for f in /usr/bin/true $(ldd /usr/bin/true | grep -o '/[^ ]*'); do
  mkdir -p "$work/probe$(dirname "$f")"
  cp -L "$f" "$work/probe$f"
done
tar -C "$work/probe" -cf "$work/probe.tar" .
podman import --quiet --change 'ENTRYPOINT ["/usr/bin/true"]' "$work/probe.tar" "$probe_image" \
  >/dev/null || skip "podman import failed"
images_made+=("$probe_image")
if ! probe_error=$(podman pod create --name "$pod" -p 127.0.0.1::8080 -p 127.0.0.1::9090 2>&1 &&
  podman pod start "$pod" 2>&1 &&
  podman run --rm --pod "$pod" --name "$pod-probe" "$probe_image" 2>&1); then
  skip "podman cannot run a container here: $(echo "$probe_error" | tail -1)"
fi

phase "building the images (tag $tag)"
images_made+=("$service_image" "$edge_image" "$pg_image")
deploy/container/build.sh --tag "$tag" --test-postgres "${binaries_args[@]}"
for image in "$service_image" "$edge_image"; do
  if podman run --rm --entrypoint /bin/sh "$image" -c true >/dev/null 2>&1; then
    fail "$image has a shell"
  fi
  # Image scanners read dpkg's status file: it must parse and list the
  # packages (podman image mount needs root).
  if [ "$(id -u)" -eq 0 ]; then
    root=$(podman image mount "$image")
    listed=$(dpkg-query --admindir="$root/var/lib/dpkg" -W 2>&1 | grep -c . || true)
    parse_errors=$(dpkg-query --admindir="$root/var/lib/dpkg" -W 2>&1 >/dev/null || true)
    podman image unmount "$image" >/dev/null
    [ -z "$parse_errors" ] || fail "$image: dpkg's status file: $parse_errors"
    [ "$listed" -gt 10 ] || fail "$image: dpkg's status file lists $listed packages"
  fi
done

http_port=$(podman port "$(podman pod inspect --format '{{.InfraContainerID}}' "$pod")" 8080 |
  sed 's/.*://')
admin_port=$(podman port "$(podman pod inspect --format '{{.InfraContainerID}}' "$pod")" 9090 |
  sed 's/.*://')

phase "PostgreSQL 15, migrations, shorten-service, redirect-edge in pod $pod"
podman run -d --pod "$pod" --name "$pod-pg" "$pg_image" >/dev/null
wait_for 60 "PostgreSQL ready" "$pod-pg" \
  sh -c "podman logs '$pod-pg' 2>&1 | grep -q 'ready to accept connections'"

postgres="host=127.0.0.1 port=5432 user=postgres dbname=postgres"
# The migrations, as deploy/k8s's Job runs them: migrate and exit 0.
if ! timeout 120 podman run --rm --pod "$pod" --name "$pod-migrate" "$service_image" \
  --migrate=only --postgres="$postgres" >"$work/migrate.log" 2>&1; then
  cat "$work/migrate.log" >&2
  fail "shorten-service --migrate=only failed"
fi
migrations=$(find deploy/postgres/migrations -name '*.sql' | wc -l)
applied=$(podman exec "$pod-pg" /usr/lib/postgresql/15/bin/psql -h 127.0.0.1 -U postgres -tAc \
  "SELECT count(*) FROM schema_migrations")
[ "$applied" = "$migrations" ] ||
  fail "schema_migrations has $applied rows, deploy/postgres/migrations $migrations files"

# The service writes the code secret and the first admin key there; the
# edge and shortenctl read them. Owned by the images' user.
mkdir -m 0700 "$secrets"
chown 10001:10001 "$secrets"
podman run -d --pod "$pod" --name "$pod-service" -v "$secrets:/run/shortener" "$service_image" \
  --listen=127.0.0.1:50051 --postgres="$postgres" --migrate=off \
  --codec_secret_file=/run/shortener/codec.secret --create_codec_secret \
  --bootstrap_admin_key_file=/run/shortener/admin.key \
  --base_url="http://127.0.0.1:$http_port/" >/dev/null

ctl() {
  timeout 60 podman run --rm --pod "$pod" -v "$secrets:/run/shortener:ro" \
    --entrypoint /usr/local/bin/shortenctl "$service_image" --service=127.0.0.1:50051 \
    --api_key_file=/run/shortener/admin.key "$@"
}
# Up when an unknown code is NOT_FOUND (an answer from the database).
# shortenctl exits 1 then: its output is checked, not its status.
service_answers() {
  test -s "$secrets/admin.key" &&
    ctl --timeout=1s resolve smoke-probe >"$work/service_probe.out" 2>&1
  grep -q NOT_FOUND "$work/service_probe.out"
}
wait_for 90 "shorten-service answering" "$pod-service" service_answers

edge_key=$(ctl --json keys create --name edge --infrastructure \
  --scopes resolve,record_clicks,watch_invalidations | sed -n 's/.*"key":"\([^"]*\)".*/\1/p')
[ -n "$edge_key" ] || fail "shortenctl keys create gave no key"
(umask 077 && printf '%s\n' "$edge_key" >"$secrets/edge.key")
chown 10001:10001 "$secrets/edge.key"

# Clicks are sent every 10 minutes here, so that the one click of this test
# is still queued when the edge gets SIGTERM: its drain must deliver it.
podman run -d --pod "$pod" --name "$pod-edge" -v "$secrets:/run/shortener:ro" "$edge_image" \
  --listen=0.0.0.0:8080 --admin_listen=0.0.0.0:9090 --service=127.0.0.1:50051 \
  --codec_secret_file=/run/shortener/codec.secret --api_key_file=/run/shortener/edge.key \
  --click_spool_dir=/var/lib/shortener/spool --click_flush_interval=10m >/dev/null
wait_for 30 "redirect-edge ready on 127.0.0.1:$admin_port" "$pod-edge" \
  curl -fsS "http://127.0.0.1:$admin_port/readyz"
[ "$(podman top "$pod-edge" user | tail -1)" = shortener ] || fail "the edge does not run as shortener"

phase "shorten with shortenctl, follow with curl through 127.0.0.1:$http_port"
long_url="https://www.debian.org/releases/bookworm/?smoke=$id"
code=$(ctl --json shorten "$long_url" | sed -n 's/.*"code":"\([^"]*\)".*/\1/p')
[ -n "$code" ] || fail "shortenctl shorten gave no code"
headers=$(curl -sS -D - -o /dev/null "http://127.0.0.1:$http_port/$code" | tr -d '\r')
status=$(echo "$headers" | head -1)
location=$(echo "$headers" | sed -n 's/^[Ll]ocation: //p')
[ "$status" = "HTTP/1.1 302 Found" ] || fail "GET /$code answered '$status'"
[ "$location" = "$long_url" ] || fail "GET /$code: Location '$location', expected '$long_url'"
echo "GET /$code: $status, Location: $location"

metric() {
  curl -fsS "http://127.0.0.1:$admin_port/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}
[ "$(metric edge_clicks_queued_total)" = 1 ] || fail "the edge did not queue the click"
[ "$(metric edge_clicks_acknowledged_total)" = 0 ] || fail "the click left before SIGTERM"

# stop_container NAME: SIGTERM; podman would SIGKILL after 30 s (beyond the
# daemons' 10 s --shutdown_grace). Exit code 0 means it drained and exited by
# itself (a SIGKILL makes it 137).
stop_container() {
  local name=$1 begin end code
  begin=$(date +%s%N)
  podman stop --time 30 "$name" >/dev/null
  end=$(date +%s%N)
  code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
  echo "$name: exit code $code, $(((end - begin) / 1000000)) ms after SIGTERM"
  [ "$code" = 0 ] || fail "$name exited $code on SIGTERM"
}
phase "SIGTERM"
stop_container "$pod-edge"
stats=$(ctl --json stats "$code")
clicks=$(echo "$stats" | sed -n 's/.*"total_human_clicks":"\([0-9]*\)","total_bot_clicks":"\([0-9]*\)".*/\1 \2/p')
[ -n "$clicks" ] || fail "shortenctl stats: unexpected answer $stats"
read -r human bot <<<"$clicks"
[ $((human + bot)) -eq 1 ] || fail "the service counted $((human + bot)) clicks, expected 1 (flushed on SIGTERM)"
echo "the click queued at SIGTERM was counted (human $human, bot $bot)"
stop_container "$pod-service"

phase "container smoke test passed"
