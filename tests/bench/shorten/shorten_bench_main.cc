// shorten_bench: durable Shorten / BatchShorten throughput of the real
// shorten-service over gRPC, side by side with pgbench's one-row-INSERT-per-
// transaction rate on the same private PostgreSQL cluster, in one run (the
// targets are ratios: machines here are shared and noisy), and the service's
// resident memory idle, with idle edges subscribed and under each load.
// Prints markdown for docs/benchmarks.md. Build in Release: see run.sh.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/shorten/grpc_load.h"
#include "tests/bench/shorten/idle_edges.h"
#include "tests/bench/shorten/pg_diagnostics.h"
#include "tests/bench/shorten/pgbench_reference.h"
#include "tests/bench/shorten/report.h"
#include "tests/bench/shorten/resource_probe.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/process_probe.h"
#include "tests/support/service_process.h"

ABSL_FLAG(int, seconds, 10, "length of each measured window (and of the pgbench run)");
ABSL_FLAG(int, rounds, 1,
          "repeat pgbench and every load this many times and report the medians (shared "
          "machines are noisy: 3 or 5 give steadier ratios)");
ABSL_FLAG(int, warmup_seconds, 2, "gRPC warm-up before each window (not measured)");
ABSL_FLAG(int, inflight, 64, "Shorten calls in flight; also pgbench's client count");
// 8 calls per connection: pgbench's 64 clients have 64 connections, and fewer
// connections serialise more of gRPC's per-connection work (the 2026-11-25
// late-night sweep, docs/benchmarks.md: 2, 4, 8, 16 channels gave 26.5, 27.3, 28.8
// and 29.0 k Shorten calls/s on average).
ABSL_FLAG(int, channels, 8, "gRPC channels (separate TCP connections) the calls spread over");
ABSL_FLAG(std::string, client_api, "async",
          "load generator's gRPC API: async (completion queues polled by --client_threads "
          "threads, no handoff per call) or callback (gRPC 1.51 hands every completion to "
          "a thread of its own)");
ABSL_FLAG(int, client_threads, 2, "completion-queue threads of the async load generator");
// Three 1000-link calls keep both cores busy (~90 %): with two, a core idles
// whenever one call waits for its commit (~82 % busy); four or more add
// PostgreSQL contention and queueing (docs/benchmarks.md has the sweep).
ABSL_FLAG(std::vector<std::string>, batch_inflight, std::vector<std::string>({"3"}),
          "BatchShorten calls in flight, one run each (the best is compared); empty: skip");
ABSL_FLAG(int, batch_size, 1000, "URLs per BatchShorten call");
ABSL_FLAG(std::string, service_flags, "",
          "extra shorten-service flags, space-separated, e.g. \"--group_commit_threads=3\"");
ABSL_FLAG(bool, checkpoint_each_phase, true,
          "CHECKPOINT before pgbench and before each load, so that no phase pays for a "
          "checkpoint an earlier one triggered; each then pays the full-page writes that "
          "follow a checkpoint (large for random-key indexes such as links_url_key)");
// A round writes ~40 segments; --pg_settings' min_wal_size keeps 128.
ABSL_FLAG(int, preallocate_wal_segments, 64,
          "WAL segments (16 MB) written and checkpointed before the first round, so that "
          "every round reuses segments as a server running at this rate does (0: the first "
          "round's loads create theirs, zero-filling 16 MB each)");
ABSL_FLAG(bool, skip_pgbench, false, "skip the pgbench reference (no ratios)");
ABSL_FLAG(int, pgbench_threads, 2, "pgbench -j");
ABSL_FLAG(std::string, pgbench_protocol, "simple",
          "pgbench -M: simple (pgbench's default, the reference of the targets), extended or "
          "prepared (~1.5x the simple rate here)");
