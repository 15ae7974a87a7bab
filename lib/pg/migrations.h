// Versioned, forward-only schema migrations from deploy/postgres/migrations,
// compiled into the binary so a service never looks for SQL files at run time.
// Thread-safe (no shared state); safe to run from many processes at once.
#ifndef SHORTENER_LIB_PG_MIGRATIONS_H_
#define SHORTENER_LIB_PG_MIGRATIONS_H_

#include <limits>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shortener::pg {

struct Migration {
  int version;       // from the file name: 0001_init.sql -> 1
  std::string name;  // file name
  std::string sql;
};

// All migrations compiled into this binary, ordered by version.
const std::vector<Migration>& EmbeddedMigrations();

// Applies every migration newer than the database's, each in its own
// transaction, serialised across processes by an advisory lock, and records it
// in schema_migrations. Idempotent: a second call applies nothing. Returns the
// number of migrations applied. Fails UNAVAILABLE when the database is
// unreachable, FAILED_PRECONDITION when the database is newer than this binary.
// `up_to_version` stops before later migrations (tests of a migration's data
// conversion build the schema it starts from).
absl::StatusOr<int> ApplyMigrations(pqxx::connection& conn,
                                    int up_to_version = std::numeric_limits<int>::max());

// Same, opening its own connection from a libpq connection string.
absl::StatusOr<int> ApplyMigrations(const std::string& conninfo,
                                    int up_to_version = std::numeric_limits<int>::max());

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_MIGRATIONS_H_
