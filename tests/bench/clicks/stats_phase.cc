// clicks_bench's stats phase: GetClickStats on one link loaded through
// RecordClicks (clicks_bench.h).
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
#include "lib/clicks/pg/rollup_upkeep.h"  // kHourlyRollupDays only
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
namespace {}  // namespace

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
  const StatsSubject of_code{code, "", ""};
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
        const v1::RecordClicksRequest req =
            SpreadClickBatch("stats", c.ingest_batch, b, n, begin, end,
                             [&code](int64_t) -> const std::string& { return code; });
        const grpc::Status st = SendClickBatch(*stub, req, accepted, retries);
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
  // Hours older than the hourly retention are folded into days by the
  // service's fold, which runs at its start and then daily: a service
  // started now folds what the load put there, as production would have
  // day by day.
  const std::string unfolded = absl::StrCat(
      "SELECT count(*) FROM click_rollup_hours WHERE hour < date_trunc('day', now(), 'UTC')"
      " - make_interval(days => ",
      ::shortener::clicks::kHourlyRollupDays, ")");
  double fold_s = 0;
  if (SqlNumber(conninfo, unfolded) > 0) {
    const absl::Time fold_start = absl::Now();
    testing::ServiceProcessOptions fo;
    fo.conninfo = conninfo;
    fo.secret_file = f.service->secret_file();
    fo.admin_key_file = f.pg->socket_dir() + "/fold-admin.key";
    absl::StatusOr<std::unique_ptr<testing::ServiceProcess>> folder =
        testing::ServiceProcess::Start(fo);
    if (!folder.ok()) return folder.status();
    while (SqlNumber(conninfo, unfolded) > 0) {
      if (absl::Now() - fold_start > absl::Minutes(10)) {
        return absl::DeadlineExceededError("stats load: hours not folded in 10 minutes");
      }
      absl::SleepFor(absl::Milliseconds(200));
    }
    fold_s = absl::ToDoubleSeconds(absl::Now() - fold_start);
  }
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    tx.exec(
        "VACUUM ANALYZE click_rollup_hours, click_rollup_hour_dims, click_rollup_days,"
        " click_rollup_day_dims, click_rollup_pending");
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
        TimeGrpcStats(*f.service, of_code, c.stats_days + 2, false, 0, 1, &total);
    if (!all.ok()) return all.status();
    if (total != n) {
      return absl::DataLossError(
          absl::StrCat("GetClickStats reports ", total, " clicks for ", n, " loaded"));
    }
  }
  absl::StatusOr<std::vector<StatsQuery>> timed =
      TimeStatsQueries(f, of_code, c.stats_days, c.stats_reads, "");
  if (!timed.ok()) return timed.status();
  const std::vector<StatsQuery>& queries = *timed;
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
    for (const StatsQuery& q : queries) {
      // One read each, no warm-up: it scans the link's visits.
      const absl::Time sent = absl::Now();
      absl::StatusOr<Timings> g = TimeGrpcStats(**old, of_code, q.days, q.hourly, 0, 1);
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
      "(%.0f clicks/s; %lld retried calls), rollups merged %.0f s after the start%s. Database "
      "%.2f GB → %.2f GB (visits %.2f GB). Then `VACUUM ANALYZE` of the rollup tables, %d reads "
      "of each query after 2 warm-up reads (warm cache): median (min–max).\n\n",
      static_cast<long long>(n), c.stats_days, c.ingest_batch, c.ingest_inflight,
      c.stats_record_visits ? "recorded" : "not recorded (`--record_visits=false`)", load_s,
      static_cast<double>(n) / load_s, static_cast<long long>(retries.load()), merged_s,
      fold_s > 0 ? absl::StrFormat(", hours older than %d days folded into days by a service "
                                   "start in %.0f s (the fold runs at start and daily)",
                                   ::shortener::clicks::kHourlyRollupDays, fold_s)
                 : std::string(),
      static_cast<double>(db0) / 1e9, static_cast<double>(db1) / 1e9,
      static_cast<double>(visits_bytes) / 1e9, c.stats_reads);
  absl::StrAppend(&out, StatsQueryTable(queries));
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

}  // namespace shortener::bench::clicks
