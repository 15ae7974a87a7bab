#include "lib/pg/migrations.h"

#include <algorithm>
#include <pqxx/pqxx>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/pg/pg_error.h"
#include "lib/pg/sql.h"

namespace shortener::pg {
namespace {

// Arbitrary constant shared by every shortener process: the advisory lock that
// serialises migration runs.
constexpr long long kMigrationLockKey = 0x73686f72746e72;  // "shortnr"

// Applies `m` unless the database has recorded it; true when it applied it.
// Its own transaction, under the lock: a replica that waited for the lock
// finds the migration recorded by the one that held it.
absl::StatusOr<bool> ApplyOne(pqxx::connection& conn, const Migration& m) {
  bool applied = false;
  absl::Status status = CatchPqxx(absl::StrCat("apply migration ", m.name), [&]() -> absl::Status {
    pqxx::work tx(conn);
    tx.exec_params(sql::kLockMigrations, kMigrationLockKey);
    pqxx::result done = tx.exec_params(sql::kMigrationApplied, m.version);
    if (!done.empty()) return absl::OkStatus();  // rolled back on scope exit
    tx.exec0(m.sql);
    tx.exec_params0(sql::kRecordMigration, m.version, m.name);
    tx.commit();
    applied = true;
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return applied;
}

int NewestEmbedded() {
  return EmbeddedMigrations().empty() ? 0 : EmbeddedMigrations().back().version;
}

}  // namespace

absl::StatusOr<int> ApplyMigrations(pqxx::connection& conn, int up_to_version) {
  absl::Status created = CatchPqxx("apply migrations", [&]() -> absl::Status {
    // Concurrent CREATE TABLE IF NOT EXISTS can still collide in the
    // catalog: serialise it under the same lock as the migrations.
    pqxx::work tx(conn);
    tx.exec_params(sql::kLockMigrations, kMigrationLockKey);
    tx.exec0(sql::kCreateSchemaMigrations);
    tx.commit();
    return absl::OkStatus();
  });
  if (!created.ok()) return created;
  int applied = 0;
  for (const Migration& m : EmbeddedMigrations()) {
    if (m.version > up_to_version) break;
    absl::StatusOr<bool> one = ApplyOne(conn, m);
    if (!one.ok()) return one.status();
    if (*one) ++applied;
  }
  return applied;
}

absl::StatusOr<int> ApplyMigrations(const std::string& conninfo, int up_to_version) {
  try {
    pqxx::connection conn(conninfo);
    return ApplyMigrations(conn, up_to_version);
  } catch (...) {
    return StatusFromCurrentException("connect to apply migrations");
  }
}

absl::StatusOr<SchemaState> ReadSchemaState(pqxx::connection& conn) {
  SchemaState state;
  state.binary_version = NewestEmbedded();
  absl::Status status = CatchPqxx("read the schema version", [&]() -> absl::Status {
    pqxx::read_transaction tx(conn);
    absl::flat_hash_set<int> recorded;
    if (tx.exec1(sql::kSchemaMigrationsExists)[0].as<bool>()) {
      for (const pqxx::row& row : tx.exec(sql::kRecordedMigrations)) {
        recorded.insert(row[0].as<int>());
      }
    }
    for (int version : recorded) state.database_version = std::max(state.database_version, version);
    for (const Migration& m : EmbeddedMigrations()) {
      if (!recorded.contains(m.version)) state.pending.push_back(m.name);
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return state;
}

absl::StatusOr<SchemaState> ReadSchemaState(const std::string& conninfo) {
  try {
    pqxx::connection conn(conninfo);
    return ReadSchemaState(conn);
  } catch (...) {
    return StatusFromCurrentException("connect to read the schema version");
  }
}

std::string DescribePending(const SchemaState& state) {
  return absl::StrCat("database schema at version ", state.database_version,
                      ", this binary needs version ", state.binary_version,
                      " (pending: ", absl::StrJoin(state.pending, ", "), ")");
}

}  // namespace shortener::pg
