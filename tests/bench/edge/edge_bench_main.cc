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
// see run.sh.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
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
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/edge/link_loader.h"
#include "tests/bench/edge/nginx_process.h"
#include "tests/bench/edge/pg_reference.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/bench/edge/report.h"
#include "tests/bench/edge/wrk_runner.h"
#include "tests/support/edge_process.h"
#include "tests/support/http_client.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"
#include "tests/support/subprocess.h"

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

constexpr char kTaskset[] = "/usr/bin/taskset";

// Every request a different code: the codes file is split over wrk's
// threads (thread t takes lines t, t + n, t + 2n, ...), each thread walks
// its share once, in order. A thread that runs out asks for /healthz
// instead and counts it: the driver reports those (a run must not wrap).
constexpr char kLuaScript[] = R"lua(-- edge_bench: each request the next unused code.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local nthreads = tonumber(args[2])
  requests = {}
  local i = 0
  for line in io.lines(args[1]) do
    if i % nthreads == tid then
      requests[#requests + 1] = wrk.format(nil, "/" .. line)
    end
    i = i + 1
  end
  next_index = 1
  if tid == 0 and requests[1] ~= nil then
    -- wrk calls request() once on thread 0 before the run, only to check
    -- that the request parses: that call must not use up a code.
    requests[0] = requests[1]
    next_index = 0
  end
  exhausted = 0
  fallback = wrk.format(nil, "/healthz")
end

function request()
  local r = requests[next_index]
  if r == nil then
    exhausted = exhausted + 1
    return fallback
  end
  next_index = next_index + 1
  return r
end

function done(summary, latency, reqs)
  local used, exh = 0, 0
  for _, t in ipairs(threads) do
    used = used + t:get("next_index") - 1
    exh = exh + t:get("exhausted")
  end
  io.write(string.format("edgebench codes_requested %d\nedgebench exhausted %d\n", used, exh))
end
)lua";

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

// Every sample of one /metrics scrape: "name{labels}" -> value. `port` is
// the edge's admin port (EdgeProcess::admin_port()): /metrics is not on the
// public one.
using Scrape = std::map<std::string, double>;

Scrape ScrapeMetrics(int port) {
  Scrape out;
  absl::StatusOr<testing::HttpResponse> r = testing::HttpGet(port, "/metrics");
  if (!r.ok() || r->status != 200) return out;
  for (absl::string_view line : absl::StrSplit(r->body, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(space + 1), &v)) out[std::string(line.substr(0, space))] = v;
  }
  return out;
}

double Value(const Scrape& s, const std::string& name) {
  auto it = s.find(name);
  return it == s.end() ? 0 : it->second;
}

int64_t Delta(const Scrape& before, const Scrape& after, const std::string& name) {
  return static_cast<int64_t>(Value(after, name) - Value(before, name));
}

// Deltas of edge_http_responses_total by code; `own_200s` is the number of
// 200s the driver caused itself on the public port, removed from the count
// (its /metrics scrapes go to the admin port and are not counted).
void ResponseDeltas(const Scrape& before, const Scrape& after, int64_t own_200s, int64_t* ok302,
                    int64_t* other, std::string* other_statuses) {
  const std::string prefix = "edge_http_responses_total{code=\"";
  *ok302 = 0;
  *other = 0;
  std::vector<std::string> parts;
  for (const auto& [name, value] : after) {
    if (!absl::StartsWith(name, prefix)) continue;
    const std::string code = name.substr(prefix.size(), name.size() - prefix.size() - 2);
    int64_t d = static_cast<int64_t>(value - Value(before, name));
    if (code == "200") d -= own_200s;
    if (d <= 0) continue;
    if (code == "302") {
      *ok302 += d;
    } else {
      *other += d;
      parts.push_back(absl::StrCat(code, ": ", d));
    }
  }
  *other_statuses = absl::StrJoin(parts, ", ");
}