// At 100+ k links/s PostgreSQL writes ~45 MB/s of WAL. With its default
// min_wal_size (80 MB) few segments survive a checkpoint to be recycled, so a
// committing backend creates and zero-fills a new 16 MB segment every ~0.4 s
// (XLogFileInit: ~4 % of the machine in a BatchShorten profile; PostgreSQL's
// CPU per link 8 -> 6 µs without it, docs/benchmarks.md). A server sized for
// this write rate recycles its segments; pgbench runs against the same one.
ABSL_FLAG(std::vector<std::string>, pg_settings,
          (std::vector<std::string>{"min_wal_size=2GB", "max_wal_size=4GB"}),
          "PostgreSQL settings name=value (ALTER SYSTEM) applied before pgbench and the service "
          "start; the default sizes WAL for the write rate measured here (empty: PostgreSQL's "
          "defaults)");
ABSL_FLAG(bool, rpc_floor, false,
          "diagnostics: also run Shorten with URLs the service rejects before any id or "
          "database work, to show what the RPC alone costs");
ABSL_FLAG(bool, force_new, false,
          "diagnostics: send every link with force_new, so that no de-duplication row is "
          "read or written (the targets are for the default, de-duplicated links)");
ABSL_FLAG(std::vector<std::string>, labels, {},
          "labels KEY=VALUE (comma-separated) on every link of both loads: what labelled links "
          "cost (default none)");
ABSL_FLAG(bool, fresh_tables, true,
          "empty the link tables before every round but the first, as pgbench recreates its "
          "table for every run (false: let them grow, to see what a larger dedupe index costs)");
// 500 stays under the service's --max_invalidation_subscribers (1024) and
// this process's open-file limit.
ABSL_FLAG(int, idle_edges, 500,
          "before the loads: open this many connections each holding a WatchInvalidations "
          "stream, as idle edges do, to a second service started for it, and report that "
          "service's memory per edge (0: skip)");
ABSL_FLAG(bool, statement_stats, false,
          "diagnostics: load pg_stat_statements and print the top statements of each window");

