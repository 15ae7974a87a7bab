// clicks_bench's ingest phase: RecordClicks from a gRPC load generator,
// this build with and without visits and an older binary side by side
// (clicks_bench.h).
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
#include "absl/time/time.h"
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

}  // namespace

absl::Status RunIngest(const Config& c, Fixture& f, std::string& out) {
  std::fprintf(stderr, "== RecordClicks ingest\n");
  if (c.ingest_labels) {
    // One campaign label on every link (the benchmark's links are all the
    // database has), as the labels helper's create path would set it.
    pqxx::connection conn(f.pg->ConnInfo());
    pqxx::nontransaction tx(conn);
    tx.exec(
        "WITH l AS (INSERT INTO labels (tenant, key, value) VALUES ('bench', 'campaign', 'ingest')"
        "           RETURNING id)"
        " UPDATE links SET label_ids = ARRAY[(SELECT id FROM l)]");
  }
  // This build twice, replicas on the same database: the default, and
  // without visit rows. Both merge rollups every --ingest_merge_interval: a
  // window ends once its rollups are merged, and with the default 5 s the
  // wait for the merge timer (2.5 s on average, both CPUs idle) would count
  // as ingest time. Merging more often costs more per click (fewer
  // transactions' rows folded into each upsert), which errs against them.
  const std::string merge_interval =
      absl::StrCat("--rollup_merge_interval=", absl::FormatDuration(c.ingest_merge_interval));
  testing::ServiceProcessOptions vo;
  vo.conninfo = f.pg->ConnInfo();
  vo.secret_file = f.service->secret_file();
  vo.extra_flags = {merge_interval};
  absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> with_visits =
      testing::ServiceProcess::Start(vo);
  if (!with_visits.ok()) return with_visits.status();
  testing::ServiceProcessOptions so = vo;
  so.extra_flags = {merge_interval, "--record_visits=false"};
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
  unpin.insert(unpin.end(), {f.service->process().pid(), (*with_visits)->process().pid(),
                             (*counts_only)->process().pid(), f.postmaster});
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
  Variant visits{"counts + visits + rollups (default)", with_visits->get(), {}};
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
      "window (which ends once the service has merged the window's rollups, every %s here: "
      "`--ingest_merge_interval`); %d windows per "
      "configuration, rotating the order; medians. The service and PostgreSQL are not pinned "
      "(both CPUs; the client shares them). Every window checks that `click_counts` grew by "
      "exactly the clicks accepted.%s\n\n",
      c.ingest_batch, std::size(kUserAgents), c.ingest_links, c.ingest_inflight, c.ingest_seconds,
      absl::FormatDuration(c.ingest_merge_interval), c.ingest_rounds,
      c.ingest_labels ? " Every link carries one campaign label (`--ingest_labels`): each click "
                        "also counts under the label's rollups."
                      : "");
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
    // A round's windows run within a minute of each other: their ratio is
    // less disturbed by the host's load drifting over the run.
    std::vector<double> paired;
    for (size_t i = 0; i < visits.runs.size() && i < old.runs.size(); ++i) {
      paired.push_back(visits.runs[i].clicks_per_s / old.runs[i].clicks_per_s);
    }
    absl::StrAppendFormat(
        &out,
        "\nWith visits, this build / the previous release: **%.2f×** (median rates); per "
        "round: %s (median %.2f×).\n",
        med(visits.runs, [](const IngestRun& r) { return r.clicks_per_s; }) /
            med(old.runs, [](const IngestRun& r) { return r.clicks_per_s; }),
        absl::StrJoin(paired, ", ",
                      [](std::string* s, double r) { absl::StrAppendFormat(s, "%.2f×", r); }),
        Median(paired));
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

}  // namespace shortener::bench::clicks
