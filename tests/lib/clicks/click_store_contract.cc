// The ClickStore contract, part 1: test data helpers; recording (exactly
// once per batch id, also under a race; hourly counts per bot flag; visits
// or none; refused batches). Every implementation passes these cases.
#include "tests/lib/clicks/click_store_contract.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks::testing {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

absl::Time At(const char* text) {
  absl::Time t;
  std::string err;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, text, &t, &err));
  return t;
}

int64_t NextLinkId() {
  // Above the fixed ids of the Postgres-only tests (at most 100 000).
  static std::atomic<int64_t> next{50'000'000};
  return next.fetch_add(1);
}

std::string UniqueBatchId(absl::string_view prefix) {
  static std::atomic<int64_t> next{1};
  return absl::StrCat(prefix, "-", next.fetch_add(1));
}

ClickRow Click(int64_t link_id, absl::Time time, bool bot) {
  ClickRow r;
  r.link_id = link_id;
  r.time = time;
  r.bot = bot;
  r.client_id = ClientId("192.0.2.7", "Mozilla/5.0");
  r.ip = AnonymizeIp("192.0.2.7");
  r.browser = bot ? "Googlebot" : "Chrome";
  r.browser_major = bot ? 2 : 120;
  r.os = "Android";
  r.os_version = "14";
  r.device = bot ? "bot" : "mobile";
  r.referrer_host = "example.com";
  return r;
}

ClickRow Human(int64_t link_id, const char* time, const std::string& client,
               const std::string& browser, const std::string& os, const std::string& device,
               const std::string& referrer, const std::string& country) {
  ClickRow r;
  r.link_id = link_id;
  r.time = At(time);
  r.client_id = ClientId(client, "Mozilla/5.0");
  r.browser = browser;
  r.os = os;
  r.device = device;
  r.referrer_host = referrer;
  r.country = country;
  return r;
}

ClickRow Bot(int64_t link_id, const char* time) {
  ClickRow r;
  r.link_id = link_id;
  r.time = At(time);
  r.bot = true;
  r.client_id = ClientId("203.0.113.9", "Googlebot/2.1");
  r.browser = "Googlebot";
  r.os = "Other";
  r.device = "bot";
  return r;
}

Top Pairs(const std::vector<CountedValue>& list) {
  Top out;
  for (const CountedValue& v : list) out.emplace_back(v.value, v.clicks);
  return out;
}

