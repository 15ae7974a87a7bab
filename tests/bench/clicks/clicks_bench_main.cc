// clicks_bench: what click recording costs (issue 5, item 7), in one run on
// 127.0.0.1 with a private PostgreSQL and the real shorten-service and
// redirect-edge of this build tree:
//  1. redirects: cached redirects through an edge recording clicks against
//     the same edge with --record_clicks=false. Both --threads=1 pinned to
//     the server CPU; wrk (one thread, keep-alive) pinned to the load CPU,
//     alternating rounds, medians. The service and PostgreSQL, which ingest
//     the clicks of the recording edge, are pinned to the load CPU as well,
//     so the edge's CPU holds nothing but the edge. Afterwards the clicks
//     stored must equal the recording edge's redirects.
//  2. ingest: RecordClicks straight from a gRPC load generator (batches of
//     1000 realistic events, a few calls in flight) for a fixed time:
//     clicks/s, batch latency, service and PostgreSQL CPU per click, with
//     visit rows (the default) and with --record_visits=false, and with an
//     older shorten-service binary (--old_service) side by side;
//  3. stats: one link loaded with 10^7 clicks over 30 days through
//     RecordClicks, then GetClickStats timed over gRPC and end to end with
//     shortenctl stats (and the old binary's, when given), and the link's
//     rollup storage per hour.
// Markdown for docs/benchmarks.md goes to stdout, progress to stderr. Build
// in Release and run: tests/bench/clicks/run.sh.
#include <grpcpp/grpcpp.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/edge/link_loader.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/bench/edge/wrk_runner.h"
#include "tests/support/edge_process.h"
#include "tests/support/http_client.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

ABSL_FLAG(std::vector<std::string>, phases, std::vector<std::string>({"redirects", "ingest"}),
          "what to measure: redirects (cached, clicks on vs off), ingest (RecordClicks), stats "
          "(GetClickStats on one link loaded with --stats_clicks through RecordClicks)");
ABSL_FLAG(int, seconds, 10, "length of every wrk window");
ABSL_FLAG(int, rounds, 5, "rounds of the on/off comparison (alternating order; medians)");
ABSL_FLAG(int, connections, 64, "wrk connections (keep-alive)");
ABSL_FLAG(int, warmup_seconds, 2, "wrk warm-up of each edge before the rounds");
ABSL_FLAG(int, server_cpu, 0, "CPU both edges are pinned to");
ABSL_FLAG(int, load_cpu, 1, "CPU of wrk, the service and PostgreSQL");
ABSL_FLAG(int, ingest_seconds, 10, "length of every ingest window");
ABSL_FLAG(int, ingest_rounds, 3, "ingest windows per configuration (alternating; medians)");
ABSL_FLAG(int, ingest_inflight, 4, "RecordClicks calls in flight (one connection each)");
ABSL_FLAG(int, ingest_batch, 1000, "events per RecordClicks batch (the edge's --click_batch)");
ABSL_FLAG(int, ingest_links, 300, "distinct links the ingested clicks are spread over");
ABSL_FLAG(std::string, old_service, "",
          "ingest: also measure this shorten-service binary (an older build, e.g. "
          "/tmp/wt-old/build/release/bin/shorten-service) on the same database, alternating");
ABSL_FLAG(int64_t, stats_clicks, 10'000'000, "stats: clicks loaded on the one link");
ABSL_FLAG(int, stats_days, 30, "stats: days the loaded clicks are spread over (up to now)");
ABSL_FLAG(int, stats_reads, 7, "stats: timed reads of each query, after 2 warm-up reads");
ABSL_FLAG(bool, stats_record_visits, true, "stats: load with visit rows (the default service)");

