// pg::ConnectionPool on the shared test cluster.
#include "lib/pg/connection_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::pg {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using ::shortener::testing::SharedPgCluster;

ConnectionPoolOptions Options(int max_size) {
  return ConnectionPoolOptions{SharedPgCluster().ConnInfo(), max_size, nullptr};
}

int BackendPid(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  return tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
}

TEST_CASE("the pool opens connections lazily and waits for one until the deadline", "[store][pg]") {
  std::atomic<int> connects{0};
  ConnectionPoolOptions options = Options(2);
  options.on_connect = [&](pqxx::connection&) { ++connects; };
  ConnectionPool pool(options);
  CHECK(pool.open_connections() == 0);
  {
    auto a = pool.Acquire(absl::Now() + absl::Seconds(5));
    auto b = pool.Acquire(absl::Now() + absl::Seconds(5));
    REQUIRE_THAT(a, IsOk());
    REQUIRE_THAT(b, IsOk());
    CHECK(pool.open_connections() == 2);
    CHECK_THAT(pool.Acquire(absl::Now() + absl::Milliseconds(50)),
               HasCodeAndMessage(absl::StatusCode::kUnavailable, "pool exhausted"));
  }
  auto again = pool.Acquire(absl::Now() + absl::Milliseconds(50));
  REQUIRE_THAT(again, IsOk());
  CHECK(connects == 2);  // reused, not reopened
}

TEST_CASE("an unreachable database is UNAVAILABLE naming the cause, not the password",
          "[store][pg]") {
  ConnectionPool pool(ConnectionPoolOptions{
      "host=/nonexistent-dir dbname=x user=y password=hunter2 connect_timeout=2", 2, nullptr});
  auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(lease, HasCodeAndMessage(absl::StatusCode::kUnavailable, "database unreachable: "));
  CHECK(absl::StrContains(lease.status().message(), "nonexistent-dir"));
  CHECK_FALSE(absl::StrContains(lease.status().message(), "hunter2"));
  CHECK(pool.open_connections() == 0);
}

TEST_CASE("Validate rejects a malformed connection string without echoing it", "[store][pg]") {
  auto status = ConnectionPool::Validate(
      ConnectionPoolOptions{"host=/tmp password=hunter2 garbage", 1, nullptr});
  CHECK_THAT(status, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_FALSE(absl::StrContains(status.message(), "hunter2"));
  CHECK_THAT(ConnectionPool::Validate(Options(0)), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(ConnectionPool::Validate(Options(1)), IsOk());
}

TEST_CASE("Run translates errors and drops a connection only when it broke", "[store][pg]") {
  ConnectionPool pool(Options(2));
  absl::Time deadline = absl::Now() + absl::Seconds(5);
  absl::Status sql_error = pool.Run("bad query", deadline, [](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec("SELECT * FROM no_such_table");
    return absl::OkStatus();
  });
  CHECK_THAT(sql_error, HasCodeAndMessage(absl::StatusCode::kInternal, "bad query: "));
  CHECK(pool.open_connections() == 1);  // still good: kept

  absl::Status broken = pool.Run("suicide", deadline, [](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec("SELECT pg_terminate_backend(pg_backend_pid())");
    return absl::OkStatus();
  });
  CHECK_THAT(broken, HasCode(absl::StatusCode::kUnavailable));
  CHECK(pool.open_connections() == 0);  // dropped
  CHECK_THAT(pool.Run("after", deadline, [](pqxx::connection&) { return absl::OkStatus(); }),
             IsOk());
}

TEST_CASE("an idle connection the server closed is replaced before use", "[store][pg]") {
  ConnectionPool pool(Options(1));
  int old_pid = 0;
  {
    auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
    REQUIRE_THAT(lease, IsOk());
    old_pid = BackendPid(lease->conn());
  }
  {
    pqxx::connection admin(SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(admin);
    tx.exec_params("SELECT pg_terminate_backend($1)", old_pid);
  }
  absl::SleepFor(absl::Milliseconds(200));  // let the backend exit
  auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(lease, IsOk());
  CHECK(BackendPid(lease->conn()) != old_pid);
}

}  // namespace
}  // namespace shortener::pg