namespace shortener::bench {
namespace {

struct BenchConfig {
  int seconds = 10;
  int warmup_seconds = 2;
  int rounds = 1;
  int inflight = 64;
  int channels = 8;
  LoadOptions::Api client_api = LoadOptions::Api::kAsyncQueue;
  int client_threads = 2;
  std::vector<int> batch_inflight;
  int batch_size = 1000;
  std::vector<std::string> service_flags;
  bool skip_pgbench = false;
  int pgbench_threads = 2;
  std::string pgbench_protocol;
  std::vector<std::string> pg_settings;
  bool statement_stats = false;
  bool rpc_floor = false;
  bool force_new = false;
  std::map<std::string, std::string> labels;
  bool checkpoint_each_phase = true;
  int preallocate_wal_segments = 64;
  bool fresh_tables = true;
  int idle_edges = 500;
  std::string command;  // how this run was invoked, for the report
};

absl::StatusOr<BenchConfig> ConfigFromFlags(const std::string& command) {
  BenchConfig c;
  c.seconds = absl::GetFlag(FLAGS_seconds);
  c.warmup_seconds = absl::GetFlag(FLAGS_warmup_seconds);
  c.rounds = absl::GetFlag(FLAGS_rounds);
  c.inflight = absl::GetFlag(FLAGS_inflight);
  c.channels = absl::GetFlag(FLAGS_channels);
  c.client_threads = absl::GetFlag(FLAGS_client_threads);
  if (std::string api = absl::GetFlag(FLAGS_client_api); api == "callback") {
    c.client_api = LoadOptions::Api::kCallback;
  } else if (api != "async") {
    return absl::InvalidArgumentError(
        absl::StrCat("--client_api: expected async or callback, got \"", api, "\""));
  }
  c.batch_size = absl::GetFlag(FLAGS_batch_size);
  c.skip_pgbench = absl::GetFlag(FLAGS_skip_pgbench);
  c.pgbench_threads = absl::GetFlag(FLAGS_pgbench_threads);
  c.pgbench_protocol = absl::GetFlag(FLAGS_pgbench_protocol);
  c.pg_settings = absl::GetFlag(FLAGS_pg_settings);
  c.statement_stats = absl::GetFlag(FLAGS_statement_stats);
  c.rpc_floor = absl::GetFlag(FLAGS_rpc_floor);
  c.force_new = absl::GetFlag(FLAGS_force_new);
  for (const std::string& label : absl::GetFlag(FLAGS_labels)) {
    std::pair<std::string, std::string> kv = absl::StrSplit(label, absl::MaxSplits('=', 1));
    c.labels.insert(std::move(kv));
  }
  c.checkpoint_each_phase = absl::GetFlag(FLAGS_checkpoint_each_phase);
  c.preallocate_wal_segments = absl::GetFlag(FLAGS_preallocate_wal_segments);
  c.fresh_tables = absl::GetFlag(FLAGS_fresh_tables);
  c.idle_edges = absl::GetFlag(FLAGS_idle_edges);
  c.command = command;
  for (const std::string& s : absl::GetFlag(FLAGS_batch_inflight)) {
    int n = 0;
    if (!absl::SimpleAtoi(s, &n) || n < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--batch_inflight: not a count: ", s));
    }
    c.batch_inflight.push_back(n);
  }
  c.service_flags = absl::StrSplit(absl::GetFlag(FLAGS_service_flags), ' ', absl::SkipEmpty());
  if (c.seconds < 1 || c.warmup_seconds < 0 || c.rounds < 1 || c.inflight < 1 || c.channels < 1 ||
      c.client_threads < 1 || c.batch_size < 1 || c.batch_size > 1000 || c.idle_edges < 0) {
    return absl::InvalidArgumentError(
        "--seconds, --rounds, --inflight, --channels, --client_threads must be >= 1, "
        "--batch_size 1..1000, --idle_edges >= 0");
  }
  return c;
}

std::string Ms(double ms) { return absl::StrFormat("%.1f", ms); }

// Runs one closed-loop load with resource samples (and, when `statements`
// is set, pg_stat_statements) around its window; the service's VmHWM is
// restarted when the window opens, so the row's peak is the window's.
absl::StatusOr<ReportRow> MeasureLoad(const BenchConfig& c, const std::string& target,
                                      const std::string& api_key, ResourceProbe& probe,
                                      StatementStats* statements, bool batch, int inflight,
                                      bool rejected = false) {
  LoadOptions o;
  o.target = target;
  o.api_key = api_key;
  o.channels = c.channels;
  o.api = c.client_api;
  o.client_threads = c.client_threads;
  o.inflight = inflight;
  o.batch_size = c.batch_size;
  o.warmup = absl::Seconds(c.warmup_seconds);
  o.window = absl::Seconds(c.seconds);
  o.url_tag =
      absl::StrCat(batch ? "batch" : "single", inflight, "-", absl::ToUnixMicros(absl::Now()));
  o.rejected_urls = rejected;
  o.force_new = c.force_new;
  o.labels = c.labels;
  if (c.checkpoint_each_phase) {
    if (absl::Status st = probe.Exec("CHECKPOINT"); !st.ok()) return st;
  }
  ResourceSample before, after;
  o.on_window_start = [&] {
    if (statements != nullptr) statements->Reset();
    probe.ResetServicePeak();
    before = probe.Sample();
  };
  o.on_window_end = [&] { after = probe.Sample(); };
  absl::StatusOr<LoadResult> r = batch ? RunBatchShortenLoad(o) : RunShortenLoad(o);
  if (!r.ok()) return r.status();
  ReportRow row;
  row.name = batch ? absl::StrCat("BatchShorten ×", c.batch_size, ", ", inflight, " in flight")
                   : absl::StrCat("Shorten, ", inflight, " in flight");
  row.links_per_s = r->links_per_s;
  row.target_ratio = rejected ? 0 : batch ? 8.0 : 1.5;
  if (rejected) {
    // No links: the unit is the rejected call (its rate and CPU per call).
    row.name =
        absl::StrCat("diagnostic: Shorten rejected before storage, ", inflight, " in flight");
    row.links_per_s = r->calls_per_s;
  }
  row.latency = absl::StrCat("p50 ", Ms(r->p50_ms), " / p99 ", Ms(r->p99_ms), " ms");
  row.errors = r->errors();
  row.ops = rejected ? r->calls : r->links;
  row.resources = Diff(before, after);
  if (statements != nullptr) row.statements = statements->Table(8, row.ops);
  std::fprintf(stderr, "%s: %.0f links/s (%.0f calls/s), %s, errors %lld%s%s\n", row.name.c_str(),
               r->links_per_s, r->calls_per_s, row.latency.c_str(),
               static_cast<long long>(r->errors()),
               r->first_error.empty() ? "" : ", first: ", r->first_error.c_str());
  return row;
}

absl::StatusOr<ReportRow> MeasurePgbench(const BenchConfig& c, const testing::PgCluster& pg,
                                         ResourceProbe& probe, StatementStats* statements,
                                         const std::string& work_dir, std::string* command) {
  if (absl::Status st = CreatePgbenchTable(probe); !st.ok()) return st;
  PgbenchOptions o;
  o.run.socket_dir = pg.socket_dir();
  o.run.port = pg.port();
  o.run.user = pg.user();
  o.run.clients = c.inflight;
  o.run.threads = c.pgbench_threads;
  o.run.seconds = c.seconds;
  o.run.protocol = c.pgbench_protocol;
  o.run.work_dir = work_dir;
  if (c.checkpoint_each_phase) {
    if (absl::Status st = probe.Exec("CHECKPOINT"); !st.ok()) return st;
  }
  if (statements != nullptr) statements->Reset();
  absl::StatusOr<PgbenchResult> r = RunPgbench(o, probe);
  if (!r.ok()) return r.status();
  *command = r->report.command;
  ReportRow row;
  row.name = absl::StrCat("pgbench 1-row INSERT/tx, ", c.inflight, " clients");
  row.links_per_s = r->report.tps;
  row.latency = absl::StrCat("avg ", Ms(r->report.latency_avg_ms), " ms");
  row.ops = r->resources.write_transactions;
  row.resources = r->resources;
  row.service_measured = false;
  if (statements != nullptr) row.statements = statements->Table(8, row.ops);
  std::fprintf(stderr, "pgbench: %.0f tps, latency avg %.2f ms\n", r->report.tps,
               r->report.latency_avg_ms);
  return row;
}

// What every round measures against: one cluster, one service, probes.
struct Fixture {
  std::unique_ptr<testing::PgCluster> pg;
  std::unique_ptr<testing::ServiceProcess> service;
  std::unique_ptr<ResourceProbe> probe;
  std::unique_ptr<StatementStats> statements;  // only with --statement_stats
  std::string work_dir;                        // pgbench script and log
  testing::ProcessMemory service_idle;         // right after the start
};

absl::Status SetUp(const BenchConfig& c, Fixture& f) {
  absl::StatusOr<std::unique_ptr<testing::PgCluster>> pg = testing::PgCluster::Start();
  if (!pg.ok()) return pg.status();
  f.pg = *std::move(pg);
  if (absl::Status st = ConfigureCluster(*f.pg, c.pg_settings, c.statement_stats); !st.ok()) {
    return st;
  }
  if (absl::Status st = PreallocateWal(f.pg->ConnInfo(), c.preallocate_wal_segments); !st.ok()) {
    return st;
  }
  if (c.statement_stats) {
    absl::StatusOr<std::unique_ptr<StatementStats>> s = StatementStats::Create(f.pg->ConnInfo());
    if (!s.ok()) return s.status();
    f.statements = *std::move(s);
  }
  testing::ServiceProcessOptions so;
  so.conninfo = f.pg->ConnInfo();
  so.extra_flags = c.service_flags;
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> service =
      testing::ServiceProcess::Start(so);
  if (!service.ok()) return service.status();
  f.service = *std::move(service);
  absl::StatusOr<testing::ProcessMemory> idle =
      testing::ReadProcessMemory(f.service->process().pid());
  if (!idle.ok()) return idle.status();
  f.service_idle = *idle;
  absl::StatusOr<std::unique_ptr<ResourceProbe>> probe = ResourceProbe::Create(
      f.service->process().pid(), f.pg->socket_dir() + "/data", f.pg->ConnInfo());
  if (!probe.ok()) return probe.status();
  f.probe = *std::move(probe);
  char templ[] = "/tmp/shorten-bench-XXXXXX";
  if (mkdtemp(templ) == nullptr) return absl::InternalError("mkdtemp failed");
  f.work_dir = templ;
  return absl::OkStatus();
}

// The round's reference row: the pgbench run with the median rate (its CPU
// figures are that run's).
ReportRow MedianPgbench(std::vector<ReportRow> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const ReportRow& a, const ReportRow& b) { return a.links_per_s < b.links_per_s; });
  ReportRow row = runs[runs.size() / 2];
  std::vector<std::string> rates;
  for (const ReportRow& r : runs) rates.push_back(absl::StrFormat("%.0f", r.links_per_s));
  row.latency =
      absl::StrCat(row.latency, "; runs of the round ", absl::StrJoin(rates, ", "), " tps");
  return row;
}

