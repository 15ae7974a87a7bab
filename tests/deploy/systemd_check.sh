#!/usr/bin/env bash
# Checks the systemd units of deploy/systemd/ against the binaries of a build
# tree (docs/deploy.md, "systemd").
#
#   tests/deploy/systemd_check.sh [BUILD_DIR]     # default: build/
#
# 1. verify: `systemd-analyze verify` of a copy of every unit whose ExecStart
#    names BUILD_DIR/bin (verify needs the binaries to exist). Any message
#    about our units fails the check (verify itself exits 0 on an unknown
#    key). A copy with a misspelt key must be flagged, or the check is broken.
# 2. security: `systemd-analyze security --offline` of each unit; an overall
#    exposure above 2.0 (of 10) fails. The scores are in docs/deploy.md.
# 3. run: the units themselves (only the paths of the binaries, secrets and
#    logs rewritten, every hardening line as shipped) under a systemd of
#    their own, PID 1 of private PID, mount, cgroup, UTS and IPC namespaces,
#    against a private PostgreSQL on 127.0.0.1: the service starts, the edge
#    redirects a link made with shortenctl, both processes carry the
#    sandbox (user, no capabilities, seccomp, no_new_privs), the spool
#    directory belongs to the unit's user, reload and stop are clean, and the
#    click is in the database after the edge's stop. Needs root, unshare and
#    a cgroup2 mount; prints "skipped: <reason>" and passes where the
#    machine cannot (SHORTENER_SKIP_SYSTEMD_RUN=1 skips it too).
#
# Nothing is installed or changed on the host: the namespaces get their own
# /run, /var/lib, /usr/local and a passwd with the `shortener` user, and are
# killed (with everything in them) on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
bin="$build/bin"
units=(shorten-service.service redirect-edge.service shortener-migrate.service)

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "systemd units: skipped: systemd-analyze is not installed (Debian package systemd)"
  exit 0
fi
for b in shorten-service redirect-edge shortenctl; do
  if [ ! -x "$bin/$b" ]; then
    echo "systemd units: $bin/$b is missing: build it first" >&2
    exit 1
  fi
done