namespace {

// Daily statistics of `link` for the one UTC day that starts at `day_start`.
absl::StatusOr<ClickStats> DayStats(ClickStore& store, int64_t link, const char* day_start) {
  return store.Stats(link, At(day_start), At(day_start) + absl::Hours(24), StatsGranularity::kDay);
}

TEST_CASE("a batch recorded twice counts once", "[lib/clicks][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  const std::string batch = UniqueBatchId("twice");
  std::vector<ClickRow> rows = {Click(link, At("2030-01-05T10:15:00Z")),
                                Click(link, At("2030-01-05T10:45:00Z"))};
  auto first = store->Record(batch, rows, true);
  REQUIRE_THAT(first, IsOk());
  CHECK_FALSE(first->duplicate);
  CHECK(first->counted == 2);
  CHECK(first->visits == 2);
  CHECK(first->exhausted.empty());  // no budget
  // A retry, even with other rows (a buggy client), changes nothing.
  rows.push_back(Click(link, At("2030-01-05T11:00:00Z")));
  auto second = store->Record(batch, rows, true);
  REQUIRE_THAT(second, IsOk());
  CHECK(second->duplicate);
  CHECK(second->counted == 0);
  CHECK(second->visits == 0);
  CHECK(second->exhausted.empty());
  auto total = store->HumanTotal(link);
  REQUIRE_THAT(total, IsOk());
  CHECK(*total == 2);
  // Visits too: the browser list counts the first attempt's two.
  auto stats = DayStats(*store, link, "2030-01-05T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 2);
  CHECK(stats->total_unique_visitors == 1);
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", 2}});
  CHECK(Pairs(stats->top_referrers) == Top{{"example.com", 2}});
}

TEST_CASE("two concurrent records of one batch id count it once",
          "[lib/clicks][contract][concurrent]") {
  auto store = NewContractClickStore();
  for (int round = 0; round < 20; ++round) {
    const int64_t link = NextLinkId();
    const std::vector<ClickRow> rows(50, Click(link, At("2030-01-06T10:00:00Z")));
    const std::string batch = UniqueBatchId("race");
    absl::StatusOr<RecordOutcome> results[2];
    std::thread a([&] { results[0] = store->Record(batch, rows, true); });
    std::thread b([&] { results[1] = store->Record(batch, rows, true); });
    a.join();
    b.join();
    REQUIRE_THAT(results[0], IsOk());
    REQUIRE_THAT(results[1], IsOk());
    CHECK(results[0]->duplicate != results[1]->duplicate);
    CHECK(results[0]->counted + results[1]->counted == 50);
    CHECK(results[0]->visits + results[1]->visits == 50);
    auto total = store->HumanTotal(link);
    REQUIRE_THAT(total, IsOk());
    CHECK(*total == 50);
    auto stats = DayStats(*store, link, "2030-01-06T00:00:00Z");
    REQUIRE_THAT(stats, IsOk());
    CHECK(Pairs(stats->top_devices) == Top{{"mobile", 50}});
  }
}

TEST_CASE("concurrent batches for one link and hour all count",
          "[lib/clicks][contract][concurrent]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  constexpr int kThreads = 4, kBatches = 10, kClicks = 5;
  // Built here: At() asserts, and assertions belong to the test thread.
  const std::vector<ClickRow> rows(kClicks, Click(link, At("2030-01-06T12:00:00Z")));
  std::vector<int> failed(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        if (!store->Record(absl::StrCat("shared-", link, "-", t, "-", b), rows, b % 2 == 0).ok()) {
          ++failed[t];
        }
        // Readers alongside the writers.
        if (!store->HumanTotal(link).ok()) ++failed[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(failed == std::vector<int>(kThreads, 0));
  auto stats = DayStats(*store, link, "2030-01-06T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == kThreads * kBatches * kClicks);
  // Every batch's, with visits or without.
  CHECK(Pairs(stats->top_devices) == Top{{"mobile", kThreads * kBatches * kClicks}});
  CHECK(stats->total_unique_visitors == 1);
}

TEST_CASE("counts add up per hour and bot flag across batches", "[lib/clicks][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  const int64_t other = NextLinkId();
  REQUIRE_THAT(
      store->Record(
          UniqueBatchId("sum"),
          {Click(link, At("2030-01-07T10:00:00Z")), Click(link, At("2030-01-07T10:59:59Z")),
           Click(link, At("2030-01-07T10:30:00Z"), true), Click(link, At("2030-01-07T11:00:00Z"))},
          true),
      IsOk());
  // 11:20+01:00 is 10:20 UTC: hours are UTC hours.
  REQUIRE_THAT(store->Record(UniqueBatchId("sum"),
                             {Click(link, At("2030-01-07T10:10:00Z")),
                              Click(link, At("2030-01-07T11:20:00+01:00"), true),
                              Click(other, At("2030-01-07T10:20:00Z"))},
                             true),
               IsOk());
  auto stats = store->Stats(link, At("2030-01-07T10:00:00Z"), At("2030-01-07T12:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->buckets.size() == 2);
  CHECK(stats->buckets[0].human_clicks == 3);
  CHECK(stats->buckets[0].bot_clicks == 2);
  CHECK(stats->buckets[1].human_clicks == 1);
  CHECK(stats->buckets[1].bot_clicks == 0);
  CHECK(stats->total_human_clicks == 4);
  CHECK(stats->total_bot_clicks == 2);
  auto total = store->HumanTotal(other);
  REQUIRE_THAT(total, IsOk());
  CHECK(*total == 1);
}

TEST_CASE("without record_visits no visit is kept but statistics are complete",
          "[lib/clicks][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  auto outcome = store->Record(
      UniqueBatchId("novisits"),
      {Click(link, At("2031-06-01T10:00:00Z")), Click(link, At("2031-06-01T10:05:00Z"), true)},
      false);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->counted == 2);
  CHECK(outcome->visits == 0);
  auto stats = DayStats(*store, link, "2031-06-01T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 1);
  CHECK(stats->total_bot_clicks == 1);
  // Statistics come from the rollups, which do not depend on visits.
  CHECK(stats->total_unique_visitors == 1);
  CHECK(stats->buckets[0].unique_visitors == 1);
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", 1}});
  CHECK(Pairs(stats->top_devices) == Top{{"mobile", 1}});
}

TEST_CASE("an empty batch records its id only", "[lib/clicks][contract]") {
  auto store = NewContractClickStore();
  const std::string batch = UniqueBatchId("empty");
  auto first = store->Record(batch, {}, true);
  REQUIRE_THAT(first, IsOk());
  CHECK_FALSE(first->duplicate);
  CHECK(first->counted == 0);
  CHECK(first->visits == 0);
  auto second = store->Record(batch, {}, true);
  REQUIRE_THAT(second, IsOk());
  CHECK(second->duplicate);
}

TEST_CASE("malformed batches are refused before any write", "[lib/clicks][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  std::vector<ClickRow> rows = {Click(link, At("2030-01-08T10:00:00Z"))};
  CHECK_THAT(store->Record("", rows, true),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "batch_id: must be 1 to 128 bytes, got 0"));
  CHECK_THAT(store->Record(std::string(129, 'b'), rows, true),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "batch_id: must be 1 to 128 bytes, got 129"));
  CHECK_THAT(store->Record(std::string("a\0b", 3), rows, true),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "batch_id: contains a NUL"));
  std::string longest = UniqueBatchId("longest");
  longest.resize(kMaxBatchIdBytes, 'b');
  CHECK_THAT(store->Record(longest, rows, true), IsOk());
  rows.push_back(Click(link, At("2030-01-08T10:00:00Z")));
  rows[1].device = "toaster";
  CHECK_THAT(store->Record(UniqueBatchId("bad-device"), rows, true),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "rows[1].device"));
  rows[1].device = "desktop";
  for (const char* ip : {"192.0.2.300", "192.0.2.7:80", "::FFFF:192.0.2.7", "host.example"}) {
    INFO(ip);
    rows[1].ip = ip;
    CHECK_THAT(store->Record(UniqueBatchId("bad-ip"), rows, true),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "rows[1].ip: not an IP address in canonical form"));
  }
  rows[1].ip = "2001:db8:1::";
  rows[1].browser = std::string("Chr\0me", 6);
  CHECK_THAT(store->Record(UniqueBatchId("bad-text"), rows, true),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "rows[1]: a NUL byte"));
  // Only the well-formed batch counted, and a refused batch left no id
  // behind: sent again, repaired, it is recorded.
  auto total = store->HumanTotal(link);
  REQUIRE_THAT(total, IsOk());
  CHECK(*total == 1);
  const std::string repaired = UniqueBatchId("repaired");
  rows[1].browser = std::string("Chr\0me", 6);
  CHECK_THAT(store->Record(repaired, rows, true), HasCode(absl::StatusCode::kInvalidArgument));
  rows[1].browser = "Chrome";
  auto retried = store->Record(repaired, rows, true);
  REQUIRE_THAT(retried, IsOk());
  CHECK_FALSE(retried->duplicate);
  total = store->HumanTotal(link);
  REQUIRE_THAT(total, IsOk());
  CHECK(*total == 3);
}

