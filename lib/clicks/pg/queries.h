// Every SQL statement of PgClickStore, as named constants, prepared on every
// pooled connection and executed only with parameters. Conventions as in
// lib/store/pg/queries.h: times go in as timestamptz text, batches as array
// literals expanded with unnest (a constant number of statements per batch).
// The partition DDL is in the functions of migration 0004_clicks.sql, so no
// SQL is ever built from text here.
#ifndef SHORTENER_LIB_CLICKS_PG_QUERIES_H_
#define SHORTENER_LIB_CLICKS_PG_QUERIES_H_

namespace shortener::clicks::pg_queries {

struct Query {
  const char* name;
  const char* sql;
};

// SQL laid out as SQL, not as C++:
// clang-format off

// $1 batch id, $2 events. One row when the batch is new; none when it was
// recorded before (or, in a concurrent transaction, is being: this insert
// waits for it, then finds it committed, or inserts if it rolled back).
inline constexpr Query kInsertBatch{
    "clicks_insert_batch",
    "INSERT INTO click_batches (batch_id, events) VALUES ($1, $2)"
    " ON CONFLICT (batch_id) DO NOTHING RETURNING 1"};

// $1 link ids, $2 hours, $3 bot flags, $4 counts: one row per distinct key
// (GroupHourly), in key order so concurrent batches lock rows in one order.
inline constexpr Query kUpsertCounts{
    "clicks_upsert_counts",
    "INSERT INTO click_counts AS c (link_id, hour, bot, count)"
    " SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::boolean[], $4::bigint[])"
    " ON CONFLICT (link_id, hour, bot) DO UPDATE SET count = c.count + EXCLUDED.count"};

// $1..$12 one array per column, one element per visit. The partitions of
// every month in the batch must exist (kCreatePartition).
inline constexpr Query kInsertVisits{
    "clicks_insert_visits",
    "INSERT INTO visits (time, link_id, client_id, ip, browser, browser_major, os,"
    "                    os_version, device, bot, referrer_host, country)"
    " SELECT * FROM unnest($1::timestamptz[], $2::bigint[], $3::text[], $4::inet[],"
    "                      $5::text[], $6::integer[], $7::text[], $8::text[], $9::text[],"
    "                      $10::boolean[], $11::text[], $12::text[])"};

// $1 the first instant of a UTC month: creates its visits partition unless
// it exists. Row: the partition's name.
inline constexpr Query kCreatePartition{
    "clicks_create_partition", "SELECT create_visits_partition($1::timestamptz)"};

// $1 cutoff. Rows: the names of the partitions dropped.
inline constexpr Query kDropPartitions{
    "clicks_drop_partitions", "SELECT * FROM drop_visits_partitions_before($1::timestamptz)"};

// Reads. $1 link id, $2 start, $3 end (exclusive), $4 'hour' or 'day'.
// Rows: bucket start (epoch seconds, UTC), bot, clicks.
inline constexpr Query kStatsCounts{
    "clicks_stats_counts",
    "SELECT extract(epoch FROM date_trunc($4, hour, 'UTC'))::bigint, bot, sum(count)::bigint"
    " FROM click_counts WHERE link_id = $1 AND hour >= $2::timestamptz AND hour < $3::timestamptz"
    " GROUP BY 1, 2"};

// Same parameters. Rows: bucket start (NULL for the whole range), distinct
// human client ids; one statement so the total is not a sum of buckets.
inline constexpr Query kStatsUniques{
    "clicks_stats_uniques",
    "SELECT b, count(DISTINCT client_id) FROM"
    " (SELECT extract(epoch FROM date_trunc($4, time, 'UTC'))::bigint AS b, client_id"
    "  FROM visits WHERE link_id = $1 AND time >= $2::timestamptz AND time < $3::timestamptz"
    "    AND NOT bot) v"
    " GROUP BY GROUPING SETS ((b), ())"};

// $1 link id, $2 start, $3 end, $4 entries per list. Rows: list name
// (browser, os, device, country, referrer), value, human clicks; most
// clicks first within a list.
inline constexpr Query kStatsTops{
    "clicks_stats_tops",
    "WITH v AS (SELECT browser, os, device, country, referrer_host FROM visits"
    "           WHERE link_id = $1 AND time >= $2::timestamptz AND time < $3::timestamptz"
    "             AND NOT bot),"
    " t AS (SELECT 'browser' AS k, browser AS val, count(*) AS n FROM v GROUP BY browser"
    "       UNION ALL SELECT 'os', os, count(*) FROM v GROUP BY os"
    "       UNION ALL SELECT 'device', device, count(*) FROM v GROUP BY device"
    "       UNION ALL SELECT 'country', country, count(*) FROM v GROUP BY country"
    "       UNION ALL SELECT 'referrer', referrer_host, count(*) FROM v GROUP BY referrer_host)"
    " SELECT k, val, n FROM (SELECT k, val, n,"
    "                        row_number() OVER (PARTITION BY k ORDER BY n DESC, val) AS r"
    "                        FROM t WHERE val IS NOT NULL AND val <> '') s"
    " WHERE r <= $4 ORDER BY k, n DESC, val"};

// $1 link id. Row: human clicks ever counted.
inline constexpr Query kHumanTotal{
    "clicks_human_total",
    "SELECT coalesce(sum(count), 0)::bigint FROM click_counts WHERE link_id = $1 AND NOT bot"};

// Click limits, inside Record's transaction after kUpsertCounts.
// $1 ids of the links the batch counted human clicks for. Locks (in id
// order: one lock order for every batch) the ones with a live, unexhausted
// budget. Rows: their ids. The lock makes the next statement, which runs
// with a new snapshot, see every concurrent batch for these links that
// committed first: two batches can never both miss the crossing.
inline constexpr Query kLockLimited{
    "clicks_lock_limited",
    "SELECT id FROM links WHERE id = ANY($1::bigint[]) AND max_clicks IS NOT NULL"
    " AND clicks_exhausted_time IS NULL AND revoke_time IS NULL ORDER BY id FOR UPDATE"};

// $1 ids locked by kLockLimited. Marks those whose human total reached
// their budget. Rows: id, alias (NULL for a generated code).
inline constexpr Query kExhaust{
    "clicks_exhaust",
    "UPDATE links l SET clicks_exhausted_time = now()"
    " FROM (SELECT link_id, sum(count) AS total FROM click_counts"
    "       WHERE link_id = ANY($1::bigint[]) AND NOT bot GROUP BY link_id) c"
    " WHERE l.id = c.link_id AND l.clicks_exhausted_time IS NULL AND c.total >= l.max_clicks"
    " RETURNING l.id, l.alias"};

// $1 channel, $2 codes: one NOTIFY each, delivered on commit only.
inline constexpr Query kNotifyCodes{
    "clicks_notify_codes", "SELECT pg_notify($1::text, c) FROM unnest($2::text[]) AS c"};

// clang-format on

// Prepared on every new connection.
inline constexpr Query kAllQueries[] = {
    kInsertBatch,  kUpsertCounts, kInsertVisits, kCreatePartition, kDropPartitions, kStatsCounts,
    kStatsUniques, kStatsTops,    kHumanTotal,   kLockLimited,     kExhaust,        kNotifyCodes,
};

// Run once per new connection (a one-off, so not prepared; see lib/pg/sql.h):
// a commit is acknowledged only once it is flushed to disk, whatever the
// server's default, because a recorded batch id must never be lost.
inline constexpr char kSynchronousCommit[] = "SELECT set_config('synchronous_commit', 'on', false)";

}  // namespace shortener::clicks::pg_queries

#endif  // SHORTENER_LIB_CLICKS_PG_QUERIES_H_
