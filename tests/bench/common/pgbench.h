// pgbench as the reference of a benchmark: one custom script, a fixed
// number of clients for a fixed time, tps and average latency read from its
// report. The edge's uncached redirects are a ratio of pgbench running
// Resolve's SELECT (tests/bench/edge/pg_reference.h), Shorten's of pgbench
// running a link-shaped INSERT (tests/bench/shorten/pgbench_reference.h).
#ifndef SHORTENER_TESTS_BENCH_COMMON_PGBENCH_H_
#define SHORTENER_TESTS_BENCH_COMMON_PGBENCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::bench {

struct PgbenchRun {
  std::string pgbench = "/usr/lib/postgresql/15/bin/pgbench";
  std::string socket_dir;  // -h
  int port = 5432;         // -p
  std::string user;        // -U: the cluster's owner
  std::string dbname = "postgres";
  int clients = 64;  // -c
  int threads = 2;   // -j
  int seconds = 10;  // -T
  // -M: "simple" (pgbench's default), "extended" or "prepared" (as the
  // service runs its statements).
  std::string protocol = "simple";
  std::string script;                     // the transaction script (-f)
  std::string script_name = "bench.sql";  // its file name in work_dir
  std::string work_dir;                   // script and log go here (must exist)
};

struct PgbenchReport {
  double tps = 0;             // "tps = X (without initial connection time)"
  double latency_avg_ms = 0;  // "latency average = X ms"
  std::string command;        // as run, for the report
};

// Runs pgbench once, waiting at most `seconds` + 120 s; INTERNAL with the
// tail of its output when it fails or its report lacks a figure.
absl::StatusOr<PgbenchReport> RunPgbenchScript(const PgbenchRun& run);

// tps and average latency from pgbench's report (its text), INTERNAL naming
// the figure that is missing.
absl::StatusOr<PgbenchReport> ParsePgbenchOutput(absl::string_view output);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_COMMON_PGBENCH_H_
