// edge_bench: the redirect edge's three figures from docs/benchmarks.md, in
// one run, on 127.0.0.1, against references measured in the same run:
//  1. cached redirects: the edge (--threads=1, pinned to one CPU) against
//     Debian's nginx (one worker, `return 302`, same CPU), both driven by
//     the same wrk command pinned to the other CPU, alternating rounds;
//     requests/s, p99, server CPU per request. Then the edge at --threads=2
//     against nginx with two workers (neither pinned: wrk shares a CPU).
//  2. uncached redirects: every request a code in the database but not in
//     the edge's cache, against pgbench's primary-key SELECT on the same
//     database with the same client count.
//  3. memory: the edge's RSS idle and with 1 M cached entries.
// It starts a private PostgreSQL, the shorten-service and the edge of this
// build tree, and nginx, and stops each by PID. Markdown for
// docs/benchmarks.md goes to stdout, progress to stderr. Build in Release:
// see run.sh. The phases are in cached_phase.cc, uncached_phase.cc and
// memory_phase.cc, what they share in edge_bench.h.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/edge/edge_bench.h"

ABSL_FLAG(std::vector<std::string>, phases,
          std::vector<std::string>({"cached", "threads2", "uncached", "memory"}),
          "which measurements to run: cached (edge --threads=1 vs nginx, pinned), threads2 "
          "(--threads=2 vs nginx 2 workers), uncached (misses vs pgbench), memory");
ABSL_FLAG(int, seconds, 10, "length of every measured wrk / pgbench window");
ABSL_FLAG(int, rounds, 5, "rounds of the pinned cached comparison (alternating order; medians)");
ABSL_FLAG(int, rounds_threads2, 3, "rounds of the --threads=2 cached comparison");
ABSL_FLAG(int, uncached_rounds, 3, "rounds of the uncached comparison (each with a fresh edge)");
ABSL_FLAG(int, connections, 64,
          "wrk connections (-c) in every run; also pgbench's client count (keep it below the "
          "private cluster's max_connections, 200, minus the service's pool)");
ABSL_FLAG(int, warmup_seconds, 1, "wrk warm-up per server before the cached rounds");
ABSL_FLAG(int, server_cpu, 0, "CPU the servers are pinned to in the cached comparison");
ABSL_FLAG(int, load_cpu, 1, "CPU wrk is pinned to in the cached comparisons");
ABSL_FLAG(int, wrk_threads, 2, "wrk threads (-t) of the uncached and memory runs (unpinned)");
ABSL_FLAG(int, pgbench_threads, 2, "pgbench -j");
ABSL_FLAG(int64_t, uncached_links, 400000,
          "links in the database during the uncached runs (more are created if a round could "
          "run out of codes); pgbench draws ids from all of them");
ABSL_FLAG(int64_t, memory_entries, 1000000,
          "codes requested through a fresh edge for the memory figure; 0 skips the memory run");
ABSL_FLAG(std::string, edge_flags, "--record_clicks=false",
          "extra redirect-edge flags for every edge, space-separated, e.g. \"--access_log\". "
          "By default the edges record no clicks: nginx logs nothing either, and the service "
          "and PostgreSQL ingesting clicks would share the CPUs with wrk and pgbench (what "
          "recording costs is tests/bench/clicks' figure)");
ABSL_FLAG(std::string, service_flags, "", "extra shorten-service flags, space-separated");

namespace shortener::bench::edge {
namespace {

absl::StatusOr<Config> ConfigFromFlags(const std::string& command) {
  Config c;
  c.phases = absl::GetFlag(FLAGS_phases);
  c.seconds = absl::GetFlag(FLAGS_seconds);
  c.rounds = absl::GetFlag(FLAGS_rounds);
  c.rounds_threads2 = absl::GetFlag(FLAGS_rounds_threads2);
  c.uncached_rounds = absl::GetFlag(FLAGS_uncached_rounds);
  c.connections = absl::GetFlag(FLAGS_connections);
  c.warmup_seconds = absl::GetFlag(FLAGS_warmup_seconds);
  c.server_cpu = absl::GetFlag(FLAGS_server_cpu);
  c.load_cpu = absl::GetFlag(FLAGS_load_cpu);
  c.wrk_threads = absl::GetFlag(FLAGS_wrk_threads);
  c.pgbench_threads = absl::GetFlag(FLAGS_pgbench_threads);
  c.uncached_links = absl::GetFlag(FLAGS_uncached_links);
  c.memory_entries = absl::GetFlag(FLAGS_memory_entries);
  c.edge_flags = absl::StrSplit(absl::GetFlag(FLAGS_edge_flags), ' ', absl::SkipEmpty());
  c.service_flags = absl::StrSplit(absl::GetFlag(FLAGS_service_flags), ' ', absl::SkipEmpty());
  c.command = command;
  for (const std::string& p : c.phases) {
    if (p != "cached" && p != "threads2" && p != "uncached" && p != "memory") {
      return absl::InvalidArgumentError(absl::StrCat("--phases: unknown phase ", p));
    }
  }
  if (c.memory_entries <= 0) {
    c.phases.erase(std::remove(c.phases.begin(), c.phases.end(), "memory"), c.phases.end());
  }
  if (c.seconds < 1 || c.rounds < 1 || c.rounds_threads2 < 1 || c.uncached_rounds < 1 ||
      c.connections < 1 || c.warmup_seconds < 0 || c.wrk_threads < 1 || c.pgbench_threads < 1 ||
      c.uncached_links < 1000) {
    return absl::InvalidArgumentError(
        "--seconds, --rounds*, --connections, --wrk_threads, --pgbench_threads must be >= 1, "
        "--uncached_links >= 1000");
  }
  return c;
}

}  // namespace
}  // namespace shortener::bench::edge

int main(int argc, char** argv) {
  return shortener::bench::BenchmarkMain<shortener::bench::edge::Config>(
      argc, argv, "edge_bench",
      "edge_bench: redirect-edge cached (vs nginx) and uncached (vs pgbench) rates, memory",
      shortener::bench::edge::ConfigFromFlags, shortener::bench::edge::Run);
}
