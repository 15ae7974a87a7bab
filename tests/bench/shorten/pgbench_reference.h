// The reference the Shorten targets are ratios of: pgbench running a
// one-row-INSERT-per-transaction script against the same cluster, with as
// many clients as the gRPC load has calls in flight. The row is shaped like a
// link (sequence id, URL, SHA-256 of the URL computed by the server, owner,
// create time), so the reference pays what one durable link insert pays.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_PGBENCH_REFERENCE_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_PGBENCH_REFERENCE_H_

#include <string>

#include "absl/status/statusor.h"
#include "tests/bench/common/pgbench.h"
#include "tests/bench/shorten/resource_probe.h"

namespace shortener::bench {

struct PgbenchOptions {
  PgbenchRun run;  // everything but the script, which is ours
};

struct PgbenchResult {
  PgbenchReport report;     // tps, latency, command
  ResourceDelta resources;  // the whole pgbench run, connections included
};

// Creates the bench table the script inserts into (dropping an old one).
absl::Status CreatePgbenchTable(ResourceProbe& probe);

// Runs pgbench once with the INSERT script; see RunPgbenchScript.
absl::StatusOr<PgbenchResult> RunPgbench(const PgbenchOptions& options, ResourceProbe& probe);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_PGBENCH_REFERENCE_H_
