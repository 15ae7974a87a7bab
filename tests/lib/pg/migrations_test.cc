// Schema migrations on a real private cluster: applied once, idempotent,
// safe to run concurrently, a failing one rolled back and named; the schema
// state read back (empty, older, current, newer) without changing anything.
#include "lib/pg/migrations.h"

#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/pg/pg_error.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::pg {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using shortener::testing::PgCluster;

TEST_CASE("Migrations apply once and a second run applies nothing", "[lib/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  absl::StatusOr<int> first = ApplyMigrations((*cluster)->ConnInfo());
  REQUIRE_THAT(first, IsOk());
  CHECK(*first == static_cast<int>(EmbeddedMigrations().size()));
  absl::StatusOr<int> second = ApplyMigrations((*cluster)->ConnInfo());
  REQUIRE_THAT(second, IsOk());
  CHECK(*second == 0);
  pqxx::connection conn((*cluster)->ConnInfo());
  pqxx::work tx(conn);
  CHECK(tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<int>() ==
        static_cast<int>(EmbeddedMigrations().size()));
  CHECK(tx.exec1("SELECT next_id FROM id_segments WHERE name = 'links'")[0].as<long>() == 1);
}

TEST_CASE("Concurrent migration runs from several processes' worth of threads are safe",
          "[lib/pg][concurrent][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  std::vector<absl::StatusOr<int>> results(4, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { results[i] = ApplyMigrations((*cluster)->ConnInfo()); });
  }
  for (auto& t : threads) t.join();
  int total = 0;
  for (auto& r : results) {
    REQUIRE_THAT(r, IsOk());
    total += *r;
  }
  CHECK(total == static_cast<int>(EmbeddedMigrations().size()));
}

// Rows of schema_migrations, 0 when the table does not exist.
int RecordedMigrations(const std::string& conninfo) {
  pqxx::connection conn(conninfo);
  pqxx::work tx(conn);
  if (!tx.exec1("SELECT to_regclass('schema_migrations') IS NOT NULL")[0].as<bool>()) return 0;
  return tx.exec1("SELECT count(*) FROM schema_migrations")[0].as<int>();
}

TEST_CASE("The schema state of an empty database: every migration pending, nothing created",
          "[lib/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  absl::StatusOr<SchemaState> state = ReadSchemaState((*cluster)->ConnInfo());
  REQUIRE_THAT(state, IsOk());
  CHECK(state->database_version == 0);
  CHECK(state->binary_version == EmbeddedMigrations().back().version);
  REQUIRE(state->pending.size() == EmbeddedMigrations().size());
  CHECK(state->pending.front() == EmbeddedMigrations().front().name);
  CHECK_FALSE(state->current());
  CHECK_FALSE(state->newer());
  std::vector<std::string> names;
  for (const Migration& m : EmbeddedMigrations()) names.push_back(m.name);
  CHECK(DescribePending(*state) ==
        absl::StrCat("database schema at version 0, this binary needs version ",
                     EmbeddedMigrations().back().version, " (pending: ", absl::StrJoin(names, ", "),
                     ")"));
  pqxx::connection conn((*cluster)->ConnInfo());
  pqxx::work tx(conn);
  CHECK_FALSE(tx.exec1("SELECT to_regclass('schema_migrations') IS NOT NULL")[0].as<bool>());
}

