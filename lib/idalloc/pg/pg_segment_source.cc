#include "lib/idalloc/pg/pg_segment_source.h"

#include <poll.h>

#include <algorithm>
#include <pqxx/pqxx>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/status_macros.h"
#include "lib/pg/pg_error.h"

namespace shortener::idalloc {
namespace {

// All SQL of this file. One lease is one statement in autocommit: the UPDATE
// takes the row lock, so concurrent leases of one sequence serialise and never
// overlap.
constexpr char kLeaseStatement[] = "idalloc_lease";
constexpr char kLeaseSql[] =
    "UPDATE id_segments SET next_id = next_id + $2::bigint, step = $2::bigint,"
    " updated_at = now() WHERE name = $1 RETURNING next_id - $2::bigint, next_id";
constexpr char kSetStatementTimeoutSql[] = "SELECT set_config('statement_timeout', $1, false)";

constexpr char kWhat[] = "id segment lease";

// libpq's connect_timeout is in whole seconds and treats anything below 2 as 2.
int64_t ConnectTimeoutSeconds(absl::Duration left) {
  return std::max<int64_t>(2, absl::ToInt64Seconds(absl::Ceil(left, absl::Seconds(1))));
}

// Appends connect_timeout to a key=value or URI connection string; libpq
// takes the last value of a repeated key.
std::string WithConnectTimeout(const std::string& conninfo, int64_t seconds) {
  const bool uri =
      absl::StartsWith(conninfo, "postgresql://") || absl::StartsWith(conninfo, "postgres://");
  if (!uri) return absl::StrCat(conninfo, " connect_timeout=", seconds);
  const char* separator = conninfo.find('?') == std::string::npos ? "?" : "&";
  return absl::StrCat(conninfo, separator, "connect_timeout=", seconds);
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

PgSegmentSource::PgSegmentSource(std::string conninfo) : conninfo_(std::move(conninfo)) {}

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
    conn_ = std::make_unique<Connection>(
        WithConnectTimeout(conninfo_, ConnectTimeoutSeconds(deadline - absl::Now())));
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
