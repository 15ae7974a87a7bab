// Versioned, forward-only schema migrations from deploy/postgres/migrations,
// compiled into the binary so a service never looks for SQL files at run time.
// Thread-safe (no shared state); safe to run from many processes at once.
//
// A database newer than the binary (migrations applied that it does not
// know) is accepted: every migration keeps the binaries of the release
// before it working (expand now, contract a release later, as 0006 and 0007
// do), so that replicas of the previous release keep running, restarting
// and scaling out while a rolling upgrade replaces them. The caller says
// so in its log (SchemaState::newer).
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

// Applies every embedded migration the database has not recorded, each in
// its own transaction, serialised across processes by an advisory lock
// (replicas starting at once: one applies, the others wait and find them
// applied), and records it in schema_migrations. Idempotent: a second call
// applies nothing. Returns the number of migrations applied. Fails
// UNAVAILABLE when the database is unreachable; a failing migration rolls
// back and fails with the database's error, naming the migration's file.
// `up_to_version` stops before later migrations (tests of a migration's data
// conversion build the schema it starts from).
absl::StatusOr<int> ApplyMigrations(pqxx::connection& conn,
                                    int up_to_version = std::numeric_limits<int>::max());

// Same, opening its own connection from a libpq connection string.
absl::StatusOr<int> ApplyMigrations(const std::string& conninfo,
                                    int up_to_version = std::numeric_limits<int>::max());

// What the database has applied compared with what this binary embeds.
struct SchemaState {
  int database_version = 0;  // newest migration recorded; 0: none (empty database)
  int binary_version = 0;    // newest migration embedded
  // Embedded migrations the database has not recorded (file names, in
  // order): the schema is older than this binary needs.
  std::vector<std::string> pending;

  bool current() const { return pending.empty(); }
  // Current, and migrations recorded that this binary does not know.
  bool newer() const { return current() && database_version > binary_version; }
};

// Reads the schema state without changing anything (no lock, no table
// created: an empty database has every migration pending). UNAVAILABLE when
// the database is unreachable.
absl::StatusOr<SchemaState> ReadSchemaState(pqxx::connection& conn);
absl::StatusOr<SchemaState> ReadSchemaState(const std::string& conninfo);

// "database schema at version D, this binary needs version B (pending:
// 0007_x.sql, 0008_y.sql)": for messages that refuse an older schema.
std::string DescribePending(const SchemaState& state);

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_MIGRATIONS_H_
