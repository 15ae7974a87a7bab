#include "lib/pg/migrations.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "lib/pg/pg_error.h"
#include "lib/pg/sql.h"

namespace shortener::pg {
namespace {

// Arbitrary constant shared by every shortener process: the advisory lock that
// serialises migration runs.
constexpr long long kMigrationLockKey = 0x73686f72746e72;  // "shortnr"

}  // namespace

absl::StatusOr<int> ApplyMigrations(pqxx::connection& conn, int up_to_version) {
  int applied = 0;
  absl::Status status = CatchPqxx("apply migrations", [&]() -> absl::Status {
    {
      // Concurrent CREATE TABLE IF NOT EXISTS can still collide in the
      // catalog: serialise it under the same lock as the migrations.
      pqxx::work tx(conn);
      tx.exec_params(sql::kLockMigrations, kMigrationLockKey);
      tx.exec0(sql::kCreateSchemaMigrations);
      tx.commit();
    }
    for (const Migration& m : EmbeddedMigrations()) {
      if (m.version > up_to_version) break;
      pqxx::work tx(conn);
      tx.exec_params(sql::kLockMigrations, kMigrationLockKey);
      pqxx::result done = tx.exec_params(sql::kMigrationApplied, m.version);
      if (!done.empty()) continue;  // rolled back on scope exit
      tx.exec0(m.sql);
      tx.exec_params0(sql::kRecordMigration, m.version, m.name);
      tx.commit();
      ++applied;
    }
    pqxx::work tx(conn);
    pqxx::row newest = tx.exec1(sql::kNewestMigration);
    int db_version = newest[0].as<int>();
    int ours = EmbeddedMigrations().empty() ? 0 : EmbeddedMigrations().back().version;
    if (db_version > ours) {
      return absl::FailedPreconditionError(
          absl::StrCat("database schema is at version ", db_version,
                       " but this binary knows only up to ", ours, ": upgrade the binary"));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
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

}  // namespace shortener::pg