TEST_CASE("a big batch counts every click of every link", "[lib/clicks][contract]") {
  auto store = NewContractClickStore();
  std::vector<int64_t> links;
  for (int i = 0; i < 100; ++i) links.push_back(NextLinkId());
  std::vector<ClickRow> rows;
  std::vector<int64_t> humans(links.size(), 0);
  for (int i = 0; i < 5000; ++i) {
    const bool bot = i % 7 == 0;
    rows.push_back(Click(links[i % 100], At("2030-01-09T00:00:00Z") + absl::Minutes(i % 600), bot));
    if (!bot) ++humans[i % 100];
  }
  auto outcome = store->Record(UniqueBatchId("big"), rows, true);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->counted == 5000);
  CHECK(outcome->visits == 5000);
  for (size_t i = 0; i < links.size(); ++i) {
    auto total = store->HumanTotal(links[i]);
    REQUIRE_THAT(total, IsOk());
    CHECK(*total == humans[i]);
  }
  // All at once, in the order asked, a link twice and one never clicked.
  std::vector<int64_t> asked(links.rbegin(), links.rend());
  asked.push_back(links[5]);
  asked.push_back(NextLinkId());
  auto totals = store->HumanTotals(asked);
  REQUIRE_THAT(totals, IsOk());
  REQUIRE(totals->size() == asked.size());
  for (size_t i = 0; i < links.size(); ++i) CHECK((*totals)[i] == humans[links.size() - 1 - i]);
  CHECK((*totals)[links.size()] == humans[5]);
  CHECK(totals->back() == 0);
  auto none = store->HumanTotals({});
  REQUIRE_THAT(none, IsOk());
  CHECK(none->empty());
  auto stats = DayStats(*store, links[0], "2030-01-09T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks + stats->total_bot_clicks == 50);
  CHECK(stats->total_human_clicks == humans[0]);
}

}  // namespace
}  // namespace shortener::clicks::testing
