// edge_bench's parts (edge_bench_main.cc says what it measures): its
// Config, the Fixture every phase shares (a private PostgreSQL, the
// shorten-service, a work directory with the Lua script and the code
// files), the helpers the phases share, and one entry point per phase, each
// in its own file: RunCached (cached_phase.cc), RunUncached
// (uncached_phase.cc), RunMemory (memory_phase.cc). Run (edge_bench.cc) sets
// the fixture up, runs the phases in the order above and prints the report.
//
// Progress goes to stderr, the Markdown report to stdout. Single-threaded:
// one phase at a time, each stops the edges and nginx it started.
#ifndef SHORTENER_TESTS_BENCH_EDGE_EDGE_BENCH_H_
#define SHORTENER_TESTS_BENCH_EDGE_EDGE_BENCH_H_

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tests/bench/edge/report.h"
#include "tests/support/edge_process.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

namespace shortener::bench::edge {

// The flags, validated (edge_bench_main.cc, ConfigFromFlags).
struct Config {
  std::vector<std::string> phases;
  int seconds = 10, rounds = 5, rounds_threads2 = 3, uncached_rounds = 3;
  int connections = 64, warmup_seconds = 1, server_cpu = 0, load_cpu = 1;
  int wrk_threads = 2, pgbench_threads = 2;
  int64_t uncached_links = 400000, memory_entries = 1000000;
  std::vector<std::string> edge_flags, service_flags;
  std::string command;
  bool Has(const std::string& phase) const {
    return std::find(phases.begin(), phases.end(), phase) != phases.end();
  }
};

// What every phase shares.
struct Fixture {
  std::unique_ptr<testing::PgCluster> pg;
  std::unique_ptr<testing::ServiceProcess> service;
  std::string work_dir;  // scripts, code files, logs
  pid_t postmaster = 0;
  std::vector<std::string> codes;  // uncached / memory links, creation order
};

// The whole run: SetUp, the phases `c` names, the report on stdout.
absl::Status Run(const Config& c);

// Starts the cluster and the service, makes the work directory and writes
// each_code_once.lua into it: the wrk script of the uncached and memory
// phases (every request a code not asked for before).
absl::Status SetUp(const Config& c, Fixture& f);

// The cached comparison against nginx: `pinned`, the edge --threads=1 and
// nginx with one worker on c.server_cpu (report.pinned, and the idle RSS of
// that edge in report.memory); else --threads=2 against two workers,
// neither pinned (report.threads2).
absl::Status RunCached(const Config& c, Fixture& f, bool pinned, Report& report);

// c.uncached_rounds rounds of misses through a fresh edge against pgbench's
// primary-key SELECT (report.uncached).
absl::Status RunUncached(const Config& c, Fixture& f, Report& report);

// The edge's RSS idle and after c.memory_entries distinct codes
// (report.memory).
absl::Status RunMemory(const Config& c, Fixture& f, Report& report);

// Starts a redirect-edge against the fixture's service with `flags` and
// then c.edge_flags, under `launcher` (e.g. taskset) when given.
absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> StartEdge(
    const Config& c, Fixture& f, std::vector<std::string> flags,
    std::vector<std::string> launcher = {});

// The command line StartEdge runs, for the report (ports and paths elided).
std::string EdgeCommand(const Config& c, const std::vector<std::string>& flags,
                        const std::vector<std::string>& launcher = {});

// The edge flags of the uncached and memory phases for `entries` distinct
// codes: a cache with room for all of them, nothing expiring mid-run.
std::vector<std::string> UncachedEdgeFlags(int64_t entries);

// Creates links until f.codes holds `count`, then VACUUM ANALYZE +
// CHECKPOINT so that neither autovacuum nor a checkpoint runs during the
// measured windows. Adds what it created to report.creation.
absl::Status EnsureLinks(const Config& c, Fixture& f, int64_t count, Report& report);

// One code per line, for each_code_once.lua.
absl::Status WriteCodes(const std::vector<std::string>& codes, const std::string& path);

// Lines of `label`'s log that look like trouble, and whether it still runs.
void CollectEdgeProblems(testing::EdgeProcess& edge, const std::string& label,
                         std::vector<std::string>* problems);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_EDGE_BENCH_H_
