// The cached phases of edge_bench: the edge against nginx answering the
// same 302 for one code, both driven by the same wrk command, in alternating
// rounds (RunCached in edge_bench.h).
#include <sys/types.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/bench/edge/edge_bench.h"
#include "tests/bench/edge/link_loader.h"
#include "tests/bench/edge/metrics_scrape.h"
#include "tests/bench/edge/nginx_process.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/bench/edge/wrk_runner.h"
#include "tests/support/http_client.h"

namespace shortener::bench::edge {
namespace {

constexpr char kTaskset[] = "/usr/bin/taskset";

struct Target {
  int port = 0;
  std::function<double()> cpu;  // server CPU seconds so far
  testing::EdgeProcess* edge = nullptr;
};

absl::StatusOr<ServerRun> MeasureCachedRun(const Config& c, const Fixture& f, const Target& t,
                                           const std::string& path, int seconds,
                                           std::vector<std::string> wrk_launcher,
                                           std::string* command) {
  WrkOptions w;
  w.launcher = std::move(wrk_launcher);
  w.threads = 1;
  w.connections = c.connections;
  w.seconds = seconds;
  w.url = absl::StrCat("http://127.0.0.1:", t.port, path);
  w.log_path = f.work_dir + "/wrk.log";
  Scrape before;
  if (t.edge != nullptr) before = ScrapeMetrics(t.edge->admin_port());
  const double cpu0 = t.cpu();
  const CpuSample cpus0 = SampleCpus();
  const absl::Time t0 = absl::Now();
  absl::StatusOr<WrkResult> r = RunWrk(w);
  const absl::Time t1 = absl::Now();
  const double cpu1 = t.cpu();
  const CpuSample cpus1 = SampleCpus();
  if (!r.ok()) return r.status();
  ServerRun run;
  run.requests_per_s = r->requests_per_s;
  run.requests = r->requests;
  run.p50_ms = r->p50_ms;
  run.p99_ms = r->p99_ms;
  run.server_cpu_s = cpu1 - cpu0;
  run.wrk_cpu_s = r->wrk_cpu_s;
  run.cpu_busy = BusyFractions(cpus0, cpus1);
  run.window_s = absl::ToDoubleSeconds(t1 - t0);
  run.wrk_errors = r->non_2xx_3xx + r->socket_errors;
  if (t.edge != nullptr) {
    const Scrape after = ScrapeMetrics(t.edge->admin_port());
    ResponseDeltas(before, after, 0, &run.responses_302, &run.responses_other, &run.other_statuses);
  }
  if (command != nullptr) *command = r->command;
  return run;
}

// The headers of the edge's 302 that nginx should send too (not the ones
// nginx makes itself).
std::vector<std::pair<std::string, std::string>> HeadersToCopy(const testing::HttpResponse& r) {
  static const char* kOwn[] = {"date",       "location",   "content-length", "content-type",
                               "connection", "keep-alive", "server",         "transfer-encoding"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : r.headers) {
    if (std::find_if(std::begin(kOwn), std::end(kOwn),
                     [&](const char* own) { return name == own; }) != std::end(kOwn)) {
      continue;
    }
    if (absl::StrContains(value, "\"") || absl::StrContains(value, "$")) continue;
    out.emplace_back(name, value);
  }
  return out;
}

// One response's bytes on a keep-alive connection, for the report.
std::string RawResponse(int port, const std::string& path) {
  absl::StatusOr<testing::HttpConnection> conn = testing::HttpConnection::Connect(port);
  if (!conn.ok()) return "";
  if (!conn->Send(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")).ok()) {
    return "";
  }
  absl::StatusOr<testing::HttpResponse> r = conn->Read();
  if (!r.ok()) return "";
  return absl::StrCat(r->raw_head, r->body.empty() ? "" : "\n\n", r->body);
}

// The two servers of one comparison, each answering the same 302 for `path`.
struct CachedServers {
  std::string path;                       // the code wrk asks for
  std::vector<std::string> launcher;      // both servers' (taskset when pinned)
  std::vector<std::string> wrk_launcher;  // taskset to c.load_cpu
  std::vector<std::string> edge_flags;
  std::unique_ptr<testing::EdgeProcess> edge;
  std::unique_ptr<NginxProcess> nginx;
};

// Asks `edge` for every code once (filling its cache) and checks that each
// answer is the 302 to its link; the first answer, for nginx to copy.
absl::StatusOr<testing::HttpResponse> WarmAndCheck(testing::EdgeProcess& edge,
                                                   const std::vector<std::string>& codes,
                                                   const std::string& tag) {
  testing::HttpResponse edge_response;
  for (size_t i = 0; i < codes.size(); ++i) {
    absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(edge.port(), "/" + codes[i]);
    if (!r.ok()) return r.status();
    if (r->status != 302 || r->Header("location") != BenchUrl(tag, static_cast<int64_t>(i))) {
      return absl::InternalError(absl::StrCat("edge answered ", r->status, " Location \"",
                                              r->Header("location"), "\" for ", codes[i],
                                              "; log:\n", edge.Log()));
    }
    if (i == 0) edge_response = *r;
  }
  return edge_response;
}

// Creates a few links, starts the edge (its idle RSS into report.memory
// when pinned) and warms it, then starts nginx answering as the edge does;
// for the pinned comparison nginx's config and both responses go into the
// report.
absl::Status StartCachedServers(const Config& c, Fixture& f, bool pinned, Report& report,
                                CachedServers& s) {
  // A few links; wrk asks for the first.
  LinkLoadOptions lo;
  lo.target = f.service->target();
  lo.api_key = f.service->admin_key();
  lo.count = 16;
  lo.inflight = 1;
  lo.tag = pinned ? "cached1" : "cached2";
  absl::StatusOr<std::vector<std::string>> codes = CreateLinks(lo);
  if (!codes.ok()) return codes.status();
  s.path = "/" + (*codes)[0];
  const std::string url = BenchUrl(lo.tag, 0);

  s.launcher = pinned ? std::vector<std::string>{kTaskset, "-c", std::to_string(c.server_cpu)}
                      : std::vector<std::string>{};
  s.wrk_launcher = {kTaskset, "-c", std::to_string(c.load_cpu)};
  s.edge_flags = {pinned ? "--threads=1" : "--threads=2", "--cache_ttl=1h"};
  absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> edge =
      StartEdge(c, f, s.edge_flags, s.launcher);
  if (!edge.ok()) return edge.status();
  s.edge = *std::move(edge);
  if (pinned) {
    absl::SleepFor(absl::Milliseconds(300));
    if (!report.memory) report.memory.emplace();
    report.memory->idle_rss_threads1_kb = StatusKb(s.edge->process().pid(), "VmRSS");
  }
  absl::StatusOr<testing::HttpResponse> edge_response = WarmAndCheck(*s.edge, *codes, lo.tag);
  if (!edge_response.ok()) return edge_response.status();
  NginxOptions no;
  no.workers = pinned ? 1 : 2;
  no.location = url;
  no.headers = HeadersToCopy(*edge_response);
  no.launcher = s.launcher;
  absl::StatusOr<std::unique_ptr<NginxProcess>> nginx = NginxProcess::Start(no);
  if (!nginx.ok()) return nginx.status();
  s.nginx = *std::move(nginx);
  {
    absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(s.nginx->port(), s.path);
    if (!r.ok() || r->status != 302 || r->Header("location") != url) {
      return absl::InternalError("nginx does not answer the expected 302");
    }
  }
  if (pinned) {
    report.nginx_config = s.nginx->config();
    report.response_sizes = absl::StrCat(
        "One response of each, as received on a keep-alive connection (nginx's `return 302` "
        "always adds its small HTML body):\n\n```\n--- edge\n",
        RawResponse(s.edge->port(), s.path), "\n--- nginx\n", RawResponse(s.nginx->port(), s.path),
        "\n```");
  }
  return absl::OkStatus();
}

// The comparison's title, setup paragraph and row names.
CachedComparison DescribeComparison(const Config& c, bool pinned, int rounds) {
  CachedComparison cmp;
  if (pinned) {
    cmp.title = "edge `--threads=1` vs nginx `worker_processes 1`, both pinned";
    cmp.setup = absl::StrFormat(
        "Both servers pinned to CPU %d (`taskset -c %d`), the same wrk command pinned to CPU %d, "
        "%d connections, keep-alive, %d s per run, the same code every request (a cache hit); "
        "%d rounds, alternating which server goes first, after a %d s warm-up of each. Server "
        "CPU is utime + stime from /proc/PID/stat over the run (for the edge every thread of the "
        "process, gRPC's included) divided by wrk's completed requests.",
        c.server_cpu, c.server_cpu, c.load_cpu, c.connections, c.seconds, rounds, c.warmup_seconds);
    cmp.edge_name = "edge --threads=1";
    cmp.nginx_name = "nginx, 1 worker";
    cmp.has_targets = true;
  } else {
    cmp.title = "edge `--threads=2` vs nginx `worker_processes 2`, not pinned";
    cmp.setup = absl::StrFormat(
        "Neither server pinned, wrk still pinned to CPU %d with one thread: the servers share "
        "CPU %d with wrk, and one wrk thread is close to its own limit, so these figures say "
        "more about the machine than about the servers. nginx with a master process (CPU "
        "counted over master and workers) and `listen ... reuseport`. %d rounds of %d s, "
        "alternating.",
        c.load_cpu, c.load_cpu, rounds, c.seconds);
    cmp.edge_name = "edge --threads=2";
    cmp.nginx_name = "nginx, 2 workers";
  }
  return cmp;
}

void PrintCachedRun(int round, bool is_nginx, const ServerRun& run) {
  std::fprintf(stderr,
               "round %d %s: %.0f req/s, p99 %.2f ms, %.2f µs CPU/req, wrk CPU %.1f s, "
               "other load %.2f CPUs, busy %s%s\n",
               round + 1, is_nginx ? "nginx" : "edge ", run.requests_per_s, run.p99_ms,
               run.CpuUsPerRequest(), run.wrk_cpu_s, run.OtherCpus(),
               absl::StrJoin(run.cpu_busy, "/",
                             [](std::string* out, double b) {
                               absl::StrAppendFormat(out, "%.0f%%", b * 100);
                             })
                   .c_str(),
               is_nginx ? ""
                        : absl::StrCat(", 302s ", run.responses_302, ", other ",
                                       run.responses_other, " ", run.other_statuses)
                              .c_str());
}

// A warm-up of each server, then `rounds` rounds alternating which goes
// first; every run into `cmp`, non-302s into report.problems.
absl::Status RunCachedRounds(const Config& c, const Fixture& f, CachedServers& s, int rounds,
                             CachedComparison& cmp, Report& report) {
  const pid_t edge_pid = s.edge->process().pid();
  Target edge_target{s.edge->port(), [edge_pid] { return ProcessCpuSeconds(edge_pid); },
                     s.edge.get()};
  NginxProcess* nginx_ptr = s.nginx.get();
  Target nginx_target{s.nginx->port(), [nginx_ptr] { return nginx_ptr->CpuSeconds(); }, nullptr};
  if (c.warmup_seconds > 0) {
    for (const Target* t : {&nginx_target, &edge_target}) {
      absl::StatusOr<ServerRun> w =
          MeasureCachedRun(c, f, *t, s.path, c.warmup_seconds, s.wrk_launcher, nullptr);
      if (!w.ok()) return w.status();
    }
  }
  for (int round = 0; round < rounds; ++round) {
    const bool nginx_first = round % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_nginx = (k == 0) == nginx_first;
      std::string command;
      absl::StatusOr<ServerRun> run =
          MeasureCachedRun(c, f, is_nginx ? nginx_target : edge_target, s.path, c.seconds,
                           s.wrk_launcher, is_nginx ? nullptr : &command);
      if (!run.ok()) return run.status();
      PrintCachedRun(round, is_nginx, *run);
      if (is_nginx) {
        cmp.nginx.push_back(*run);
      } else {
        cmp.edge.push_back(*run);
        cmp.wrk_command = command;
        if (run->responses_other > 0) {
          report.problems.push_back(absl::StrCat(cmp.edge_name, " round ", round + 1, ": ",
                                                 run->responses_other, " non-302 responses (",
                                                 run->other_statuses, ")"));
        }
      }
      if (!s.nginx->running()) {
        return absl::InternalError(absl::StrCat("nginx died; log:\n", s.nginx->ErrorLog()));
      }
      if (!s.edge->process().running()) {
        return absl::InternalError(absl::StrCat("the edge died; log:\n", s.edge->Log()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCached(const Config& c, Fixture& f, bool pinned, Report& report) {
  const int rounds = pinned ? c.rounds : c.rounds_threads2;
  std::fprintf(stderr, "== cached redirects, %s\n", pinned ? "--threads=1 pinned" : "--threads=2");
  CachedServers s;
  if (absl::Status st = StartCachedServers(c, f, pinned, report, s); !st.ok()) return st;
  CachedComparison cmp = DescribeComparison(c, pinned, rounds);
  cmp.edge_command = EdgeCommand(c, s.edge_flags, s.launcher);
  if (absl::Status st = RunCachedRounds(c, f, s, rounds, cmp, report); !st.ok()) return st;
  // The edge's own view of the whole phase.
  const Scrape end = ScrapeMetrics(s.edge->admin_port());
  std::fprintf(stderr, "edge cache: hits %.0f misses %.0f entries %.0f\n",
               Value(end, "edge_cache_hits_total"), Value(end, "edge_cache_misses_total"),
               Value(end, "edge_cache_entries"));
  CollectEdgeProblems(*s.edge, cmp.edge_name, &report.problems);
  if (pinned) {
    report.pinned = std::move(cmp);
  } else {
    report.threads2 = std::move(cmp);
  }
  return absl::OkStatus();
}

}  // namespace shortener::bench::edge
