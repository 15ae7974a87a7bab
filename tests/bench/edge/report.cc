#include "tests/bench/edge/report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace shortener::bench::edge {
namespace {

template <typename F>
double MedianOf(const std::vector<ServerRun>& runs, F f) {
  std::vector<double> v;
  for (const ServerRun& r : runs) v.push_back(f(r));
  return Median(v);
}

std::string Busy(const std::vector<double>& busy) {
  std::vector<std::string> parts;
  for (double b : busy) parts.push_back(absl::StrFormat("%.0f%%", b * 100));
  return parts.empty() ? "-" : absl::StrJoin(parts, " / ");
}

// Per-CPU busy medians over rounds.
std::vector<double> MedianBusy(const std::vector<ServerRun>& runs) {
  std::vector<double> out;
  if (runs.empty()) return out;
  for (size_t cpu = 0; cpu < runs[0].cpu_busy.size(); ++cpu) {
    std::vector<double> v;
    for (const ServerRun& r : runs) v.push_back(cpu < r.cpu_busy.size() ? r.cpu_busy[cpu] : 0);
    out.push_back(Median(v));
  }
  return out;
}

double WrkUtilisation(const ServerRun& r) {
  const double seconds =
      r.requests_per_s > 0 ? static_cast<double>(r.requests) / r.requests_per_s : 0;
  return seconds > 0 ? r.wrk_cpu_s / seconds : 0;
}

std::string Verdict(bool met) { return met ? "met" : "**missed**"; }

std::string CachedSection(const CachedComparison& c) {
  std::string out = absl::StrCat("### Cached redirects: ", c.title, "\n\n", c.setup, "\n\n");
  const double n_rps = MedianOf(c.nginx, [](const ServerRun& r) { return r.requests_per_s; });
  const double e_rps = MedianOf(c.edge, [](const ServerRun& r) { return r.requests_per_s; });
  const double n_cpu = MedianOf(c.nginx, [](const ServerRun& r) { return r.CpuUsPerRequest(); });
  const double e_cpu = MedianOf(c.edge, [](const ServerRun& r) { return r.CpuUsPerRequest(); });
  const double n_p99 = MedianOf(c.nginx, [](const ServerRun& r) { return r.p99_ms; });
  const double e_p99 = MedianOf(c.edge, [](const ServerRun& r) { return r.p99_ms; });
  const double n_p50 = MedianOf(c.nginx, [](const ServerRun& r) { return r.p50_ms; });
  const double e_p50 = MedianOf(c.edge, [](const ServerRun& r) { return r.p50_ms; });
  absl::StrAppend(&out,
                  "| server | requests/s | p50 | p99 | server CPU µs/request | wrk CPU busy | "
                  "CPU busy (cpu0 / cpu1) | other load (CPUs) |\n"
                  "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n");
  auto row = [&](const std::string& name, const std::vector<ServerRun>& runs, double rps,
                 double p50, double p99, double cpu) {
    absl::StrAppendFormat(
        &out, "| %s | %.0f | %.2f ms | %.2f ms | %.2f | %.0f%% | %s | %.2f |\n", name, rps, p50,
        p99, cpu, MedianOf(runs, [](const ServerRun& r) { return WrkUtilisation(r); }) * 100,
        Busy(MedianBusy(runs)), MedianOf(runs, [](const ServerRun& r) { return r.OtherCpus(); }));
  };
  row(c.nginx_name, c.nginx, n_rps, n_p50, n_p99, n_cpu);
  row(c.edge_name, c.edge, e_rps, e_p50, e_p99, e_cpu);
  const double rps_ratio = n_rps > 0 ? e_rps / n_rps : 0;
  const double cpu_ratio = n_cpu > 0 ? e_cpu / n_cpu : 0;
  absl::StrAppendFormat(
      &out, "| **edge / nginx** | **%.2f×**%s | | %.2f× | **%.2f×**%s | | | |\n", rps_ratio,
      c.has_targets ? absl::StrCat(" (target ≥ 0.9×: ", Verdict(rps_ratio >= 0.9), ")")
                    : std::string(),
      n_p99 > 0 ? e_p99 / n_p99 : 0, cpu_ratio,
      c.has_targets ? absl::StrCat(" (target ≤ 1.1×: ", Verdict(cpu_ratio <= 1.1), ")")
                    : std::string());
  absl::StrAppend(
      &out, "\nMedians over ", c.edge.size(),
      " rounds, each figure on its own. \"other load\": CPUs busy minus the "
      "server's and wrk's CPU over the run (the rest of the machine: noise). Every "
      "round:\n\n"
      "| round | nginx req/s | edge req/s | ratio | nginx µs/req | edge µs/req | ratio | "
      "nginx p99 | edge p99 | edge 302s | edge other statuses | wrk errors (nginx / edge) | "
      "other load (nginx / edge) |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- "
      "|\n");
  for (size_t i = 0; i < c.edge.size() && i < c.nginx.size(); ++i) {
    const ServerRun& n = c.nginx[i];
    const ServerRun& e = c.edge[i];
    absl::StrAppendFormat(&out,
                          "| %d | %.0f | %.0f | %.2f× | %.2f | %.2f | %.2f× | %.2f ms | %.2f ms | "
                          "%d | %s | %d / %d | "
                          "%.2f / %.2f |\n",
                          i + 1, n.requests_per_s, e.requests_per_s,
                          n.requests_per_s > 0 ? e.requests_per_s / n.requests_per_s : 0,
                          n.CpuUsPerRequest(), e.CpuUsPerRequest(),
                          n.CpuUsPerRequest() > 0 ? e.CpuUsPerRequest() / n.CpuUsPerRequest() : 0,
                          n.p99_ms, e.p99_ms, e.responses_302,
                          e.responses_other > 0
                              ? absl::StrCat(e.responses_other, " (", e.other_statuses, ")")
                              : absl::StrCat(e.responses_other),
                          n.wrk_errors, e.wrk_errors, n.OtherCpus(), e.OtherCpus());
  }
  absl::StrAppend(&out, "\nwrk: `", c.wrk_command, "`; edge: `", c.edge_command, "`\n\n");
  return out;
}

std::string UncachedSection(const UncachedResult& u) {
  std::string out = "### Uncached redirects: every request a code the edge has not cached\n\n";
  absl::StrAppendFormat(
      &out,
      "%d links (ids %d..%d; %s) created through BatchShorten, VACUUM ANALYZE and CHECKPOINT, then "
      "per round (alternating order): pgbench's primary-key SELECT of the columns Resolve reads, "
      "random ids over the same range, %d clients; and a fresh edge (empty cache) driven by wrk "
      "with %d connections, a Lua script giving every request the next code of a shuffled list "
      "(no code twice, never wrapping). Everything shares the machine's CPUs (nothing "
      "pinned): edge, shorten-service, PostgreSQL and wrk; pgbench and PostgreSQL.\n\n",
      u.codes, u.id_min, u.id_max, u.table_sizes, u.clients, u.clients);
  std::vector<double> tps, rps, lat, p50, p99, pg_cpu_pgb, cl_cpu_pgb, edge_cpu, svc_cpu, pg_cpu,
      wrk_cpu, busy_pgb, busy_edge, other_pgb, other_edge;
  auto sum = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  };
  for (const UncachedRound& r : u.rounds) {
    tps.push_back(r.pgbench_tps);
    lat.push_back(r.pgbench_latency_ms);
    const double pgb_ops = r.pgbench_tps * r.pgbench_seconds;
    pg_cpu_pgb.push_back(pgb_ops > 0 ? r.pgbench_pg_cpu_s * 1e6 / pgb_ops : 0);
    cl_cpu_pgb.push_back(pgb_ops > 0 ? r.pgbench_client_cpu_s * 1e6 / pgb_ops : 0);
    busy_pgb.push_back(sum(r.pgbench_cpu_busy));
    rps.push_back(r.edge.requests_per_s);
    p50.push_back(r.edge.p50_ms);
    p99.push_back(r.edge.p99_ms);
    const double n = static_cast<double>(std::max<int64_t>(r.edge.requests, 1));
    edge_cpu.push_back(r.edge.server_cpu_s * 1e6 / n);
    svc_cpu.push_back(r.service_cpu_s * 1e6 / n);
    pg_cpu.push_back(r.edge_pg_cpu_s * 1e6 / n);
    wrk_cpu.push_back(r.edge.wrk_cpu_s * 1e6 / n);
    busy_edge.push_back(sum(r.edge.cpu_busy));
    // The machine's busy CPUs minus what the measured processes used.
    other_pgb.push_back(r.pgbench_window_s > 0
                            ? sum(r.pgbench_cpu_busy) -
                                  (r.pgbench_pg_cpu_s + r.pgbench_client_cpu_s) / r.pgbench_window_s
                            : 0);
    other_edge.push_back(r.edge.window_s > 0
                             ? sum(r.edge.cpu_busy) - (r.edge.server_cpu_s + r.service_cpu_s +
                                                       r.edge_pg_cpu_s + r.edge.wrk_cpu_s) /
                                                          r.edge.window_s
                             : 0);
  }
  const double m_tps = Median(tps), m_rps = Median(rps);
  const double ratio = m_tps > 0 ? m_rps / m_tps : 0;
  absl::StrAppend(&out,
                  "| run | per second | latency | server-side CPU µs/request | load generator CPU "
                  "µs/request | CPUs busy (of 2) | other load (CPUs) |\n"
                  "| --- | ---: | --- | --- | ---: | ---: | ---: |\n");
  absl::StrAppendFormat(&out,
                        "| pgbench PK SELECT, %d clients, -M prepared | %.0f | avg %.2f ms | "
                        "postgres %.1f | %.1f | %.2f | %.2f |\n",
                        u.clients, m_tps, Median(lat), Median(pg_cpu_pgb), Median(cl_cpu_pgb),
                        Median(busy_pgb), Median(other_pgb));
  absl::StrAppendFormat(&out,
                        "| edge, every request a miss, %d connections | %.0f | p50 %.2f / p99 %.2f "
                        "ms | edge %.1f + service %.1f + postgres %.1f | %.1f | %.2f | %.2f |\n",
                        u.clients, m_rps, Median(p50), Median(p99), Median(edge_cpu),
                        Median(svc_cpu), Median(pg_cpu), Median(wrk_cpu), Median(busy_edge),
                        Median(other_edge));
  absl::StrAppendFormat(&out,
                        "| **edge / pgbench** | **%.2f×** (target ≥ 0.5×: %s) | | | | | |\n\n",
                        ratio, Verdict(ratio >= 0.5));
  absl::StrAppend(&out,
                  "The ratio depends on the table's size against PostgreSQL's buffer cache: "
                  "pgbench's cost is nearly all PostgreSQL, so lookups that miss shared_buffers "
                  "(and come from the OS page cache) slow it down, while the edge's rate is "
                  "bounded by the edge and the service. `--uncached_links` sets the size.\n\n");
  absl::StrAppend(&out,
                  "wrk's CPU includes loading its share of the code list into Lua before the "
                  "window opens; \"other load\" is the machine's busy CPUs minus the measured "
                  "processes' CPU over each run (noise from other users).\n\n");
  absl::StrAppend(
      &out, "Medians over ", u.rounds.size(),
      " rounds. Every round, with the edge's /metrics deltas proving the requests were "
      "misses answered 302:\n\n"
      "| round | pgbench tps | edge req/s | ratio | wrk requests | 302s | other statuses | "
      "cache misses | cache hits | coalesced | Resolve calls (histogram count) | Resolve "
      "outcomes | Resolve p50 / p99 (bucket bound) | codes exhausted |\n"
      "| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- | --- | "
      "---: |\n");
  for (size_t i = 0; i < u.rounds.size(); ++i) {
    const UncachedRound& r = u.rounds[i];
    absl::StrAppendFormat(&out,
                          "| %d | %.0f | %.0f | %.2f× | %d | %d | %s | %d | %d | %d | %d | %s | ≤ "
                          "%g / ≤ %g ms | %d |\n",
                          i + 1, r.pgbench_tps, r.edge.requests_per_s,
                          r.pgbench_tps > 0 ? r.edge.requests_per_s / r.pgbench_tps : 0,
                          r.edge.requests, r.edge.responses_302,
                          r.edge.responses_other > 0 ? absl::StrCat(r.edge.responses_other, " (",
                                                                    r.edge.other_statuses, ")")
                                                     : absl::StrCat(r.edge.responses_other),
                          r.misses, r.hits, r.coalesced, r.resolves, r.resolve_outcomes,
                          r.resolve_p50_ms, r.resolve_p99_ms, r.exhausted);
  }
  absl::StrAppend(&out, "\npgbench: `", u.pgbench_command, "` with the script\n\n```\n",
                  u.pgbench_script, "```\n\nwrk: `", u.wrk_command, "`; edge: `", u.edge_command,
                  "`\n\n");
  return out;
}