// One round: pgbench, then each gRPC load followed by pgbench again, in the
// same order each time (MedianRows relies on it). Each load is compared with
// the mean of the pgbench runs right before and right after it: on a shared
// machine the reference drifts by tens of percent within a minute, and a
// reference measured once per round lands that drift on the later loads'
// ratios.
absl::StatusOr<std::vector<ReportRow>> RunRound(const BenchConfig& c, Fixture& f,
                                                std::string* pgbench_command) {
  std::vector<ReportRow> pgbench_runs;
  auto measure_reference = [&]() -> absl::Status {
    if (c.skip_pgbench) return absl::OkStatus();
    absl::StatusOr<ReportRow> row =
        MeasurePgbench(c, *f.pg, *f.probe, f.statements.get(), f.work_dir, pgbench_command);
    if (!row.ok()) return row.status();
    pgbench_runs.push_back(*std::move(row));
    return absl::OkStatus();
  };
  std::vector<ReportRow> loads;
  // Runs one load between two references.
  auto measure = [&](absl::StatusOr<ReportRow> load) -> absl::Status {
    if (!load.ok()) return load.status();
    if (absl::Status st = measure_reference(); !st.ok()) return st;
    if (!c.skip_pgbench) {
      load->reference_tps =
          (pgbench_runs[pgbench_runs.size() - 2].links_per_s + pgbench_runs.back().links_per_s) / 2;
    }
    loads.push_back(*std::move(load));
    return absl::OkStatus();
  };
  if (absl::Status st = measure_reference(); !st.ok()) return st;
  const std::string target = f.service->target();
  // A tenant's key as campaign tools use (scope shorten, no rate limit):
  // every call pays for authentication like a production call does.
  absl::StatusOr<std::string> key = f.service->CreateKey("bench", "shorten");
  if (!key.ok()) return key.status();
  if (absl::Status st = measure(MeasureLoad(c, target, *key, *f.probe, f.statements.get(),
                                            /*batch=*/false, c.inflight));
      !st.ok()) {
    return st;
  }
  for (int inflight : c.batch_inflight) {
    if (absl::Status st = measure(MeasureLoad(c, target, *key, *f.probe, f.statements.get(),
                                              /*batch=*/true, inflight));
        !st.ok()) {
      return st;
    }
  }
  if (c.rpc_floor) {
    if (absl::Status st = measure(MeasureLoad(c, target, *key, *f.probe, nullptr,
                                              /*batch=*/false, c.inflight, /*rejected=*/true));
        !st.ok()) {
      return st;
    }
  }
  if (!f.service->process().running()) {
    return absl::InternalError(absl::StrCat("shorten-service died; log:\n", f.service->Log()));
  }
  std::vector<ReportRow> rows;
  if (!pgbench_runs.empty()) rows.push_back(MedianPgbench(std::move(pgbench_runs)));
  for (ReportRow& row : loads) rows.push_back(std::move(row));
  return rows;
}

