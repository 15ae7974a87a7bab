// clicks_bench's campaign phase (clicks_bench.h): a campaign of per-recipient
// links (one label on each), clicked through RecordClicks, then
// GetClickStats of the label.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/bench/clicks/clicks_bench.h"

namespace shortener::bench::clicks {
namespace {

constexpr char kLabelKey[] = "campaign";
constexpr char kLabelValue[] = "bench-spring";
constexpr int kThreads = 4;

// Runs `work(stub, i)` for i in [0, n) on kThreads threads with a
// connection each; the first error stops it and is returned.
absl::Status RunParallel(
    testing::ServiceProcess& service, int64_t n,
    const std::function<absl::Status(v1::ShortenService::Stub&, int64_t)>& work) {
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  absl::Status error;
  std::mutex error_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      grpc::ChannelArguments args;
      args.SetInt("shortener.bench.connection", t);
      std::unique_ptr<v1::ShortenService::Stub> stub = service.NewStub(service.admin_key(), args);
      int64_t i;
      while (!failed && (i = next.fetch_add(1)) < n) {
        absl::Status st = work(*stub, i);
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          error = st;
          failed = true;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  return error;
}

// Makes `n` links with the campaign label, 1000 per BatchShorten call; the
// codes, in order.
absl::StatusOr<std::vector<std::string>> MakeCampaignLinks(testing::ServiceProcess& service,
                                                           int64_t n) {
  constexpr int64_t kPerCall = 1000;
  std::vector<std::string> codes(static_cast<size_t>(n));
  const int64_t calls = (n + kPerCall - 1) / kPerCall;
  absl::Status st = RunParallel(service, calls, [&](v1::ShortenService::Stub& stub, int64_t b) {
    v1::BatchShortenRequest req;
    const int64_t first = b * kPerCall;
    const int64_t last = std::min(n, first + kPerCall);
    for (int64_t i = first; i < last; ++i) {
      v1::ShortenRequest* r = req.add_requests();
      r->set_long_url(absl::StrCat("https://shop.example.com/spring?recipient=", i));
      (*r->mutable_labels())[kLabelKey] = kLabelValue;
    }
    v1::BatchShortenResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Status gs = stub.BatchShorten(&ctx, req, &resp);
    if (!gs.ok()) return absl::InternalError(absl::StrCat("BatchShorten: ", gs.error_message()));
    if (resp.results_size() != last - first) {
      return absl::InternalError("BatchShorten: a result per request expected");
    }
    for (int64_t i = first; i < last; ++i) {
      const v1::BatchShortenResult& r = resp.results(static_cast<int>(i - first));
      if (!r.has_response()) {
        return absl::InternalError(absl::StrCat("BatchShorten item: ", r.error().message()));
      }
      codes[static_cast<size_t>(i)] = r.response().code();
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return codes;
}

}  // namespace

absl::Status RunCampaign(const Config& c, Fixture& f, std::string& out) {
  std::fprintf(stderr, "== campaign: %lld links, %lld clicks\n",
               static_cast<long long>(c.campaign_links), static_cast<long long>(c.campaign_clicks));
  const std::string conninfo = f.pg->ConnInfo();
  const int64_t db0 = SqlNumber(conninfo, "SELECT pg_database_size(current_database())");
  const absl::Time t0 = absl::Now();
  absl::StatusOr<std::vector<std::string>> codes = MakeCampaignLinks(*f.service, c.campaign_links);
  if (!codes.ok()) return codes.status();
  const double links_s = absl::ToDoubleSeconds(absl::Now() - t0);
  std::fprintf(stderr, "  %lld links in %.0f s\n", static_cast<long long>(codes->size()), links_s);

  const int64_t n = c.campaign_clicks;
  const int64_t batches = (n + c.ingest_batch - 1) / c.ingest_batch;
  const absl::Time end = absl::Now();
  const absl::Time begin = end - absl::Hours(24 * c.campaign_days) + absl::Minutes(10);
  std::atomic<int64_t> accepted{0}, retries{0};
  const absl::Time t1 = absl::Now();
  absl::Status st =
      RunParallel(*f.service, batches, [&](v1::ShortenService::Stub& stub, int64_t b) {
        // Each click of a batch on a link of its own, as recipients click
        // their own: a stride through the links (7919 is prime, and no
        // campaign size here is its multiple).
        const int64_t links = static_cast<int64_t>(codes->size());
        const v1::RecordClicksRequest req = SpreadClickBatch(
            "campaign", c.ingest_batch, b, n, begin, end, [&](int64_t i) -> const std::string& {
              return (*codes)[static_cast<size_t>((i * 7919) % links)];
            });
        const grpc::Status gs = SendClickBatch(stub, req, accepted, retries);
        if (b % (batches / 10 + 1) == 0) {
          std::fprintf(stderr, "  clicks: batch %lld of %lld, %.0f s\n", static_cast<long long>(b),
                       static_cast<long long>(batches), absl::ToDoubleSeconds(absl::Now() - t1));
        }
        return gs.ok() ? absl::OkStatus()
                       : absl::InternalError(absl::StrCat("RecordClicks: ", gs.error_message()));
      });
  if (!st.ok()) return st;
  const double load_s = absl::ToDoubleSeconds(absl::Now() - t1);
  if (accepted != n) {
    return absl::DataLossError(
        absl::StrCat("campaign load: ", accepted.load(), " of ", n, " clicks accepted"));
  }
  if (!WaitForRollupsMerged(f, absl::Minutes(10))) {
    return absl::DeadlineExceededError("campaign load: rollups not merged in 10 minutes");
  }
  const double merged_s = absl::ToDoubleSeconds(absl::Now() - t1);
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    tx.exec(
        "VACUUM ANALYZE click_rollup_hours, click_rollup_hour_dims, click_rollup_pending, links,"
        " labels");
  }
  const int64_t db1 = SqlNumber(conninfo, "SELECT pg_database_size(current_database())");
  const std::string of_label =
      " WHERE kind = 'c' AND subject = (SELECT id FROM labels WHERE key = 'campaign')";
  const int64_t hours = SqlNumber(conninfo, "SELECT count(*) FROM click_rollup_hours" + of_label);
  const int64_t dim_rows =
      SqlNumber(conninfo, "SELECT count(*) FROM click_rollup_hour_dims" + of_label);

  const StatsSubject label{"", kLabelKey, kLabelValue};
  int64_t total = 0;
  {
    absl::StatusOr<Timings> all =
        TimeGrpcStats(*f.service, label, c.campaign_days + 2, false, 0, 1, &total);
    if (!all.ok()) return all.status();
    if (total != n) {
      return absl::DataLossError(absl::StrCat("GetClickStats of the campaign reports ", total,
                                              " clicks for ", n, " recorded"));
    }
  }
  absl::StatusOr<std::vector<StatsQuery>> timed =
      TimeStatsQueries(f, label, c.campaign_days, c.stats_reads, "campaign, ");
  if (!timed.ok()) return timed.status();
  const std::vector<StatsQuery>& queries = *timed;

  absl::StrAppend(&out, "### GetClickStats of a campaign\n\n");
  absl::StrAppendFormat(
      &out,
      "%lld links, each with the label `%s=%s`, made through `BatchShorten` (1000 per call, %d "
      "calls in flight) in %.0f s (%.0f links/s); then %lld clicks spread over them, times "
      "evenly over the last %d days, through `RecordClicks` in batches of %d (each click of a "
      "batch on a link of its own: ingest's widest case), %d calls in flight, in %.0f s (%.0f "
      "clicks/s; %lld retried calls), rollups merged %.0f s after the clicks began. Database "
      "%.2f GB → %.2f GB. The label's rollups: %lld hourly rows, %lld dimension rows. Then "
      "`VACUUM ANALYZE`, %d reads of each query after 2 warm-up reads (warm cache): median "
      "(min–max).\n\n",
      static_cast<long long>(c.campaign_links), kLabelKey, kLabelValue, kThreads, links_s,
      static_cast<double>(c.campaign_links) / links_s, static_cast<long long>(n), c.campaign_days,
      c.ingest_batch, kThreads, load_s, static_cast<double>(n) / load_s,
      static_cast<long long>(retries.load()), merged_s, static_cast<double>(db0) / 1e9,
      static_cast<double>(db1) / 1e9, static_cast<long long>(hours),
      static_cast<long long>(dim_rows), c.stats_reads);
  absl::StrAppend(&out, StatsQueryTable(queries));
  absl::StrAppend(&out, "\n");
  return absl::OkStatus();
}

}  // namespace shortener::bench::clicks
