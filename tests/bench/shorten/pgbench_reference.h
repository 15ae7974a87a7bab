// The reference the Shorten targets are ratios of: pgbench running a
// one-row-INSERT-per-transaction script against the same cluster, with as
// many clients as the gRPC load has calls in flight. The row is shaped like a
// link (sequence id, URL, SHA-256 of the URL computed by the server, owner,
// create time), so the reference pays what one durable link insert pays.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_PGBENCH_REFERENCE_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_PGBENCH_REFERENCE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/bench/shorten/resource_probe.h"

namespace shortener::bench {

struct PgbenchOptions {
  std::string pgbench = "/usr/lib/postgresql/15/bin/pgbench";
  std::string socket_dir;  // -h
  int port = 5432;         // -p
  std::string user;        // -U
  std::string dbname = "postgres";
  int clients = 64;  // -c
  int threads = 2;   // -j
  int seconds = 10;  // -T
  // -M. "simple" is pgbench's default and what the targets were set
  // against; "prepared" (as the service does) gives a ~1.5x higher rate.
  std::string protocol = "simple";
  std::string work_dir;  // script and log go here (must exist)
};

struct PgbenchResult {
  double tps = 0;             // "tps = X (without initial connection time)"
  double latency_avg_ms = 0;  // "latency average = X ms"
  ResourceDelta resources;    // the whole pgbench run, connections included
  std::string command;        // as run, for the report
};

// Creates the bench table the script inserts into (dropping an old one).
absl::Status CreatePgbenchTable(ResourceProbe& probe);

// Runs pgbench once; INTERNAL with the tail of its output if it fails or
// prints no tps line.
absl::StatusOr<PgbenchResult> RunPgbench(const PgbenchOptions& options, ResourceProbe& probe);

// Extracts tps and average latency from pgbench's report (its text, not a
// file), INTERNAL when either is missing.
absl::StatusOr<PgbenchResult> ParsePgbenchOutput(absl::string_view output);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_PGBENCH_REFERENCE_H_