// The upper bound (ms) of the histogram bucket holding quantile `q` of the
// observations between two scrapes; 0 without observations, -1 past the
// last finite bound.
double HistogramQuantileMs(const Scrape& before, const Scrape& after, const std::string& name,
                           double q) {
  const std::string prefix = name + "_bucket{le=\"";
  std::vector<std::pair<double, double>> buckets;  // (bound, cumulative delta)
  for (const auto& [key, value] : after) {
    if (!absl::StartsWith(key, prefix)) continue;
    const std::string bound = key.substr(prefix.size(), key.size() - prefix.size() - 2);
    double b = 0;
    if (bound == "+Inf") {
      b = std::numeric_limits<double>::infinity();
    } else if (!absl::SimpleAtod(bound, &b)) {
      continue;
    }
    buckets.emplace_back(b, value - Value(before, key));
  }
  std::sort(buckets.begin(), buckets.end());
  if (buckets.empty() || buckets.back().second <= 0) return 0;
  const double target = q * buckets.back().second;
  for (const auto& [bound, cumulative] : buckets) {
    if (cumulative >= target) return std::isinf(bound) ? -1 : bound * 1e3;
  }
  return -1;
}

// Lines of `label`'s log that look like trouble, and whether it still runs.
void CollectEdgeProblems(testing::EdgeProcess& edge, const std::string& label,
                         std::vector<std::string>* problems) {
  if (!edge.process().running()) {
    problems->push_back(absl::StrCat(label, ": the edge process is not running any more"));
  }
  int shown = 0, total = 0;
  const std::string log = edge.Log();
  const std::vector<absl::string_view> lines = absl::StrSplit(log, '\n', absl::SkipEmpty());
  std::fprintf(stderr, "%s edge log: %zu lines%s\n", label.c_str(), lines.size(),
               lines.empty() ? "" : absl::StrCat(", first: ", lines[0]).c_str());
  for (absl::string_view line : lines) {
    const std::string lower = absl::AsciiStrToLower(line);
    const bool bad = absl::StrContains(lower, "error") || absl::StrContains(lower, "warn") ||
                     absl::StrContains(lower, "fail") || absl::StrContains(lower, "fatal") ||
                     absl::StrContains(lower, "abort") || absl::StrContains(lower, "sanitizer") ||
                     (line.size() > 1 && (line[0] == 'E' || line[0] == 'W' || line[0] == 'F') &&
                      absl::ascii_isdigit(line[1]));
    if (!bad) continue;
    ++total;
    if (shown++ < 5) problems->push_back(absl::StrCat(label, " edge log: `", line, "`"));
  }
  if (total > shown) {
    problems->push_back(absl::StrCat(label, " edge log: ", total - shown, " more such lines"));
  }
}

// What every phase shares.
struct Fixture {
  std::unique_ptr<testing::PgCluster> pg;
  std::unique_ptr<testing::ServiceProcess> service;
  std::string work_dir;  // scripts, code files, logs
  pid_t postmaster = 0;
  std::vector<std::string> codes;  // uncached / memory links, creation order
};

