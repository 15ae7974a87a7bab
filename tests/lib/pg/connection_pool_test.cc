// pg::ConnectionPool on the shared test cluster, and against a TCP server
// that never answers.
#include "lib/pg/connection_pool.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <pqxx/pqxx>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

std::string Show(pqxx::connection& conn, const std::string& setting) {
  pqxx::nontransaction tx(conn);
  return tx.exec1("SHOW " + setting)[0].as<std::string>();
}

// A TCP server on 127.0.0.1 that never answers: it listens (the kernel
// completes the handshake of connections in its backlog) but never accepts,
// reads or writes, so a client waits for the server's first message, like a
// database behind a blackholing firewall or a hung server. Closing it resets
// the waiting connections.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;  // any free port
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof(addr);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Acquire on `pool`, timed. Gives up after 60 s by closing `server` (which
// makes libpq fail at once), so a missing timeout fails the test instead of
// hanging it.
absl::Status TimedAcquire(ConnectionPool& pool, SilentServer& server, absl::Duration* took) {
  const absl::Time start = absl::Now();
  auto result = std::async(std::launch::async, [&pool] {
    return pool.Acquire(absl::Now() + absl::Minutes(5)).status();
  });
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    server.Close();
    result.wait();
    *took = absl::Now() - start;
    return absl::InternalError("test: Acquire was still waiting after 60 s");
  }
  *took = absl::Now() - start;
  return result.get();
}

TEST_CASE("the pool opens connections lazily and waits for one until the deadline",
          "[lib/pg][pg]") {
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
          "[lib/pg][pg]") {
  ConnectionPool pool(ConnectionPoolOptions{
      "host=/nonexistent-dir dbname=x user=y password=hunter2 connect_timeout=2", 2, nullptr});
  auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(lease, HasCodeAndMessage(absl::StatusCode::kUnavailable, "database unreachable: "));
  CHECK(absl::StrContains(lease.status().message(), "nonexistent-dir"));
  CHECK_FALSE(absl::StrContains(lease.status().message(), "hunter2"));
  CHECK(pool.open_connections() == 0);
}

