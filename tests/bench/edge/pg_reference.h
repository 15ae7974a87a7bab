// The database side of the uncached-redirect benchmark: SQL helpers on the
// private cluster, and the reference the edge's miss rate is a ratio of:
// pgbench running the primary-key SELECT that Resolve runs (the columns of
// lib/store/pg/queries.h's links_get_by_id) against the same links table,
// with random ids in the range the edge's codes cover.
#ifndef SHORTENER_TESTS_BENCH_EDGE_PG_REFERENCE_H_
#define SHORTENER_TESTS_BENCH_EDGE_PG_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/bench/common/pgbench.h"

namespace shortener::bench::edge {

// Runs SQL (one or more statements, no result) on a fresh connection.
absl::Status ExecSql(const std::string& conninfo, const std::string& sql);

// The first row of a query's result, as text; INTERNAL without one.
absl::StatusOr<std::vector<std::string>> QueryRow(const std::string& conninfo,
                                                  const std::string& sql);

struct IdRange {
  int64_t min = 0, max = 0, count = 0;
};
absl::StatusOr<IdRange> LinkIdRange(const std::string& conninfo);

// The script pgbench runs (shown in the report).
std::string PgbenchSelectScript(const IdRange& ids);

// Runs pgbench once with PgbenchSelectScript(ids) (the rest of `run` as
// given); see RunPgbenchScript.
absl::StatusOr<PgbenchReport> RunPgbenchSelect(PgbenchRun run, const IdRange& ids);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_PG_REFERENCE_H_