absl::Status SetUp(const Config& c, Fixture& f) {
  absl::StatusOr<std::unique_ptr<testing::PgCluster>> pg = testing::PgCluster::Start();
  if (!pg.ok()) return pg.status();
  f.pg = *std::move(pg);
  f.postmaster = PostmasterPid(f.pg->socket_dir() + "/data");
  testing::ServiceProcessOptions so;
  so.conninfo = f.pg->ConnInfo();
  so.extra_flags = c.service_flags;
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> service =
      testing::ServiceProcess::Start(so);
  if (!service.ok()) return service.status();
  f.service = *std::move(service);
  char templ[] = "/tmp/edge-bench-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  f.work_dir = templ;
  std::ofstream lua(f.work_dir + "/each_code_once.lua");
  lua << kLuaScript;
  if (!lua) return absl::InternalError("cannot write the Lua script");
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> StartEdge(
    const Config& c, Fixture& f, std::vector<std::string> flags,
    std::vector<std::string> launcher = {}) {
  flags.insert(flags.end(), c.edge_flags.begin(), c.edge_flags.end());
  testing::EdgeProcessOptions eo;
  eo.service_target = f.service->target();
  eo.secret_file = f.service->secret_file();
  absl::StatusOr<std::string> key_file = f.service->EdgeKeyFile();
  if (!key_file.ok()) return key_file.status();
  eo.api_key_file = *key_file;
  eo.extra_flags = std::move(flags);
  eo.launcher = std::move(launcher);
  return testing::EdgeProcess::Start(eo);
}

std::string EdgeCommand(const Config& c, const std::vector<std::string>& flags,
                        const std::vector<std::string>& launcher = {}) {
  std::vector<std::string> all = launcher;
  all.push_back("redirect-edge --listen=127.0.0.1:PORT --service=... --codec_secret_file=...");
  all.insert(all.end(), flags.begin(), flags.end());
  all.insert(all.end(), c.edge_flags.begin(), c.edge_flags.end());
  return absl::StrJoin(all, " ");
}

// ---------------------------------------------------------------- cached

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

absl::Status RunCached(const Config& c, Fixture& f, bool pinned, Report& report) {
  const int rounds = pinned ? c.rounds : c.rounds_threads2;
  std::fprintf(stderr, "== cached redirects, %s\n", pinned ? "--threads=1 pinned" : "--threads=2");
  // A few links; wrk asks for the first.
  LinkLoadOptions lo;
  lo.target = f.service->target();
  lo.api_key = f.service->admin_key();
  lo.count = 16;
  lo.inflight = 1;
  lo.tag = pinned ? "cached1" : "cached2";
  absl::StatusOr<std::vector<std::string>> codes = CreateLinks(lo);
  if (!codes.ok()) return codes.status();
  const std::string path = "/" + (*codes)[0];
  const std::string url = BenchUrl(lo.tag, 0);

  const std::vector<std::string> server_launcher =
      pinned ? std::vector<std::string>{kTaskset, "-c", std::to_string(c.server_cpu)}
             : std::vector<std::string>{};
  const std::vector<std::string> wrk_launcher = {kTaskset, "-c", std::to_string(c.load_cpu)};
  const std::vector<std::string> edge_flags = {pinned ? "--threads=1" : "--threads=2",
                                               "--cache_ttl=1h"};
  absl::StatusOr<std::unique_ptr<testing::EdgeProcess>> edge =
      StartEdge(c, f, edge_flags, server_launcher);
  if (!edge.ok()) return edge.status();
  const pid_t edge_pid = (*edge)->process().pid();
  if (pinned) {
    absl::SleepFor(absl::Milliseconds(300));
    if (!report.memory) report.memory.emplace();
    report.memory->idle_rss_threads1_kb = StatusKb(edge_pid, "VmRSS");
  }
  // Warm the cache and check every answer.
  testing::HttpResponse edge_response;
  for (size_t i = 0; i < codes->size(); ++i) {
    absl::StatusOr<testing::HttpResponse> r = testing::HttpGet((*edge)->port(), "/" + (*codes)[i]);
    if (!r.ok()) return r.status();
    if (r->status != 302 || r->Header("location") != BenchUrl(lo.tag, static_cast<int64_t>(i))) {
      return absl::InternalError(absl::StrCat("edge answered ", r->status, " Location \"",
                                              r->Header("location"), "\" for ", (*codes)[i],
                                              "; log:\n", (*edge)->Log()));
    }
    if (i == 0) edge_response = *r;
  }
  NginxOptions no;
  no.workers = pinned ? 1 : 2;
  no.location = url;
  no.headers = HeadersToCopy(edge_response);
  no.launcher = server_launcher;
  absl::StatusOr<std::unique_ptr<NginxProcess>> nginx = NginxProcess::Start(no);
  if (!nginx.ok()) return nginx.status();
  {
    absl::StatusOr<testing::HttpResponse> r = testing::HttpGet((*nginx)->port(), path);
    if (!r.ok() || r->status != 302 || r->Header("location") != url) {
      return absl::InternalError("nginx does not answer the expected 302");
    }
  }
  if (pinned) {
    report.nginx_config = (*nginx)->config();
    report.response_sizes = absl::StrCat(
        "One response of each, as received on a keep-alive connection (nginx's `return 302` "
        "always adds its small HTML body):\n\n```\n--- edge\n",
        RawResponse((*edge)->port(), path), "\n--- nginx\n", RawResponse((*nginx)->port(), path),
        "\n```");
  }
  Target edge_target{(*edge)->port(), [edge_pid] { return ProcessCpuSeconds(edge_pid); },
                     edge->get()};
  NginxProcess* nginx_ptr = nginx->get();
  Target nginx_target{(*nginx)->port(), [nginx_ptr] { return nginx_ptr->CpuSeconds(); }, nullptr};

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
  cmp.edge_command = EdgeCommand(c, edge_flags, server_launcher);
  if (c.warmup_seconds > 0) {
    for (const Target* t : {&nginx_target, &edge_target}) {
      absl::StatusOr<ServerRun> w =
          MeasureCachedRun(c, f, *t, path, c.warmup_seconds, wrk_launcher, nullptr);
      if (!w.ok()) return w.status();
    }
  }
  for (int round = 0; round < rounds; ++round) {
    const bool nginx_first = round % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_nginx = (k == 0) == nginx_first;
      std::string command;
      absl::StatusOr<ServerRun> run =
          MeasureCachedRun(c, f, is_nginx ? nginx_target : edge_target, path, c.seconds,
                           wrk_launcher, is_nginx ? nullptr : &command);
      if (!run.ok()) return run.status();
      std::fprintf(stderr,
                   "round %d %s: %.0f req/s, p99 %.2f ms, %.2f µs CPU/req, wrk CPU %.1f s, "
                   "other load %.2f CPUs, busy %s%s\n",
                   round + 1, is_nginx ? "nginx" : "edge ", run->requests_per_s, run->p99_ms,
                   run->CpuUsPerRequest(), run->wrk_cpu_s, run->OtherCpus(),
                   absl::StrJoin(run->cpu_busy, "/",
                                 [](std::string* out, double b) {
                                   absl::StrAppendFormat(out, "%.0f%%", b * 100);
                                 })
                       .c_str(),
                   is_nginx ? ""
                            : absl::StrCat(", 302s ", run->responses_302, ", other ",
                                           run->responses_other, " ", run->other_statuses)
                                  .c_str());
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
      if (!(*nginx)->running()) {
        return absl::InternalError(absl::StrCat("nginx died; log:\n", (*nginx)->ErrorLog()));
      }
      if (!(*edge)->process().running()) {
        return absl::InternalError(absl::StrCat("the edge died; log:\n", (*edge)->Log()));
      }
    }
  }
  // The edge's own view of the whole phase.
  const Scrape end = ScrapeMetrics((*edge)->admin_port());
  std::fprintf(stderr, "edge cache: hits %.0f misses %.0f entries %.0f\n",
               Value(end, "edge_cache_hits_total"), Value(end, "edge_cache_misses_total"),
               Value(end, "edge_cache_entries"));
  CollectEdgeProblems(**edge, cmp.edge_name, &report.problems);
  if (pinned) {
    report.pinned = std::move(cmp);
  } else {
    report.threads2 = std::move(cmp);
  }
  return absl::OkStatus();
}

