// Every SQL statement of PgLinkStore, as named constants. Each is prepared on
// every pooled connection (PrepareLinkQueries) and executed only with
// parameters. Conventions:
//  - Times go in as timestamptz text ("2024-05-01 12:00:00.123456+00") and
//    come out as bigint microseconds since the epoch: exact both ways.
//  - long_url_sha256 goes in as bytea[] whose elements are in bytea's hex
//    form (ArrayLiteral::AddBytes): no per-row decode() call.
//  - Batches go in as arrays (text literals built by lib/pg/arrays.h) and are
//    expanded with unnest, so a batch costs a constant number of statements.
//  - Link columns always come out in the order of SHORTENER_LINK_COLUMNS
//    (kLinkColumnCount of them), which ParseLink (pg_batch.h) reads.
#ifndef SHORTENER_LIB_STORE_PG_QUERIES_H_
#define SHORTENER_LIB_STORE_PG_QUERIES_H_

#include <array>
#include <cstddef>

namespace shortener::store::pg_queries {

struct Query {
  const char* name;
  const char* sql;
};

// SQL laid out as SQL, not as C++:
// clang-format off

// 11 columns of `links l`; all NULL when a LEFT JOIN found no link. The
// last is the link's labels as "k=v,k=v" in key order (no label key or value
// holds '=' or ','), NULL for a link without labels: the CASE keeps the
// labels lookup off unlabelled links (the resolve path reads these columns).
#define SHORTENER_LINK_COLUMNS                                          \
  "l.id, l.alias, l.long_url, l.owner, l.redirect_status, "             \
  "(extract(epoch FROM l.create_time) * 1000000)::bigint, "             \
  "(extract(epoch FROM l.expire_time) * 1000000)::bigint, "             \
  "(extract(epoch FROM l.revoke_time) * 1000000)::bigint, "             \
  "l.max_clicks, "                                                      \
  "(extract(epoch FROM l.clicks_exhausted_time) * 1000000)::bigint, "   \
  "CASE WHEN l.label_ids IS NULL THEN NULL ELSE"                        \
  " (SELECT string_agg(b.key || '=' || b.value, ',' ORDER BY b.key)"    \
  "  FROM labels b WHERE b.id = ANY(l.label_ids)) END"

inline constexpr int kLinkColumnCount = 11;

// $1 id.
inline constexpr Query kGetById{
    "links_get_by_id",
    "SELECT " SHORTENER_LINK_COLUMNS " FROM links l WHERE l.id = $1"};

// $1 alias.
inline constexpr Query kGetByAlias{
    "links_get_by_alias",
    "SELECT " SHORTENER_LINK_COLUMNS
    " FROM link_aliases a JOIN links l ON l.id = a.link_id WHERE a.alias = $1"};

// $1 bigint[] ids: one round trip for many.
inline constexpr Query kGetByIds{
    "links_get_by_ids",
    "SELECT " SHORTENER_LINK_COLUMNS " FROM links l WHERE l.id = ANY($1::bigint[])"};

// $1 text[] aliases: one round trip for many (an index probe of
// link_aliases' primary key per alias). Row: link columns, then the alias.
inline constexpr Query kGetByAliases{
    "links_get_by_aliases",
    "SELECT " SHORTENER_LINK_COLUMNS ", a.alias"
    " FROM link_aliases a JOIN links l ON l.id = a.link_id WHERE a.alias = ANY($1::text[])"};

// $1 id, $2 revoke time, $3 notification channel, $4 payload (the code).
// Revokes a live link and, in the same autocommitted statement, NOTIFYs $3
// with $4: listeners get it when (and only if) the revocation commits. No row
// when the link is absent or revoked already (then nothing is notified, and
// the caller reads the row with kGetById: the first revoke_time is kept).
// A concurrent revoke of the same link waits for this one's row lock, then
// finds revoke_time set: exactly one notification per revocation.
// The column after the link columns is pg_notify's void result (unread).
inline constexpr Query kRevoke{
    "links_revoke",
    "UPDATE links l SET revoke_time = $2::timestamptz"
    " WHERE l.id = $1 AND l.revoke_time IS NULL"
    " RETURNING " SHORTENER_LINK_COLUMNS ", pg_notify($3::text, $4::text)"};

// CreateLinks, read phase: what exists for the keys of a batch. The LATERAL
// ... LIMIT 1 keeps the planner from hashing the whole table (it cannot know
// how many keys the array holds): one primary-key probe per key.
// $1 owners, $2 request ids. Row: key index (1-based), sha, link columns.
inline constexpr Query kReadRequests{
    "links_read_requests",
    "SELECT k.i, r.long_url_sha256, " SHORTENER_LINK_COLUMNS
    " FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(owner, request_id, i)"
    " JOIN LATERAL (SELECT r.long_url_sha256, r.link_id FROM shorten_requests r"
    "               WHERE r.owner = k.owner AND r.request_id = k.request_id LIMIT 1) r ON true"
    " LEFT JOIN links l ON l.id = r.link_id"};

// $1 dedupe keys. Row: key index (1-based), target id, the target's URL
// hash, link columns. The key's target is the link whose url_key it is
// (migration 0007).
inline constexpr Query kReadDedupe{
    "links_read_dedupe",
    "SELECT k.i, l.id, l.long_url_sha256, " SHORTENER_LINK_COLUMNS
    " FROM unnest($1::bigint[]) WITH ORDINALITY AS k(url_key, i)"
    " JOIN LATERAL (SELECT * FROM links t WHERE t.url_key = k.url_key LIMIT 1) l ON true"};

// $1 aliases. Row: a taken alias.
inline constexpr Query kReadAliases{
    "links_read_aliases",
    "SELECT a.alias FROM link_aliases a WHERE a.alias = ANY($1::text[])"};

// CreateLinks, write phase: every row of a batch in one statement, in one of
// two forms. The unique keys arbitrate between concurrent transactions: an
// insert of a key another transaction holds uncommitted waits for it.
//  - Fast (plain INSERT, the first attempt): a key taken since the read
//    phase raises unique_violation; the caller rolls back and retries
//    carefully. Speculative insertion (ON CONFLICT) costs about twice as much.
//  - Careful (ON CONFLICT DO NOTHING): a count below what was sent means a
//    key was taken; the caller rolls back and retries. On links the arbiter
//    is url_key alone, so here a unique_violation can only be a duplicate
//    link id: a bug, not a race.
// Keys a batch takes over from dead targets are released first, by
// kReleaseDedupeKeys: the order of a statement's CTEs is not defined, and the
// new link's url_key must not meet the old link's.
// $1-$4 shorten_requests: owners, request ids, hashes, link ids.
// $5-$6 link_aliases: aliases, link ids.
// $7-$17 links: ids, aliases, urls, hashes, owners, statuses, create times,
//         expire times, click budgets, dedupe keys (NULL: none), label ids
//         (each a bigint[] literal as text, NULL: no labels; a text[] since
//         PostgreSQL arrays of arrays must be rectangular).
// Row: inserted requests, aliases, links.
#define SHORTENER_WRITE_BATCH(ON_CONFLICT, ON_URL_KEY_CONFLICT)                            \
  "WITH req AS ("                                                                          \
  "  INSERT INTO shorten_requests (owner, request_id, long_url_sha256, link_id)"           \
  "  SELECT t.owner, t.request_id, t.sha, t.link_id"                                       \
  "  FROM unnest($1::text[], $2::text[], $3::bytea[], $4::bigint[])"                       \
  "       AS t(owner, request_id, sha, link_id)" ON_CONFLICT " RETURNING 1),"              \
  " ali AS ("                                                                              \
  "  INSERT INTO link_aliases (alias, link_id)"                                            \
  "  SELECT t.alias, t.link_id FROM unnest($5::text[], $6::bigint[]) AS t(alias, link_id)" \
  ON_CONFLICT " RETURNING 1),"                                                             \
  " lnk AS ("                                                                              \
  "  INSERT INTO links (id, alias, long_url, long_url_sha256, owner, redirect_status,"     \
  "                     create_time, expire_time, max_clicks, url_key, label_ids)"         \
  "  SELECT t.id, t.alias, t.long_url, t.sha, t.owner, t.status,"                          \
  "         t.create_time, t.expire_time, t.max_clicks, t.url_key, t.label_ids::bigint[]"  \
  "  FROM unnest($7::bigint[], $8::text[], $9::text[], $10::bytea[], $11::text[],"         \
  "              $12::smallint[], $13::timestamptz[], $14::timestamptz[], $15::bigint[],"  \
  "              $16::bigint[], $17::text[])"                                              \
  "       AS t(id, alias, long_url, sha, owner, status, create_time, expire_time,"         \
  "            max_clicks, url_key, label_ids)" ON_URL_KEY_CONFLICT                        \
  "  RETURNING 1)"                                                                         \
  " SELECT (SELECT count(*) FROM req), (SELECT count(*) FROM ali),"                        \
  "        (SELECT count(*) FROM lnk)"

inline constexpr Query kWriteBatchFast{"links_write_batch_fast", SHORTENER_WRITE_BATCH("", "")};
inline constexpr Query kWriteBatchCareful{
    "links_write_batch_careful",
    SHORTENER_WRITE_BATCH(" ON CONFLICT DO NOTHING",
                          " ON CONFLICT (url_key) WHERE url_key IS NOT NULL DO NOTHING")};

// kWriteBatchFast for the common plan: links only (no request id or alias),
// as for Shorten calls without those options. The statement above spends
// executor set-up and tear-down on its empty inserts too: ~1 µs of
// PostgreSQL per link of a 27-link group (docs/benchmarks.md). Same insert,
// same fast-mode contract. $1-$11 as $7-$17 above. Its row count is the
// links inserted.
inline constexpr Query kWriteLinksFast{
    "links_write_links_fast",
    "INSERT INTO links (id, alias, long_url, long_url_sha256, owner, redirect_status,"
    "                   create_time, expire_time, max_clicks, url_key, label_ids)"
    " SELECT t.id, t.alias, t.long_url, t.sha, t.owner, t.status, t.create_time,"
    "        t.expire_time, t.max_clicks, t.url_key, t.label_ids::bigint[]"
    " FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bytea[], $5::text[],"
    "             $6::smallint[], $7::timestamptz[], $8::timestamptz[], $9::bigint[],"
    "             $10::bigint[], $11::text[])"
    "      AS t(id, alias, long_url, sha, owner, status, create_time, expire_time,"
    "           max_clicks, url_key, label_ids)"};

// CreateLinks, before the read phase of a batch with labels: the id of each
// (tenant, key, value), made when missing (migration 0010). $1 tenants,
// $2 keys, $3 values, sorted and distinct (one lock order between concurrent
// creators). Row: tenant, key, value, id. Ids inserted by this statement
// come from the insert; existing ones from the select, which sees the
// statement's snapshot: a label another transaction committed after it
// started is in neither (ON CONFLICT found it), and the caller asks again.
inline constexpr Query kEnsureLabels{
    "labels_ensure",
    "WITH k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS k(tenant, key, value)),"
    " ins AS (INSERT INTO labels (tenant, key, value) SELECT tenant, key, value FROM k"
    "         ON CONFLICT DO NOTHING RETURNING tenant, key, value, id)"
    " SELECT tenant, key, value, id FROM ins"
    " UNION ALL"
    " SELECT b.tenant, b.key, b.value, b.id FROM k"
    " JOIN labels b ON b.tenant = k.tenant AND b.key = k.key AND b.value = k.value"};

// $1 tenant, $2 key, $3 value. Row: the label's id.
inline constexpr Query kFindLabel{
    "labels_find",
    "SELECT id FROM labels WHERE tenant = $1 AND key = $2 AND value = $3"};

// CreateLinks, before the write phase of a plan that takes dedupe keys over
// from dead links (rare: the target expired or was revoked): clears url_key
// on the old targets. $1 keys, $2 the links that hold them. Its row count
// below the keys sent means a concurrent transaction took one over first
// (the row lock makes it wait, then the recheck of url_key fails): the caller
// rolls back and retries.
inline constexpr Query kReleaseDedupeKeys{
    "links_release_dedupe_keys",
    "UPDATE links l SET url_key = NULL"
    " FROM unnest($1::bigint[], $2::bigint[]) AS t(url_key, id)"
    " WHERE l.id = t.id AND l.url_key = t.url_key"};
#undef SHORTENER_WRITE_BATCH

// UpdateLink (lib/store/link_update.h), in one transaction: lock and read
// the link, write it, maybe take its new dedupe key, record the history,
// notify. $1 id. Row: link columns, then whether it holds its dedupe key,
// the human clicks counted so far (the budget is judged against them), and
// its URL hash in hex.
inline constexpr Query kLockLink{
    "links_lock_link",
    "SELECT " SHORTENER_LINK_COLUMNS ", l.url_key IS NOT NULL,"
    " (SELECT coalesce(sum(c.count), 0)::bigint FROM click_counts c"
    "   WHERE c.link_id = l.id AND NOT c.bot), encode(l.long_url_sha256, 'hex')"
    " FROM links l WHERE l.id = $1 FOR UPDATE OF l"};

// $1 id, $2 long_url, $3 its SHA-256 (bytea's hex form), $4 expire time,
// $5 redirect status, $6 click budget, $7 exhausted time, $8 whether the
// labels change, to $9 (label ids, a bigint[] literal; NULL: none), $10
// whether to give up the dedupe key.
inline constexpr Query kUpdateLink{
    "links_update_link",
    "UPDATE links SET long_url = $2, long_url_sha256 = $3::bytea, expire_time = $4::timestamptz,"
    " redirect_status = $5::smallint, max_clicks = $6::bigint,"
    " clicks_exhausted_time = $7::timestamptz,"
    " label_ids = CASE WHEN $8::boolean THEN $9::bigint[] ELSE label_ids END,"
    " url_key = CASE WHEN $10::boolean THEN NULL ELSE url_key END"
    " WHERE id = $1"};

// $1 id, $2 dedupe key: the link takes the key unless another link holds
// it. A concurrent creator's uncommitted insert of the key makes this wait
// and then fail with unique_violation (the caller runs it in a savepoint
// and leaves the link without a key).
inline constexpr Query kTakeDedupeKey{
    "links_take_dedupe_key",
    "UPDATE links SET url_key = $2 WHERE id = $1"
    " AND NOT EXISTS (SELECT 1 FROM links t WHERE t.url_key = $2)"};

// $1 id, $2 change time, $3 actor, $4 fields, $5 old values, $6 new values
// (text[] literals, in order): one history row per field (migration 0013).
inline constexpr Query kInsertHistory{
    "links_insert_history",
    "INSERT INTO link_history (link_id, change_no, field_no, change_time, actor, field,"
    "                          old_value, new_value)"
    " SELECT $1, (SELECT coalesce(max(change_no), 0) + 1 FROM link_history WHERE link_id = $1),"
    "        u.n, $2::timestamptz, $3, u.f, u.o, u.v"
    " FROM unnest($4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(f, o, v, n)"};

// $1 id. Rows: change number, time (epoch microseconds), actor, field, old
// and new value, in order.
inline constexpr Query kLinkHistory{
    "links_history",
    "SELECT change_no, (extract(epoch FROM change_time) * 1000000)::bigint, actor, field,"
    " old_value, new_value FROM link_history WHERE link_id = $1 ORDER BY change_no, field_no"};

// $1 channel, $2 payload: delivered on commit only.
inline constexpr Query kNotify{"links_notify", "SELECT pg_notify($1::text, $2::text)"};

// DeleteLinks (migration 0014), in one transaction: delete the rows, then
// record them. $1 ids, $2 their codes. Rows: the id's place in $1 (from 1),
// then the deleted link's columns. The links' label memberships go with
// them (the trigger of migration 0012); their link_aliases rows stay,
// holding the aliases until ReleaseDeletedLinks.
inline constexpr Query kDeleteLinks{
    "links_delete",
    "DELETE FROM links l USING unnest($1::bigint[]) WITH ORDINALITY AS t(id, n)"
    " WHERE l.id = t.id RETURNING t.n, " SHORTENER_LINK_COLUMNS};

// $1 ids, $2 owners, $3 codes, $4 aliases (NULL: a generated code) of the
// links kDeleteLinks deleted, $5 delete time, $6 actor, $7 alias release
// time, $8 channel: their deleted_links rows, their history gone, their
// codes NOTIFYd (on commit).
inline constexpr Query kRecordDeletions{
    "links_record_deletions",
    "WITH tombstones AS ("
    "  INSERT INTO deleted_links (id, owner, code, alias, delete_time, actor, alias_release_time)"
    "  SELECT t.id, t.owner, t.code, t.alias, $5::timestamptz, $6::text,"
    "         CASE WHEN t.alias IS NULL THEN NULL ELSE $7::timestamptz END"
    "  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS t(id, owner, code, alias)),"
    " history AS (DELETE FROM link_history WHERE link_id = ANY($1::bigint[]))"
    " SELECT pg_notify($8::text, c) FROM unnest($3::text[]) AS c"};

// RevokeLinks: $1 ids, $2 their codes, $3 revoke time, $4 channel. Revokes
// the live ones and NOTIFYs their codes, in one autocommitted statement
// (as kRevoke). Rows: the id's place in $1 (from 1), then the link's
// columns, then pg_notify's void result (unread).
inline constexpr Query kRevokeLinks{
    "links_revoke_many",
    "UPDATE links l SET revoke_time = $3::timestamptz"
    " FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS t(id, code, n)"
    " WHERE l.id = t.id AND l.revoke_time IS NULL"
    " RETURNING t.n, " SHORTENER_LINK_COLUMNS ", pg_notify($4::text, t.code)"};

// $1 limit. Rows: ids of deleted links not erased yet, longest deleted first.
inline constexpr Query kLinksToErase{
    "links_to_erase",
    "SELECT id FROM deleted_links WHERE erase_time IS NULL ORDER BY delete_time, id LIMIT $1"};

// $1 ids, $2 erase time.
inline constexpr Query kMarkErased{
    "links_mark_erased",
    "UPDATE deleted_links SET erase_time = $2::timestamptz"
    " WHERE id = ANY($1::bigint[]) AND erase_time IS NULL"};

// $1 now. Frees up to 1000 aliases whose time has come (only a
// link_aliases row that still names the deleted link: a new link may have
// taken a freed alias since) and clears them in deleted_links; forgets up
// to 1000 deleted links that are erased and hold no alias (those freed by
// this call go with the next: one snapshot). Row: the aliases freed, the
// links forgotten. Both by partial indexes of migration 0014; the caller
// repeats while a call freed any or forgot a full 1000.
inline constexpr Query kReleaseDeleted{
    "links_release_deleted",
    "WITH due AS (SELECT id, alias FROM deleted_links"
    "             WHERE alias IS NOT NULL AND alias_release_time <= $1::timestamptz"
    "             ORDER BY alias_release_time LIMIT 1000),"
    " freed AS (DELETE FROM link_aliases a USING due WHERE a.alias = due.alias AND a.link_id = due.id),"
    " cleared AS (UPDATE deleted_links d SET alias = NULL FROM due WHERE d.id = due.id"
    "             RETURNING d.id),"
    " forgotten AS (DELETE FROM deleted_links WHERE id IN ("
    "   SELECT id FROM deleted_links WHERE erase_time IS NOT NULL AND alias IS NULL LIMIT 1000)"
    "   RETURNING id)"
    " SELECT (SELECT count(*) FROM cleared), (SELECT count(*) FROM forgotten)"};

// ListLinks (lib/store/link_list.h): one statement per walk. Each looks at
// up to $12 links in the walk's order after the cursor (an index range
// read), marks those that meet the query (ok), and returns the first $11
// that do, with their link columns, plus the $12-th link looked at (the
// "tail", ok or not): a page that ends before its walk does goes on from
// there. The outer LIMIT stops the walk as soon as enough links matched.
// Parameters, the same for every walk:
//   $1 owner; $2 label ids, all required (the label walks follow the
//   first's link_label_members rows); $3 state ('active', 'revoked',
//   'expired'; NULL: any) and $4 whether it is negated, at time $5;
//   $6, $7 the create time range [from, before) ('-infinity', 'infinity'
//   when open); $8 the host (NULL: any); $9 the cursor's create time (the
//   clicked walk: its clicks), $10 its id; $11 matches wanted; $12 links
//   looked at at most.
// Rows, in walk order: ok, row number in the walk, sort key (clicks,
// create time in epoch microseconds, id), then link columns (NULL for a
// tail that is not ok).
// The host is UrlHost's rule in SQL: after "scheme://" and any "user@",
// up to '/', '?', '#' or the port's ':' (an IPv6 literal in brackets).
#define SHORTENER_LIST_RESIDUAL                                                              \
  "l.owner = $1::text"                                                                       \
  " AND (cardinality($2::bigint[]) = 0 OR l.label_ids @> $2::bigint[])"                      \
  " AND l.create_time >= $6::timestamptz AND l.create_time < $7::timestamptz"                \
  " AND ($8::text IS NULL OR substring(l.long_url"                                           \
  "        from '^[^:/?#]+://(?:[^/?#@]*@)?(\\[[^]/?#]*\\]|[^/?#:]*)') = $8::text)"          \
  " AND ($3::text IS NULL OR"                                                                \
  "      ((CASE WHEN l.revoke_time IS NOT NULL THEN 'revoked'"                               \
  "             WHEN l.clicks_exhausted_time IS NOT NULL OR l.expire_time <= $5::timestamptz" \
  "             THEN 'expired' ELSE 'active' END) = $3::text) <> $4::boolean)"

#define SHORTENER_NEVER_CLICKED \
  " AND NOT EXISTS (SELECT 1 FROM link_click_totals t WHERE t.link_id = l.id AND t.human > 0)"

// By create time over the tenant's index; CMP '<' walks newest first.
#define SHORTENER_WALK_OWNER(CMP, DIR, EXTRA)                                                  \
  "SELECT l.id, l.create_time AS ct, 0::bigint AS clicks, (" SHORTENER_LIST_RESIDUAL EXTRA     \
  ") AS ok FROM links l"                                                                       \
  " WHERE l.owner = $1::text AND l.create_time >= $6::timestamptz"                             \
  "   AND l.create_time < $7::timestamptz"                                                     \
  "   AND (l.create_time, l.id) " CMP " ($9::timestamptz, $10::bigint)"                        \
  " ORDER BY l.create_time " DIR ", l.id " DIR " LIMIT $12"

// By create time over the first label's members.
#define SHORTENER_WALK_LABEL(CMP, DIR, EXTRA)                                                  \
  "SELECT l.id, m.create_time AS ct, 0::bigint AS clicks, (" SHORTENER_LIST_RESIDUAL EXTRA     \
  ") AS ok FROM link_label_members m JOIN links l ON l.id = m.link_id"                         \
  " WHERE m.label_id = ($2::bigint[])[1] AND m.create_time >= $6::timestamptz"                 \
  "   AND m.create_time < $7::timestamptz"                                                     \
  "   AND (m.create_time, m.link_id) " CMP " ($9::timestamptz, $10::bigint)"                   \
  " ORDER BY m.create_time " DIR ", m.link_id " DIR " LIMIT $12"

#define SHORTENER_WALK_CLICKED                                                                 \
  "SELECT l.id, l.create_time AS ct, t.human AS clicks, (" SHORTENER_LIST_RESIDUAL             \
  ") AS ok FROM link_click_totals t JOIN links l ON l.id = t.link_id"                          \
  " WHERE t.owner = $1::text AND t.human > 0"                                                  \
  "   AND (t.human, t.link_id) < ($9::bigint, $10::bigint)"                                    \
  " ORDER BY t.human DESC, t.link_id DESC LIMIT $12"

#define SHORTENER_LIST_PAGE(WALK)                                                              \
  "SELECT s.ok, s.rn, s.clicks, (extract(epoch FROM s.ct) * 1000000)::bigint, s.id, "          \
  SHORTENER_LINK_COLUMNS                                                                       \
  " FROM (SELECT * FROM (SELECT w.*, row_number() OVER () AS rn FROM (" WALK ") w) n"          \
  "       WHERE n.ok OR n.rn = $12 LIMIT $11 + 1) s"                                           \
  " LEFT JOIN links l ON s.ok AND l.id = s.id ORDER BY s.rn"

inline constexpr int kListKeyColumns = 5;

inline constexpr Query kListNewest{
    "links_list_newest", SHORTENER_LIST_PAGE(SHORTENER_WALK_OWNER("<", "DESC", ""))};
inline constexpr Query kListNewestLabel{
    "links_list_newest_label", SHORTENER_LIST_PAGE(SHORTENER_WALK_LABEL("<", "DESC", ""))};
inline constexpr Query kListOldest{
    "links_list_oldest", SHORTENER_LIST_PAGE(SHORTENER_WALK_OWNER(">", "ASC", ""))};
inline constexpr Query kListOldestLabel{
    "links_list_oldest_label", SHORTENER_LIST_PAGE(SHORTENER_WALK_LABEL(">", "ASC", ""))};
inline constexpr Query kListClicked{"links_list_clicked",
                                    SHORTENER_LIST_PAGE(SHORTENER_WALK_CLICKED)};
inline constexpr Query kListUnclicked{
    "links_list_unclicked",
    SHORTENER_LIST_PAGE(SHORTENER_WALK_OWNER("<", "DESC", SHORTENER_NEVER_CLICKED))};
inline constexpr Query kListUnclickedLabel{
    "links_list_unclicked_label",
    SHORTENER_LIST_PAGE(SHORTENER_WALK_LABEL("<", "DESC", SHORTENER_NEVER_CLICKED))};
#undef SHORTENER_LIST_PAGE
#undef SHORTENER_WALK_CLICKED
#undef SHORTENER_WALK_LABEL
#undef SHORTENER_WALK_OWNER
#undef SHORTENER_NEVER_CLICKED
#undef SHORTENER_LIST_RESIDUAL
#undef SHORTENER_LINK_COLUMNS
// clang-format on

// CreateLinks, write phase in COPY form (CopyPlan in pg_batch.h: big batches
// that skip the read phase). No ON CONFLICT: a taken key raises
// unique_violation, as kWriteBatchFast does. Columns in the order CopyPlan
// writes the fields; tables written in the order of kWriteBatchFast's inserts.
template <size_t N>
struct CopyTarget {
  const char* table;
  std::array<const char*, N> columns;
};
inline constexpr CopyTarget<4> kCopyRequests{"shorten_requests",
                                             {"owner", "request_id", "long_url_sha256", "link_id"}};
inline constexpr CopyTarget<2> kCopyAliases{"link_aliases", {"alias", "link_id"}};
inline constexpr CopyTarget<11> kCopyLinks{
    "links",
    {"id", "alias", "long_url", "long_url_sha256", "owner", "redirect_status", "create_time",
     "expire_time", "max_clicks", "url_key", "label_ids"}};

// Prepared on every new connection.
inline constexpr Query kAllQueries[] = {
    kGetById,         kGetByAlias,      kGetByIds,
    kGetByAliases,    kRevoke,          kReadRequests,
    kReadDedupe,      kReadAliases,     kWriteBatchCareful,
    kWriteBatchFast,  kWriteLinksFast,  kReleaseDedupeKeys,
    kEnsureLabels,    kFindLabel,       kListNewest,
    kListNewestLabel, kListOldest,      kListOldestLabel,
    kListClicked,     kListUnclicked,   kListUnclickedLabel,
    kLockLink,        kUpdateLink,      kTakeDedupeKey,
    kInsertHistory,   kLinkHistory,     kNotify,
    kDeleteLinks,     kRecordDeletions, kRevokeLinks,
    kLinksToErase,    kMarkErased,      kReleaseDeleted,
};

}  // namespace shortener::store::pg_queries

#endif  // SHORTENER_LIB_STORE_PG_QUERIES_H_