namespace shortener::bench::clicks {
namespace {

using edge::BusyFractions;
using edge::CpuSample;
using edge::ProcessCpuSeconds;
using edge::ProcessTreeCpuSeconds;
using edge::SampleCpus;

constexpr char kTaskset[] = "/usr/bin/taskset";

struct Config {
  std::vector<std::string> phases;
  int seconds = 10, rounds = 5, connections = 64, warmup_seconds = 2;
  int server_cpu = 0, load_cpu = 1;
  int ingest_seconds = 10, ingest_rounds = 3, ingest_inflight = 4, ingest_batch = 1000;
  int ingest_links = 300;
  std::string old_service;
  int64_t stats_clicks = 10'000'000;
  int stats_days = 30, stats_reads = 7;
  bool stats_record_visits = true;
  std::string command;
  bool Has(const std::string& phase) const {
    return std::find(phases.begin(), phases.end(), phase) != phases.end();
  }
};

absl::StatusOr<Config> ConfigFromFlags(const std::string& command) {
  Config c;
  c.phases = absl::GetFlag(FLAGS_phases);
  c.seconds = absl::GetFlag(FLAGS_seconds);
  c.rounds = absl::GetFlag(FLAGS_rounds);
  c.connections = absl::GetFlag(FLAGS_connections);
  c.warmup_seconds = absl::GetFlag(FLAGS_warmup_seconds);
  c.server_cpu = absl::GetFlag(FLAGS_server_cpu);
  c.load_cpu = absl::GetFlag(FLAGS_load_cpu);
  c.ingest_seconds = absl::GetFlag(FLAGS_ingest_seconds);
  c.ingest_rounds = absl::GetFlag(FLAGS_ingest_rounds);
  c.ingest_inflight = absl::GetFlag(FLAGS_ingest_inflight);
  c.ingest_batch = absl::GetFlag(FLAGS_ingest_batch);
  c.ingest_links = absl::GetFlag(FLAGS_ingest_links);
  c.old_service = absl::GetFlag(FLAGS_old_service);
  c.stats_clicks = absl::GetFlag(FLAGS_stats_clicks);
  c.stats_days = absl::GetFlag(FLAGS_stats_days);
  c.stats_reads = absl::GetFlag(FLAGS_stats_reads);
  c.stats_record_visits = absl::GetFlag(FLAGS_stats_record_visits);
  c.command = command;
  if (c.stats_clicks < 1 || c.stats_days < 1 || c.stats_days > 31 || c.stats_reads < 1) {
    return absl::InvalidArgumentError(
        "--stats_clicks and --stats_reads must be >= 1, --stats_days 1..31");
  }
  for (const std::string& p : c.phases) {
    if (p != "redirects" && p != "ingest" && p != "stats") {
      return absl::InvalidArgumentError(absl::StrCat("--phases: unknown phase ", p));
    }
  }
  if (c.seconds < 1 || c.rounds < 1 || c.connections < 1 || c.warmup_seconds < 0 ||
      c.ingest_seconds < 1 || c.ingest_rounds < 1 || c.ingest_inflight < 1 || c.ingest_batch < 1 ||
      c.ingest_batch > 10000 || c.ingest_links < 1) {
    return absl::InvalidArgumentError(
        "--seconds, --rounds, --connections, --ingest_* must be >= 1 (--ingest_batch <= 10000), "
        "--warmup_seconds >= 0");
  }
  return c;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string BusyText(const std::vector<double>& busy) {
  return absl::StrJoin(busy, " / ", [](std::string* out, double b) {
    absl::StrAppendFormat(out, "%.0f%%", b * 100);
  });
}

// One sample of the edge's /metrics (`port`: its admin port); 0 when absent
// or unreadable.
double EdgeMetric(int port, const std::string& sample) {
  absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(port, "/metrics");
  if (!r.ok() || r->status != 200) return 0;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (!absl::StartsWith(line, sample) || line.size() <= sample.size() ||
        line[sample.size()] != ' ') {
      continue;
    }
    double v = 0;
    if (absl::SimpleAtod(line.substr(sample.size() + 1), &v)) return v;
  }
  return 0;
}

int64_t SqlNumber(const std::string& conninfo, const std::string& sql) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

// What every phase shares.
struct Fixture {
  std::unique_ptr<testing::PgCluster> pg;
  std::unique_ptr<testing::ServiceProcess> service;
  pid_t postmaster = 0;
  std::vector<std::string> codes;
};

// CPU seconds of the service and of PostgreSQL (postmaster and backends).
struct BackendCpu {
  double service_s = 0, pg_s = 0;
};
BackendCpu SampleBackends(const Fixture& f, pid_t service_pid) {
  return {ProcessCpuSeconds(service_pid), ProcessTreeCpuSeconds(f.postmaster)};
}

// ------------------------------------------------------------- redirects

struct RedirectRun {
  double requests_per_s = 0, p50_ms = 0, p99_ms = 0;
  int64_t requests = 0;
  int64_t redirects = 0;  // the edge's own count of 302s over the run
  double edge_cpu_s = 0, service_cpu_s = 0, pg_cpu_s = 0, wrk_cpu_s = 0, window_s = 0;
  std::vector<double> busy;
  double EdgeUsPerRequest() const {
    return requests > 0 ? edge_cpu_s * 1e6 / static_cast<double>(requests) : 0;
  }
  double UsPerRedirect(double cpu_s) const {
    return redirects > 0 ? cpu_s * 1e6 / static_cast<double>(redirects) : 0;
  }
};

struct EdgeUnderTest {
  std::string name;
  std::vector<std::string> flags;
  bool records = false;
  std::unique_ptr<testing::EdgeProcess> process;
};

// One way of running: an edge, and the scheduling of the ingest behind it.
struct Mode {
  std::string name;
  EdgeUnderTest* edge;
  bool idle_ingest = false;  // service and PostgreSQL at SCHED_IDLE
  std::vector<RedirectRun> runs;
};

// The service and every PostgreSQL process at SCHED_IDLE, or back.
absl::Status SetIngestIdle(const Fixture& f, bool idle) {
  absl::Status st = edge::SetIdlePriority(f.service->process().pid(), idle);
  if (st.ok()) st = edge::SetIdlePriority(f.postmaster, idle);
  if (!st.ok()) return st;
  for (pid_t child : edge::ChildPids(f.postmaster)) {
    edge::SetIdlePriority(child, idle).IgnoreError();  // one may have exited meanwhile
  }
  return absl::OkStatus();
}

// Waits until the edge's click sender has had every queued event
// acknowledged; false after `timeout`.
bool WaitForClicksAcknowledged(int port, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    const double queued = EdgeMetric(port, "edge_clicks_queued_total");
    const double acknowledged = EdgeMetric(port, "edge_clicks_acknowledged_total");
    if (acknowledged >= queued) return true;
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(100));
  }
}

// One wrk window against `mode`'s edge. For a recording edge the CPU
// figures run on until the service has acknowledged every click of the
// window: work the edge or the service deferred is counted too.
absl::StatusOr<RedirectRun> MeasureRedirects(const Config& c, const Fixture& f, Mode& mode,
                                             const std::string& path, int seconds,
                                             std::string* command) {
  EdgeUnderTest& edge = *mode.edge;
  edge::WrkOptions w;
  w.launcher = {kTaskset, "-c", std::to_string(c.load_cpu)};
  w.threads = 1;
  w.connections = c.connections;
  w.seconds = seconds;
  w.url = absl::StrCat("http://127.0.0.1:", edge.process->port(), path);
  w.log_path = f.pg->socket_dir() + "/wrk.log";
  const std::string redirects = "edge_http_responses_total{code=\"302\"}";
  const pid_t edge_pid = edge.process->process().pid();
  const pid_t service_pid = f.service->process().pid();
  if (mode.idle_ingest) {
    absl::Status st = SetIngestIdle(f, true);
    if (!st.ok()) return st;
  }
  const double redirects0 = EdgeMetric(edge.process->admin_port(), redirects);
  const double edge0 = ProcessCpuSeconds(edge_pid);
  const BackendCpu backends0 = SampleBackends(f, service_pid);
  const CpuSample cpus0 = SampleCpus();
  const absl::Time t0 = absl::Now();
  absl::StatusOr<edge::WrkResult> r = edge::RunWrk(w);
  const absl::Time t1 = absl::Now();
  const CpuSample cpus1 = SampleCpus();
  if (mode.idle_ingest) {
    absl::Status st = SetIngestIdle(f, false);
    if (!st.ok()) return st;
  }
  if (edge.records && !WaitForClicksAcknowledged(edge.process->admin_port(), absl::Minutes(3))) {
    return absl::DeadlineExceededError(
        absl::StrCat(mode.name, ": clicks still unacknowledged 3 minutes after the window"));
  }
  const double edge1 = ProcessCpuSeconds(edge_pid);
  const BackendCpu backends1 = SampleBackends(f, service_pid);
  if (!r.ok()) return r.status();
  RedirectRun run;
  run.requests_per_s = r->requests_per_s;
  run.requests = r->requests;
  run.p50_ms = r->p50_ms;
  run.p99_ms = r->p99_ms;
  run.wrk_cpu_s = r->wrk_cpu_s;
  run.edge_cpu_s = edge1 - edge0;
  run.service_cpu_s = backends1.service_s - backends0.service_s;
  run.pg_cpu_s = backends1.pg_s - backends0.pg_s;
  run.window_s = absl::ToDoubleSeconds(t1 - t0);
  run.busy = BusyFractions(cpus0, cpus1);
  // The driver's /metrics scrapes go to the admin port: nothing to remove.
  run.redirects =
      static_cast<int64_t>(EdgeMetric(edge.process->admin_port(), redirects) - redirects0);
  if (r->non_2xx_3xx + r->socket_errors > 0) {
    return absl::InternalError(absl::StrCat(mode.name, ": wrk saw ", r->non_2xx_3xx,
                                            " bad answers and ", r->socket_errors,
                                            " socket errors; ", r->command));
  }
  if (command != nullptr) *command = r->command;
  return run;
}