TEST_CASE("The schema state of an older, a current and a newer database", "[lib/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  const int newest = EmbeddedMigrations().back().version;
  REQUIRE_THAT(ApplyMigrations(conninfo, /*up_to_version=*/newest - 2), IsOk());
  absl::StatusOr<SchemaState> older = ReadSchemaState(conninfo);
  REQUIRE_THAT(older, IsOk());
  CHECK(older->database_version == newest - 2);
  CHECK(older->pending == std::vector<std::string>{EmbeddedMigrations()[newest - 2].name,
                                                   EmbeddedMigrations()[newest - 1].name});
  CHECK_FALSE(older->current());

  REQUIRE_THAT(ApplyMigrations(conninfo), IsOk());
  absl::StatusOr<SchemaState> current = ReadSchemaState(conninfo);
  REQUIRE_THAT(current, IsOk());
  CHECK(current->database_version == newest);
  CHECK(current->current());
  CHECK_FALSE(current->newer());

  // A later release's migration, applied by its migration Job before this
  // binary's replicas are replaced: accepted (migrations keep the previous
  // release working), and applying ours again changes nothing.
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec0("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')");
    tx.commit();
  }
  absl::StatusOr<SchemaState> newer = ReadSchemaState(conninfo);
  REQUIRE_THAT(newer, IsOk());
  CHECK(newer->database_version == 9999);
  CHECK(newer->binary_version == newest);
  CHECK(newer->current());
  CHECK(newer->newer());
  absl::StatusOr<int> again = ApplyMigrations(conninfo);
  REQUIRE_THAT(again, IsOk());
  CHECK(*again == 0);
  CHECK(RecordedMigrations(conninfo) == newest + 1);
}

TEST_CASE("A failing migration is rolled back, named, and the ones before it stay",
          "[lib/pg][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  const Migration& last = EmbeddedMigrations().back();
  const int newest = last.version;
  REQUIRE_THAT(ApplyMigrations(conninfo, /*up_to_version=*/newest - 1), IsOk());
  {
    // Recording the last migration fails, after its SQL ran: its
    // transaction must take the SQL's effects back with it.
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec0(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$BEGIN RAISE EXCEPTION 'refused by the test'; END$$");
    tx.exec0(
        absl::StrCat("CREATE TRIGGER refuse BEFORE INSERT ON schema_migrations FOR EACH ROW "
                     "WHEN (NEW.version = ",
                     newest, ") EXECUTE FUNCTION refuse()"));
    tx.commit();
  }
  CHECK_THAT(ApplyMigrations(conninfo),
             HasCodeAndMessage(absl::StatusCode::kInternal, "apply migration " + last.name));
  absl::StatusOr<SchemaState> state = ReadSchemaState(conninfo);
  REQUIRE_THAT(state, IsOk());
  CHECK(state->database_version == newest - 1);
  CHECK(state->pending == std::vector<std::string>{last.name});
}

TEST_CASE("An unreachable database is UNAVAILABLE, not a crash", "[lib/pg][pg]") {
  CHECK_THAT(ApplyMigrations("host=/nonexistent-dir port=1 dbname=x connect_timeout=2"),
             HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(ReadSchemaState("host=/nonexistent-dir port=1 dbname=x connect_timeout=2"),
             HasCode(absl::StatusCode::kUnavailable));
}

TEST_CASE("pqxx errors translate to canonical codes", "[lib/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  pqxx::connection conn((*cluster)->ConnInfo());
  absl::Status dup = CatchPqxx("insert alias", [&]() -> absl::Status {
    pqxx::work tx(conn);
    tx.exec0("INSERT INTO link_aliases VALUES ('x', 1)");
    tx.exec0("INSERT INTO link_aliases VALUES ('x', 2)");
    tx.commit();
    return absl::OkStatus();
  });
  CHECK_THAT(dup, HasCodeAndMessage(absl::StatusCode::kAlreadyExists, "insert alias"));
  absl::Status syntax = CatchPqxx("bad query", [&]() -> absl::Status {
    pqxx::work tx(conn);
    tx.exec0("SELEC 1");
    return absl::OkStatus();
  });
  CHECK_THAT(syntax, HasCode(absl::StatusCode::kInternal));
  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  absl::Status down = CatchPqxx("read", [&]() -> absl::Status {
    pqxx::work tx(conn);
    tx.exec0("SELECT 1");
    return absl::OkStatus();
  });
  CHECK_THAT(down, HasCode(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace shortener::pg