work=$(mktemp -d /tmp/shortener-systemd-check.XXXXXX)
chmod 755 "$work"
pid1=""
unshare_pid=""
cgroup_dir=""
pg_data=""
cleanup() {
  # Killing PID 1 of the namespaces kills everything in them; unshare's
  # --kill-child does it too, should PID 1 not be known yet.
  if [ -n "$pid1" ]; then kill -KILL "$pid1" 2>/dev/null || true; fi
  if [ -n "$unshare_pid" ]; then
    kill -KILL "$unshare_pid" 2>/dev/null || true
    wait "$unshare_pid" 2>/dev/null || true
  fi
  if [ -n "$cgroup_dir" ] && [ -d "$cgroup_dir" ]; then
    # Every process in it died with PID 1; its children go first.
    for _ in $(seq 1 50); do
      find "$cgroup_dir" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [ -d "$cgroup_dir" ] || break
      sleep 0.1
    done
  fi
  if [ -n "$pg_data" ]; then
    runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$pg_data" -m fast -w stop \
      >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- 1. verify ---------------------------------------------------------------
# Copies of the units, ExecStart pointing at the build's binaries.
mkdir "$work/verify" "$work/broken"
for u in "${units[@]}"; do
  sed "s#/usr/local/bin/#$bin/#g" "deploy/systemd/$u" >"$work/verify/$u"
  grep -q "^ExecStart=$bin/" "$work/verify/$u" || {
    echo "systemd units: $u: no ExecStart under /usr/local/bin/ to point at the build" >&2
    exit 1
  }
done
# Prints the messages of `systemd-analyze verify` about the given unit files
# (messages about the host's own units are shown apart and ignored); fails
# when there is one, or when verify fails.
verify_units() {
  local dir out rc=0 line ours=0 f names=()
  dir=$(dirname "$1")
  for f in "$@"; do names+=("./$(basename "$f")"); done
  out=$(cd "$dir" && systemd-analyze verify --man=no --recursive-errors=no "${names[@]}" 2>&1) ||
    rc=$?
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    if printf '%s\n' "$line" | grep -qE "shorten-service|redirect-edge|shortener-migrate"; then
      echo "  $line"
      ours=1
    else
      echo "  (not about our units, ignored) $line"
    fi
  done <<<"$out"
  [ "$rc" -eq 0 ] && [ "$ours" -eq 0 ]
}
echo "== systemd units: systemd-analyze verify (ExecStart in $bin)"
verify_files=()
for u in "${units[@]}"; do verify_files+=("$work/verify/$u"); done
if ! verify_units "${verify_files[@]}"; then
  echo "systemd units: systemd-analyze verify reported the messages above" >&2
  exit 1
fi
# The check must be able to fail: a misspelt key is only a warning to
# systemd-analyze (exit 0), and must be caught here.
sed 's/^ProtectSystem=/ProtectSystm=/' "$work/verify/redirect-edge.service" \
  >"$work/broken/redirect-edge.service"
if verify_units "$work/broken/redirect-edge.service" >/dev/null; then
  echo "systemd units: a unit with a misspelt key passed verify_units: the check is broken" >&2
  exit 1
fi
echo "systemd units: verify clean (${#units[@]} units); a misspelt key is caught"

# --- 2. security ---------------------------------------------------------------
echo "== systemd units: systemd-analyze security --offline (exposure out of 10, at most 2.0)"
for u in "${units[@]}"; do
  line=$(cd "$work/verify" && systemd-analyze security --offline=true --no-pager "./$u" 2>&1 |
    grep "Overall exposure level") || true
  echo "  ${line#*→ }"
  if ! (cd "$work/verify" && systemd-analyze security --offline=true --threshold=20 --no-pager \
    "./$u" >/dev/null 2>&1); then
    echo "systemd units: $u exposes more than 2.0: see systemd-analyze security" >&2
    exit 1
  fi
done

# --- 3. run ----------------------------------------------------------------------
skip_run() {
  echo "systemd units, run under systemd: skipped: $1"
  exit 0
}
[ -z "${SHORTENER_SKIP_SYSTEMD_RUN:-}" ] || skip_run "SHORTENER_SKIP_SYSTEMD_RUN is set"
[ "$(id -u)" -eq 0 ] || skip_run "needs root (namespaces, a systemd of its own, cgroups)"
for c in unshare nsenter curl findmnt runuser; do
  command -v "$c" >/dev/null 2>&1 || skip_run "$c is not installed"
done
[ -x /lib/systemd/systemd ] || skip_run "/lib/systemd/systemd is missing"
[ -x /usr/lib/postgresql/15/bin/initdb ] || skip_run "PostgreSQL 15 is not installed"
cgroup2=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
[ -n "$cgroup2" ] || skip_run "no cgroup2 file system is mounted"
if [ -d /run/systemd/system ]; then
  # The host's systemd owns the cgroup tree: cgroups are not ours to make.
  skip_run "this machine runs systemd as PID 1: install the units and start them there instead"
fi

# Free TCP ports on 127.0.0.1: nothing answers a connect.
free_port() {
  local p
  while true; do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}
pg_port=$(free_port)
service_port=$(free_port)
edge_port=$(free_port)
admin_port=$(free_port)

# PostgreSQL on 127.0.0.1 (the units reach it over TCP; their /tmp is private).
mkdir "$work/pg"
chown postgres:postgres "$work/pg"
pg_data="$work/pg/data"
runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D "$pg_data" -U postgres \
  --auth=trust -E UTF8 --locale=C.UTF-8 >"$work/initdb.log" 2>&1 || {
  cat "$work/initdb.log"
  exit 1
}
runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$pg_data" -w -l "$work/pg/log" \
  -o "-p $pg_port -k $work/pg -c listen_addresses=127.0.0.1" start >/dev/null
psql_q() { runuser -u postgres -- psql -h 127.0.0.1 -p "$pg_port" -U postgres -qtAX "$@"; }
psql_q -c "CREATE DATABASE shortener" >/dev/null

# The `shortener` user of the units: the host's if it has one, else one in a
# passwd and group of the namespaces' own.
mkdir -p "$work/ns/etc" "$work/ns/log" "$work/ns/units"
cp /etc/passwd /etc/group "$work/ns/"
if getent passwd shortener >/dev/null; then
  uid=$(id -u shortener)
  gid=$(id -g shortener)
else
  uid=64990
  while getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; do uid=$((uid - 1)); done
  gid=$uid
  echo "shortener:x:$uid:$gid:shortener:/nonexistent:/usr/sbin/nologin" >>"$work/ns/passwd"
  echo "shortener:x:$gid:" >>"$work/ns/group"
fi

# Secrets and environment files, as docs/deploy.md says to lay them out.
etc="$work/ns/etc"
openssl rand -hex 32 >"$etc/codec.secret"
openssl rand -hex 24 >"$etc/admin.key"
chown "0:$gid" "$etc/codec.secret" "$etc/admin.key"
chmod 0640 "$etc/codec.secret" "$etc/admin.key"
install -m 0600 "$etc/admin.key" "$work/admin.key"  # for shortenctl, as root
cat >"$etc/shorten-service.env" <<EOF
SHORTENER_POSTGRES=host=127.0.0.1 port=$pg_port dbname=shortener user=postgres connect_timeout=5
SHORTEN_SERVICE_FLAGS=--listen=127.0.0.1:$service_port --base_url=http://127.0.0.1:$edge_port/
EOF
cat >"$etc/redirect-edge.env" <<EOF
REDIRECT_EDGE_FLAGS=--listen=127.0.0.1:$edge_port --admin_listen=127.0.0.1:$admin_port --service=127.0.0.1:$service_port --threads=1
EOF
chmod 0600 "$etc"/*.env

# The units as shipped, but: secrets and environment files from the
# namespaces' /usr/local/etc/shortener; logs to files; no default
# dependencies (the namespaces' systemd starts nothing of the host's); no
# network-online.target (it would pull the host's network configuration).
for u in "${units[@]}"; do
  sed -e 's#/etc/shortener/#/usr/local/etc/shortener/#g' \
    -e 's#^\[Unit\]$#[Unit]\nDefaultDependencies=no#' \
    -e '/^Wants=network-online.target$/d' \
    -e 's#^\[Service\]$#[Service]\nStandardOutput=append:/usr/local/log/%N.log\nStandardError=append:/usr/local/log/%N.log#' \
    "deploy/systemd/$u" >"$work/ns/units/$u"
done
cat >"$work/ns/units/shortener-check.target" <<'EOF'
[Unit]
Description=tests/deploy/systemd_check.sh
DefaultDependencies=no
Wants=shorten-service.service
EOF

# PID 1 of the namespaces: makes them a machine of their own, then becomes
# systemd. /sys and /proc/sys read-only (nothing of the host's kernel
# settings changes), a cgroup2 rooted at this cgroup, fresh /run and
# /var/lib, /usr/local holding the build's binaries, our secrets and logs.
cat >"$work/ns/init.sh" <<EOF
#!/bin/bash
set -euo pipefail
mount --make-rprivate /
mount --bind /sys /sys
mount -o remount,bind,ro /sys
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mkdir -p /run/systemd/system
cp $work/ns/units/* /run/systemd/system/
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /var/lib
mount --bind $work/ns/passwd /etc/passwd
mount --bind $work/ns/group /etc/group
mount -t tmpfs -o mode=0755 tmpfs /usr/local
mkdir -p /usr/local/bin /usr/local/etc/shortener /usr/local/log
mount --bind $bin /usr/local/bin
mount -o remount,bind,ro /usr/local/bin
mount --bind $etc /usr/local/etc/shortener
mount --bind $work/ns/log /usr/local/log
export container=shortener-check
exec /lib/systemd/systemd --unit=shortener-check.target --log-target=null
EOF
chmod 0755 "$work/ns/init.sh"

cgroup_dir="$cgroup2/shortener-systemd-check-$$"
mkdir "$cgroup_dir" || skip_run "cannot make a cgroup under $cgroup2"
echo "== systemd units: run under systemd 252 as PID 1 of private namespaces"
(
  echo "$BASHPID" >"$cgroup_dir/cgroup.procs"
  exec unshare --kill-child=SIGKILL --pid --fork --mount --cgroup --uts --ipc --mount-proc "$work/ns/init.sh"
) >"$work/ns/init.log" 2>&1 &
unshare_pid=$!
for _ in $(seq 1 50); do
  pid1=$(awk '{print $1}' "/proc/$unshare_pid/task/$unshare_pid/children" 2>/dev/null) || true
  [ -n "$pid1" ] && break
  sleep 0.1
done
[ -n "$pid1" ] || {
  cat "$work/ns/init.log"
  skip_run "unshare could not start the namespaces"
}
in_ns() { nsenter -t "$pid1" -m -p -- "$@"; }
ns_systemctl() { in_ns systemctl --no-pager "$@"; }
for _ in $(seq 1 100); do
  in_ns test -S /run/systemd/private 2>/dev/null && break
  sleep 0.1
done
if ! in_ns test -S /run/systemd/private 2>/dev/null; then
  cat "$work/ns/init.log"
  skip_run "systemd did not come up as PID 1 of the namespaces (see above)"
fi

fail() {
  echo "systemd units, run: $1" >&2
  for u in "${units[@]}"; do
    ns_systemctl status "$u" 2>&1 | head -n 20 >&2 || true
    [ -f "$work/ns/log/${u%.service}.log" ] && tail -n 20 "$work/ns/log/${u%.service}.log" >&2
  done
  exit 1
}
# Waits up to $1 tenths of a second for a command to succeed.
wait_for() {
  local tenths=$1
  shift
  for _ in $(seq 1 "$tenths"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}
ctl() {
  "$bin/shortenctl" --service="127.0.0.1:$service_port" --api_key_file="$work/admin.key" "$@"
}

# The service: started by the target; migrates the empty database.
wait_for 600 ctl keys list || fail "shorten-service did not answer within 60 s"
echo "  shorten-service.service active, answering on 127.0.0.1:$service_port"
ctl keys create --name edge-systemd --infrastructure \
  --scopes resolve,record_clicks,watch_invalidations >"$etc/edge.key" 2>/dev/null
chown "0:$gid" "$etc/edge.key"
chmod 0640 "$etc/edge.key"

ns_systemctl start redirect-edge.service || fail "redirect-edge.service did not start"
wait_for 300 curl -sf "http://127.0.0.1:$admin_port/readyz" || fail "the edge was not ready in 30 s"
short_url=$(ctl shorten "https://example.com/systemd-check" | head -n 1)
code=${short_url##*/}
answer=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://127.0.0.1:$edge_port/$code")
[ "$answer" = "302 https://example.com/systemd-check" ] ||
  fail "GET /$code through the edge: expected 302 to https://example.com/systemd-check, got $answer"
