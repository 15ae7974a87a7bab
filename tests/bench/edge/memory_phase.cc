// The memory phase of edge_bench: a fresh edge's RSS idle and after every
// one of c.memory_entries codes has been asked for once (RunMemory in
// edge_bench.h).
#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/bench/edge/edge_bench.h"
#include "tests/bench/edge/metrics_scrape.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/bench/edge/wrk_runner.h"

namespace shortener::bench::edge {
namespace {

// Runs each_code_once.lua over `codes_path` against the edge on `port`
// until every code was answered (its admin port's /metrics, against
// `before`) or nothing moves for 5 s.
absl::StatusOr<WrkResult> FillCache(const Config& c, const Fixture& f, int port, int admin_port,
                                    const std::string& codes_path, const Scrape& before) {
  absl::Time last_check = absl::Now(), last_progress = absl::Now();
  double last_count = -1;
  auto done = [&]() {
    if (absl::Now() - last_check < absl::Milliseconds(250)) return false;
    last_check = absl::Now();
    const Scrape s = ScrapeMetrics(admin_port);
    double answered = 0;
    for (const auto& [name, value] : s) {
      if (absl::StartsWith(name, "edge_http_responses_total{code=\"") &&
          !absl::StartsWith(name, "edge_http_responses_total{code=\"200\"")) {
        answered += value - Value(before, name);
      }
    }
    if (answered != last_count) {
      last_count = answered;
      last_progress = absl::Now();
    }
    return answered >= static_cast<double>(c.memory_entries) ||
           absl::Now() - last_progress > absl::Seconds(5);
  };
  WrkOptions w;
  w.threads = c.wrk_threads;
  w.connections = c.connections;
  w.seconds = 900;
  w.url = absl::StrCat("http://127.0.0.1:", port, "/");
  w.script = f.work_dir + "/each_code_once.lua";
  w.script_args = {codes_path, std::to_string(c.wrk_threads)};
  w.log_path = f.work_dir + "/wrk.log";
  w.stop_when = done;
  return RunWrk(w);
}

void PrintMemory(const MemoryResult& m, int64_t exhausted) {
  std::fprintf(stderr,
               "memory: idle %lld kB, full %lld kB (peak %lld), entries %lld, bytes %lld, 302s "
               "%lld, other %lld %s, fill %.1f s, healthz fillers %lld\n",
               static_cast<long long>(m.idle_rss_kb), static_cast<long long>(m.full_rss_kb),
               static_cast<long long>(m.full_hwm_kb), static_cast<long long>(m.cache_entries),
               static_cast<long long>(m.cache_bytes), static_cast<long long>(m.responses_302),
               static_cast<long long>(m.responses_other), m.other_statuses.c_str(), m.fill_seconds,
               static_cast<long long>(exhausted));
}

}  // namespace

absl::Status RunMemory(const Config& c, Fixture& f, Report& report) {
  std::fprintf(stderr, "== memory, %lld entries\n", static_cast<long long>(c.memory_entries));
  if (absl::Status st = EnsureLinks(c, f, c.memory_entries, report); !st.ok()) return st;
  if (!report.memory) report.memory.emplace();
  MemoryResult& m = *report.memory;
  m.entries_requested = c.memory_entries;
  const std::vector<std::string> flags = UncachedEdgeFlags(c.memory_entries);
  m.edge_command = EdgeCommand(c, flags);
  absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> edge = StartEdge(c, f, flags);
  if (!edge.ok()) return edge.status();
  const pid_t pid = (*edge)->process().pid();
  absl::SleepFor(absl::Milliseconds(500));
  m.idle_rss_kb = StatusKb(pid, "VmRSS");
  std::vector<std::string> codes(f.codes.begin(), f.codes.begin() + c.memory_entries);
  const std::string codes_path = f.work_dir + "/memory_codes.txt";
  if (absl::Status st = WriteCodes(codes, codes_path); !st.ok()) return st;
  const int port = (*edge)->port();
  const int admin_port = (*edge)->admin_port();
  const Scrape before = ScrapeMetrics(admin_port);
  const absl::Time start = absl::Now();
  absl::StatusOr<WrkResult> wr = FillCache(c, f, port, admin_port, codes_path, before);
  if (!wr.ok()) return wr.status();
  m.fill_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  absl::SleepFor(absl::Milliseconds(500));
  const Scrape after = ScrapeMetrics(admin_port);
  m.full_rss_kb = StatusKb(pid, "VmRSS");
  m.full_hwm_kb = StatusKb(pid, "VmHWM");
  m.cache_entries = static_cast<int64_t>(Value(after, "edge_cache_entries"));
  m.cache_bytes = static_cast<int64_t>(Value(after, "edge_cache_bytes"));
  m.evictions = Delta(before, after, "edge_cache_evictions_total");
  // Threads that ran out ask for /healthz until wrk is stopped (the fill
  // ends on a condition): expected here.
  int64_t exhausted = 0;
  auto it = wr->script_values.find("exhausted");
  if (it != wr->script_values.end()) absl::SimpleAtoi(it->second, &exhausted);
  // A code never gets a 200: every 200 here is a filler's /healthz.
  ResponseDeltas(before, after, std::numeric_limits<int64_t>::max(), &m.responses_302,
                 &m.responses_other, &m.other_statuses);
  PrintMemory(m, exhausted);
  if (m.responses_other > 0) {
    report.problems.push_back(
        absl::StrCat("memory fill: non-302 responses (", m.other_statuses, ")"));
  }
  if (m.cache_entries < c.memory_entries * 99 / 100) {
    report.problems.push_back(absl::StrCat("memory fill: edge_cache_entries ", m.cache_entries,
                                           " after ", c.memory_entries, " distinct codes"));
  }
  CollectEdgeProblems(**edge, "memory", &report.problems);
  return absl::OkStatus();
}

}  // namespace shortener::bench::edge
