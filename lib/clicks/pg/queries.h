// Every SQL statement of PgClickStore, as named constants, prepared on every
// pooled connection and executed only with parameters. Conventions as in
// lib/store/pg/queries.h: times go in as timestamptz text, batches as array
// literals expanded with unnest (a constant number of statements per batch);
// a batch's visits and pending rollup rows go in by binary COPY (CopyTarget).
// The partition DDL is in the functions of migration 0004_clicks.sql, so no
// SQL is ever built from text here.
#ifndef SHORTENER_LIB_CLICKS_PG_QUERIES_H_
#define SHORTENER_LIB_CLICKS_PG_QUERIES_H_

#include <array>
#include <cstddef>

namespace shortener::clicks::pg_queries {

struct Query {
  const char* name;
  const char* sql;
};

// SQL laid out as SQL, not as C++:
// clang-format off

// $1 batch ids (distinct), $2 their events. Rows: the ids of the batches
// that are new; none for one recorded before (or, in a concurrent
// transaction, being recorded: this insert waits for it, then finds it
// committed, or inserts if it rolled back). In id order, so that
// transactions with common ids wait for each other in one order.
inline constexpr Query kInsertBatches{
    "clicks_insert_batches",
    "INSERT INTO click_batches (batch_id, events)"
    " SELECT b, e FROM unnest($1::text[], $2::integer[]) AS u(b, e) ORDER BY b"
    " ON CONFLICT (batch_id) DO NOTHING RETURNING batch_id"};

// Recording and erasing clicks exclude each other (EraseLinks): every
// Record transaction takes this lock shared, first (they do not wait for
// each other), and an erasure takes it exclusively, last (after the rollup
// lock, and with a lock_timeout: while it waits, new Record transactions
// queue behind it). So a batch in flight when its links are erased either
// commits before the erasure, which then erases its rows too, or starts
// after it and finds the links in erased_links (kLinkLabels). The key is
// 'erasing' in ASCII, read as a number.
inline constexpr Query kRecordLock{
    "clicks_record_lock", "SELECT pg_advisory_xact_lock_shared(28554735521459815)"};
inline constexpr Query kEraseLock{
    "clicks_erase_lock", "SELECT pg_advisory_xact_lock(28554735521459815)"};
// Before kEraseLock: how long the erasure waits for it (the transaction's
// own setting, as SET LOCAL).
inline constexpr Query kEraseLockTimeout{
    "clicks_erase_lock_timeout", "SELECT set_config('lock_timeout', '2s', true)"};

// $1 link ids. Rows: link id, one of its label ids (migration 0010), by
// link then the label's place; links without labels give none. Then, with
// a NULL label, each of the links that were erased (migration 0014): their
// clicks are left out.
inline constexpr Query kLinkLabels{
    "clicks_link_labels",
    "SELECT id, label FROM ("
    "   SELECT l.id, x.label, x.i FROM links l, unnest(l.label_ids) WITH ORDINALITY AS x(label, i)"
    "   WHERE l.id = ANY($1::bigint[]) AND cardinality(l.label_ids) > 0"
    "   UNION ALL"
    "   SELECT e.link_id, NULL, 0 FROM erased_links e WHERE e.link_id = ANY($1::bigint[])) s"
    " ORDER BY id, i"};

// EraseLinks, under the rollup lock (a merge that took a link's pending
// rows must have written them before they are erased) and kEraseLock:
// $1 link ids, $2 erase time. Records them in erased_links and deletes
// their hourly counts, their own rollups (kind 'l': pending, hourly,
// daily; a label's stay), and their ListLinks rank.
inline constexpr Query kEraseClicks{
    "clicks_erase",
    "WITH erased AS (INSERT INTO erased_links (link_id, erase_time)"
    "                SELECT unnest($1::bigint[]), $2::timestamptz ON CONFLICT DO NOTHING),"
    " counts AS (DELETE FROM click_counts WHERE link_id = ANY($1::bigint[])),"
    " pending AS (DELETE FROM click_rollup_pending WHERE kind = 'l' AND subject = ANY($1::bigint[])),"
    " hours AS (DELETE FROM click_rollup_hours WHERE kind = 'l' AND subject = ANY($1::bigint[])),"
    " days AS (DELETE FROM click_rollup_days WHERE kind = 'l' AND subject = ANY($1::bigint[])),"
    " hour_dims AS (DELETE FROM click_rollup_hour_dims"
    "               WHERE kind = 'l' AND subject = ANY($1::bigint[])),"
    " day_dims AS (DELETE FROM click_rollup_day_dims"
    "              WHERE kind = 'l' AND subject = ANY($1::bigint[]))"
    " DELETE FROM link_click_totals WHERE link_id = ANY($1::bigint[])"};

// $1 a link id, $2 rows at most: up to about $2 of its oldest visits (the
// visits at or before the time of its $2-th oldest; all of them when it
// has fewer), by the index visits_link_time of each partition. Rows
// deleted: the caller repeats until none, so that no statement of a link
// with 10^7 visits runs into the statement timeout. Autocommitted, after
// kEraseClicks: batches that start after it leave the link out.
inline constexpr Query kEraseVisits{
    "clicks_erase_visits",
    "DELETE FROM visits WHERE link_id = $1 AND time <= coalesce("
    "  (SELECT time FROM visits WHERE link_id = $1 ORDER BY time OFFSET $2 - 1 LIMIT 1),"
    "  'infinity'::timestamptz)"};

// $1 link ids, $2 hours, $3 bot flags, $4 counts: one row per distinct key
// (GroupHourly), in key order so concurrent batches lock rows in one order.
inline constexpr Query kUpsertCounts{
    "clicks_upsert_counts",
    "INSERT INTO click_counts AS c (link_id, hour, bot, count)"
    " SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::boolean[], $4::bigint[])"
    " ON CONFLICT (link_id, hour, bot) DO UPDATE SET count = c.count + EXCLUDED.count"};

// $1 the first instant of a UTC month: creates its visits partition unless
// it exists. Row: the partition's name.
inline constexpr Query kCreatePartition{
    "clicks_create_partition", "SELECT create_visits_partition($1::timestamptz)"};

// $1 cutoff. Rows: the names of the partitions dropped.
inline constexpr Query kDropPartitions{
    "clicks_drop_partitions", "SELECT * FROM drop_visits_partitions_before($1::timestamptz)"};

// Rollups (docs/analytics.md, "Rollups"). Sketches: hll with log2m 12,
// regwidth 5, no explicit form (expthresh 0: a sketch never holds the
// visitors' hashes themselves, only registers), sparse until dense is
// smaller (lib/clicks/rollups.h).

// The merge and the fold write the hourly and daily tables one at a time
// (across replicas): each transaction first takes this lock. The merge,
// every --rollup_merge_interval, skips when it is taken (the next run goes on); the fold,
// daily, waits for it (kRollupLock): a merge holds it for one chunk's
// transaction, and a fold that skipped would leave its days hourly until
// the next day (a service's first fold runs at the same instant as its
// first merge). The key is 'rollups' in ASCII, read as a number.
inline constexpr Query kTryRollupLock{
    "clicks_try_rollup_lock", "SELECT pg_try_advisory_xact_lock(32210658811801715)"};
inline constexpr Query kRollupLock{"clicks_rollup_lock",
                                   "SELECT pg_advisory_xact_lock(32210658811801715)"};

// The tail of a WITH that adds CTE `d(kind, subject, t, dim, value, human,
// bot)` (one row per key) to TABLE, whose time column is T, keeping at most
// LIMIT distinct values per (kind, subject, T, dim): a value already there
// is added to; a new one takes a free place, the new ones with most clicks
// first (ties by value); the rest go to the "other" row (value ''), as does
// '' itself (the rule of MergePendingRollups, for the fold). Exact only
// with one writer at a time (kTryRollupLock): it counts the values the
// table holds in the statement's snapshot.
#define SHORTENER_BOUNDED_DIMS_UPSERT(TABLE, T, LIMIT)                                          \
  " e AS (SELECT r.kind, r.subject, r." T " AS t, r.dim, r.value FROM " TABLE " r"              \
  "       JOIN (SELECT DISTINCT kind, subject, t, dim FROM d) g"                                \
  "         ON r.kind = g.kind AND r.subject = g.subject AND r." T " = g.t AND r.dim = g.dim)," \
  " n AS (SELECT kind, subject, t, dim, count(*) FILTER (WHERE value <> '') AS stored"          \
  "       FROM e GROUP BY kind, subject, t, dim),"                                              \
  " x AS (SELECT d.*, (e.value IS NOT NULL OR d.value = '') AS kept,"                           \
  "              coalesce(n.stored, 0) AS stored"                                               \
  "       FROM d LEFT JOIN e USING (kind, subject, t, dim, value)"                              \
  "              LEFT JOIN n USING (kind, subject, t, dim)),"                                   \
  " y AS (SELECT x.*, row_number() OVER (PARTITION BY kind, subject, t, dim, kept"              \
  "                                      ORDER BY human + bot DESC, value) AS rn FROM x),"      \
  " ins AS (INSERT INTO " TABLE " AS r (kind, subject, " T ", dim, value, human, bot)"          \
  "   SELECT kind, subject, t, dim,"                                                            \
  "          CASE WHEN kept OR rn <= " LIMIT " - stored THEN value ELSE '' END,"                \
  "          sum(human), sum(bot)"                                                              \
  "     FROM y GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5"                                   \
  "   ON CONFLICT (kind, subject, " T ", dim, value) DO UPDATE"                                 \
  "     SET human = r.human + EXCLUDED.human, bot = r.bot + EXCLUDED.bot"                       \
  "   RETURNING 1)"

// The merge, under kTryRollupLock (PgClickStore::MergePendingRollups adds
// the rows up in memory: SQL that unnested and grouped every element cost
// PostgreSQL about 9 µs more per click).
// $1 pending rows at most. Deletes the oldest pending rows. Rows: kind,
// subject, hour (epoch seconds), human, bot, then the arrays visitors,
// dims, dim_values, dim_human, dim_bot. Run with binary results
// (pg::BinaryResult), not prepared.
// A bound on id (one subquery, run once), not "id IN (subquery)": with
// statistics taken while the table was nearly empty, PostgreSQL planned the
// IN as a nested loop that ran the subquery for every pending row, and one
// merge took 26 s (docs/benchmarks.md, Rollups). Both read one snapshot,
// so the rows deleted are still the first $1 visible.
inline constexpr Query kTakePending{
    "clicks_take_pending",
    "DELETE FROM click_rollup_pending"
    " WHERE id <= (SELECT max(id) FROM (SELECT id FROM click_rollup_pending ORDER BY id LIMIT $1)"
    "              AS oldest)"
    " RETURNING kind, subject, extract(epoch FROM hour)::bigint, human, bot, visitors, dims,"
    "           dim_values, dim_human, dim_bot"};

// $1 kinds, $2 subjects, $3 hours, $4 human, $5 bot, $6 one array literal
// of visitor hashes per row: adds them to click_rollup_hours, the hashes
// into the hour's sketch. One row per key, in key order.
inline constexpr Query kUpsertHours{
    "clicks_upsert_hours",
    "INSERT INTO click_rollup_hours AS r (kind, subject, hour, human, bot, visitors)"
    " SELECT k, s, h, hu, bo,"
    "        coalesce((SELECT hll_add_agg(x::hll_hashval, 12, 5, 0, 1) FROM unnest(v::bigint[]) x),"
    "                 hll_empty(12, 5, 0, 1))"
    " FROM unnest($1::\"char\"[], $2::bigint[], $3::timestamptz[], $4::bigint[], $5::bigint[],"
    "             $6::text[]) AS u(k, s, h, hu, bo, v)"
    " ON CONFLICT (kind, subject, hour) DO UPDATE"
    "   SET human = r.human + EXCLUDED.human, bot = r.bot + EXCLUDED.bot,"
    "       visitors = hll_union(r.visitors, EXCLUDED.visitors)"};

// $1 link ids (ascending, distinct), $2 the human clicks a merge adds to
// each: adds them to link_click_totals (migration 0012), the rank of
// ListLinks' order by clicks. A link that no longer exists is skipped.
inline constexpr Query kUpsertLinkTotals{
    "clicks_upsert_link_totals",
    "INSERT INTO link_click_totals AS t (link_id, owner, human)"
    " SELECT u.id, l.owner, u.n FROM unnest($1::bigint[], $2::bigint[]) AS u(id, n)"
    " JOIN links l ON l.id = u.id ORDER BY u.id"
    " ON CONFLICT (link_id) DO UPDATE SET human = t.human + EXCLUDED.human"};

// $1 kinds, $2 subjects, $3 hours, $4 dimensions: the groups a merge adds
// to. Rows: the group's index in the arrays (1-based), a value it holds
// ('' for other).
inline constexpr Query kStoredValues{
    "clicks_stored_values",
    "SELECT g.i, r.value FROM unnest($1::\"char\"[], $2::bigint[], $3::timestamptz[],"
    "                                $4::smallint[]) WITH ORDINALITY AS g(k, s, h, d, i)"
    " JOIN click_rollup_hour_dims r"
    "   ON r.kind = g.k AND r.subject = g.s AND r.hour = g.h AND r.dim = g.d"};

// $1 kinds, $2 subjects, $3 hours, $4 dimensions, $5 values, $6 human,
// $7 bot: adds them to click_rollup_hour_dims. One row per key, in key
// order, already bounded (MergePendingRollups).
inline constexpr Query kUpsertHourDims{
    "clicks_upsert_hour_dims",
    "INSERT INTO click_rollup_hour_dims AS r (kind, subject, hour, dim, value, human, bot)"
    " SELECT * FROM unnest($1::\"char\"[], $2::bigint[], $3::timestamptz[], $4::smallint[],"
    "                      $5::text[], $6::bigint[], $7::bigint[])"
    " ON CONFLICT (kind, subject, hour, dim, value) DO UPDATE"
    "   SET human = r.human + EXCLUDED.human, bot = r.bot + EXCLUDED.bot"};

// $1 cutoff. Row: the oldest hour (epoch seconds) of the hourly tables
// before the cutoff; NULL when there is none.
inline constexpr Query kOldestHourBefore{
    "clicks_oldest_hour_before",
    "SELECT extract(epoch FROM least("
    "  (SELECT min(hour) FROM click_rollup_hours WHERE hour < $1::timestamptz),"
    "  (SELECT min(hour) FROM click_rollup_hour_dims WHERE hour < $1::timestamptz)))::bigint"};

// Under kRollupLock. $1 the start of a UTC day, $2 its end, $3 values per
// day (kMaxValuesPerDay). Folds the day's hourly rows into daily ones.
// Row: the hourly rows folded.
inline constexpr Query kFoldDay{
    "clicks_fold_day",
    "WITH moved AS ("
    "   DELETE FROM click_rollup_hours WHERE hour >= $1::timestamptz AND hour < $2::timestamptz"
    "   RETURNING kind, subject, human, bot, visitors),"
    " days AS ("
    "   INSERT INTO click_rollup_days AS r (kind, subject, day, human, bot, visitors)"
    "   SELECT kind, subject, $1::timestamptz, sum(human), sum(bot), hll_union_agg(visitors)"
    "     FROM moved GROUP BY kind, subject ORDER BY 1, 2"
    "   ON CONFLICT (kind, subject, day) DO UPDATE"
    "     SET human = r.human + EXCLUDED.human, bot = r.bot + EXCLUDED.bot,"
    "         visitors = hll_union(r.visitors, EXCLUDED.visitors)"
    "   RETURNING 1),"
    " dmoved AS ("
    "   DELETE FROM click_rollup_hour_dims"
    "    WHERE hour >= $1::timestamptz AND hour < $2::timestamptz"
    "   RETURNING kind, subject, dim, value, human, bot),"
    " d AS (SELECT kind, subject, $1::timestamptz AS t, dim, value, sum(human) AS human,"
    "              sum(bot) AS bot FROM dmoved GROUP BY 1, 2, 3, 4, 5),"
    SHORTENER_BOUNDED_DIMS_UPSERT("click_rollup_day_dims", "day", "$3")
    " SELECT (SELECT count(*) FROM moved) + (SELECT count(*) FROM dmoved)"};

#undef SHORTENER_BOUNDED_DIMS_UPSERT

// Reads, in one repeatable-read snapshot (a merge moves rows from pending
// to hours atomically, so each row is seen once). $1 kind, $2 subject,
// $3 start, $4 end (exclusive), $5 'hour' or 'day'. Daily rows (folded
// hours) only count by day. Rows: bucket start (epoch seconds, UTC; NULL
// for the whole range), human clicks, bot clicks, estimated unique human
// visitors.
inline constexpr Query kStatsRollupCounts{
    "clicks_stats_rollup_counts",
    "WITH s AS ("
    "   SELECT hour AS t, human, bot, visitors FROM click_rollup_hours"
    "    WHERE kind = $1::\"char\" AND subject = $2"
    "      AND hour >= $3::timestamptz AND hour < $4::timestamptz"
    "   UNION ALL"
    "   SELECT day, human, bot, visitors FROM click_rollup_days"
    "    WHERE $5::text = 'day' AND kind = $1::\"char\" AND subject = $2"
    "      AND day >= $3::timestamptz AND day < $4::timestamptz"
    "   UNION ALL"
    "   SELECT hour, human, bot,"
    "          (SELECT hll_add_agg(v::hll_hashval, 12, 5, 0, 1) FROM unnest(p.visitors) AS v)"
    "     FROM click_rollup_pending p"
    "    WHERE kind = $1::\"char\" AND subject = $2"
    "      AND hour >= $3::timestamptz AND hour < $4::timestamptz)"
    " SELECT extract(epoch FROM date_trunc($5::text, t, 'UTC'))::bigint AS b,"
    "        coalesce(sum(human), 0)::bigint, coalesce(sum(bot), 0)::bigint,"
    "        coalesce(round(hll_cardinality(hll_union_agg(visitors))), 0)::bigint"
    " FROM s GROUP BY GROUPING SETS ((b), ())"};

// $1..$5 as above, $6 entries per list, $7 the dimensions wanted
// (smallint[]). Rows: dimension, value, human clicks; most clicks first
// within a dimension, ties by value; the "other" row and values with no
// human click left out.
inline constexpr Query kStatsRollupTops{
    "clicks_stats_rollup_tops",
    "WITH s AS ("
    "   SELECT dim, value, human FROM click_rollup_hour_dims"
    "    WHERE kind = $1::\"char\" AND subject = $2"
    "      AND hour >= $3::timestamptz AND hour < $4::timestamptz AND dim = ANY($7::smallint[])"
    "   UNION ALL"
    "   SELECT dim, value, human FROM click_rollup_day_dims"
    "    WHERE $5::text = 'day' AND kind = $1::\"char\" AND subject = $2"
    "      AND day >= $3::timestamptz AND day < $4::timestamptz AND dim = ANY($7::smallint[])"
    "   UNION ALL"
    "   SELECT u.dim, u.value, u.human FROM click_rollup_pending p,"
    "          unnest(p.dims, p.dim_values, p.dim_human) AS u(dim, value, human)"
    "    WHERE p.kind = $1::\"char\" AND p.subject = $2"
    "      AND p.hour >= $3::timestamptz AND p.hour < $4::timestamptz"
    "      AND u.dim = ANY($7::smallint[]))"
    " SELECT dim, value, n FROM ("
    "   SELECT dim, value, sum(human)::bigint AS n,"
    "          row_number() OVER (PARTITION BY dim ORDER BY sum(human) DESC, value) AS r"
    "     FROM s WHERE value <> '' GROUP BY dim, value HAVING sum(human) > 0) t"
    " WHERE r <= $6 ORDER BY dim, n DESC, value"};

// $1 link id. Row: human clicks ever counted.
inline constexpr Query kHumanTotal{
    "clicks_human_total",
    "SELECT coalesce(sum(count), 0)::bigint FROM click_counts WHERE link_id = $1 AND NOT bot"};

// $1 link ids. Rows: the id's place in $1 (1-based), its human clicks ever
// counted (0 for none): one primary-key range read per id.
inline constexpr Query kHumanTotals{
    "clicks_human_totals",
    "SELECT u.i, (SELECT coalesce(sum(count), 0)::bigint FROM click_counts"
    "             WHERE link_id = u.id AND NOT bot)"
    " FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, i)"};

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

// Tables written by binary COPY (lib/pg/copy_binary.h) rather than by a
// statement: PostgreSQL reads each field with its type's receive function
// instead of parsing array literals (array_in) and materialising unnest.
template <size_t N>
struct CopyTarget {
  const char* table;
  std::array<const char*, N> columns;
};

// A batch's visits, one row per click. The partitions of every month in the
// batch must exist (kCreatePartition): a row without one fails the COPY
// with SQLSTATE 23514.
inline constexpr CopyTarget<15> kCopyVisits{
    "visits",
    {"time", "link_id", "client_id", "ip", "browser", "browser_major", "os", "os_version", "device",
     "bot", "referrer_host", "country", "region", "city", "network"}};

// What a transaction adds to the rollups: one row per subject and hour
// (GroupRollups); visitors the sketch hashes of the distinct human
// visitors; dims, dim_values, dim_human, dim_bot parallel arrays, one
// element per dimension and value.
inline constexpr CopyTarget<10> kCopyPending{"click_rollup_pending",
                                             {"kind", "subject", "hour", "human", "bot", "visitors",
                                              "dims", "dim_values", "dim_human", "dim_bot"}};

// Prepared on every new connection.
inline constexpr Query kAllQueries[] = {
    kInsertBatches,    kLinkLabels,       kUpsertCounts, kCreatePartition,   kDropPartitions,
    kTryRollupLock,    kRollupLock,       kUpsertHours,  kStoredValues,      kUpsertHourDims,
    kUpsertLinkTotals, kOldestHourBefore, kFoldDay,      kStatsRollupCounts, kStatsRollupTops,
    kHumanTotal,       kHumanTotals,      kLockLimited,  kExhaust,           kNotifyCodes,
    kRecordLock,       kEraseLock,        kEraseClicks,  kEraseVisits,       kEraseLockTimeout,
};

// Run once per new connection (a one-off, so not prepared; see lib/pg/sql.h):
// a commit is acknowledged only once it is flushed to disk, whatever the
// server's default, because a recorded batch id must never be lost.
inline constexpr char kSynchronousCommit[] = "SELECT set_config('synchronous_commit', 'on', false)";

}  // namespace shortener::clicks::pg_queries

#endif  // SHORTENER_LIB_CLICKS_PG_QUERIES_H_