absl::Status PinBackends(const Config& c, const Fixture& f) {
  absl::Status st = edge::PinProcess(f.service->process().pid(), c.load_cpu);
  if (!st.ok()) return st;
  st = edge::PinProcess(f.postmaster, c.load_cpu);  // backends forked later inherit it
  if (!st.ok()) return st;
  for (pid_t child : edge::ChildPids(f.postmaster)) {
    edge::PinProcess(child, c.load_cpu).IgnoreError();  // one may have exited meanwhile
  }
  return absl::OkStatus();
}

absl::Status RunRedirects(const Config& c, Fixture& f, std::string& out) {
  std::fprintf(stderr, "== cached redirects, clicks on vs off\n");
  absl::Status st = PinBackends(c, f);
  if (!st.ok()) return st;
  const std::string path = "/" + f.codes[0];
  absl::StatusOr<std::string> key_file = f.service->EdgeKeyFile();
  if (!key_file.ok()) return key_file.status();
  // The recording edge may hold a whole window of clicks while its service
  // runs at idle priority: room for them, and no deadline that would spool
  // them.
  EdgeUnderTest on{"clicks on",
                   {"--threads=1", "--cache_ttl=1h", "--click_queue_events=5000000",
                    "--click_queue_bytes=2147483648", "--click_rpc_timeout=120s"},
                   true,
                   nullptr};
  EdgeUnderTest off{
      "clicks off", {"--threads=1", "--cache_ttl=1h", "--record_clicks=false"}, false, nullptr};
  for (EdgeUnderTest* e : {&on, &off}) {
    testing::EdgeProcessOptions eo;
    eo.service_target = f.service->target();
    eo.secret_file = f.service->secret_file();
    eo.api_key_file = *key_file;
    eo.extra_flags = e->flags;
    eo.launcher = {kTaskset, "-c", std::to_string(c.server_cpu)};
    absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> p = testing::EdgeProcess::Start(eo);
    if (!p.ok()) return p.status();
    e->process = *std::move(p);
    absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(e->process->port(), path);
    if (!r.ok()) return r.status();
    if (r->status != 302) {
      return absl::InternalError(absl::StrCat(e->name, ": the edge answered ", r->status));
    }
  }
  std::vector<Mode> modes = {
      {"clicks off", &off, false, {}},
      {"clicks on, ingest at idle priority", &on, true, {}},
      {"clicks on, ingest sharing the load CPU", &on, false, {}},
  };
  if (c.warmup_seconds > 0) {
    for (Mode& m : modes) {
      absl::StatusOr<RedirectRun> w = MeasureRedirects(c, f, m, path, c.warmup_seconds, nullptr);
      if (!w.ok()) return w.status();
    }
  }
  std::string wrk_command;
  for (int round = 0; round < c.rounds; ++round) {
    for (size_t k = 0; k < modes.size(); ++k) {
      Mode& m = modes[(k + static_cast<size_t>(round)) % modes.size()];  // rotate the order
      absl::StatusOr<RedirectRun> run = MeasureRedirects(c, f, m, path, c.seconds, &wrk_command);
      if (!run.ok()) return run.status();
      std::fprintf(stderr,
                   "round %d %s: %.0f req/s, p99 %.2f ms, edge %.2f µs/req, service %.2f "
                   "µs/redirect, postgres %.2f µs/redirect, busy %s\n",
                   round + 1, m.name.c_str(), run->requests_per_s, run->p99_ms,
                   run->EdgeUsPerRequest(), run->UsPerRedirect(run->service_cpu_s),
                   run->UsPerRedirect(run->pg_cpu_s), BusyText(run->busy).c_str());
      m.runs.push_back(*run);
    }
  }
  // Every redirect of the recording edge must be stored, once.
  const int port = on.process->admin_port();
  if (!WaitForClicksAcknowledged(port, absl::Minutes(1))) {
    return absl::DeadlineExceededError("the recording edge's clicks are not all acknowledged");
  }
  const int64_t redirects =
      static_cast<int64_t>(EdgeMetric(port, "edge_http_responses_total{code=\"302\"}"));
  const int64_t stored =
      SqlNumber(f.pg->ConnInfo(), "SELECT coalesce(sum(count), 0) FROM click_counts");
  const int64_t off_events =
      static_cast<int64_t>(EdgeMetric(off.process->admin_port(), "edge_clicks_queued_total"));

  auto med = [](const std::vector<RedirectRun>& runs, auto field) {
    std::vector<double> v;
    for (const RedirectRun& r : runs) v.push_back(field(r));
    return Median(v);
  };
  auto rps = [](const RedirectRun& r) { return r.requests_per_s; };
  auto p99 = [](const RedirectRun& r) { return r.p99_ms; };
  auto edge_us = [](const RedirectRun& r) { return r.EdgeUsPerRequest(); };
  auto svc_us = [](const RedirectRun& r) { return r.UsPerRedirect(r.service_cpu_s); };
  auto pg_us = [](const RedirectRun& r) { return r.UsPerRedirect(r.pg_cpu_s); };
  auto busy_of = [](int cpu) {
    return [cpu](const RedirectRun& r) {
      return r.busy.size() > static_cast<size_t>(cpu) ? r.busy[cpu] : 0.0;
    };
  };

  absl::StrAppend(&out, "### Cached redirects, click recording on vs off\n\n");
  absl::StrAppendFormat(
      &out,
      "Two edges, `--threads=1 --cache_ttl=1h`, one recording clicks (the default, with room "
      "to queue a whole window of clicks) and one with `--record_clicks=false`, both pinned to "
      "CPU %d; the same wrk command (1 thread, %d keep-alive connections, %d s, one cached "
      "code) pinned to CPU %d. The shorten-service and PostgreSQL, which ingest the recording "
      "edge's clicks (`RecordClicks` batches of up to 1000 every second, visits recorded), are "
      "pinned to CPU %d as well, so the edges' CPU runs nothing else. On a two-CPU machine "
      "they must share the load CPU with wrk, which decides the rate the edges see, so the "
      "recording edge runs two ways: with the service and PostgreSQL at idle priority "
      "(`SCHED_IDLE`: they ingest in wrk's gaps and after the window; the edge's own cost, "
      "which is what an edge machine of its own would pay) and at normal priority (the whole "
      "pipeline on these two CPUs). %d rounds, rotating the order, after a %d s warm-up of "
      "each; medians. Edge CPU is utime + stime of every thread of the edge process (its "
      "click sender and gRPC threads included) from the start of the window until the service "
      "has acknowledged every click of it, per request wrk completed; service and PostgreSQL "
      "CPU over the same span per redirect the edge served.\n\n",
      c.server_cpu, c.connections, c.seconds, c.load_cpu, c.load_cpu, c.rounds, c.warmup_seconds);
  absl::StrAppendFormat(&out,
                        "| edge | requests/s | × off | p99 | edge CPU/request | × off | "
                        "service CPU/click | PostgreSQL CPU/click | CPU %d / CPU %d busy |\n"
                        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
                        c.server_cpu, c.load_cpu);
  const double off_rps = med(modes[0].runs, rps);
  const double off_us = med(modes[0].runs, edge_us);
  for (const Mode& m : modes) {
    const bool records = m.edge->records;
    absl::StrAppendFormat(
        &out, "| %s | %.0f | %s | %.2f ms | %.2f µs | %s | %s | %s | %.0f%% / %.0f%% |\n", m.name,
        med(m.runs, rps), records ? absl::StrFormat("**%.2f×**", med(m.runs, rps) / off_rps) : "",
        med(m.runs, p99), med(m.runs, edge_us),
        records ? absl::StrFormat("%.2f×", med(m.runs, edge_us) / off_us) : "",
        records ? absl::StrFormat("%.2f µs", med(m.runs, svc_us)) : "-",
        records ? absl::StrFormat("%.2f µs", med(m.runs, pg_us)) : "-",
        100 * med(m.runs, busy_of(c.server_cpu)), 100 * med(m.runs, busy_of(c.load_cpu)));
  }
  absl::StrAppend(&out, "\nEvery round (requests/s; edge µs/request):\n\n");
  for (const Mode& m : modes) {
    absl::StrAppend(&out, "- ", m.name, ": ",
                    absl::StrJoin(m.runs, ", ",
                                  [](std::string* s, const RedirectRun& r) {
                                    absl::StrAppendFormat(s, "%.0f (%.2f)", r.requests_per_s,
                                                          r.EdgeUsPerRequest());
                                  }),
                    "\n");
  }
  absl::StrAppendFormat(
      &out,
      "\nStored: %lld clicks in `click_counts` for %lld redirects the recording edge served "
      "(warm-ups included; %s); the edge without recording queued %lld events.\n\n",
      static_cast<long long>(stored), static_cast<long long>(redirects),
      stored == redirects ? "equal" : "**not equal**", static_cast<long long>(off_events));
  absl::StrAppend(&out, "wrk: `", wrk_command, "`\n\n");
  if (stored != redirects) {
    return absl::DataLossError(absl::StrCat("stored ", stored, " clicks for ", redirects,
                                            " redirects; report so far:\n", out));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------- ingest

// A realistic mix: mostly phones and desktops, some crawlers and link
// previews, referrers from search, social and chat, IPv4 and IPv6.
constexpr const char* kUserAgents[] = {
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/119.0.6045.163 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.1 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:120.0) Gecko/20100101 Firefox/120.0",
    "Mozilla/5.0 (Linux; Android 13; SAMSUNG SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "SamsungBrowser/23.0 Chrome/115.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
    "Gecko) Mobile/15E148 MicroMessenger/8.0.42(0x18002a2a) NetType/WIFI Language/zh_CN",
    "Mozilla/5.0 (Linux; Android 12; Pixel 6 Build/SD1A.210817.036; wv) AppleWebKit/537.36 "
    "(KHTML, like Gecko) Version/4.0 Chrome/94.0.4606.71 Mobile Safari/537.36",
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
    "WhatsApp/2.23.20.0",
    "curl/7.88.1",
};
constexpr const char* kReferers[] = {
    "",
    "",
    "",
    "https://www.google.com/",
    "https://t.co/x1y2z3",
    "https://l.facebook.com/l.php",
    "https://news.example.org/story?id=42",
    "android-app://com.slack/",
};

std::string RandomIp(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> byte(1, 254);
  switch (rng() % 4) {
    case 0:
      return absl::StrFormat("2001:db8:%x:%x::%x", rng() % 65536, rng() % 65536, rng() % 65536);
    case 1:
      return absl::StrFormat("198.51.100.%d", byte(rng));
    default:
      return absl::StrFormat("203.0.%d.%d", byte(rng) % 128, byte(rng));
  }
}

// `count` batches to cycle through (the batch id is set per call).
std::vector<v1::RecordClicksRequest> MakeBatches(const Config& c, const Fixture& f, int count,
                                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<v1::RecordClicksRequest> batches(count);
  const google::protobuf::Timestamp now = grpcutil::ToProtoTimestamp(absl::Now());
  for (v1::RecordClicksRequest& batch : batches) {
    for (int i = 0; i < c.ingest_batch; ++i) {
      v1::ClickEvent* e = batch.add_events();
      e->set_code(f.codes[rng() % f.codes.size()]);
      *e->mutable_time() = now;
      e->set_client_ip(RandomIp(rng));
      e->set_user_agent(kUserAgents[rng() % std::size(kUserAgents)]);
      e->set_referer(kReferers[rng() % std::size(kReferers)]);
      e->set_http_status(302);
    }
  }
  return batches;
}

struct IngestRun {
  double clicks_per_s = 0, p50_ms = 0, p99_ms = 0;
  int64_t accepted = 0, calls = 0, failed = 0;
  double service_cpu_s = 0, pg_cpu_s = 0, client_cpu_s = 0, window_s = 0;
  int64_t stored = 0;  // click_counts growth over the window
  std::vector<double> busy;
  double UsPerClick(double cpu_s) const {
    return accepted > 0 ? cpu_s * 1e6 / static_cast<double>(accepted) : 0;
  }
};

// Waits until no rollup row is pending (the service merges every second);
// false after `timeout`. A database without the rollup tables (an older
// schema) has none pending.
bool WaitForRollupsMerged(const Fixture& f, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (SqlNumber(f.pg->ConnInfo(),
                   "SELECT CASE WHEN to_regclass('click_rollup_pending') IS NULL THEN 0"
                   " ELSE (SELECT count(*) FROM click_rollup_pending) END") > 0) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

absl::StatusOr<IngestRun> MeasureIngest(const Config& c, const Fixture& f,
                                        testing::ServiceProcess& service,
                                        const std::vector<v1::RecordClicksRequest>& batches,
                                        const std::string& tag) {
  const std::string count_sql = "SELECT coalesce(sum(count), 0) FROM click_counts";
  const int64_t stored0 = SqlNumber(f.pg->ConnInfo(), count_sql);
  std::vector<std::unique_ptr<v1::ShortenService::Stub>> stubs;
  for (int i = 0; i < c.ingest_inflight; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("shortener.bench.connection", i);  // a connection per caller
    stubs.push_back(service.NewStub(service.admin_key(), args));
  }
  std::vector<std::vector<double>> latencies(c.ingest_inflight);
  std::vector<int64_t> accepted(c.ingest_inflight, 0), failed(c.ingest_inflight, 0);
  std::vector<std::string> errors(c.ingest_inflight);
  std::atomic<int64_t> sequence{0};
  const pid_t service_pid = service.process().pid();
  const BackendCpu backends0 = SampleBackends(f, service_pid);
  const double client0 = ProcessCpuSeconds(getpid());
  const CpuSample cpus0 = SampleCpus();
  const absl::Time t0 = absl::Now();
  const absl::Time end = t0 + absl::Seconds(c.ingest_seconds);
  std::vector<std::thread> threads;
  for (int t = 0; t < c.ingest_inflight; ++t) {
    threads.emplace_back([&, t] {
      v1::RecordClicksRequest request;
      v1::RecordClicksResponse response;
      while (absl::Now() < end) {
        const int64_t n = sequence.fetch_add(1);
        request = batches[static_cast<size_t>(n) % batches.size()];
        request.set_batch_id(absl::StrCat("bench-", tag, "-", n));
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        const absl::Time sent = absl::Now();
        grpc::Status st = stubs[t]->RecordClicks(&ctx, request, &response);
        if (!st.ok()) {
          ++failed[t];
          errors[t] = st.error_message();
          continue;
        }
        latencies[t].push_back(absl::ToDoubleMilliseconds(absl::Now() - sent));
        accepted[t] += response.accepted();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  // The window ends once the rollups of its batches are merged too: their
  // merge is part of the cost of a click.
  if (!WaitForRollupsMerged(f, absl::Minutes(2))) {
    return absl::DeadlineExceededError(absl::StrCat(tag, ": rollups not merged in 2 minutes"));
  }
  const absl::Time t1 = absl::Now();
  const BackendCpu backends1 = SampleBackends(f, service_pid);
  const double client1 = ProcessCpuSeconds(getpid());
  const CpuSample cpus1 = SampleCpus();
  IngestRun run;
  std::vector<double> all;
  for (int t = 0; t < c.ingest_inflight; ++t) {
    all.insert(all.end(), latencies[t].begin(), latencies[t].end());
    run.accepted += accepted[t];
    run.failed += failed[t];
    if (failed[t] > 0) {
      return absl::InternalError(absl::StrCat(tag, ": RecordClicks failed: ", errors[t]));
    }
  }
  std::sort(all.begin(), all.end());
  run.calls = static_cast<int64_t>(all.size());
  if (!all.empty()) {
    run.p50_ms = all[all.size() / 2];
    run.p99_ms = all[std::min(all.size() - 1, static_cast<size_t>(0.99 * all.size()))];
  }
  run.window_s = absl::ToDoubleSeconds(t1 - t0);
  run.clicks_per_s = static_cast<double>(run.accepted) / run.window_s;
  run.service_cpu_s = backends1.service_s - backends0.service_s;
  run.pg_cpu_s = backends1.pg_s - backends0.pg_s;
  run.client_cpu_s = client1 - client0;
  run.busy = BusyFractions(cpus0, cpus1);
  run.stored = SqlNumber(f.pg->ConnInfo(), count_sql) - stored0;
  if (run.stored != run.accepted) {
    return absl::DataLossError(
        absl::StrCat(tag, ": ", run.accepted, " clicks accepted but ", run.stored, " stored"));
  }
  return run;
}

absl::Status RunIngest(const Config& c, Fixture& f, std::string& out) {
  std::fprintf(stderr, "== RecordClicks ingest\n");
  // The second configuration: another replica on the same database, without
  // visit rows.
  testing::ServiceProcessOptions so;
  so.conninfo = f.pg->ConnInfo();
  so.secret_file = f.service->secret_file();
  so.extra_flags = {"--record_visits=false"};
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> counts_only =
      testing::ServiceProcess::Start(so);
  if (!counts_only.ok()) return counts_only.status();
  // The previous release, when given: its binary on the same database
  // (which, migrated by this one, it accepts as a newer schema).
  std::unique_ptr<testing::ServiceProcess> old_service;
  if (!c.old_service.empty()) {
    testing::ServiceProcessOptions oo;
    oo.conninfo = f.pg->ConnInfo();
    oo.secret_file = f.service->secret_file();
    oo.binary = c.old_service;
    oo.admin_key_file = f.pg->socket_dir() + "/old-admin.key";
    absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> started =
        testing::ServiceProcess::Start(oo);
    if (!started.ok()) return started.status();
    old_service = *std::move(started);
  }
  // Unpinned: the service and PostgreSQL may use both CPUs here.
  std::vector<pid_t> unpin = edge::ChildPids(f.postmaster);
  unpin.insert(unpin.end(),
               {f.service->process().pid(), (*counts_only)->process().pid(), f.postmaster});
  if (old_service != nullptr) unpin.push_back(old_service->process().pid());
  for (pid_t pid : unpin) {
    for (int cpu = 0; cpu < sysconf(_SC_NPROCESSORS_ONLN); ++cpu) {
      edge::AllowCpu(pid, cpu).IgnoreError();  // a backend may have exited meanwhile
    }
  }
  struct Variant {
    std::string name;
    testing::ServiceProcess* service;
    std::vector<IngestRun> runs;
  };
  Variant visits{"counts + visits + rollups (default)", f.service.get(), {}};
  Variant counts{"counts + rollups (`--record_visits=false`)", counts_only->get(), {}};
  Variant old{"previous release: counts + visits (`--old_service`)", old_service.get(), {}};
  std::vector<Variant*> variants = {&visits, &counts};
  if (old_service != nullptr) variants.insert(variants.begin() + 1, &old);
  const std::vector<v1::RecordClicksRequest> batches = MakeBatches(c, f, 16, 42);
  for (int round = 0; round < c.ingest_rounds; ++round) {
    std::vector<Variant*> order = variants;
    std::rotate(order.begin(), order.begin() + round % order.size(), order.end());
    for (Variant* v : order) {
      absl::StatusOr<IngestRun> run = MeasureIngest(c, f, *v->service, batches,
                                                    absl::StrCat(v == &visits ? "visits"
                                                                 : v == &old  ? "old"
                                                                              : "counts",
                                                                 "-", round));
      if (!run.ok()) return run.status();
      std::fprintf(stderr,
                   "round %d %s: %.0f clicks/s, batch p50 %.1f ms p99 %.1f ms, service %.2f "
                   "µs/click, postgres %.2f µs/click, busy %s\n",
                   round + 1, v->name.c_str(), run->clicks_per_s, run->p50_ms, run->p99_ms,
                   run->UsPerClick(run->service_cpu_s), run->UsPerClick(run->pg_cpu_s),
                   BusyText(run->busy).c_str());
      v->runs.push_back(*run);
    }
  }
  auto med = [](const std::vector<IngestRun>& runs, auto field) {
    std::vector<double> v;
    for (const IngestRun& r : runs) v.push_back(field(r));
    return Median(v);
  };
  absl::StrAppend(&out, "### RecordClicks ingest\n\n");
  absl::StrAppendFormat(
      &out,
      "A C++ gRPC client sends `RecordClicks` batches of %d events (a realistic mix: %zu "
      "User-Agents from phones, desktops, in-app browsers, crawlers and link previews; IPv4 and "
      "IPv6 clients; referrers from search, social and chat, or none; spread over %d links, "
      "all in the current hour) with %d calls in flight on separate connections, for %d s per "
      "window (which ends once the service has merged the window's rollups); %d windows per "
      "configuration, rotating the order; medians. The service and PostgreSQL are not pinned "
      "(both CPUs; the client shares them). Every window checks that `click_counts` grew by "
      "exactly the clicks accepted.\n\n",
      c.ingest_batch, std::size(kUserAgents), c.ingest_links, c.ingest_inflight, c.ingest_seconds,
      c.ingest_rounds);
  absl::StrAppend(&out,
                  "| service | clicks/s | batch p50 | batch p99 | service CPU/click | "
                  "PostgreSQL CPU/click | client CPU/click | CPU busy |\n"
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const Variant* v : variants) {
    std::vector<double> busy_sum;
    for (const IngestRun& r : v->runs) {
      double b = 0;
      for (double x : r.busy) b += x;
      busy_sum.push_back(b);
    }
    absl::StrAppendFormat(
        &out, "| %s | %.0f | %.1f ms | %.1f ms | %.2f µs | %.2f µs | %.2f µs | %.2f CPUs |\n",
        v->name, med(v->runs, [](const IngestRun& r) { return r.clicks_per_s; }),
        med(v->runs, [](const IngestRun& r) { return r.p50_ms; }),
        med(v->runs, [](const IngestRun& r) { return r.p99_ms; }),
        med(v->runs, [](const IngestRun& r) { return r.UsPerClick(r.service_cpu_s); }),
        med(v->runs, [](const IngestRun& r) { return r.UsPerClick(r.pg_cpu_s); }),
        med(v->runs, [](const IngestRun& r) { return r.UsPerClick(r.client_cpu_s); }),
        Median(busy_sum));
  }
  if (old_service != nullptr) {
    absl::StrAppendFormat(
        &out, "\nWith visits, this build / the previous release: **%.2f×** (median rates).\n",
        med(visits.runs, [](const IngestRun& r) { return r.clicks_per_s; }) /
            med(old.runs, [](const IngestRun& r) { return r.clicks_per_s; }));
  }
  absl::StrAppend(&out, "\nEvery window (clicks/s):\n\n");
  for (const Variant* v : variants) {
    absl::StrAppend(&out, "- ", v->name, ": ",
                    absl::StrJoin(v->runs, ", ",
                                  [](std::string* s, const IngestRun& r) {
                                    absl::StrAppendFormat(s, "%.0f", r.clicks_per_s);
                                  }),
                    "\n");
  }
  absl::StrAppend(&out, "\n");
  return absl::OkStatus();
}

// ----------------------------------------------------------------- stats

// Times of one kind of read, in milliseconds.
struct Timings {
  std::vector<double> ms;
  std::string Text() const {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    return sorted.empty() ? "-"
                          : absl::StrFormat("%.1f ms (%.1f–%.1f)", Median(sorted), sorted.front(),
                                            sorted.back());
  }
};

// The batch `b` of the stats load: clicks b * batch .. of `n`, their times
// spread evenly over [begin, end) in order, as an edge would send them.
v1::RecordClicksRequest StatsBatch(const Config& c, const std::string& code, int64_t b, int64_t n,
                                   absl::Time begin, absl::Time end) {
  std::mt19937_64 rng(static_cast<uint64_t>(b) * 7919 + 1);
  v1::RecordClicksRequest req;
  req.set_batch_id(absl::StrCat("stats-", b));
  const int64_t first = b * c.ingest_batch;
  const int64_t last = std::min(n, first + c.ingest_batch);
  for (int64_t i = first; i < last; ++i) {
    v1::ClickEvent* e = req.add_events();
    e->set_code(code);
    *e->mutable_time() = grpcutil::ToProtoTimestamp(
        begin + (end - begin) * (static_cast<double>(i) / static_cast<double>(n)));
    e->set_client_ip(RandomIp(rng));
    e->set_user_agent(kUserAgents[rng() % std::size(kUserAgents)]);
    e->set_referer(kReferers[rng() % std::size(kReferers)]);
    e->set_http_status(302);
  }
  return req;
}

// GetClickStats for `code` over [now - days, now).
v1::GetClickStatsRequest StatsRequest(const std::string& code, int days, bool hourly) {
  v1::GetClickStatsRequest req;
  req.set_code(code);
  const absl::Time now = absl::Now();
  *req.mutable_start_time() = grpcutil::ToProtoTimestamp(now - absl::Hours(24 * days));
  *req.mutable_end_time() = grpcutil::ToProtoTimestamp(now);
  req.set_granularity(hourly ? v1::GRANULARITY_HOUR : v1::GRANULARITY_DAY);
  return req;
}

absl::StatusOr<Timings> TimeGrpcStats(testing::ServiceProcess& service, const std::string& code,
                                      int days, bool hourly, int warmups, int reads,
                                      int64_t* total = nullptr) {
  std::unique_ptr<v1::ShortenService::Stub> stub = service.NewStub(service.admin_key());
  Timings t;
  for (int i = 0; i < warmups + reads; ++i) {
    v1::GetClickStatsRequest req = StatsRequest(code, days, hourly);
    v1::GetClickStatsResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
    const absl::Time sent = absl::Now();
    grpc::Status st = stub->GetClickStats(&ctx, req, &resp);
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - sent);
    if (!st.ok()) {
      return absl::InternalError(absl::StrCat("GetClickStats: ", st.error_message()));
    }
    if (i >= warmups) t.ms.push_back(ms);
    if (total != nullptr) *total = resp.total_human_clicks() + resp.total_bot_clicks();
  }
  return t;
}

absl::StatusOr<Timings> TimeShortenctlStats(const Fixture& f, const std::string& code, int days,
                                            bool hourly, int warmups, int reads,
                                            std::string* command) {
  std::vector<std::string> argv = {testing::BinaryPath("shortenctl"),
                                   "--service=" + f.service->target(),
                                   "--api_key_file=" + f.service->admin_key_file(),
                                   "stats",
                                   code,
                                   absl::StrCat("--from=", days, "d")};
  if (hourly) argv.push_back("--granularity=hour");
  *command = absl::StrJoin(argv.begin() + 1, argv.end(), " ");
  const std::string log = f.pg->socket_dir() + "/shortenctl.log";
  Timings t;
  for (int i = 0; i < warmups + reads; ++i) {
    const absl::Time start = absl::Now();
    absl::StatusOr<testing::Subprocess> p = testing::Subprocess::Spawn(argv, log);
    if (!p.ok()) return p.status();
    std::optional<int> exit = p->Wait(absl::Seconds(60));
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
    if (exit != 0) {
      return absl::InternalError(absl::StrCat("shortenctl stats failed; see ", log));
    }
    if (i >= warmups) t.ms.push_back(ms);
  }
  return t;
}

absl::Status RunStats(const Config& c, Fixture& f, std::string& out) {
  std::fprintf(stderr, "== GetClickStats on one link with %lld clicks\n",
               static_cast<long long>(c.stats_clicks));
  const std::string conninfo = f.pg->ConnInfo();
  testing::ServiceProcess* service = f.service.get();
  std::unique_ptr<testing::ServiceProcess> counts_only;
  if (!c.stats_record_visits) {
    testing::ServiceProcessOptions so;
    so.conninfo = conninfo;
    so.secret_file = f.service->secret_file();
    so.admin_key_file = f.pg->socket_dir() + "/stats-admin.key";
    so.extra_flags = {"--record_visits=false"};
    absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> started =
        testing::ServiceProcess::Start(so);
    if (!started.ok()) return started.status();
    counts_only = *std::move(started);
    service = counts_only.get();
  }
  edge::LinkLoadOptions lo;
  lo.target = f.service->target();
  lo.api_key = f.service->admin_key();
  lo.count = 1;
  lo.inflight = 1;
  lo.tag = "stats";
  absl::StatusOr<std::vector<std::string>> codes = edge::CreateLinks(lo);
  if (!codes.ok()) return codes.status();
  const std::string code = codes->front();
  const int64_t db0 = SqlNumber(conninfo, "SELECT pg_database_size(current_database())");

  // The load, through RecordClicks as the edge sends it.
  const int64_t n = c.stats_clicks;
  const int64_t batches = (n + c.ingest_batch - 1) / c.ingest_batch;
  const absl::Time end = absl::Now();
  const absl::Time begin = end - absl::Hours(24 * c.stats_days) + absl::Minutes(10);
  std::atomic<int64_t> next{0}, accepted{0}, retries{0};
  std::atomic<bool> failed{false};
  std::string error;
  std::mutex error_mu;
  const absl::Time t0 = absl::Now();
  std::vector<std::thread> threads;
  for (int t = 0; t < c.ingest_inflight; ++t) {
    threads.emplace_back([&, t] {
      grpc::ChannelArguments args;
      args.SetInt("shortener.bench.connection", t);
      std::unique_ptr<v1::ShortenService::Stub> stub = service->NewStub(service->admin_key(), args);
      int64_t b;
      while (!failed && (b = next.fetch_add(1)) < batches) {
        const v1::RecordClicksRequest req = StatsBatch(c, code, b, n, begin, end);
        grpc::Status st;
        for (int attempt = 0; attempt < 5; ++attempt) {
          v1::RecordClicksResponse resp;
          grpc::ClientContext ctx;
          ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
          st = stub->RecordClicks(&ctx, req, &resp);
          if (st.ok()) {
            accepted += resp.accepted();
            break;
          }
          ++retries;  // the same batch id: counted once whatever happened
        }
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          error = st.error_message();
          failed = true;
        }
        if (t == 0 && b % (batches / 10 + 1) == 0) {
          std::fprintf(stderr, "  loaded %lld of %lld batches, %.0f s\n", static_cast<long long>(b),
                       static_cast<long long>(batches), absl::ToDoubleSeconds(absl::Now() - t0));
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const double load_s = absl::ToDoubleSeconds(absl::Now() - t0);
  if (failed) return absl::InternalError(absl::StrCat("stats load: RecordClicks: ", error));
  if (accepted != n) {
    return absl::DataLossError(
        absl::StrCat("stats load: ", accepted.load(), " of ", n, " clicks accepted"));
  }
  if (!WaitForRollupsMerged(f, absl::Minutes(10))) {
    return absl::DeadlineExceededError("stats load: rollups not merged in 10 minutes");
  }
  const double merged_s = absl::ToDoubleSeconds(absl::Now() - t0);
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    tx.exec("VACUUM ANALYZE click_rollup_hours, click_rollup_hour_dims, click_rollup_pending");
  }
  const int64_t db1 = SqlNumber(conninfo, "SELECT pg_database_size(current_database())");
  const int64_t visits_bytes =
      SqlNumber(conninfo,
                "SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0)::bigint FROM pg_inherits"
                " WHERE inhparent = 'visits'::regclass");
  const int64_t subject = SqlNumber(conninfo,
                                    "SELECT subject FROM click_rollup_hours GROUP BY subject"
                                    " ORDER BY sum(human + bot) DESC LIMIT 1");
  const std::string of_link = absl::StrCat(" WHERE kind = 'l' AND subject = ", subject);
  const int64_t hours = SqlNumber(conninfo, "SELECT count(*) FROM click_rollup_hours" + of_link);
  const int64_t dim_rows =
      SqlNumber(conninfo, "SELECT count(*) FROM click_rollup_hour_dims" + of_link);
  const int64_t hour_bytes = SqlNumber(
      conninfo, "SELECT sum(pg_column_size(r.*))::bigint FROM click_rollup_hours r" + of_link);
  const int64_t dim_bytes = SqlNumber(
      conninfo, "SELECT sum(pg_column_size(r.*))::bigint FROM click_rollup_hour_dims r" + of_link);
  // Each table's size on disk (heap, indexes, free space) per row, times
  // the link's rows.
  auto on_disk = [&](const std::string& table) {
    const double total =
        static_cast<double>(SqlNumber(conninfo, "SELECT pg_total_relation_size('" + table + "')"));
    const double rows = static_cast<double>(SqlNumber(conninfo, "SELECT count(*) FROM " + table));
    const double mine =
        static_cast<double>(SqlNumber(conninfo, "SELECT count(*) FROM " + table + of_link));
    return rows > 0 ? total / rows * mine : 0.0;
  };
  const double disk_per_hour = (on_disk("click_rollup_hours") + on_disk("click_rollup_hour_dims")) /
                               static_cast<double>(std::max<int64_t>(hours, 1));

  // The reads: warm (two reads first), through gRPC and end to end.
  int64_t total = 0;
  {
    absl::StatusOr<Timings> all =
        TimeGrpcStats(*f.service, code, c.stats_days + 2, false, 0, 1, &total);
    if (!all.ok()) return all.status();
    if (total != n) {
      return absl::DataLossError(
          absl::StrCat("GetClickStats reports ", total, " clicks for ", n, " loaded"));
    }
  }
  struct Query {
    std::string name;
    int days;
    bool hourly;
    Timings grpc, ctl;
    std::string ctl_command;
  };
  std::vector<Query> queries = {{absl::StrCat(c.stats_days, " days by day"), c.stats_days, false},
                                {"7 days by hour", 7, true}};
  for (Query& q : queries) {
    absl::StatusOr<Timings> g = TimeGrpcStats(*f.service, code, q.days, q.hourly, 2, c.stats_reads);
    if (!g.ok()) return g.status();
    q.grpc = *g;
    absl::StatusOr<Timings> e =
        TimeShortenctlStats(f, code, q.days, q.hourly, 2, c.stats_reads, &q.ctl_command);
    if (!e.ok()) return e.status();
    q.ctl = *e;
    std::fprintf(stderr, "%s: gRPC %s, shortenctl %s\n", q.name.c_str(), q.grpc.Text().c_str(),
                 q.ctl.Text().c_str());
  }
  // The previous release on the same data, for comparison (it reads visits).
  std::vector<std::string> old_rows;
  if (!c.old_service.empty() && c.stats_record_visits) {
    testing::ServiceProcessOptions oo;
    oo.conninfo = conninfo;
    oo.secret_file = f.service->secret_file();
    oo.binary = c.old_service;
    oo.admin_key_file = f.pg->socket_dir() + "/old-stats-admin.key";
    absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> old =
        testing::ServiceProcess::Start(oo);
    if (!old.ok()) return old.status();
    for (const Query& q : queries) {
      // One read each, no warm-up: it scans the link's visits.
      const absl::Time sent = absl::Now();
      absl::StatusOr<Timings> g = TimeGrpcStats(**old, code, q.days, q.hourly, 0, 1);
      const std::string text =
          g.ok() ? g->Text()
                 : absl::StrFormat("failed after %.1f s: %s",
                                   absl::ToDoubleSeconds(absl::Now() - sent), g.status().message());
      old_rows.push_back(
          absl::StrFormat("| %s | previous release (reads `visits`) | %s | |\n", q.name, text));
      std::fprintf(stderr, "%s, previous release: %s\n", q.name.c_str(), text.c_str());
    }
  }

  absl::StrAppend(&out, "### GetClickStats on one link\n\n");
  absl::StrAppendFormat(
      &out,
      "%lld clicks for one link, times spread evenly over the last %d days, loaded through "
      "`RecordClicks` in batches of %d in time order as an edge sends them (%d calls in flight; "
      "the ingest phase's mix of User-Agents, addresses and referrers; visits %s): %.0f s "
      "(%.0f clicks/s; %lld retried calls), rollups merged %.0f s after the start. Database "
      "%.2f GB → %.2f GB (visits %.2f GB). Then `VACUUM ANALYZE` of the rollup tables, %d reads "
      "of each query after 2 warm-up reads (warm cache): median (min–max).\n\n",
      static_cast<long long>(n), c.stats_days, c.ingest_batch, c.ingest_inflight,
      c.stats_record_visits ? "recorded" : "not recorded (`--record_visits=false`)", load_s,
      static_cast<double>(n) / load_s, static_cast<long long>(retries.load()), merged_s,
      static_cast<double>(db0) / 1e9, static_cast<double>(db1) / 1e9,
      static_cast<double>(visits_bytes) / 1e9, c.stats_reads);
  absl::StrAppend(&out,
                  "| query | how | time | command |\n"
                  "| --- | --- | ---: | --- |\n");
  for (const Query& q : queries) {
    absl::StrAppendFormat(&out, "| %s | gRPC `GetClickStats` (C++ client, one channel) | %s | |\n",
                          q.name, q.grpc.Text());
    absl::StrAppendFormat(&out,
                          "| %s | `shortenctl stats` end to end (process start to exit) "
                          "| %s | `shortenctl %s` |\n",
                          q.name, q.ctl.Text(), q.ctl_command);
  }
  for (const std::string& row : old_rows) absl::StrAppend(&out, row);
  absl::StrAppendFormat(
      &out,
      "\nRollup storage of the link: %lld hourly rows and %lld dimension rows (%.1f per hour); "
      "%.0f bytes of row data per hour (sketch and counts %.0f, dimensions %.0f), %.0f bytes per "
      "hour on disk with indexes and free space (each table's size per row × the link's "
      "rows).\n\n",
      static_cast<long long>(hours), static_cast<long long>(dim_rows),
      static_cast<double>(dim_rows) / static_cast<double>(std::max<int64_t>(hours, 1)),
      static_cast<double>(hour_bytes + dim_bytes) /
          static_cast<double>(std::max<int64_t>(hours, 1)),
      static_cast<double>(hour_bytes) / static_cast<double>(std::max<int64_t>(hours, 1)),
      static_cast<double>(dim_bytes) / static_cast<double>(std::max<int64_t>(hours, 1)),
      disk_per_hour);
  return absl::OkStatus();
}

absl::Status Run(const Config& c) {
  const absl::Time start = absl::Now();
  Fixture f;
  absl::StatusOr<std::unique_ptr<testing::PgCluster>> pg = testing::PgCluster::Start();
  if (!pg.ok()) return pg.status();
  f.pg = *std::move(pg);
  f.postmaster = edge::PostmasterPid(f.pg->socket_dir() + "/data");
  testing::ServiceProcessOptions so;
  so.conninfo = f.pg->ConnInfo();
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> service =
      testing::ServiceProcess::Start(so);
  if (!service.ok()) return service.status();
  f.service = *std::move(service);
  edge::LinkLoadOptions lo;
  lo.target = f.service->target();
  lo.api_key = f.service->admin_key();
  lo.count = c.ingest_links;
  lo.inflight = 1;
  lo.tag = "clicks";
  absl::StatusOr<std::vector<std::string>> codes = edge::CreateLinks(lo);
  if (!codes.ok()) return codes.status();
  f.codes = *std::move(codes);

  struct utsname u {};
  uname(&u);
  std::string out = absl::StrCat(
      "Command: `", c.command, "` (", sysconf(_SC_NPROCESSORS_ONLN), " CPUs, ", CpuModel(),
      ", Linux ", u.release,
      "; load average at start: ", absl::StripAsciiWhitespace(ReadFile("/proc/loadavg")), ")\n\n");
  absl::Status st;
  if (c.Has("redirects")) st = RunRedirects(c, f, out);
  if (st.ok() && c.Has("ingest")) st = RunIngest(c, f, out);
  if (st.ok() && c.Has("stats")) st = RunStats(c, f, out);
  if (!st.ok()) return st;
  absl::StrAppendFormat(&out, "Total run time %.0f s.\n",
                        absl::ToDoubleSeconds(absl::Now() - start));
  std::printf("%s", out.c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace
}  // namespace shortener::bench::clicks

int main(int argc, char** argv) {
  return shortener::bench::BenchmarkMain<shortener::bench::clicks::Config>(
      argc, argv, "clicks_bench",
      "clicks_bench: cached redirects with click recording on vs off, RecordClicks ingest",
      shortener::bench::clicks::ConfigFromFlags, shortener::bench::clicks::Run);
}
