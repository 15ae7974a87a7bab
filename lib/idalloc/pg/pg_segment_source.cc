#include "lib/idalloc/pg/pg_segment_source.h"

#include <poll.h>

#include <algorithm>
#include <pqxx/pqxx>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/status_macros.h"
#include "lib/idalloc/pg/queries.h"
#include "lib/pg/conninfo.h"
#include "lib/pg/pg_error.h"

namespace shortener::idalloc {
namespace {

using pg_queries::kLeaseSql;
using pg_queries::kLeaseStatement;
using pg_queries::kSetStatementTimeoutSql;

constexpr char kWhat[] = "id segment lease";

// The connection string with the time left as its connect_timeout (overriding
// one it sets: the caller's deadline rules).
std::string WithConnectTimeout(const std::string& conninfo, absl::Duration left) {
  return pg::WithConnInfoParam(conninfo, "connect_timeout",
                               std::to_string(pg::ConnectTimeoutSeconds(left)));
}

// The connection string with TCP keepalives unless it sets its own: the
// statement_timeout only bounds the server's work, so without them a lease to
// a server that vanished mid-statement (no FIN, no RST) would block the
// leaser in recv(2) for hours. A malformed string stays as it is: connecting
// then fails with libpq's own error.
std::string WithKeepalives(std::string conninfo) {
  absl::StatusOr<std::string> with = pg::WithConnInfoDefaults(conninfo, pg::TcpKeepaliveDefaults());
  return with.ok() ? *std::move(with) : conninfo;
}

// True when an idle connection's socket has something to read: with no query
// outstanding that is the server saying goodbye (shutdown, restart,
// pg_terminate_backend) or a closed socket. Checking costs a poll(2), no round
// trip, and lets the next lease reconnect at once instead of failing once
// (which, in libpqxx 6.4, also leaks the PGresult of the failed statement).
bool IdleConnectionHungUp(int fd) {
  if (fd < 0) return true;
  pollfd p{};
  p.fd = fd;
  p.events = POLLIN;
  return ::poll(&p, 1, 0) > 0;
}

// Setting statement_timeout costs a round trip, so the session keeps its
// value while it overshoots the time left by at most 100 ms and cuts it short
// by at most a fifth (a background leaser passes about the same lease timeout
// every time: set once per connection).
bool NeedsNewStatementTimeout(int64_t current_ms, int64_t wanted_ms) {
  return current_ms < 0 || current_ms > wanted_ms + 100 || current_ms * 5 < wanted_ms * 4;
}

}  // namespace

struct PgSegmentSource::Connection {
  explicit Connection(const std::string& conninfo) : conn(conninfo) {
    conn.prepare(kLeaseStatement, kLeaseSql);
  }
  pqxx::connection conn;
  int64_t statement_timeout_ms = -1;  // as set on the session; -1: server default
};

PgSegmentSource::PgSegmentSource(std::string conninfo)
    : conninfo_(WithKeepalives(std::move(conninfo))) {}

PgSegmentSource::~PgSegmentSource() = default;

absl::StatusOr<Segment> PgSegmentSource::Lease(const std::string& name, int64_t step,
                                               absl::Time deadline) {
  if (step < 1 || step > kMaxLeaseStep) {
    return absl::InvalidArgumentError(
        absl::StrCat(kWhat, ": step must be in [1, ", kMaxLeaseStep, "], got ", step));
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<Segment> segment = LeaseLocked(name, step, deadline);
  // A statement cancelled by statement_timeout means the database could not
  // serve the lease before the deadline: the contract calls that UNAVAILABLE.
  if (segment.status().code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::UnavailableError(segment.status().message());
  }
  return segment;
}

absl::Status PgSegmentSource::EnsureConnectedLocked(absl::Time deadline) {
  if (conn_ != nullptr) return absl::OkStatus();
  try {
    conn_ = std::make_unique<Connection>(WithConnectTimeout(conninfo_, deadline - absl::Now()));
    return absl::OkStatus();
  } catch (...) {
    return pg::StatusFromCurrentException(absl::StrCat(kWhat, ": connect"));
  }
}

absl::StatusOr<Segment> PgSegmentSource::LeaseLocked(const std::string& name, int64_t step,
                                                     absl::Time deadline) {
  if (absl::Now() >= deadline) {
    return absl::UnavailableError(absl::StrCat(kWhat, ": deadline passed before asking"));
  }
  if (conn_ != nullptr && IdleConnectionHungUp(conn_->conn.sock())) conn_.reset();
  SHORTENER_RETURN_IF_ERROR(EnsureConnectedLocked(deadline));
  try {
    const int64_t timeout_ms =
        std::max<int64_t>(1, absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (NeedsNewStatementTimeout(conn_->statement_timeout_ms, timeout_ms)) {
      pqxx::nontransaction tx(conn_->conn);
      tx.exec_params(kSetStatementTimeoutSql, std::to_string(timeout_ms));
      tx.commit();
      conn_->statement_timeout_ms = timeout_ms;
    }
    pqxx::nontransaction tx(conn_->conn);
    pqxx::result rows = tx.exec_prepared(kLeaseStatement, name, step);
    tx.commit();
    if (rows.empty()) {
      return absl::NotFoundError(absl::StrCat(kWhat, ": unknown sequence \"", name, "\""));
    }
    return Segment{rows[0][0].as<int64_t>(), rows[0][1].as<int64_t>()};
  } catch (...) {
    absl::Status status = pg::StatusFromCurrentException(kWhat);
    // Whatever broke, start over with a fresh connection on the next lease.
    conn_.reset();
    return status;
  }
}

}  // namespace shortener::idalloc