// The memory of a service with `edges` idle edges subscribed. A service of
// its own on the same database, stopped afterwards: the measured service's
// allocator would keep most of what the edges used, and the loads would
// start from it (and memory the loads left would hide the edges' cost).
absl::StatusOr<IdleEdgesResult> IdleEdgesOnService(const BenchConfig& c, Fixture& f, int edges) {
  testing::ServiceProcessOptions so;
  so.conninfo = f.pg->ConnInfo();
  so.secret_file = f.service->secret_file();  // the database's
  so.extra_flags = c.service_flags;
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> service =
      testing::ServiceProcess::Start(so);
  if (!service.ok()) return service.status();
  v1::CreateApiKeyRequest request;
  request.set_name("bench-edges");
  request.set_infrastructure(true);
  request.add_scopes("watch_invalidations");
  absl::StatusOr<std::string> key = (*service)->CreateKey(request);
  if (!key.ok()) return key.status();
  absl::StatusOr<IdleEdgesResult> r =
      MeasureIdleEdges((*service)->target(), *key, (*service)->process().pid(), edges);
  if (r.ok()) {
    std::fprintf(stderr, "%d idle edges: service VmRSS %.1f -> %.1f MiB (%.1f KiB each)\n",
                 r->edges, static_cast<double>(r->rss_before_bytes) / (1 << 20),
                 static_cast<double>(r->rss_open_bytes) / (1 << 20), r->bytes_per_edge() / 1024);
  }
  return r;
}

