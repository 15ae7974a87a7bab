// clicks_bench's timed GetClickStats reads (clicks_bench.h), shared by the
// stats and campaign phases: over gRPC and through shortenctl.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/bench/clicks/clicks_bench.h"
#include "tests/support/service_process.h"
#include "tests/support/subprocess.h"

namespace shortener::bench::clicks {
namespace {

// GetClickStats for `subject` over [now - days, now).
v1::GetClickStatsRequest StatsRequest(const StatsSubject& subject, int days, bool hourly) {
  v1::GetClickStatsRequest req;
  if (subject.label_key.empty()) {
    req.set_code(subject.code);
  } else {
    req.set_filter(absl::StrCat("labels.", subject.label_key, " = \"", subject.label_value, "\""));
  }
  const absl::Time now = absl::Now();
  *req.mutable_start_time() = grpcutil::ToProtoTimestamp(now - absl::Hours(24 * days));
  *req.mutable_end_time() = grpcutil::ToProtoTimestamp(now);
  req.set_granularity(hourly ? v1::GRANULARITY_HOUR : v1::GRANULARITY_DAY);
  return req;
}

}  // namespace

std::string Timings::Text() const {
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  return sorted.empty() ? "-"
                        : absl::StrFormat("%.1f ms (%.1f–%.1f)", Median(sorted), sorted.front(),
                                          sorted.back());
}

absl::StatusOr<Timings> TimeGrpcStats(testing::ServiceProcess& service, const StatsSubject& subject,
                                      int days, bool hourly, int warmups, int reads,
                                      int64_t* total) {
  std::unique_ptr<v1::ShortenService::Stub> stub = service.NewStub(service.admin_key());
  Timings t;
  for (int i = 0; i < warmups + reads; ++i) {
    v1::GetClickStatsRequest req = StatsRequest(subject, days, hourly);
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

absl::StatusOr<Timings> TimeShortenctlStats(const Fixture& f, const StatsSubject& subject, int days,
                                            bool hourly, int warmups, int reads,
                                            std::string* command) {
  std::vector<std::string> argv = {testing::BinaryPath("shortenctl"),
                                   "--service=" + f.service->target(),
                                   "--api_key_file=" + f.service->admin_key_file(), "stats"};
  if (subject.label_key.empty()) {
    argv.push_back(subject.code);
  } else {
    argv.push_back(absl::StrCat("--label=", subject.label_key, "=", subject.label_value));
  }
  argv.push_back(absl::StrCat("--from=", days, "d"));
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

absl::StatusOr<std::vector<StatsQuery>> TimeStatsQueries(const Fixture& f,
                                                         const StatsSubject& subject, int days,
                                                         int reads, const std::string& what) {
  std::vector<StatsQuery> queries(2);
  queries[0].name = absl::StrCat(days, " days by day");
  queries[0].days = days;
  queries[1].name = "7 days by hour";
  queries[1].days = 7;
  queries[1].hourly = true;
  for (StatsQuery& q : queries) {
    absl::StatusOr<Timings> g = TimeGrpcStats(*f.service, subject, q.days, q.hourly, 2, reads);
    if (!g.ok()) return g.status();
    q.grpc = *g;
    absl::StatusOr<Timings> e =
        TimeShortenctlStats(f, subject, q.days, q.hourly, 2, reads, &q.ctl_command);
    if (!e.ok()) return e.status();
    q.ctl = *e;
    std::fprintf(stderr, "%s%s: gRPC %s, shortenctl %s\n", what.c_str(), q.name.c_str(),
                 q.grpc.Text().c_str(), q.ctl.Text().c_str());
  }
  return queries;
}

std::string StatsQueryTable(const std::vector<StatsQuery>& queries) {
  std::string out =
      "| query | how | time | command |\n"
      "| --- | --- | ---: | --- |\n";
  for (const StatsQuery& q : queries) {
    absl::StrAppendFormat(&out, "| %s | gRPC `GetClickStats` (C++ client, one channel) | %s | |\n",
                          q.name, q.grpc.Text());
    absl::StrAppendFormat(&out,
                          "| %s | `shortenctl stats` end to end (process start to exit) "
                          "| %s | `shortenctl %s` |\n",
                          q.name, q.ctl.Text(), q.ctl_command);
  }
  return out;
}

}  // namespace shortener::bench::clicks