echo "  redirect-edge.service active: GET /$code -> $answer"

# The sandbox, as the kernel sees it.
for u in shorten-service.service redirect-edge.service; do
  main=$(ns_systemctl show -p MainPID --value "$u")
  status=$(in_ns cat "/proc/$main/status")
  for want in "Uid:	$uid	$uid	$uid	$uid" "Gid:	$gid	$gid	$gid	$gid" "NoNewPrivs:	1" \
    "Seccomp:	2" "CapEff:	0000000000000000" "CapBnd:	0000000000000000"; do
    printf '%s\n' "$status" | grep -qF "$want" || fail "$u: /proc/$main/status lacks \"$want\""
  done
  # ProtectSystem=strict, PrivateTmp: / is read-only, /tmp is not the host's
  # (seen from the process's own mount namespace, which must be reachable).
  in_ns nsenter -t "$main" -m -- test -x "/usr/local/bin/${u%.service}" ||
    fail "cannot look into $u's mount namespace"
  if in_ns nsenter -t "$main" -m -- test -e "$work/ns/init.sh"; then
    fail "$u sees the host's /tmp (PrivateTmp)"
  fi
  if in_ns nsenter -t "$main" -m -- sh -c ': > /usr/local/etc/shortener/x' 2>/dev/null; then
    fail "$u's view of /usr/local is writable (ProtectSystem=strict)"
  fi
  echo "  $u: uid $uid, no capabilities, seccomp filter, no_new_privs, read-only /, private /tmp"
