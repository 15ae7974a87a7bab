#include "lib/pg/connection_pool.h"

#include <poll.h>

#include <algorithm>
#include <map>
#include <pqxx/pqxx>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "lib/pg/conninfo.h"
#include "lib/pg/sql.h"

namespace shortener::pg {
namespace {

// options.conninfo plus connect_timeout and TCP keepalives where it sets none.
// A malformed string stays as it is (Validate reports it; connecting fails).
std::string EffectiveConnInfo(const ConnectionPoolOptions& options) {
  std::vector<ConnInfoParam> defaults = TcpKeepaliveDefaults();
  if (options.connect_timeout > absl::ZeroDuration()) {
    defaults.push_back(
        {"connect_timeout", std::to_string(ConnectTimeoutSeconds(options.connect_timeout))});
  }
  absl::StatusOr<std::string> conninfo = WithConnInfoDefaults(options.conninfo, defaults);
  return conninfo.ok() ? *std::move(conninfo) : options.conninfo;
}

// The password in a connection string; empty if none (or malformed).
std::string PasswordOf(const std::string& conninfo) {
  absl::StatusOr<std::map<std::string, std::string>> parsed = ParseConnInfo(conninfo);
  if (!parsed.ok()) return "";
  auto it = parsed->find("password");
  return it == parsed->end() ? "" : it->second;
}

// An idle connection has nothing to read. Readable data or EOF means the
// server closed it (restart, idle timeout) or is about to: drop it.
bool LooksAlive(const pqxx::connection& conn) {
  if (!conn.is_open() || conn.sock() < 0) return false;
  pollfd p{conn.sock(), POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

}  // namespace

ConnectionPool::Lease::Lease(ConnectionPool* pool, std::unique_ptr<pqxx::connection> conn)
    : pool_(pool), conn_(std::move(conn)) {}

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      conn_(std::move(other.conn_)),
      discard_(other.discard_) {}

ConnectionPool::Lease& ConnectionPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = std::exchange(other.pool_, nullptr);
    conn_ = std::move(other.conn_);
    discard_ = other.discard_;
  }
  return *this;
}

ConnectionPool::Lease::~Lease() { Release(); }

void ConnectionPool::Lease::Release() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_), discard_);
  pool_ = nullptr;
}

ConnectionPool::ConnectionPool(ConnectionPoolOptions options)
    : options_(std::move(options)),
      conninfo_(EffectiveConnInfo(options_)),
      password_(PasswordOf(options_.conninfo)) {}

ConnectionPool::~ConnectionPool() = default;

absl::Status ConnectionPool::Validate(const ConnectionPoolOptions& options) {
  if (options.max_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("connection pool: max_size must be at least 1, got ", options.max_size));
  }
  return ParseConnInfo(options.conninfo).status();
}

absl::StatusOr<ConnectionPool::Lease> ConnectionPool::Acquire(absl::Time deadline) {
  std::vector<std::unique_ptr<pqxx::connection>> dead;  // closed after unlocking
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto can_acquire = [this] { return !idle_.empty() || open_ < options_.max_size; };
    for (;;) {
      while (!idle_.empty()) {
        std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
        idle_.pop_back();
        if (LooksAlive(*conn)) return Lease(this, std::move(conn));
        dead.push_back(std::move(conn));
        --open_;
      }
      if (open_ < options_.max_size) break;
      ++waiting_;
      const bool acquired = returned_.wait_until(lock, absl::ToChronoTime(deadline), can_acquire);
      --waiting_;
      if (!acquired) {
        ++exhausted_;
        return absl::UnavailableError(absl::StrCat("database connection pool exhausted: all ",
                                                   options_.max_size,
                                                   " connections stayed busy until the deadline"));
      }
    }
    ++open_;  // reserve a slot while connecting without the lock
  }
  absl::StatusOr<std::unique_ptr<pqxx::connection>> conn = Connect();
  if (!conn.ok()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --open_;
    }
    returned_.notify_one();
    return conn.status();
  }
  return Lease(this, std::move(conn).value());
}

absl::StatusOr<std::unique_ptr<pqxx::connection>> ConnectionPool::Connect() {
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = std::make_unique<pqxx::connection>(conninfo_);
  } catch (...) {
    absl::Status status = StatusFromCurrentException("connect");
    absl::string_view reason = status.message();
    absl::ConsumePrefix(&reason, "connect: ");
    absl::ConsumePrefix(&reason, "database connection lost: ");
    std::string message = absl::StrCat("database unreachable: ", reason);
    if (!password_.empty()) message = absl::StrReplaceAll(message, {{password_, "***"}});
    return absl::Status(status.code(), message);
  }
  absl::Status status = Prepare(*conn);
  if (!status.ok()) return status;
  return conn;
}

absl::Status ConnectionPool::Prepare(pqxx::connection& conn) {
  return CatchPqxx("prepare new database connection", [&]() -> absl::Status {
    if (options_.statement_timeout > absl::ZeroDuration()) {
      // Whole milliseconds, at least 1 (0 would mean no limit).
      const int64_t ms = std::max<int64_t>(
          1,
          absl::ToInt64Milliseconds(absl::Ceil(options_.statement_timeout, absl::Milliseconds(1))));
      pqxx::nontransaction tx(conn);
      tx.exec_params(sql::kSetStatementTimeout, std::to_string(ms));
      tx.commit();
    }
    if (options_.on_connect) options_.on_connect(conn);
    return absl::OkStatus();
  });
}

void ConnectionPool::Return(std::unique_ptr<pqxx::connection> conn, bool discard) {
  if (discard || !conn->is_open()) {
    conn.reset();  // closes it, without holding the lock
    std::lock_guard<std::mutex> lock(mu_);
    --open_;
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(conn));
  }
  returned_.notify_one();
}

int ConnectionPool::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

absl::Status ConnectionPool::Ping(absl::Time deadline) {
  return Run("ping", deadline, [](pqxx::connection& conn) {
    pqxx::nontransaction tx(conn);
    tx.exec(sql::kPing);
    return absl::OkStatus();
  });
}

ConnectionPool::Stats ConnectionPool::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats;
  stats.max_size = options_.max_size;
  stats.open = open_;
  stats.in_use = open_ - static_cast<int>(idle_.size());
  stats.waiting = waiting_;
  stats.exhausted = exhausted_;
  return stats;
}

}  // namespace shortener::pg
