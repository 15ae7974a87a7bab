// Every SQL statement of PgSegmentSource, as named constants.
//
// One lease is one statement in autocommit: the UPDATE takes the row lock, so
// concurrent leases of one sequence serialise and never overlap. It is
// prepared once per connection (it runs on every lease); the session setup
// below runs rarely and goes through exec_params.
#ifndef SHORTENER_LIB_IDALLOC_PG_QUERIES_H_
#define SHORTENER_LIB_IDALLOC_PG_QUERIES_H_

namespace shortener::idalloc::pg_queries {

// SQL laid out as SQL, not as C++:
// clang-format off

// Prepared-statement name of kLeaseSql.
inline constexpr char kLeaseStatement[] = "idalloc_lease";

// Leases the next $2 (bigint step) ids of sequence $1 (id_segments.name):
// moves next_id on by the step, records the step, and returns the leased
// range [begin, end) as one row; no row when the sequence does not exist.
inline constexpr char kLeaseSql[] =
    "UPDATE id_segments SET next_id = next_id + $2::bigint, step = $2::bigint,"
    " updated_at = now() WHERE name = $1 RETURNING next_id - $2::bigint, next_id";

// Sets the session's statement_timeout to $1 (text, milliseconds), so that a
// lease stuck behind a lock ends by the caller's deadline (SET takes no
// parameters; set_config does the same and does).
inline constexpr char kSetStatementTimeoutSql[] =
    "SELECT set_config('statement_timeout', $1, false)";

// clang-format on

}  // namespace shortener::idalloc::pg_queries

#endif  // SHORTENER_LIB_IDALLOC_PG_QUERIES_H_