done
# LimitNOFILE: the edge logs the open-file limit it runs with. Raising a
# hard limit takes CAP_SYS_RESOURCE, which some sandboxes withhold from root
# (systemd then applies the closest it can).
want_nofile=$(sed -n 's/^LimitNOFILE=//p' deploy/systemd/redirect-edge.service)
got_nofile=$(sed -n 's/.* open-file limit \([0-9]*\) .*/\1/p' "$work/ns/log/redirect-edge.log" | head -n 1)
if (($(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status | xargs -I{} printf '%d' 0x{}) & (1 << 24))); then
  [ "$got_nofile" = "$want_nofile" ] ||
    fail "the edge runs with an open-file limit of $got_nofile, not LimitNOFILE=$want_nofile"
  echo "  redirect-edge: open-file limit $got_nofile (LimitNOFILE)"
else
  echo "  redirect-edge: open-file limit $got_nofile: LimitNOFILE=$want_nofile not checked (root lacks CAP_SYS_RESOURCE here, so no limit can be raised)"
fi
spool=$(in_ns stat -c '%U %a' /var/lib/redirect-edge)
[ "$spool" = "shortener 700" ] || fail "/var/lib/redirect-edge is \"$spool\", not \"shortener 700\""
echo "  StateDirectory /var/lib/redirect-edge: shortener, mode 700"