// --------------------------------------------------------------- uncached

absl::Status WriteCodes(const std::vector<std::string>& codes, const std::string& path) {
  std::ofstream out(path);
  for (const std::string& code : codes) out << code << '\n';
  return out ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", path));
}

// Creates links until f.codes holds `count`, then VACUUM ANALYZE +
// CHECKPOINT so that neither autovacuum nor a checkpoint runs during the
// measured windows.
absl::Status EnsureLinks(const Config& c, Fixture& f, int64_t count, Report& report) {
  (void)c;
  const int64_t have = static_cast<int64_t>(f.codes.size());
  if (have >= count) return absl::OkStatus();
  std::fprintf(stderr, "creating %lld links\n", static_cast<long long>(count - have));
  LinkLoadOptions lo;
  lo.target = f.service->target();
  lo.api_key = f.service->admin_key();
  lo.count = count - have;
  lo.inflight = 4;
  lo.tag = absl::StrCat("bulk", have);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<std::string>> codes = CreateLinks(lo);
  if (!codes.ok()) return codes.status();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  f.codes.insert(f.codes.end(), codes->begin(), codes->end());
  if (!report.creation) report.creation.emplace();
  report.creation->links += lo.count;
  report.creation->seconds += seconds;
  std::fprintf(stderr, "created %lld links in %.1f s; VACUUM ANALYZE, CHECKPOINT\n",
               static_cast<long long>(lo.count), seconds);
  return ExecSql(f.pg->ConnInfo(), "VACUUM ANALYZE links; CHECKPOINT");
}

std::vector<std::string> UncachedEdgeFlags(int64_t entries) {
  // Room for every code (shards fill unevenly), nothing expires mid-run.
  const int64_t max_entries = std::max<int64_t>(2 * entries, 1000000);
  return {absl::StrCat("--cache_entries=", max_entries),
          absl::StrCat("--cache_bytes=", int64_t{1} << 30), "--cache_ttl=1h"};
}

