// Every SQL statement of PgApiKeyStore, as named constants. Each is prepared
// on every pooled connection (PrepareApiKeyQueries) and executed only with
// parameters. Conventions (as lib/store/pg/queries.h):
//  - Times go in as timestamptz text ("2024-05-01 12:00:00.123456+00") and
//    come out as bigint microseconds since the epoch.
//  - allowed_domains goes in and comes out as one comma-separated text
//    (DomainAllowlist::ToString(); entries never hold a comma) and is a
//    text[] in the table (string_to_array('', ',') is '{}').
//  - Key columns always come out in the order of SHORTENER_API_KEY_COLUMNS,
//    which the store's row parser reads.
#ifndef SHORTENER_LIB_AUTH_PG_QUERIES_H_
#define SHORTENER_LIB_AUTH_PG_QUERIES_H_

namespace shortener::auth::pg_queries {

struct Query {
  const char* name;
  const char* sql;
};

// SQL laid out as SQL, not as C++:
// clang-format off

// 10 columns of `api_keys k`; the tenant is NULL for an infrastructure key.
#define SHORTENER_API_KEY_COLUMNS                                         \
  "k.id, k.key_hash, k.name, k.scopes, "                                  \
  "array_to_string(k.allowed_domains, ','), k.rate_per_second, k.burst, " \
  "(extract(epoch FROM k.create_time) * 1000000)::bigint, "               \
  "(extract(epoch FROM k.revoke_time) * 1000000)::bigint, k.tenant"

// $1 key_hash, $2 name, $3 scopes, $4 allowed domains (comma-separated),
// $5 rate_per_second or NULL, $6 burst or NULL, $7 tenant or NULL (an
// infrastructure key). A duplicate key_hash is a unique violation
// (ALREADY_EXISTS); scopes that do not fit the kind of key violate a CHECK.
inline constexpr Query kCreate{
    "api_keys_create",
    "INSERT INTO api_keys AS k"
    " (key_hash, name, scopes, allowed_domains, rate_per_second, burst, tenant)"
    " VALUES ($1, $2, $3, string_to_array($4, ','),"
    " $5::double precision, $6::integer, $7)"
    " RETURNING " SHORTENER_API_KEY_COLUMNS};

// $1 key_hash.
inline constexpr Query kFindByHash{
    "api_keys_find_by_hash",
    "SELECT " SHORTENER_API_KEY_COLUMNS " FROM api_keys k WHERE k.key_hash = $1"};

// Every key, oldest first.
inline constexpr Query kList{
    "api_keys_list",
    "SELECT " SHORTENER_API_KEY_COLUMNS " FROM api_keys k ORDER BY k.id"};

// $1 id, $2 revoke time, $3 notification channel. Sets revoke_time only if
// unset (the first one is kept) and returns the row either way; no row when
// the id is unknown. NOTIFYs "key:<hash>" on $3 in the same statement, so
// every replica drops the key from its cache when (and only if) this
// commits. Sent on repeats too: a replica that missed the first one catches
// up. The column after the key columns is pg_notify's void result (unread).
inline constexpr Query kRevoke{
    "api_keys_revoke",
    "UPDATE api_keys k SET revoke_time = coalesce(k.revoke_time, $2::timestamptz)"
    " WHERE k.id = $1"
    " RETURNING " SHORTENER_API_KEY_COLUMNS ", pg_notify($3::text, 'key:' || k.key_hash)"};

// clang-format on

inline constexpr Query kAllQueries[] = {kCreate, kFindByHash, kList, kRevoke};

}  // namespace shortener::auth::pg_queries

#endif  // SHORTENER_LIB_AUTH_PG_QUERIES_H_
