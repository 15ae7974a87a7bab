// clicks_bench's parts (clicks_bench_main.cc says what it measures): its
// Config, the Fixture every phase shares (a private PostgreSQL, the
// shorten-service, the links the clicks go to), the helpers and the click
// mix the phases share, and one entry point per phase, each in its own
// file: RunRedirects (redirects_phase.cc), RunIngest (ingest_phase.cc),
// RunStats (stats_phase.cc), RunCampaign (campaign_phase.cc). Run (clicks_bench.cc) sets the
// fixture up, runs the phases asked for and prints the report.
//
// Progress goes to stderr, the Markdown report to stdout. Single-threaded
// between phases: one phase at a time, each stops what it started.
#ifndef SHORTENER_TESTS_BENCH_CLICKS_CLICKS_BENCH_H_
#define SHORTENER_TESTS_BENCH_CLICKS_CLICKS_BENCH_H_

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"

namespace shortener::bench::clicks {

inline constexpr char kTaskset[] = "/usr/bin/taskset";

// The flags, validated (clicks_bench_main.cc, ConfigFromFlags).
struct Config {
  std::vector<std::string> phases;
  int seconds = 10, rounds = 5, connections = 64, warmup_seconds = 2;
  int server_cpu = 0, load_cpu = 1;
  int ingest_seconds = 10, ingest_rounds = 3, ingest_inflight = 4, ingest_batch = 1000;
  int ingest_links = 300;
  bool ingest_labels = false;
  absl::Duration ingest_merge_interval = absl::Seconds(1);
  std::string old_service;
  int64_t stats_clicks = 10'000'000;
  int stats_days = 30, stats_reads = 7;
  bool stats_record_visits = true;
  int64_t campaign_links = 1'000'000, campaign_clicks = 10'000'000;
  int campaign_days = 30;
  std::string command;
  bool Has(const std::string& phase) const {
    return std::find(phases.begin(), phases.end(), phase) != phases.end();
  }
};

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
BackendCpu SampleBackends(const Fixture& f, pid_t service_pid);

double Median(std::vector<double> v);
// Busy fractions of the CPUs as "75% / 40%".
std::string BusyText(const std::vector<double>& busy);
// One sample of the edge's /metrics (`port`: its admin port); 0 when absent
// or unreadable.
double EdgeMetric(int port, const std::string& sample);
// The one number `sql` selects, on a connection of its own.
int64_t SqlNumber(const std::string& conninfo, const std::string& sql);

// A realistic mix: mostly phones and desktops, some crawlers and link
// previews, referrers from search, social and chat, IPv4 and IPv6.
inline constexpr const char* kUserAgents[] = {
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
inline constexpr const char* kReferers[] = {
    "",
    "",
    "",
    "https://www.google.com/",
    "https://t.co/x1y2z3",
    "https://l.facebook.com/l.php",
    "https://news.example.org/story?id=42",
    "android-app://com.slack/",
};

// A client address: IPv6 one time in four, else IPv4.
std::string RandomIp(std::mt19937_64& rng);

// Batch `b` of a load of `n` clicks sent `per_batch` at a time, as an edge
// sends them: batch id PREFIX-b, times spread evenly over [begin, end) in
// click order, the mix above; click i goes to code_of(i).
v1::RecordClicksRequest SpreadClickBatch(const std::string& prefix, int per_batch, int64_t b,
                                         int64_t n, absl::Time begin, absl::Time end,
                                         const std::function<const std::string&(int64_t)>& code_of);

// Sends `req` until it is answered, at most 5 times (the same batch id:
// counted once whatever happened), adding its accepted clicks to
// `accepted` and each failed attempt to `retries`; the last answer.
grpc::Status SendClickBatch(v1::ShortenService::Stub& stub, const v1::RecordClicksRequest& req,
                            std::atomic<int64_t>& accepted, std::atomic<int64_t>& retries);

// Waits until no rollup row is pending (the service merges every second);
// false after `timeout`. A database without the rollup tables (an older
// schema) has none pending.
bool WaitForRollupsMerged(const Fixture& f, absl::Duration timeout);

// What GetClickStats is asked about: a link's code, or (label_key set) the
// label labels.KEY = "VALUE" of the admin key's tenant.
struct StatsSubject {
  std::string code;
  std::string label_key, label_value;
};

// Times of one kind of read, in milliseconds.
struct Timings {
  std::vector<double> ms;
  std::string Text() const;  // "12.3 ms (11.0–14.2)": median (min–max)
};

// `warmups` then `reads` timed GetClickStats calls for the last `days`
// days (by hour or day) over gRPC (stats_reads.cc); `total`, if given,
// gets the last answer's human + bot clicks.
absl::StatusOr<Timings> TimeGrpcStats(testing::ServiceProcess& service, const StatsSubject& subject,
                                      int days, bool hourly, int warmups, int reads,
                                      int64_t* total = nullptr);
// The same through `shortenctl stats` (process start to exit); `command`
// gets its command line.
absl::StatusOr<Timings> TimeShortenctlStats(const Fixture& f, const StatsSubject& subject, int days,
                                            bool hourly, int warmups, int reads,
                                            std::string* command);

// One timed query of the stats and campaign phases.
struct StatsQuery {
  std::string name;  // "30 days by day"
  int days = 0;
  bool hourly = false;
  Timings grpc, ctl;
  std::string ctl_command;
};

// The phases' two queries, `days` by day and 7 days by hour, each read 2
// times to warm up and then `reads` times timed, over gRPC and through
// shortenctl; progress to stderr, prefixed with `what`.
absl::StatusOr<std::vector<StatsQuery>> TimeStatsQueries(const Fixture& f,
                                                         const StatsSubject& subject, int days,
                                                         int reads, const std::string& what);
// The queries as the report's Markdown table rows (header included).
std::string StatsQueryTable(const std::vector<StatsQuery>& queries);

// The phases. Each appends its Markdown to `out`.
absl::Status RunRedirects(const Config& c, Fixture& f, std::string& out);
absl::Status RunIngest(const Config& c, Fixture& f, std::string& out);
absl::Status RunStats(const Config& c, Fixture& f, std::string& out);
absl::Status RunCampaign(const Config& c, Fixture& f, std::string& out);

// Sets the fixture up, runs the phases of `c` and prints the report.
absl::Status Run(const Config& c);

}  // namespace shortener::bench::clicks

#endif  // SHORTENER_TESTS_BENCH_CLICKS_CLICKS_BENCH_H_