absl::StatusOr<UncachedRound> MeasureUncachedRound(const Config& c, Fixture& f, const IdRange& ids,
                                                   const std::string& codes_path,
                                                   bool pgbench_first, UncachedResult& u,
                                                   Report& report, int round) {
  UncachedRound r;
  auto run_pgbench = [&]() -> absl::Status {
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
  };
  auto run_edge = [&]() -> absl::Status {
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
    r.edge.requests_per_s = wr->requests_per_s;
    r.edge.requests = wr->requests;
    r.edge.p50_ms = wr->p50_ms;
    r.edge.p99_ms = wr->p99_ms;
    r.edge.wrk_cpu_s = wr->wrk_cpu_s;
    r.edge.cpu_busy = BusyFractions(cpus0, cpus1);
    r.edge.wrk_errors = wr->non_2xx_3xx + wr->socket_errors;
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
    auto it = wr->script_values.find("exhausted");
    if (it == wr->script_values.end() || !absl::SimpleAtoi(it->second, &exhausted)) {
      return absl::InternalError(
          absl::StrCat("the Lua script reported nothing; wrk output:\n", wr->output));
    }
    r.exhausted = exhausted;
    u.wrk_command = wr->command;
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
    if (r.edge.responses_other > 0) {
      report.problems.push_back(absl::StrCat("uncached round ", round + 1, ": ",
                                             r.edge.responses_other, " non-302 responses (",
                                             r.edge.other_statuses, ")"));
    }
    CollectEdgeProblems(**edge, absl::StrCat("uncached round ", round + 1), &report.problems);
    return absl::OkStatus();
  };
  if (pgbench_first) {
    if (absl::Status st = run_pgbench(); !st.ok()) return st;
    if (absl::Status st = run_edge(); !st.ok()) return st;
  } else {
    if (absl::Status st = run_edge(); !st.ok()) return st;
    if (absl::Status st = run_pgbench(); !st.ok()) return st;
  }
  return r;
}

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

// ----------------------------------------------------------------- memory

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
  // Stop wrk once every code was answered (or nothing moves for 5 s).
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
  const absl::Time start = absl::Now();
  absl::StatusOr<WrkResult> wr = RunWrk(w);
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
  std::fprintf(stderr,
               "memory: idle %lld kB, full %lld kB (peak %lld), entries %lld, bytes %lld, 302s "
               "%lld, other %lld %s, fill %.1f s, healthz fillers %lld\n",
               static_cast<long long>(m.idle_rss_kb), static_cast<long long>(m.full_rss_kb),
               static_cast<long long>(m.full_hwm_kb), static_cast<long long>(m.cache_entries),
               static_cast<long long>(m.cache_bytes), static_cast<long long>(m.responses_302),
               static_cast<long long>(m.responses_other), m.other_statuses.c_str(), m.fill_seconds,
               static_cast<long long>(exhausted));
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

// ------------------------------------------------------------------- main

std::string CommandOutput(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[512];
  while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  pclose(p);
  return std::string(absl::StripAsciiWhitespace(out));
}

absl::Status Run(const Config& c) {
  const absl::Time start = absl::Now();
  Report report;
  report.command = c.command;
  struct utsname u {};
  uname(&u);
  report.machine =
      absl::StrCat(sysconf(_SC_NPROCESSORS_ONLN), " CPUs (", CpuModel(), "), Linux ", u.release);
  report.versions =
      absl::StrCat(CommandOutput("/usr/sbin/nginx -v 2>&1"), ", ",
                   CommandOutput("/usr/bin/wrk -v 2>&1 | head -1 | cut -d' ' -f1,2"), ", ",
                   CommandOutput("/usr/lib/postgresql/15/bin/postgres --version"));
  Fixture f;
  absl::Status st = SetUp(c, f);
  if (st.ok() && c.Has("cached")) st = RunCached(c, f, /*pinned=*/true, report);
  if (st.ok() && c.Has("threads2")) st = RunCached(c, f, /*pinned=*/false, report);
  if (st.ok() && c.Has("uncached")) st = RunUncached(c, f, report);
  if (st.ok() && c.Has("memory")) st = RunMemory(c, f, report);
  if (st.ok() && !f.service->process().running()) {
    report.problems.push_back(absl::StrCat(
        "shorten-service is not running at the end; log tail:\n",
        f.service->Log().substr(f.service->Log().size() > 2000 ? f.service->Log().size() - 2000
                                                               : 0)));
  }
  if (!f.work_dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(f.work_dir, ignored);
  }
  if (!st.ok()) return st;
  report.total_seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf("%s", FormatReport(report).c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace
}  // namespace shortener::bench::edge

int main(int argc, char** argv) {
  return shortener::bench::BenchmarkMain<shortener::bench::edge::Config>(
      argc, argv, "edge_bench",
      "edge_bench: redirect-edge cached (vs nginx) and uncached (vs pgbench) rates, memory",
      shortener::bench::edge::ConfigFromFlags, shortener::bench::edge::Run);
}