TEST_CASE("Validate rejects a malformed connection string without echoing it", "[lib/pg][pg]") {
  auto status = ConnectionPool::Validate(
      ConnectionPoolOptions{"host=/tmp password=hunter2 garbage", 1, nullptr});
  CHECK_THAT(status, HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_FALSE(absl::StrContains(status.message(), "hunter2"));
  CHECK_THAT(ConnectionPool::Validate(Options(0)), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(ConnectionPool::Validate(Options(1)), IsOk());
}

TEST_CASE("Run translates errors and drops a connection only when it broke", "[lib/pg][pg]") {
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

TEST_CASE("an idle connection the server closed is replaced before use", "[lib/pg][pg]") {
  ConnectionPool pool(Options(1));
  int old_pid = 0;
  {
    auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
    REQUIRE_THAT(lease, IsOk());
    old_pid = BackendPid(lease->conn());
  }
  {
    // With a timeout, pg_terminate_backend waits until the backend has exited
    // (PostgreSQL 14+); it sends the client its FATAL message before that, so
    // the pooled connection's socket is readable by the time this returns.
    pqxx::connection admin(SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(admin);
    REQUIRE(tx.exec_params1("SELECT pg_terminate_backend($1, 30000)", old_pid)[0].as<bool>());
  }
  auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(lease, IsOk());
  CHECK(BackendPid(lease->conn()) != old_pid);
}

TEST_CASE("a server that never answers fails UNAVAILABLE after connect_timeout", "[lib/pg][pg]") {
  SilentServer server;
  ConnectionPoolOptions options;
  options.conninfo =
      absl::StrCat("host=127.0.0.1 port=", server.port(), " dbname=x user=y sslmode=disable");
  options.connect_timeout = absl::Seconds(2);
  ConnectionPool pool(options);
  absl::Duration took;
  absl::Status status = TimedAcquire(pool, server, &took);
  CHECK_THAT(status, HasCodeAndMessage(absl::StatusCode::kUnavailable, "database unreachable: "));
  CHECK_THAT(status, HasCodeAndMessage(absl::StatusCode::kUnavailable, "timeout"));
  // libpq counts whole seconds, so 2 s is 1 to 2 s; the upper bound only says
  // "bounded", with room for a loaded machine.
  CHECK(took >= absl::Milliseconds(900));
  CHECK(took < absl::Seconds(10));
  CHECK(pool.open_connections() == 0);
}

TEST_CASE("a connect_timeout in the connection string wins over the pool's", "[lib/pg][pg]") {
  SilentServer server;
  ConnectionPoolOptions options;
  options.conninfo = absl::StrCat("postgresql://y@127.0.0.1:", server.port(),
                                  "/x?sslmode=disable&connect_timeout=2");
  options.connect_timeout = absl::Hours(1);
  ConnectionPool pool(options);
  absl::Duration took;
  CHECK_THAT(TimedAcquire(pool, server, &took),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "timeout"));
  CHECK(took < absl::Seconds(10));
}

TEST_CASE("a unix socket that does not exist fails UNAVAILABLE at once", "[lib/pg][pg]") {
  ConnectionPoolOptions options;
  options.conninfo = "host=/nonexistent-dir port=5432 dbname=x user=y";  // no connect_timeout
  ConnectionPool pool(options);
  const absl::Time start = absl::Now();
  CHECK_THAT(pool.Acquire(absl::Now() + absl::Seconds(30)),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "database unreachable: "));
  CHECK(absl::Now() - start < absl::Seconds(5));
}

TEST_CASE("new connections get the pool's statement_timeout and it cancels slow statements",
          "[lib/pg][pg]") {
  {
    ConnectionPool pool(Options(1));  // the default
    auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
    REQUIRE_THAT(lease, IsOk());
    CHECK(Show(lease->conn(), "statement_timeout") == "30s");
  }
  {
    ConnectionPoolOptions options = Options(1);
    options.statement_timeout = absl::ZeroDuration();  // the server's setting
    ConnectionPool pool(options);
    auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
    REQUIRE_THAT(lease, IsOk());
    CHECK(Show(lease->conn(), "statement_timeout") == "0");
  }
  ConnectionPoolOptions options = Options(1);
  options.statement_timeout = absl::Milliseconds(250);
  std::atomic<int> prepared{0};
  options.on_connect = [&](pqxx::connection&) { ++prepared; };
  ConnectionPool pool(options);
  const absl::Time start = absl::Now();
  absl::Status slow = pool.Run("slow", absl::Now() + absl::Seconds(5), [](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec("SELECT pg_sleep(20)");
    return absl::OkStatus();
  });
  CHECK_THAT(slow, HasCodeAndMessage(absl::StatusCode::kDeadlineExceeded, "slow: "));
  CHECK(absl::Now() - start < absl::Seconds(15));
  CHECK(prepared == 1);  // on_connect still runs, after the timeout is set
  auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(lease, IsOk());
  CHECK(Show(lease->conn(), "statement_timeout") == "250ms");
}

TEST_CASE("the pool connects with a URI connection string, defaults appended to its query",
          "[lib/pg][pg]") {
  const shortener::testing::PgCluster& cluster = SharedPgCluster();
  ConnectionPoolOptions options;
  options.conninfo = absl::StrCat("postgresql:///postgres?host=", cluster.socket_dir(),
                                  "&port=", cluster.port(), "&user=", cluster.user());
  ConnectionPool pool(options);
  auto lease = pool.Acquire(absl::Now() + absl::Seconds(5));
  REQUIRE_THAT(lease, IsOk());
  CHECK(Show(lease->conn(), "statement_timeout") == "30s");
  pqxx::nontransaction tx(lease->conn());
  CHECK(tx.exec1("SELECT current_database()")[0].as<std::string>() == "postgres");
}

}  // namespace
}  // namespace shortener::pg
