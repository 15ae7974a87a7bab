// A small pool of libpqxx connections to one database, shared by the
// Postgres-backed stores of one process.
//
// Connections are opened lazily (the first Acquire that finds no idle one
// opens one, up to `max_size`), prepared by `on_connect` once, and reused. A
// connection whose use failed with UNAVAILABLE (broken connection, server
// shutdown, commit in doubt) is closed instead of going back to the pool, and
// an idle connection the server closed meanwhile (restart, idle timeout) is
// noticed before it is handed out, so after an outage the pool heals by
// itself: no process restart.
//
// Nothing waits forever on a database that stopped answering: opening a
// connection is bounded by `connect_timeout`, each statement by
// `statement_timeout` (server side), and a connection whose server vanished
// (no FIN, no RST) is dropped by TCP keepalives (pg::TcpKeepaliveDefaults)
// within about 30 s, unless the connection string sets these itself.
//
// Thread-safe (std::mutex, which ThreadSanitizer sees; the system abseil is
// not instrumented). A Lease (one connection) belongs to one thread at a time.
#ifndef SHORTENER_LIB_PG_CONNECTION_POOL_H_
#define SHORTENER_LIB_PG_CONNECTION_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <pqxx/connection>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/pg/pg_error.h"

namespace shortener::pg {

struct ConnectionPoolOptions {
  // libpq connection string (key=value or URI). It may hold a password: the
  // pool never puts it into a status message. Its own connect_timeout and
  // TCP keepalive parameters win over the pool's defaults.
  std::string conninfo;
  // Connections open at most. Default 8.
  int max_size = 8;
  // Runs once on every new connection before its first use, e.g. to prepare
  // statements. May throw libpqxx exceptions (the connection is then dropped
  // and Acquire fails with their translation). Default: nothing.
  std::function<void(pqxx::connection&)> on_connect;
  // Bounds opening one connection, as libpq's connect_timeout (whole seconds,
  // rounded up, at least 2; per address tried), unless `conninfo` sets
  // connect_timeout itself. Zero or less: libpq's default, wait forever.
  // Default 5 s.
  absl::Duration connect_timeout = absl::Seconds(5);
  // statement_timeout of every connection, set when it is opened (before
  // `on_connect`): the server cancels a statement that runs longer, which
  // fails DEADLINE_EXCEEDED. Zero or less: leave the server's setting.
  // Default 30 s.
  absl::Duration statement_timeout = absl::Seconds(30);
};

class ConnectionPool {
 public:
  // One connection, borrowed from the pool; returned on destruction.
  // Move-only.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    pqxx::connection& conn() { return *conn_; }
    // Closes the connection instead of returning it to the pool.
    void Discard() { discard_ = true; }

   private:
    friend class ConnectionPool;
    Lease(ConnectionPool* pool, std::unique_ptr<pqxx::connection> conn);
    void Release();

    ConnectionPool* pool_ = nullptr;
    std::unique_ptr<pqxx::connection> conn_;
    bool discard_ = false;
  };

  explicit ConnectionPool(ConnectionPoolOptions options);
  // Every Lease must have been returned.
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Checks the options without connecting: INVALID_ARGUMENT for max_size < 1
  // or a malformed connection string (the message does not echo it).
  static absl::Status Validate(const ConnectionPoolOptions& options);

  // An idle connection, or a new one when fewer than max_size are open, or
  // the first one returned before `deadline`. Errors:
  //  - UNAVAILABLE "database unreachable: <libpq's reason>" when connecting
  //    fails (server down, authentication, no answer within connect_timeout,
  //    ...); no password in it.
  //  - UNAVAILABLE "database connection pool exhausted: ..." at `deadline`.
  //  - whatever `on_connect` threw, translated by StatusFromCurrentException.
  absl::StatusOr<Lease> Acquire(absl::Time deadline);

  // Acquires a connection, runs `fn(pqxx::connection&) -> absl::Status` on
  // it, translates any exception with StatusFromCurrentException(what), and
  // closes the connection if the result is UNAVAILABLE.
  template <typename Fn>
  absl::Status Run(absl::string_view what, absl::Time deadline, Fn&& fn) {
    absl::StatusOr<Lease> lease = Acquire(deadline);
    if (!lease.ok()) return lease.status();
    absl::Status status = CatchPqxx(what, [&]() -> absl::Status { return fn(lease->conn()); });
    if (absl::IsUnavailable(status)) lease->Discard();
    return status;
  }

  // One round trip on a pooled connection (a readiness probe): OK when the
  // database answered before `deadline`; Acquire's errors, or the query's
  // translated, otherwise.
  absl::Status Ping(absl::Time deadline);

  // Connections currently open (idle or leased). For tests and metrics.
  int open_connections() const;

  // A snapshot for metrics.
  struct Stats {
    int max_size = 0;        // options.max_size
    int open = 0;            // idle, leased or being opened
    int in_use = 0;          // leased or being opened
    int waiting = 0;         // Acquire calls waiting for a connection now
    uint64_t exhausted = 0;  // Acquire calls that gave up at their deadline
  };
  Stats GetStats() const;

 private:
  absl::StatusOr<std::unique_ptr<pqxx::connection>> Connect();
  // Sets statement_timeout and runs on_connect on a new connection.
  absl::Status Prepare(pqxx::connection& conn);
  void Return(std::unique_ptr<pqxx::connection> conn, bool discard);

  const ConnectionPoolOptions options_;
  std::string conninfo_;  // options_.conninfo plus the defaults it does not override
  std::string password_;  // to redact from libpq's messages

  mutable std::mutex mu_;
  std::condition_variable returned_;  // a connection came back or closed
  // Guarded by mu_:
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  int open_ = 0;  // idle + leased + being opened
  int waiting_ = 0;
  uint64_t exhausted_ = 0;
};

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_CONNECTION_POOL_H_
