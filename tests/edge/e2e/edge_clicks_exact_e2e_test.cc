// Exactly-once click counting end to end (issue 5, item 6): 10 000 and more
// redirects through the real redirect-edge from several keep-alive clients,
// then GetClickStats must report exactly the redirects each link served:
// undisturbed, across a service SIGKILL + restart, across PostgreSQL stopped
// for 10 s, across an edge SIGTERM + restart on the same spool directory.
// A campaign's statistics (GetClickStats by label) are the exact sum over
// its links, across a service SIGKILL + restart too.
// Bots are counted apart, and redirects do not slow down while the service
// is gone (the edge answers from its cache and spools the clicks).
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

constexpr char kChrome[] =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36";

// What one load run saw.
struct LoadResult {
  std::map<std::string, int64_t> redirects;  // 302s received per code
  int64_t other_statuses = 0;                // answers other than 302
  int64_t transport_errors = 0;              // refused / reset / timed out
  std::vector<absl::Duration> latencies;     // of the 302s
  int64_t total() const {
    int64_t n = 0;
    for (const auto& [code, count] : redirects) n += count;
    return n;
  }
};

// `clients` threads, each with one keep-alive connection to the port in
// `*port` (re-read on every reconnect, so a test can move the edge), send
// GET /code for `codes` round robin until `total` redirects were received
// in all, spread evenly over `duration` (zero: as fast as they can), or until
// `give_up`. Only 302s received count: a request whose answer never came
// may or may not have been served.
LoadResult DriveRedirects(const std::atomic<int>* port, const std::vector<std::string>& codes,
                          int clients, int64_t total, absl::Duration duration,
                          const std::string& user_agent = kChrome,
                          absl::Duration give_up = absl::Seconds(90)) {
  std::vector<LoadResult> per_client(clients);
  std::atomic<int64_t> issued{0};
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + give_up;
  auto client = [&](LoadResult& out, int index) {
    std::optional<HttpConnection> conn;
    int64_t next = index;  // round robin over the codes, offset per client
    while (absl::Now() < deadline) {
      // A ticket is one answer to receive: its request is sent again (on a
      // new connection) until an answer comes.
      const int64_t ticket = issued.fetch_add(1);
      if (ticket >= total) return;
      if (duration > absl::ZeroDuration()) {
        const absl::Time due = start + duration * (static_cast<double>(ticket) / total);
        const absl::Time now = absl::Now();
        if (due > now) absl::SleepFor(due - now);
      }
      bool counted = false;
      while (!counted && absl::Now() < deadline) {
        if (!conn.has_value()) {
          absl::StatusOr<HttpConnection> c =
              HttpConnection::Connect(port->load(), absl::Seconds(2));
          if (!c.ok()) {
            ++out.transport_errors;
            absl::SleepFor(absl::Milliseconds(50));
            continue;
          }
          conn.emplace(*std::move(c));
        }
        const std::string& code = codes[next % codes.size()];
        const absl::Time sent = absl::Now();
        absl::Status st = conn->Send(absl::StrCat("GET /", code, " HTTP/1.1\r\nHost: sho.rt\r\n",
                                                  "User-Agent: ", user_agent, "\r\n\r\n"));
        absl::StatusOr<HttpResponse> response =
            st.ok() ? conn->Read(false, absl::Seconds(10)) : absl::StatusOr<HttpResponse>(st);
        if (!response.ok()) {
          ++out.transport_errors;
          conn.reset();
          continue;  // not served as far as we know: ask again
        }
        if (response->status == 302) {
          ++out.redirects[code];
          out.latencies.push_back(absl::Now() - sent);
        } else {
          ++out.other_statuses;
        }
        if (response->Header("connection") == "close") conn.reset();
        counted = true;
        ++next;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) threads.emplace_back(client, std::ref(per_client[i]), i);
  for (std::thread& t : threads) t.join();
  LoadResult all;
  for (LoadResult& r : per_client) {
    for (const auto& [code, n] : r.redirects) all.redirects[code] += n;
    all.other_statuses += r.other_statuses;
    all.transport_errors += r.transport_errors;
    all.latencies.insert(all.latencies.end(), r.latencies.begin(), r.latencies.end());
  }
  return all;
}

// The totals of a link (or a campaign) as GetClickStats reports them
// (TotalsOf).
struct Totals {
  int64_t human = -1;
  int64_t bot = -1;
  // The human clicks the browser and device top lists add up to (the
  // rollups per dimension).
  int64_t by_browser = -1;
  int64_t by_device = -1;
};

int64_t Sum(const google::protobuf::RepeatedPtrField<v1::CountedValue>& list) {
  int64_t n = 0;
  for (const v1::CountedValue& v : list) n += v.clicks();
  return n;
}

// GetClickStats of `req` (its code or filter set) over the last two hours
// and the next (the load ran in between).
Totals TotalsOf(EdgeFixture& f, v1::GetClickStatsRequest req) {
  const absl::Time now = absl::Now();
  *req.mutable_start_time() = grpcutil::ToProtoTimestamp(now - absl::Hours(2));
  *req.mutable_end_time() = grpcutil::ToProtoTimestamp(now + absl::Hours(1));
  req.set_granularity(v1::GRANULARITY_HOUR);
  v1::GetClickStatsResponse resp;
  grpc::Status st = f.stub->GetClickStats(EdgeFixture::Ctx().get(), req, &resp);
  if (!st.ok()) return {};
  return {resp.total_human_clicks(), resp.total_bot_clicks(), Sum(resp.top_browsers()),
          Sum(resp.top_devices())};
}

Totals StatsTotals(EdgeFixture& f, const std::string& code) {
  v1::GetClickStatsRequest req;
  req.set_code(code);
  return TotalsOf(f, std::move(req));
}

// A campaign's statistics (GetClickStats by label filter, issue 19 item 2).
Totals LabelTotals(EdgeFixture& f, const std::string& filter) {
  v1::GetClickStatsRequest req;
  req.set_filter(filter);
  return TotalsOf(f, std::move(req));
}

// Waits (up to `timeout`) until every link's human total reaches what the
// load received, then returns the totals (which must then be equal, not
// more: nothing counted twice).
std::map<std::string, Totals> WaitForTotals(EdgeFixture& f, const LoadResult& load,
                                            absl::Duration timeout = absl::Seconds(30)) {
  const absl::Time deadline = absl::Now() + timeout;
  std::map<std::string, Totals> totals;
  while (true) {
    bool all = true;
    for (const auto& [code, n] : load.redirects) {
      totals[code] = StatsTotals(f, code);
      all = all && totals[code].human >= n;
    }
    if (all || absl::Now() > deadline) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  // A batch still on its way would show as an excess only later: let any
  // retry in flight land before the final read.
  absl::SleepFor(absl::Milliseconds(500));
  for (const auto& [code, n] : load.redirects) totals[code] = StatsTotals(f, code);
  return totals;
}

int64_t Scalar(EdgeFixture& f, const std::string& sql) {
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

// Every link's human total equals its received redirects, bots none, and
// the visits table holds one row per redirect.
void CheckExact(EdgeFixture& f, const LoadResult& load, int64_t expected_total) {
  REQUIRE(load.total() == expected_total);
  const std::map<std::string, Totals> totals = WaitForTotals(f, load);
  for (const auto& [code, n] : load.redirects) {
    INFO("code " << code);
    CHECK(totals.at(code).human == n);
    CHECK(totals.at(code).bot == 0);
    CHECK(totals.at(code).by_browser == n);
    CHECK(totals.at(code).by_device == n);
  }
  CHECK(Scalar(f, "SELECT count(*) FROM visits") == expected_total);
  CHECK(Scalar(f, "SELECT coalesce(sum(count), 0) FROM click_counts") == expected_total);
  // The links' rollups, merged or still pending, hold every click once too
  // (label subjects, kind 'c', count them once per label besides).
  CHECK(
      Scalar(f,
             "SELECT coalesce(sum(human + bot), 0) FROM (SELECT human, bot FROM click_rollup_hours"
             " WHERE kind = 'l' UNION ALL SELECT human, bot FROM click_rollup_pending"
             " WHERE kind = 'l') r") == expected_total);
}

// Links whose codes are cached in the edge (one GET each, from a browser:
// counted as a human click too).
std::vector<std::string> WarmLinks(EdgeFixture& f, int n, LoadResult* warm) {
  std::vector<std::string> codes;
  for (int i = 0; i < n; ++i) {
    const std::string code = f.Shorten(absl::StrCat("https://example.com/exact/", i, "/",
                                                    absl::ToUnixNanos(absl::Now())))
                                 .code();
    REQUIRE(f.Get("/" + code, "GET", absl::StrCat("User-Agent: ", kChrome, "\r\n")).status == 302);
    ++warm->redirects[code];
    codes.push_back(code);
  }
  return codes;
}

LoadResult Merge(LoadResult a, const LoadResult& b) {
  for (const auto& [code, n] : b.redirects) a.redirects[code] += n;
  a.other_statuses += b.other_statuses;
  a.transport_errors += b.transport_errors;
  a.latencies.insert(a.latencies.end(), b.latencies.begin(), b.latencies.end());
  return a;
}

absl::Duration Percentile(std::vector<absl::Duration> values, double p) {
  if (values.empty()) return absl::ZeroDuration();
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

// 2 s from now, SIGKILLs the service, and 2 s after it died restarts it
// (*restarted: how that went). Join the thread before reading it.
std::thread KillAndRestartService(EdgeFixture& f, absl::Status* restarted) {
  return std::thread([&f, restarted] {
    absl::SleepFor(absl::Seconds(2));
    f.service->process().Signal(SIGKILL);
    f.service->process().Wait(absl::Seconds(10));
    absl::SleepFor(absl::Seconds(2));
    *restarted = f.service->Restart();
  });
}

constexpr int64_t kN = 10000;
constexpr int kClients = 8;

// kN redirects of `codes` by kClients clients through the edge while the
// service is SIGKILLed and restarted (KillAndRestartService). Every
// request must be redirected from the edge's cache while the service is
// gone, and the fault must hit the clicks (some spooled).
LoadResult DriveAcrossServiceRestart(EdgeFixture& f, const std::vector<std::string>& codes) {
  std::atomic<int> port{f.edge->port()};
  absl::Status restarted;
  std::thread fault = KillAndRestartService(f, &restarted);
  LoadResult load = DriveRedirects(&port, codes, kClients, kN, absl::Seconds(8));
  fault.join();
  INFO(restarted.ToString());
  REQUIRE(restarted.ok());
  CHECK(load.other_statuses == 0);
  CHECK(f.edge->Metric("edge_clicks_spooled_total") > 0);  // the fault did hit the clicks
  return load;
}

TEST_CASE("10000 redirects from 8 clients are counted exactly", "[edge/e2e][clicks][exact][e2e]") {
  EdgeFixture f({"--click_flush_interval=200ms"});
  LoadResult warm;
  const std::vector<std::string> codes = WarmLinks(f, 4, &warm);
  std::atomic<int> port{f.edge->port()};
  const LoadResult load = DriveRedirects(&port, codes, kClients, kN, absl::ZeroDuration());
  CHECK(load.other_statuses == 0);
  CHECK(load.transport_errors == 0);
  CheckExact(f, Merge(warm, load), kN + 4);
  CHECK(f.edge->Metric("edge_clicks_dropped_total{reason=\"queue_full\"}") == 0);
}

TEST_CASE("clicks are counted exactly across a service SIGKILL and restart mid-run",
          "[edge/e2e][clicks][exact][e2e]") {
  EdgeFixture f({"--click_flush_interval=200ms"});
  LoadResult warm;
  const std::vector<std::string> codes = WarmLinks(f, 4, &warm);
  // The links were cached: every request was redirected while the service
  // was gone.
  const LoadResult load = DriveAcrossServiceRestart(f, codes);
  CheckExact(f, Merge(warm, load), kN + 4);
}

TEST_CASE("clicks are counted exactly while PostgreSQL is stopped for 10 s mid-run",
          "[edge/e2e][clicks][exact][e2e]") {
  EdgeFixture f({"--click_flush_interval=200ms"});
  LoadResult warm;
  const std::vector<std::string> codes = WarmLinks(f, 4, &warm);
  std::atomic<int> port{f.edge->port()};
  absl::Status stopped, resumed;
  std::thread fault([&] {
    absl::SleepFor(absl::Seconds(2));
    stopped = f.cluster->Stop();
    absl::SleepFor(absl::Seconds(10));
    resumed = f.cluster->Resume();
  });
  const LoadResult load = DriveRedirects(&port, codes, kClients, kN, absl::Seconds(15));
  fault.join();
  REQUIRE(stopped.ok());
  REQUIRE(resumed.ok());
  CHECK(load.other_statuses == 0);
  CHECK(f.edge->Metric("edge_clicks_spooled_total") > 0);
  CheckExact(f, Merge(warm, load), kN + 4);
}

TEST_CASE("clicks are counted exactly across an edge SIGTERM and restart on its spool",
          "[edge/e2e][clicks][exact][e2e]") {
  SpoolDir spool;
  const std::vector<std::string> flags = {"--click_flush_interval=200ms",
                                          "--click_spool_dir=" + spool.path()};
  EdgeFixture f(flags);
  LoadResult warm;
  const std::vector<std::string> codes = WarmLinks(f, 4, &warm);
  std::atomic<int> port{f.edge->port()};
  std::optional<int> exit_code;
  absl::Status restarted;
  std::thread fault([&] {
    absl::SleepFor(absl::Seconds(2));
    f.edge->process().Signal(SIGTERM);
    exit_code = f.edge->process().Wait(absl::Seconds(20));
    // The same port and spool directory: clients reconnect to it.
    EdgeProcessOptions options;
    options.service_target = f.service->target();
    options.secret_file = f.service->secret_file();
    options.api_key_file = *f.service->EdgeKeyFile();
    options.port = port.load();
    options.extra_flags = flags;
    absl::StatusOr<std::unique_ptr<EdgeProcess>> edge = EdgeProcess::Start(options);
    restarted = edge.status();
    if (edge.ok()) f.edge = *std::move(edge);
  });
  const LoadResult load = DriveRedirects(&port, codes, kClients, kN, absl::Seconds(8));
  fault.join();
  INFO(restarted.ToString());
  REQUIRE(restarted.ok());
  CHECK(exit_code == std::optional<int>(0));
  CHECK(load.transport_errors > 0);  // the clients did see the edge go
  // The new edge starts with an empty cache: its misses are resolved by the
  // service, which is up, so everything is still a redirect.
  CHECK(load.other_statuses == 0);
  CheckExact(f, Merge(warm, load), kN + 4);
}

TEST_CASE("crawlers and link previews are counted as bots and HEAD not at all",
          "[edge/e2e][clicks][exact][e2e]") {
  EdgeFixture f({"--click_flush_interval=100ms"});
  const std::string human = f.Shorten("https://example.com/bots-human").code();
  const std::string probed = f.Shorten("https://example.com/bots-probed").code();
  const char* bots[] = {
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
      "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
      "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
      "WhatsApp/2.23.20.0",
      "TelegramBot (like TwitterBot)",
      "Twitterbot/1.0",
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) "
      "Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",  // iMessage
  };
  for (const char* bot : bots) {
    INFO(bot);
    CHECK(f.Get("/" + probed, "GET", absl::StrCat("User-Agent: ", bot, "\r\n")).status == 302);
  }
  // Platforms probe with HEAD and browsers prefetch: redirected, not counted.
  CHECK(f.Get("/" + probed, "HEAD", absl::StrCat("User-Agent: ", kChrome, "\r\n")).status == 302);
  CHECK(f.Get("/" + probed, "GET",
              absl::StrCat("User-Agent: ", kChrome, "\r\nSec-Purpose: prefetch\r\n"))
            .status == 302);
  for (int i = 0; i < 3; ++i) {
    CHECK(f.Get("/" + human, "GET", absl::StrCat("User-Agent: ", kChrome, "\r\n")).status == 302);
  }
  const int64_t bot_count = sizeof(bots) / sizeof(bots[0]);
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while ((StatsTotals(f, probed).bot < bot_count || StatsTotals(f, human).human < 3) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  absl::SleepFor(absl::Milliseconds(300));
  CHECK(StatsTotals(f, probed).bot == bot_count);
  CHECK(StatsTotals(f, probed).human == 0);
  CHECK(StatsTotals(f, human).human == 3);
  CHECK(StatsTotals(f, human).bot == 0);
}

TEST_CASE("redirect latency is unaffected while the service is down and clicks still count",
          "[edge/e2e][clicks][exact][e2e]") {
  EdgeFixture f({"--click_flush_interval=200ms", "--click_rpc_timeout=1s"});
  LoadResult warm;
  const std::vector<std::string> codes = WarmLinks(f, 2, &warm);
  std::atomic<int> port{f.edge->port()};
  const LoadResult up = DriveRedirects(&port, codes, 2, 2000, absl::Seconds(2));
  // SIGSTOP: the service's socket still accepts, calls hang until their
  // deadline (the harsher case for an edge); SIGKILL: refused at once.
  const int fault = GENERATE(SIGSTOP, SIGKILL);
  INFO("service signalled with " << (fault == SIGSTOP ? "SIGSTOP" : "SIGKILL"));
  const bool signalled =
      fault == SIGSTOP ? f.service->process().Freeze() : f.service->process().Signal(fault);
  REQUIRE(signalled);
  const LoadResult down = DriveRedirects(&port, codes, 2, 2000, absl::Seconds(2));
  CHECK(up.other_statuses == 0);
  CHECK(down.other_statuses == 0);
  const absl::Duration up_p99 = Percentile(up.latencies, 0.99);
  const absl::Duration down_p99 = Percentile(down.latencies, 0.99);
  INFO("p50 up " << Percentile(up.latencies, 0.5) << " down " << Percentile(down.latencies, 0.5)
                 << "; p99 up " << up_p99 << " down " << down_p99);
  // Generous: shared, noisy machines. A redirect that waited for the click
  // RPC (1 s deadline) would blow far past it.
  CHECK(down_p99 <= 3 * up_p99 + absl::Milliseconds(20));
  if (fault == SIGSTOP) {
    REQUIRE(f.service->process().Signal(SIGCONT));
  } else {
    f.service->process().Wait(absl::Seconds(10));
    REQUIRE(f.service->Restart().ok());
  }
  CheckExact(f, Merge(Merge(warm, up), down), 4000 + 2);
}

TEST_CASE("a link past its click budget is dropped by the edge and overshoots by a bounded amount",
          "[edge/e2e][clicks][exact][limits][e2e]") {
  // The default flush interval and a short one: the overshoot is about the
  // click rate times (the wait for the next flush, at most the interval, +
  // RPC + commit + NOTIFY + the edge's drop).
  const absl::Duration flush = GENERATE(absl::Seconds(1), absl::Milliseconds(200));
  EdgeFixture f({absl::StrCat("--click_flush_interval=", absl::FormatDuration(flush))});
  constexpr int64_t kBudget = 500;
  constexpr int64_t kRequests = 3000;
  const absl::Duration run = absl::Seconds(10);  // 300 requests/s, paced
  v1::ShortenRequest request;
  request.set_long_url("https://example.com/limited");
  request.set_max_clicks(kBudget);
  const std::string code = f.Shorten(request).code();
  std::atomic<int> port{f.edge->port()};
  const LoadResult load = DriveRedirects(&port, {code}, 4, kRequests, run);
  const int64_t served = load.total();
  const double rate = static_cast<double>(kRequests) / absl::ToDoubleSeconds(run);
  const int64_t overshoot = served - kBudget;
  std::fprintf(stderr,
               "click budget %lld, flush interval %s, %.0f requests/s: %lld redirects served, "
               "overshoot %lld (%.2f s of traffic)\n",
               static_cast<long long>(kBudget), absl::FormatDuration(flush).c_str(), rate,
               static_cast<long long>(served), static_cast<long long>(overshoot),
               static_cast<double>(overshoot) / rate);
  INFO("served " << served << " overshoot " << overshoot);
  CHECK(load.transport_errors == 0);
  // The budget was spent, and the edge then answered 410 for the rest.
  CHECK(served >= kBudget);
  CHECK(load.other_statuses == kRequests - served);
  CHECK(f.Get("/" + code, "GET", absl::StrCat("User-Agent: ", kChrome, "\r\n")).status == 410);
  // The bound of docs/analytics.md ("Click limits"), with a second of slack
  // for a loaded machine.
  CHECK(overshoot <= static_cast<int64_t>(rate * absl::ToDoubleSeconds(flush + absl::Seconds(1))));
  // Every redirect served is still counted, overshoot included.
  const std::map<std::string, Totals> totals = WaitForTotals(f, load);
  CHECK(totals.at(code).human == served);
}

TEST_CASE("a campaign counts exactly the sum over its links, across a service SIGKILL and restart",
          "[edge/e2e][clicks][exact][e2e]") {
  EdgeFixture f({"--click_flush_interval=200ms"});
  // Three links of the campaign (two of them also sent by SMS) and one
  // without labels, all cached in the edge by a first GET each.
  const std::vector<std::map<std::string, std::string>> labels = {
      {{"campaign", "spring-sale"}, {"channel", "sms"}},
      {{"campaign", "spring-sale"}, {"channel", "sms"}},
      {{"campaign", "spring-sale"}},
      {}};
  LoadResult warm;
  std::vector<std::string> codes;
  for (size_t i = 0; i < labels.size(); ++i) {
    v1::ShortenRequest request;
    request.set_long_url(absl::StrCat("https://example.com/campaign/", i));
    request.mutable_labels()->insert(labels[i].begin(), labels[i].end());
    const std::string code = f.Shorten(request).code();
    REQUIRE(f.Get("/" + code, "GET", absl::StrCat("User-Agent: ", kChrome, "\r\n")).status == 302);
    ++warm.redirects[code];
    codes.push_back(code);
  }
  const LoadResult load = DriveAcrossServiceRestart(f, codes);
  const LoadResult all = Merge(warm, load);
  CheckExact(f, all, kN + 4);

  // The campaign: exactly the sum over its links, per dimension too; SMS
  // the first two; the unlabelled link in neither.
  const int64_t campaign =
      all.redirects.at(codes[0]) + all.redirects.at(codes[1]) + all.redirects.at(codes[2]);
  const int64_t sms = all.redirects.at(codes[0]) + all.redirects.at(codes[1]);
  const Totals spring = LabelTotals(f, "labels.campaign = \"spring-sale\"");
  CHECK(spring.human == campaign);
  CHECK(spring.bot == 0);
  CHECK(spring.by_browser == campaign);
  CHECK(spring.by_device == campaign);
  const Totals by_sms = LabelTotals(f, "labels.channel = \"sms\"");
  CHECK(by_sms.human == sms);
  CHECK(by_sms.by_browser == sms);
  CHECK(LabelTotals(f, "labels.campaign = \"summer-sale\"").human == 0);
  // The label rollups, merged or pending, hold every labelled click once
  // per label: campaign + sms.
  CHECK(
      Scalar(f,
             "SELECT coalesce(sum(human + bot), 0) FROM (SELECT human, bot FROM click_rollup_hours"
             " WHERE kind = 'c' UNION ALL SELECT human, bot FROM click_rollup_pending"
             " WHERE kind = 'c') r") == campaign + sms);
}

}  // namespace
}  // namespace shortener::testing
