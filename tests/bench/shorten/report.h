// Formats the results of one shorten_bench run as markdown for
// docs/benchmarks.md: one table of throughput against the pgbench reference
// (with the targets), one of where the CPU and the commits went, one of the
// service's memory (idle, with idle edges connected, under each load). The
// reference is the row with service_measured = false.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_REPORT_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/bench/shorten/idle_edges.h"
#include "tests/bench/shorten/resource_probe.h"
#include "tests/support/process_probe.h"

namespace shortener::bench {

struct ReportRow {
  std::string name;  // "Shorten, 64 in flight"
  double links_per_s = 0;
  double target_ratio = 0;        // 0: no target (the reference, diagnostics)
  std::string latency;            // "p50 5.1 / p99 12.0 ms" or "avg 7.9 ms"
  std::optional<int64_t> errors;  // nullopt: not applicable (pgbench)
  int64_t ops = 0;                // links (or pgbench rows) in the window
  ResourceDelta resources;        // over the same window
  bool service_measured = true;   // false for pgbench (service idle)
  // Loads: the mean rate of the pgbench runs right before and after this
  // load's window, which its ratio is taken against (0: no reference).
  double reference_tps = 0;
  std::string statements;  // pg_stat_statements table, when asked for
};

struct ReportHeader {
  std::string command;          // how to reproduce
  std::string pgbench_command;  // empty when skipped
  std::string service_flags;    // extra flags given to the service
  std::string pg_settings;      // settings changed on the cluster (ALTER SYSTEM)
  bool fresh_tables = false;    // link tables emptied before every round
  int nproc = 0;
  std::string cpu_model;
  // The service's memory before any load: right after it started (migrated,
  // serving, no call yet), and with idle edges subscribed (none if skipped).
  testing::ProcessMemory service_idle;
  std::optional<IdleEdgesResult> idle_edges;
  // Whether each load's VmHWM is the peak of its window alone (the kernel
  // let us reset it at the window's start) or the peak since the start.
  bool peak_per_window = false;
};

// The whole markdown block: header lines, throughput table, target
// verdicts, cost table. A load's ratio is to its own reference_tps. Every
// round must hold the same rows in the same order; with several rounds each
// row is the round whose ratio was the median, and each target's ratio in
// every round is listed too.
std::string FormatReport(const ReportHeader& header,
                         const std::vector<std::vector<ReportRow>>& rounds);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_REPORT_H_
