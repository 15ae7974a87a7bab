// The results of one edge_bench run and their markdown rendering for
// docs/benchmarks.md. Each cached comparison holds one ServerRun per round
// for each server; tables show per-figure medians over the rounds and every
// round's figures below them.
#ifndef SHORTENER_TESTS_BENCH_EDGE_REPORT_H_
#define SHORTENER_TESTS_BENCH_EDGE_REPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shortener::bench::edge {

// One wrk run against one server.
struct ServerRun {
  double requests_per_s = 0;
  int64_t requests = 0;
  double p50_ms = 0, p99_ms = 0;
  double server_cpu_s = 0;  // the server's utime + stime over the run
  double wrk_cpu_s = 0;
  std::vector<double> cpu_busy;  // per CPU, 0..1
  double window_s = 0;           // wall time the samples span
  // Edge only: responses by status over the run (/metrics deltas, the
  // driver's own scrape removed); -1 counts when not read.
  int64_t responses_302 = -1;
  int64_t responses_other = -1;
  std::string other_statuses;  // "404: 3, 503: 1" when responses_other > 0
  int64_t wrk_errors = 0;      // non-2xx/3xx + socket errors
  // CPUs' worth of work by anything but the server and wrk (other users of
  // the machine, the kernel's own threads): the noise of the run.
  double OtherCpus() const {
    double busy = 0;
    for (double b : cpu_busy) busy += b;
    return window_s > 0 ? busy - (server_cpu_s + wrk_cpu_s) / window_s : 0;
  }
  double CpuUsPerRequest() const {
    return requests > 0 ? server_cpu_s * 1e6 / static_cast<double>(requests) : 0;
  }
};

struct CachedComparison {
  std::string title;      // "edge --threads=1 vs nginx worker_processes 1"
  std::string setup;      // how each side ran (paragraph)
  std::string edge_name;  // row labels
  std::string nginx_name;
  bool has_targets = false;            // the pinned comparison has the targets
  std::vector<ServerRun> edge, nginx;  // one per round, same order
  std::string wrk_command;             // with the edge's URL
  std::string edge_command;            // edge's flags
};

struct UncachedRound {
  // pgbench
  double pgbench_tps = 0;
  double pgbench_latency_ms = 0;
  double pgbench_pg_cpu_s = 0, pgbench_client_cpu_s = 0, pgbench_seconds = 0;
  std::vector<double> pgbench_cpu_busy;
  double pgbench_window_s = 0;
  // the edge
  ServerRun edge;
  double service_cpu_s = 0, edge_pg_cpu_s = 0;
  int64_t misses = 0, hits = 0, coalesced = 0, resolves = 0;
  std::string resolve_outcomes;  // "ok: N, ..." from edge_resolve_total
  // Resolve latency quantiles from the edge's histogram (bucket upper bounds).
  double resolve_p50_ms = 0, resolve_p99_ms = 0;
  int64_t exhausted = 0;  // requests the Lua script had no fresh code for
};

struct UncachedResult {
  std::vector<UncachedRound> rounds;
  int64_t codes = 0;  // distinct codes available to each round (shuffled)
  int64_t id_min = 0, id_max = 0;
  std::string table_sizes;  // "links 80 MB, links_pkey 9 MB, shared_buffers 64MB"
  std::string pgbench_command, pgbench_script;
  std::string wrk_command, edge_command;
  int clients = 0;
};

struct MemoryResult {
  int64_t entries_requested = 0;
  int64_t idle_rss_kb = 0;           // fresh edge, before any request
  int64_t idle_rss_threads1_kb = 0;  // the --threads=1 edge of the cached runs, at start
  int64_t full_rss_kb = 0, full_hwm_kb = 0;
  int64_t cache_entries = 0, cache_bytes = 0, evictions = 0;
  int64_t responses_302 = 0, responses_other = 0;
  std::string other_statuses;
  double fill_seconds = 0;
  std::string edge_command;
};

struct LinkCreation {
  int64_t links = 0;
  double seconds = 0;
};

struct Report {
  std::string command;
  std::string machine;   // CPU model, nproc, kernel
  std::string versions;  // nginx, wrk, postgres
  std::optional<CachedComparison> pinned, threads2;
  std::string nginx_config;    // the pinned one, for the record
  std::string response_sizes;  // bytes of one response of each server
  std::optional<LinkCreation> creation;
  std::optional<UncachedResult> uncached;
  std::optional<MemoryResult> memory;
  std::vector<std::string> problems;  // edge log lines, non-302s, crashes
  double total_seconds = 0;
};

std::string FormatReport(const Report& report);

double Median(std::vector<double> v);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_REPORT_H_
