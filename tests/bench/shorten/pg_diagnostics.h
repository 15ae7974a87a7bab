// Diagnostics for finding where the database time of a benchmark goes,
// without touching the service: server settings applied before the service
// starts (e.g. plan_cache_mode, to test a hypothesis), and per-statement
// figures from pg_stat_statements for one measured window.
//
// Not thread-safe: the driver thread uses them between windows.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_PG_DIAGNOSTICS_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_PG_DIAGNOSTICS_H_

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/pg_cluster.h"

namespace shortener::bench {

// Applies `settings` ("name=value" each) with ALTER SYSTEM and, when
// `statement_stats`, loads pg_stat_statements (with planning time tracked);
// then restarts the cluster so that every setting is in force.
absl::Status ConfigureCluster(testing::PgCluster& cluster, const std::vector<std::string>& settings,
                              bool statement_stats);

// Empties the tables links are written to (links, link_aliases,
// shorten_requests), so that a round starts from the state
// the first one did: pgbench recreates its own table for every run, while
// the service's tables would grow by millions of rows per round (and the
// random-key dedupe index costs more the larger it is).
absl::Status EmptyLinkTables(const std::string& conninfo);

// Writes `segments` WAL segments (16 MB each) and checkpoints twice, so that
// the cluster holds that many segments ready for reuse (up to min_wal_size),
// as a server that has been running at this write rate does: without it the
// first round's loads create and zero-fill every new segment themselves
// (~40 of them in a round), which later rounds and production do not pay.
absl::Status PreallocateWal(const std::string& conninfo, int segments);

// pg_stat_statements over one window. Requires ConfigureCluster(...,
// statement_stats = true) first.
class StatementStats {
 public:
  static absl::StatusOr<std::unique_ptr<StatementStats>> Create(const std::string& conninfo);

  // Forgets what was counted so far (call when a window opens).
  void Reset();
  // Markdown table of the `top` statements by total (plan + execution)
  // time since Reset, with per-link figures for `links` created.
  std::string Table(int top, int64_t links);

 private:
  using ConnPtr = std::unique_ptr<PGconn, void (*)(PGconn*)>;
  explicit StatementStats(ConnPtr conn) : conn_(std::move(conn)) {}
  ConnPtr conn_;
};

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_PG_DIAGNOSTICS_H_
