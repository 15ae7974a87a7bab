// What clicks_bench's phases share (clicks_bench.h), and Run.
#include "tests/bench/clicks/clicks_bench.h"

#include <grpcpp/grpcpp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <pqxx/pqxx>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/edge/link_loader.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/support/http_client.h"

namespace shortener::bench::clicks {

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

BackendCpu SampleBackends(const Fixture& f, pid_t service_pid) {
  return {edge::ProcessCpuSeconds(service_pid), edge::ProcessTreeCpuSeconds(f.postmaster)};
}

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

v1::RecordClicksRequest SpreadClickBatch(
    const std::string& prefix, int per_batch, int64_t b, int64_t n, absl::Time begin,
    absl::Time end, const std::function<const std::string&(int64_t)>& code_of) {
  std::mt19937_64 rng(static_cast<uint64_t>(b) * 7919 + 1);
  v1::RecordClicksRequest req;
  req.set_batch_id(absl::StrCat(prefix, "-", b));
  const int64_t first = b * per_batch;
  const int64_t last = std::min(n, first + per_batch);
  for (int64_t i = first; i < last; ++i) {
    v1::ClickEvent* e = req.add_events();
    e->set_code(code_of(i));
    *e->mutable_time() = grpcutil::ToProtoTimestamp(
        begin + (end - begin) * (static_cast<double>(i) / static_cast<double>(n)));
    e->set_client_ip(RandomIp(rng));
    e->set_user_agent(kUserAgents[rng() % std::size(kUserAgents)]);
    e->set_referer(kReferers[rng() % std::size(kReferers)]);
    e->set_http_status(302);
  }
  return req;
}

grpc::Status SendClickBatch(v1::ShortenService::Stub& stub, const v1::RecordClicksRequest& req,
                            std::atomic<int64_t>& accepted, std::atomic<int64_t>& retries) {
  grpc::Status st;
  for (int attempt = 0; attempt < 5; ++attempt) {
    v1::RecordClicksResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    st = stub.RecordClicks(&ctx, req, &resp);
    if (st.ok()) {
      accepted += resp.accepted();
      break;
    }
    ++retries;
  }
  return st;
}

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
  if (st.ok() && c.Has("campaign")) st = RunCampaign(c, f, out);
  if (!st.ok()) return st;
  absl::StrAppendFormat(&out, "Total run time %.0f s.\n",
                        absl::ToDoubleSeconds(absl::Now() - start));
  std::printf("%s", out.c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace shortener::bench::clicks
