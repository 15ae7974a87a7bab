// clicks_bench's redirects phase: cached redirects through an edge
// recording clicks against one with --record_clicks=false (clicks_bench.h).
#include "tests/bench/clicks/clicks_bench.h"

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

namespace shortener::bench::clicks {
namespace {

using edge::BusyFractions;
using edge::CpuSample;
using edge::ProcessCpuSeconds;
using edge::SampleCpus;

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

}  // namespace

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

}  // namespace shortener::bench::clicks