std::string Mib(int64_t kb) { return absl::StrFormat("%.1f MiB", static_cast<double>(kb) / 1024); }

std::string MemorySection(const MemoryResult& m) {
  std::string out = "### Memory\n\n";
  absl::StrAppendFormat(
      &out,
      "VmRSS from /proc/PID/status. The full state: a fresh edge, then each of %d codes requested "
      "once through it (wrk with the same Lua script, %.0f s, %.0f requests/s), then the cache "
      "gauges read from /metrics.\n\n",
      m.entries_requested, m.fill_seconds,
      m.fill_seconds > 0 ? static_cast<double>(m.responses_302) / m.fill_seconds : 0);
  absl::StrAppend(&out,
                  "| edge state | VmRSS | edge_cache_entries | edge_cache_bytes (its estimate) |\n"
                  "| --- | ---: | ---: | ---: |\n");
  if (m.idle_rss_threads1_kb > 0) {
    absl::StrAppend(&out, "| idle after start, --threads=1 (cached-run flags) | ",
                    Mib(m.idle_rss_threads1_kb), " | 0 | 0 |\n");
  }
  if (m.entries_requested == 0) return absl::StrCat(out, "\n(memory run skipped)\n\n");
  absl::StrAppend(&out, "| idle after start, memory-run flags | ", Mib(m.idle_rss_kb),
                  " | 0 | 0 |\n");
  absl::StrAppendFormat(&out, "| %d codes requested | %s (peak %s) | %d | %s |\n",
                        m.entries_requested, Mib(m.full_rss_kb), Mib(m.full_hwm_kb),
                        m.cache_entries, Mib(m.cache_bytes / 1024));
  if (m.cache_entries > 0) {
    absl::StrAppendFormat(
        &out, "| **per cached entry** | **%.0f bytes** (RSS growth / entries) | | %.0f bytes |\n",
        static_cast<double>(m.full_rss_kb - m.idle_rss_kb) * 1024 /
            static_cast<double>(m.cache_entries),
        static_cast<double>(m.cache_bytes) / static_cast<double>(m.cache_entries));
  }
  absl::StrAppendFormat(
      &out, "\nResponses during the fill: %d × 302, %d other%s; evictions %d. Edge: `%s`\n\n",
      m.responses_302, m.responses_other,
      m.responses_other > 0 ? absl::StrCat(" (", m.other_statuses, ")") : "", m.evictions,
      m.edge_command);
  return out;
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string FormatReport(const Report& r) {
  std::string out = "## Redirect edge (tests/bench/edge)\n\n";
  absl::StrAppend(&out,
                  "Reproduce with `tests/bench/edge/run.sh` (builds Release into build/release, "
                  "then runs edge_bench with its arguments). This run: `",
                  r.command, "` (whole run ", absl::StrFormat("%.0f", r.total_seconds), " s)\n\n");
  absl::StrAppend(&out, "Machine: ", r.machine, "; ", r.versions, ". All on 127.0.0.1.\n\n");
  if (r.pinned) absl::StrAppend(&out, CachedSection(*r.pinned));
  if (r.threads2) absl::StrAppend(&out, CachedSection(*r.threads2));
  if (!r.response_sizes.empty()) absl::StrAppend(&out, r.response_sizes, "\n\n");
  if (!r.nginx_config.empty()) {
    absl::StrAppend(&out, "<details><summary>nginx.conf of the pinned run</summary>\n\n```nginx\n",
                    r.nginx_config, "```\n</details>\n\n");
  }
  if (r.creation) {
    absl::StrAppendFormat(
        &out,
        "Links for the uncached and memory runs: %d created in %.1f s (%.0f "
        "links/s, BatchShorten × 1000, 4 calls in flight).\n\n",
        r.creation->links, r.creation->seconds,
        r.creation->seconds > 0 ? static_cast<double>(r.creation->links) / r.creation->seconds : 0);
  }
  if (r.uncached) absl::StrAppend(&out, UncachedSection(*r.uncached));
  if (r.memory) absl::StrAppend(&out, MemorySection(*r.memory));
  absl::StrAppend(&out, "### Problems seen\n\n");
  if (r.problems.empty()) {
    absl::StrAppend(&out,
                    "None: no non-302 response, no edge log line at warning level or above, "
                    "every process alive at the end.\n");
  } else {
    for (const std::string& p : r.problems) absl::StrAppend(&out, "- ", p, "\n");
  }
  return out;
}

}  // namespace shortener::bench::edge
