#!/usr/bin/env bash
# Bytes on disk per stored row, for the sizing guide (docs/deploy.md,
# "Sizing"): a private PostgreSQL 15 cluster, the schema of
# deploy/postgres/migrations applied with psql, N rows of each kind the
# service writes (shaped like the benchmarks' data: 90-byte URLs, a tenant
# name, a de-duplication key per link; visits of phones with a referrer and a
# country), VACUUM (as autovacuum would), then pg_total_relation_size (heap,
# TOAST, indexes, free space and visibility maps) per table, divided by its
# rows. Prints a Markdown table on stdout; about 30 s with the defaults.
#
#   tests/bench/storage/run.sh [LINKS] [VISITS]     # default 200000 1000000
set -euo pipefail
cd "$(dirname "$0")/../../.."
links=${1:-200000}
visits=${2:-1000000}
pg_bin=/usr/lib/postgresql/15/bin
[ -x "$pg_bin/initdb" ] || {
  echo "PostgreSQL 15 is not installed (deploy/local/deps.sh installs it)" >&2
  exit 1
}

work=$(mktemp -d /tmp/shortener-storage-bench.XXXXXX)
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  as_owner=(runuser -u postgres --)
  chown postgres:postgres "$work"
fi
started=""
cleanup() {
  if [ -n "$started" ]; then
    "${as_owner[@]}" "$pg_bin/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

user=$(if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi)
"${as_owner[@]}" "$pg_bin/initdb" -D "$work/data" -U "$user" --auth=trust -E UTF8 \
  --locale=C.UTF-8 >"$work/initdb.log" 2>&1 || {
  cat "$work/initdb.log" >&2
  exit 1
}
"${as_owner[@]}" "$pg_bin/pg_ctl" -D "$work/data" -w -l "$work/log" \
  -o "-k $work -c listen_addresses= -c fsync=off -c synchronous_commit=off" start >/dev/null
started=1
psql_q() { "${as_owner[@]}" psql -h "$work" -U "$user" -d postgres -qtAX -v ON_ERROR_STOP=1 "$@"; }

for m in deploy/postgres/migrations/*.sql; do
  psql_q -1 -f "$m" >/dev/null
done

echo "filling: $links links, $visits visits, their counts and batches" >&2
psql_q >/dev/null <<SQL
-- Links as BatchShorten writes them for plain URLs: generated code (no
-- alias), a de-duplication key, no expiry or budget.
INSERT INTO links (id, long_url, long_url_sha256, owner, create_time, url_key)
SELECT i,
       'https://www.example.com/campaigns/2026/spring-sale/landing?utm_source=sms&utm_id=' ||
         lpad(i::text, 9, '0'),
       sha256(i::text::bytea), 'acme-campaigns', now(),
       ('x' || substr(md5(i::text), 1, 16))::bit(64)::bigint
FROM generate_series(1, $links) AS i;
-- A request_id per link (Shorten with idempotency keys).
INSERT INTO shorten_requests (owner, request_id, long_url_sha256, link_id)
SELECT 'acme-campaigns', md5(i::text || 'r'), sha256(i::text::bytea), i
FROM generate_series(1, $links) AS i;
-- Custom aliases (a row in link_aliases besides the link).
INSERT INTO link_aliases (alias, link_id)
SELECT 'spring-sale-' || i, i FROM generate_series(1, $links) AS i;
-- Visits of this month, as RecordClicks writes them.
SELECT create_visits_partition(date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC');
INSERT INTO visits (time, link_id, client_id, ip, browser, browser_major, os, os_version, device,
                    bot, referrer_host, country)
SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + (i % 86400) * interval '1 second',
       1 + (i::bigint * 7919) % $links, substr(md5(i::text), 1, 32),
       ('10.' || (i % 250) || '.' || (i / 250 % 250) || '.0')::inet,
       'Chrome Mobile', 120, 'Android', '14', 'mobile', false,
       CASE WHEN i % 3 = 0 THEN NULL ELSE 't.co' END, 'US'
FROM generate_series(1, $visits) AS i;
-- Hourly counts: one row per link, hour and bot flag that saw a click.
INSERT INTO click_counts (link_id, hour, bot, count)
SELECT 1 + i % $links, date_trunc('hour', now()) - (i / $links) * interval '1 hour', false, 3
FROM generate_series(1, $visits) AS i;
-- One row per RecordClicks batch (up to 1000 events each).
INSERT INTO click_batches (batch_id, events)
SELECT 'edge-7f3c2a-' || lpad(i::text, 12, '0'), 1000 FROM generate_series(1, $visits / 10) AS i;
VACUUM ANALYZE;
SQL

echo "| table | rows | heap + TOAST bytes per row | index bytes per row | total bytes per row |"
echo "| --- | ---: | ---: | ---: | ---: |"
psql_q -F ' ' <<'SQL' | while read -r name rows heap idx total; do
WITH t(name, rel) AS (
  VALUES ('links', 'links'::regclass), ('shorten_requests', 'shorten_requests'),
         ('link_aliases', 'link_aliases'), ('click_counts', 'click_counts'),
         ('click_batches', 'click_batches'),
         ('visits (one month partition)',
          (SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'visits'::regclass LIMIT 1)))
SELECT replace(name, ' ', '~'), (SELECT reltuples::bigint FROM pg_class WHERE oid = rel),
       pg_table_size(rel), pg_indexes_size(rel), pg_total_relation_size(rel)
FROM t;
SQL
  echo "| ${name//\~/ } | $rows | $((heap / rows)) | $((idx / rows)) | $((total / rows)) |"
done
