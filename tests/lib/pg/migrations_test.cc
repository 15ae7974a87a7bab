// Schema migrations on a real private cluster: applied once, idempotent,
// safe to run concurrently, refused when the database is newer.
#include "lib/pg/migrations.h"

#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <thread>
#include <vector>

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

TEST_CASE("A database newer than the binary is refused", "[lib/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  {
    pqxx::connection conn((*cluster)->ConnInfo());
    pqxx::work tx(conn);
    tx.exec0("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')");
    tx.commit();
  }
  CHECK_THAT(ApplyMigrations((*cluster)->ConnInfo()),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "9999"));
}

TEST_CASE("An unreachable database is UNAVAILABLE, not a crash", "[lib/pg][pg]") {
  CHECK_THAT(ApplyMigrations("host=/nonexistent-dir port=1 dbname=x connect_timeout=2"),
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