ns_systemctl reload shorten-service.service || fail "reload (SIGHUP) of shorten-service failed"
wait_for 50 grep -q "reload" "$work/ns/log/shorten-service.log" ||
  fail "shorten-service logged nothing about the reload"

# Stops: SIGTERM, the drain, exit 0, within TimeoutStopSec.
for u in redirect-edge.service shorten-service.service; do
  start=$(date +%s)
  ns_systemctl stop "$u"
  took=$(($(date +%s) - start))
  result=$(ns_systemctl show -p Result --value "$u")
  status=$(ns_systemctl show -p ExecMainStatus --value "$u")
  if [ "$result" != success ] || [ "$status" != 0 ]; then
    fail "$u stopped with Result=$result ExecMainStatus=$status"
  fi
  echo "  $u stopped cleanly in ${took} s (exit 0)"
  if [ "$u" = redirect-edge.service ]; then
    clicks=$(psql_q -d shortener -c "SELECT coalesce(sum(count), 0) FROM click_counts")
    [ "$clicks" = 1 ] || fail "click_counts holds $clicks clicks after the edge's stop, not 1"
    echo "  the redirect's click was flushed to the database on stop"
  fi
done
grep -q "redirect-edge stopped" "$work/ns/log/redirect-edge.log" || fail "the edge did not log its stop"
grep -q "served:" "$work/ns/log/shorten-service.log" || fail "the service did not log its summary"

ns_systemctl start shortener-migrate.service || fail "shortener-migrate.service failed"
echo "  shortener-migrate.service: migrations applied (or none due), exit 0"
echo "systemd units: run under systemd: passed"
