// The uncached phase of edge_bench: every request a code in the database
// but not in a fresh edge's cache, against pgbench's primary-key SELECT on
// the same database with the same client count (RunUncached in
// edge_bench.h).
#include <sys/types.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/bench/common/pgbench.h"
#include "tests/bench/edge/edge_bench.h"
#include "tests/bench/edge/metrics_scrape.h"
#include "tests/bench/edge/pg_reference.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/bench/edge/wrk_runner.h"

namespace shortener::bench::edge {
namespace {

// One pgbench window of the primary-key SELECT over `ids`, into `r` (its
// command and script into `u`).
absl::Status MeasurePgbenchSelect(const Config& c, const Fixture& f, const IdRange& ids, int round,
                                  UncachedRound& r, UncachedResult& u) {
  PgbenchRun po;
  po.socket_dir = f.pg->socket_dir();
  po.port = f.pg->port();
  po.user = f.pg->user();
  po.clients = c.connections;
  po.threads = c.pgbench_threads;
  po.seconds = c.seconds;
  po.protocol = "prepared";  // as the service runs links_get_by_id
  po.work_dir = f.work_dir;
  const double pg0 = ProcessTreeCpuSeconds(f.postmaster);
  const double cl0 = ReapedChildrenCpuSeconds();
  const CpuSample cpus0 = SampleCpus();
  const absl::Time t0 = absl::Now();
  absl::StatusOr<PgbenchReport> p = RunPgbenchSelect(po, ids);
  r.pgbench_window_s = absl::ToDoubleSeconds(absl::Now() - t0);
  const CpuSample cpus1 = SampleCpus();
  if (!p.ok()) return p.status();
  r.pgbench_pg_cpu_s = ProcessTreeCpuSeconds(f.postmaster) - pg0;
  r.pgbench_client_cpu_s = ReapedChildrenCpuSeconds() - cl0;
  r.pgbench_tps = p->tps;
  r.pgbench_latency_ms = p->latency_avg_ms;
  r.pgbench_seconds = c.seconds;
  r.pgbench_cpu_busy = BusyFractions(cpus0, cpus1);
  u.pgbench_command = p->command;
  u.pgbench_script = PgbenchSelectScript(ids);
  std::fprintf(stderr, "round %d pgbench: %.0f tps, avg %.2f ms\n", round + 1, p->tps,
               p->latency_avg_ms);
  return absl::OkStatus();
}

// The edge's figures of one window from wrk's result and two /metrics
// scrapes around it; fails when the Lua script reported nothing.
absl::Status ReadEdgeWindow(const Scrape& before, const Scrape& after, const WrkResult& wr,
                            UncachedRound& r) {
  r.edge.requests_per_s = wr.requests_per_s;
  r.edge.requests = wr.requests;
  r.edge.p50_ms = wr.p50_ms;
  r.edge.p99_ms = wr.p99_ms;
  r.edge.wrk_cpu_s = wr.wrk_cpu_s;
  r.edge.wrk_errors = wr.non_2xx_3xx + wr.socket_errors;
  ResponseDeltas(before, after, 0, &r.edge.responses_302, &r.edge.responses_other,
                 &r.edge.other_statuses);
  r.misses = Delta(before, after, "edge_cache_misses_total");
  r.hits = Delta(before, after, "edge_cache_hits_total");
  r.coalesced = Delta(before, after, "edge_cache_coalesced_total");
  r.resolves = Delta(before, after, "edge_resolve_duration_seconds_count");
  std::vector<std::string> outcomes;
  for (const auto& [name, value] : after) {
    if (!absl::StartsWith(name, "edge_resolve_total{")) continue;
    const int64_t d = static_cast<int64_t>(value - Value(before, name));
    if (d == 0) continue;
    std::string label = name.substr(name.find('"') + 1);
    label = label.substr(0, label.find('"'));
    outcomes.push_back(absl::StrCat(label, ": ", d));
  }
  r.resolve_outcomes = absl::StrJoin(outcomes, ", ");
  r.resolve_p50_ms = HistogramQuantileMs(before, after, "edge_resolve_duration_seconds", 0.5);
  r.resolve_p99_ms = HistogramQuantileMs(before, after, "edge_resolve_duration_seconds", 0.99);
  int64_t exhausted = 0;
  auto it = wr.script_values.find("exhausted");
  if (it == wr.script_values.end() || !absl::SimpleAtoi(it->second, &exhausted)) {
    return absl::InternalError(
        absl::StrCat("the Lua script reported nothing; wrk output:\n", wr.output));
  }
  r.exhausted = exhausted;
  return absl::OkStatus();
}

void PrintEdgeWindow(int round, const UncachedRound& r) {
  std::fprintf(stderr,
               "round %d edge: %.0f req/s, p50 %.2f p99 %.2f ms; CPU µs/req edge %.1f service "
               "%.1f postgres %.1f wrk %.1f; 302s %lld other %lld %s; misses %lld hits %lld "
               "coalesced %lld resolves %lld (%s, p50 <= %.2f ms, p99 <= %.2f ms); "
               "exhausted %lld\n",
               round + 1, r.edge.requests_per_s, r.edge.p50_ms, r.edge.p99_ms,
               r.edge.server_cpu_s * 1e6 / std::max<double>(1, r.edge.requests),
               r.service_cpu_s * 1e6 / std::max<double>(1, r.edge.requests),
               r.edge_pg_cpu_s * 1e6 / std::max<double>(1, r.edge.requests),
               r.edge.wrk_cpu_s * 1e6 / std::max<double>(1, r.edge.requests),
               static_cast<long long>(r.edge.responses_302),
               static_cast<long long>(r.edge.responses_other), r.edge.other_statuses.c_str(),
               static_cast<long long>(r.misses), static_cast<long long>(r.hits),
               static_cast<long long>(r.coalesced), static_cast<long long>(r.resolves),
               r.resolve_outcomes.c_str(), r.resolve_p50_ms, r.resolve_p99_ms,
               static_cast<long long>(r.exhausted));
}

// One wrk window through a fresh edge, every request a code from
// `codes_path` not asked for before, into `r` (the commands into `u`).
absl::Status MeasureEdgeMisses(const Config& c, Fixture& f, const std::string& codes_path,
                               int round, UncachedRound& r, UncachedResult& u, Report& report) {
  const std::vector<std::string> flags = UncachedEdgeFlags(static_cast<int64_t>(f.codes.size()));
  absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> edge = StartEdge(c, f, flags);
  if (!edge.ok()) return edge.status();
  const pid_t edge_pid = (*edge)->process().pid();
  const pid_t service_pid = f.service->process().pid();
  u.edge_command = EdgeCommand(c, flags);
  WrkOptions w;
  w.threads = c.wrk_threads;
  w.connections = c.connections;
  w.seconds = c.seconds;
  w.url = absl::StrCat("http://127.0.0.1:", (*edge)->port(), "/");
  w.script = f.work_dir + "/each_code_once.lua";
  w.script_args = {codes_path, std::to_string(c.wrk_threads)};
  w.log_path = f.work_dir + "/wrk.log";
  const Scrape before = ScrapeMetrics((*edge)->admin_port());
  const double e0 = ProcessCpuSeconds(edge_pid);
  const double s0 = ProcessCpuSeconds(service_pid);
  const double pg0 = ProcessTreeCpuSeconds(f.postmaster);
  const CpuSample cpus0 = SampleCpus();
  const absl::Time t0 = absl::Now();
  absl::StatusOr<WrkResult> wr = RunWrk(w);
  r.edge.window_s = absl::ToDoubleSeconds(absl::Now() - t0);
  const CpuSample cpus1 = SampleCpus();
  r.edge.server_cpu_s = ProcessCpuSeconds(edge_pid) - e0;
  r.service_cpu_s = ProcessCpuSeconds(service_pid) - s0;
  r.edge_pg_cpu_s = ProcessTreeCpuSeconds(f.postmaster) - pg0;
  if (!wr.ok()) return wr.status();
  const Scrape after = ScrapeMetrics((*edge)->admin_port());
  r.edge.cpu_busy = BusyFractions(cpus0, cpus1);
  if (absl::Status st = ReadEdgeWindow(before, after, *wr, r); !st.ok()) return st;
  u.wrk_command = wr->command;
  PrintEdgeWindow(round, r);
  if (r.edge.responses_other > 0) {
    report.problems.push_back(absl::StrCat("uncached round ", round + 1, ": ",
                                           r.edge.responses_other, " non-302 responses (",
                                           r.edge.other_statuses, ")"));
  }
  CollectEdgeProblems(**edge, absl::StrCat("uncached round ", round + 1), &report.problems);
  return absl::OkStatus();
}

// One round: pgbench and the edge, in the order `pgbench_first` says.
absl::StatusOr<UncachedRound> MeasureUncachedRound(const Config& c, Fixture& f, const IdRange& ids,
                                                   const std::string& codes_path,
                                                   bool pgbench_first, UncachedResult& u,
                                                   Report& report, int round) {
  UncachedRound r;
  auto run_pgbench = [&] { return MeasurePgbenchSelect(c, f, ids, round, r, u); };
  auto run_edge = [&] { return MeasureEdgeMisses(c, f, codes_path, round, r, u, report); };
  if (pgbench_first) {
    if (absl::Status st = run_pgbench(); !st.ok()) return st;
    if (absl::Status st = run_edge(); !st.ok()) return st;
  } else {
    if (absl::Status st = run_edge(); !st.ok()) return st;
    if (absl::Status st = run_pgbench(); !st.ok()) return st;
  }
  return r;
}

}  // namespace

absl::Status RunUncached(const Config& c, Fixture& f, Report& report) {
  std::fprintf(stderr, "== uncached redirects\n");
  // Its own links, before the memory run's (the ratio depends on the
  // table's size: see the report).
  int64_t wanted = c.uncached_links;
  UncachedResult u;
  u.clients = c.connections;
  for (int round = 0; round < c.uncached_rounds; ++round) {
    for (int attempt = 0;; ++attempt) {
      if (absl::Status st = EnsureLinks(c, f, wanted, report); !st.ok()) return st;
      absl::StatusOr<IdRange> ids = LinkIdRange(f.pg->ConnInfo());
      if (!ids.ok()) return ids.status();
      // Random order, like pgbench's random ids (creation order would walk
      // the table and its index sequentially).
      std::vector<std::string> shuffled = f.codes;
      std::mt19937_64 rng(42 + round);
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      const std::string codes_path = f.work_dir + "/uncached_codes.txt";
      if (absl::Status st = WriteCodes(shuffled, codes_path); !st.ok()) return st;
      u.codes = static_cast<int64_t>(f.codes.size());
      u.id_min = ids->min;
      u.id_max = ids->max;
      absl::StatusOr<std::vector<std::string>> sizes = QueryRow(
          f.pg->ConnInfo(),
          "SELECT pg_size_pretty(pg_table_size('links')), "
          "pg_size_pretty(pg_relation_size('links_pkey')), current_setting('shared_buffers')");
      if (!sizes.ok()) return sizes.status();
      u.table_sizes = absl::StrCat("table links ", (*sizes)[0], ", its primary key ", (*sizes)[1],
                                   ", shared_buffers ", (*sizes)[2]);
      absl::StatusOr<UncachedRound> r =
          MeasureUncachedRound(c, f, *ids, codes_path, round % 2 == 0, u, report, round);
      if (!r.ok()) return r.status();
      if (r->exhausted == 0) {
        u.rounds.push_back(*std::move(r));
        break;
      }
      if (attempt >= 2) {
        return absl::InternalError("uncached run: still ran out of codes after growing them");
      }
      // Ran out: make room for 1.5x what this round asked for, redo it.
      wanted = static_cast<int64_t>(1.5 * r->edge.requests_per_s * c.seconds) + 100000;
      std::fprintf(stderr, "ran out of codes (%lld requests without one): growing to %lld\n",
                   static_cast<long long>(r->exhausted), static_cast<long long>(wanted));
    }
  }
  report.uncached = std::move(u);
  return absl::OkStatus();
}

}  // namespace shortener::bench::edge