absl::Status Run(const BenchConfig& c) {
  Fixture f;
  absl::Status st = SetUp(c, f);
  std::vector<std::vector<ReportRow>> rounds;
  ReportHeader header;
  header.service_idle = f.service_idle;
  if (st.ok() && c.idle_edges > 0) {
    absl::StatusOr<IdleEdgesResult> edges = IdleEdgesOnService(c, f, c.idle_edges);
    if (edges.ok()) header.idle_edges = *edges;
    st = edges.status();
  }
  if (st.ok()) header.peak_per_window = f.probe->ResetServicePeak();
  for (int i = 0; st.ok() && i < c.rounds; ++i) {
    if (c.rounds > 1) std::fprintf(stderr, "round %d of %d\n", i + 1, c.rounds);
    if (i > 0 && c.fresh_tables) {
      st = EmptyLinkTables(f.pg->ConnInfo());
      if (!st.ok()) break;
    }
    absl::StatusOr<std::vector<ReportRow>> rows = RunRound(c, f, &header.pgbench_command);
    if (rows.ok()) rounds.push_back(*std::move(rows));
    st = rows.status();
  }
  if (!f.work_dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(f.work_dir, ignored);
  }
  if (!st.ok()) return st;
  header.command = c.command;
  header.service_flags = absl::StrJoin(c.service_flags, " ");
  header.pg_settings = absl::StrJoin(c.pg_settings, ", ");
  header.fresh_tables = c.fresh_tables;
  header.nproc = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  header.cpu_model = CpuModel();
  std::printf("%s", FormatReport(header, rounds).c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace
}  // namespace shortener::bench

int main(int argc, char** argv) {
  return shortener::bench::BenchmarkMain<shortener::bench::BenchConfig>(
      argc, argv, "shorten_bench", "shorten_bench: Shorten/BatchShorten throughput vs pgbench",
      shortener::bench::ConfigFromFlags, shortener::bench::Run);
}
