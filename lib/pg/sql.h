// Every SQL statement of lib/pg, as named constants: schema migrations
// (migrations.cc; the migration files' own SQL is embedded from
// deploy/postgres/migrations) and the connection pool's session setup
// (connection_pool.cc).
//
// These are one-off statements, run once at startup or once per new
// connection, so they go through exec / exec_params (parameters, never text
// spliced into SQL) rather than as prepared statements on purpose: preparing
// would cost an extra round trip and a server-side plan per connection for a
// statement that then runs once. Request-path SQL lives with its library and
// is prepared (lib/store/pg/queries.h, lib/idalloc/pg/queries.h).
#ifndef SHORTENER_LIB_PG_SQL_H_
#define SHORTENER_LIB_PG_SQL_H_

namespace shortener::pg::sql {

// SQL laid out as SQL, not as C++:
// clang-format off

// --- Migrations (migrations.cc) ---

// Takes the advisory lock that serialises migration runs across processes,
// until the end of the transaction. $1 lock key (bigint).
inline constexpr char kLockMigrations[] = "SELECT pg_advisory_xact_lock($1)";

// The bookkeeping table of applied migrations, created on a fresh database.
inline constexpr char kCreateSchemaMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version integer PRIMARY KEY, name text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT now())";

// One row when migration $1 (version) has been applied, none otherwise.
inline constexpr char kMigrationApplied[] =
    "SELECT 1 FROM schema_migrations WHERE version = $1";

// Records migration $1 (version), $2 (file name) as applied.
inline constexpr char kRecordMigration[] =
    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)";

// One row, true when schema_migrations exists (false on an empty database:
// reading the state must not create it).
inline constexpr char kSchemaMigrationsExists[] =
    "SELECT to_regclass('schema_migrations') IS NOT NULL";

// Every recorded migration's version.
inline constexpr char kRecordedMigrations[] = "SELECT version FROM schema_migrations";

// --- Connection pool (connection_pool.cc) ---

// Sets the session's statement_timeout to $1 (text, milliseconds): what SET
// statement_timeout does, but taking a parameter (SET takes none).
inline constexpr char kSetStatementTimeout[] =
    "SELECT set_config('statement_timeout', $1, false)";

// A round trip that touches nothing: ConnectionPool::Ping (readiness).
inline constexpr char kPing[] = "SELECT 1";

// clang-format on

}  // namespace shortener::pg::sql

#endif  // SHORTENER_LIB_PG_SQL_H_
