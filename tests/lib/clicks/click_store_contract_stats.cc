// The ClickStore contract, part 2: statistics (buckets with zeros, uniques,
// totals, top lists, range edges, limits) and the human total. Times are in
// 2035 so that no retention test of a Postgres binary drops their visits.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/clicks/rollups.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

// Clients A (twice) and B in the 10:00 hour with one bot, C at
// 12:15, B again the next day.
void RecordSample(ClickStore& store, int64_t link, bool visits) {
  REQUIRE_THAT(store.Record(UniqueBatchId("stats-a"),
                            {Human(link, "2035-03-10T10:05:00Z", "192.0.2.1", "Chrome", "Android",
                                   "mobile", "example.com", "DE"),
                             Human(link, "2035-03-10T10:40:00Z", "192.0.2.1", "Chrome", "Android",
                                   "mobile", "example.com", "DE"),
                             Human(link, "2035-03-10T10:50:00Z", "192.0.2.2", "Firefox", "Windows",
                                   "desktop", "news.test", "FR"),
                             Bot(link, "2035-03-10T10:30:00Z")},
                            visits),
               IsOk());
  REQUIRE_THAT(store.Record(UniqueBatchId("stats-b"),
                            {Human(link, "2035-03-10T12:15:00Z", "192.0.2.3", "Chrome", "Android",
                                   "mobile", "example.com", "DE"),
                             Human(link, "2035-03-11T09:00:00Z", "192.0.2.2", "Firefox", "Windows",
                                   "desktop", "", "")},
                            visits),
               IsOk());
}

TEST_CASE("hourly stats give every bucket with human bot and unique counts",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  RecordSample(*store, link, true);
  auto stats = store->Stats(link, At("2035-03-10T10:00:00Z"), At("2035-03-10T13:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->buckets.size() == 3);
  CHECK(stats->buckets[0].start == At("2035-03-10T10:00:00Z"));
  CHECK(stats->buckets[0].human_clicks == 3);
  CHECK(stats->buckets[0].bot_clicks == 1);
  CHECK(stats->buckets[0].unique_visitors == 2);
  // An hour without clicks is still there, with zeros.
  CHECK(stats->buckets[1].start == At("2035-03-10T11:00:00Z"));
  CHECK(stats->buckets[1].human_clicks == 0);
  CHECK(stats->buckets[1].bot_clicks == 0);
  CHECK(stats->buckets[1].unique_visitors == 0);
  CHECK(stats->buckets[2].human_clicks == 1);
  CHECK(stats->buckets[2].unique_visitors == 1);
  CHECK(stats->total_human_clicks == 4);
  CHECK(stats->total_bot_clicks == 1);
  CHECK(stats->total_unique_visitors == 3);
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", 3}, {"Firefox", 1}});
  CHECK(Pairs(stats->top_os) == Top{{"Android", 3}, {"Windows", 1}});
  CHECK(Pairs(stats->top_devices) == Top{{"mobile", 3}, {"desktop", 1}});
  CHECK(Pairs(stats->top_countries) == Top{{"DE", 3}, {"FR", 1}});
  CHECK(Pairs(stats->top_referrers) == Top{{"example.com", 3}, {"news.test", 1}});
}

TEST_CASE("regions, cities and networks are rolled up and listed like the other dimensions",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  auto at = [link](const char* time, const char* ip, const char* region, const char* city,
                   const char* network) {
    ClickRow row = Human(link, time, ip, "Chrome", "Android", "mobile", "", "US");
    row.region = region;
    row.city = city;
    row.network = network;
    return row;
  };
  // With and without visits: the rollups are the same.
  const bool visits = GENERATE(true, false);
  REQUIRE_THAT(
      store->Record(
          UniqueBatchId("places"),
          {at("2035-03-10T10:05:00Z", "192.0.2.1", "US-IL", "Springfield (US-IL)",
              "AS64500 Example Net B.V."),
           at("2035-03-10T10:06:00Z", "192.0.2.2", "US-IL", "Springfield (US-IL)",
              "AS64500 Example Net B.V."),
           at("2035-03-10T11:00:00Z", "192.0.2.3", "US-MO", "Springfield (US-MO)", "AS4200000000"),
           at("2035-03-10T12:00:00Z", "192.0.2.4", "", "", ""), Bot(link, "2035-03-10T12:30:00Z")},
          visits),
      IsOk());
  auto stats = store->Stats(link, At("2035-03-10T00:00:00Z"), At("2035-03-11T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 4);
  CHECK(Pairs(stats->top_countries) == Top{{"US", 4}});
  // Unknown (empty) values are left out, as for the other lists.
  CHECK(Pairs(stats->top_regions) == Top{{"US-IL", 2}, {"US-MO", 1}});
  CHECK(Pairs(stats->top_cities) == Top{{"Springfield (US-IL)", 2}, {"Springfield (US-MO)", 1}});
  CHECK(Pairs(stats->top_networks) == Top{{"AS64500 Example Net B.V.", 2}, {"AS4200000000", 1}});
  auto hourly = store->Stats(link, At("2035-03-10T11:00:00Z"), At("2035-03-10T12:00:00Z"),
                             StatsGranularity::kHour);
  REQUIRE_THAT(hourly, IsOk());
  CHECK(Pairs(hourly->top_cities) == Top{{"Springfield (US-MO)", 1}});
}

TEST_CASE("daily stats count a visitor of two days once in the total",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  RecordSample(*store, link, true);
  auto stats = store->Stats(link, At("2035-03-10T00:00:00Z"), At("2035-03-12T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->buckets.size() == 2);
  CHECK(stats->buckets[0].human_clicks == 4);
  CHECK(stats->buckets[0].bot_clicks == 1);
  CHECK(stats->buckets[0].unique_visitors == 3);
  CHECK(stats->buckets[1].start == At("2035-03-11T00:00:00Z"));
  CHECK(stats->buckets[1].human_clicks == 1);
  CHECK(stats->buckets[1].unique_visitors == 1);
  CHECK(stats->total_human_clicks == 5);
  CHECK(stats->total_unique_visitors == 3);
  // The second day's visit had no referrer or country: left out of those lists.
  CHECK(Pairs(stats->top_referrers) == Top{{"example.com", 3}, {"news.test", 1}});
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", 3}, {"Firefox", 2}});
}

TEST_CASE("the range end is exclusive and edges round to whole buckets",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  RecordSample(*store, link, true);
  auto to_noon = store->Stats(link, At("2035-03-10T10:00:00Z"), At("2035-03-10T12:00:00Z"),
                              StatsGranularity::kHour);
  REQUIRE_THAT(to_noon, IsOk());
  CHECK(to_noon->buckets.size() == 2);
  CHECK(to_noon->total_human_clicks == 3);
  // 10:30 rounds down to 10:00 and 12:10 up to 13:00.
  auto widened = store->Stats(link, At("2035-03-10T10:30:00Z"), At("2035-03-10T12:10:00Z"),
                              StatsGranularity::kHour);
  REQUIRE_THAT(widened, IsOk());
  REQUIRE(widened->buckets.size() == 3);
  CHECK(widened->buckets[0].start == At("2035-03-10T10:00:00Z"));
  CHECK(widened->total_human_clicks == 4);
  auto after = store->Stats(link, At("2035-03-10T11:00:00Z"), At("2035-03-10T12:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(after, IsOk());
  CHECK(after->total_human_clicks == 0);
  CHECK(after->total_unique_visitors == 0);
  CHECK(after->top_browsers.empty());
  auto empty = store->Stats(link, At("2035-03-10T11:00:00Z"), At("2035-03-10T11:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(empty, IsOk());
  CHECK(empty->buckets.empty());
}

TEST_CASE("stats without visits are the same as with them", "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t with = NextLinkId();
  const int64_t without = NextLinkId();
  RecordSample(*store, with, true);
  RecordSample(*store, without, false);
  for (StatsGranularity g : {StatsGranularity::kHour, StatsGranularity::kDay}) {
    auto a = store->Stats(with, At("2035-03-10T00:00:00Z"), At("2035-03-12T00:00:00Z"), g);
    auto b = store->Stats(without, At("2035-03-10T00:00:00Z"), At("2035-03-12T00:00:00Z"), g);
    REQUIRE_THAT(a, IsOk());
    REQUIRE_THAT(b, IsOk());
    CHECK(b->total_human_clicks == 5);
    CHECK(b->total_bot_clicks == 1);
    CHECK(b->total_unique_visitors == 3);
    REQUIRE(a->buckets.size() == b->buckets.size());
    for (size_t i = 0; i < a->buckets.size(); ++i) {
      CHECK(a->buckets[i].human_clicks == b->buckets[i].human_clicks);
      CHECK(a->buckets[i].bot_clicks == b->buckets[i].bot_clicks);
      CHECK(a->buckets[i].unique_visitors == b->buckets[i].unique_visitors);
    }
    CHECK(Pairs(a->top_browsers) == Pairs(b->top_browsers));
    CHECK(Pairs(a->top_os) == Pairs(b->top_os));
    CHECK(Pairs(a->top_devices) == Pairs(b->top_devices));
    CHECK(Pairs(a->top_countries) == Pairs(b->top_countries));
    CHECK(Pairs(a->top_referrers) == Pairs(b->top_referrers));
  }
}

TEST_CASE("bot clicks are in the counts but not in uniques or top lists",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  REQUIRE_THAT(store->Record(UniqueBatchId("bots"),
                             {Bot(link, "2035-03-20T10:00:00Z"), Bot(link, "2035-03-20T10:01:00Z"),
                              Human(link, "2035-03-20T10:02:00Z", "192.0.2.9", "Firefox", "Linux",
                                    "desktop", "", "")},
                             true),
               IsOk());
  auto stats = store->Stats(link, At("2035-03-20T00:00:00Z"), At("2035-03-21T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_bot_clicks == 2);
  CHECK(stats->total_human_clicks == 1);
  CHECK(stats->total_unique_visitors == 1);
  CHECK(Pairs(stats->top_browsers) == Top{{"Firefox", 1}});
  CHECK(Pairs(stats->top_devices) == Top{{"desktop", 1}});
  CHECK(Pairs(stats->top_os) == Top{{"Linux", 1}});
}

// kMaxValuesPerHour distinct referrers in one hour, over several batches,
// and more in the next hour: every top list count is exact.
TEST_CASE("top lists are exact while no hour holds more values than the limit",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  std::map<std::string, int64_t> truth;
  for (int batch = 0; batch < 4; ++batch) {
    std::vector<ClickRow> rows;
    for (int v = batch; v < kMaxValuesPerHour; v += 4) {
      const std::string referrer = absl::StrCat("r", 1000 + v, ".test");
      for (int n = 0; n <= v % 13; ++n) {
        rows.push_back(Human(link, "2035-05-02T07:30:00Z", "192.0.2.1", "Chrome", "Linux",
                             "desktop", referrer, ""));
        ++truth[referrer];
      }
    }
    REQUIRE_THAT(store->Record(UniqueBatchId("exact-top"), rows, true), IsOk());
  }
  // The next hour has room again.
  std::vector<ClickRow> next;
  for (int n = 0; n < 20; ++n) {
    next.push_back(Human(link, "2035-05-02T08:10:00Z", "192.0.2.1", "Chrome", "Linux", "desktop",
                         "r1003.test", ""));
    ++truth["r1003.test"];
  }
  next.push_back(
      Human(link, "2035-05-02T08:20:00Z", "192.0.2.1", "Chrome", "Linux", "desktop", "x.test", ""));
  ++truth["x.test"];
  REQUIRE_THAT(store->Record(UniqueBatchId("exact-top"), next, true), IsOk());
  Top expected;
  for (const auto& [value, clicks] : truth) expected.emplace_back(value, clicks);
  std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  expected.resize(kMaxTopEntries);
  auto stats = store->Stats(link, At("2035-05-02T00:00:00Z"), At("2035-05-03T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(Pairs(stats->top_referrers) == expected);
  CHECK(stats->top_referrers.front().value == "r1003.test");
}

// Beyond the limit a store may put values into its "other" row, depending
// on the order they arrived in: what every store still guarantees.
TEST_CASE("top lists past the limit are never above the truth and totals stay exact",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  std::map<std::string, int64_t> truth;
  int64_t clicks = 0;
  for (int batch = 0; batch < 3; ++batch) {
    std::vector<ClickRow> rows;
    for (int v = 0; v < kMaxValuesPerHour; ++v) {
      const std::string referrer = absl::StrCat("b", batch, "-", v, ".test");
      rows.push_back(Human(link, "2035-05-03T07:00:00Z", "192.0.2.1", "Chrome", "Linux", "desktop",
                           referrer, ""));
      ++truth[referrer];
      ++clicks;
    }
    for (int n = 0; n < 5 * (batch + 1); ++n) {
      rows.push_back(Human(link, "2035-05-03T07:00:00Z", "192.0.2.1", "Chrome", "Linux", "desktop",
                           absl::StrCat("late", batch, ".test"), ""));
      ++truth[absl::StrCat("late", batch, ".test")];
      ++clicks;
    }
    REQUIRE_THAT(store->Record(UniqueBatchId("past-limit"), rows, true), IsOk());
  }
  auto stats = store->Stats(link, At("2035-05-03T00:00:00Z"), At("2035-05-04T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == clicks);
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", clicks}});
  REQUIRE(stats->top_referrers.size() == static_cast<size_t>(kMaxTopEntries));
  for (size_t i = 0; i < stats->top_referrers.size(); ++i) {
    const CountedValue& v = stats->top_referrers[i];
    CAPTURE(v.value);
    REQUIRE(truth.count(v.value) == 1);
    CHECK(v.clicks <= truth[v.value]);
    if (i > 0) CHECK(v.clicks <= stats->top_referrers[i - 1].clicks);
  }
  // The first batch's most clicked value arrived while there was room,
  // however the batches were added up.
  CHECK(std::count_if(
            stats->top_referrers.begin(), stats->top_referrers.end(),
            [](const CountedValue& v) { return v.value == "late0.test" && v.clicks == 5; }) == 1);
}

TEST_CASE("top lists keep the ten values with most human clicks", "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  std::vector<ClickRow> rows;
  for (int i = 0; i < 12; ++i) {
    for (int n = 0; n <= i; ++n) {
      rows.push_back(Human(link, "2035-04-02T08:00:00Z", "192.0.2.1",
                           absl::StrCat("browser", i < 10 ? "0" : "", i), "Linux", "desktop", "",
                           ""));
    }
  }
  REQUIRE_THAT(store->Record(UniqueBatchId("stats-top"), rows, true), IsOk());
  auto stats = store->Stats(link, At("2035-04-02T00:00:00Z"), At("2035-04-03T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->top_browsers.size() == 10);
  CHECK(stats->top_browsers.front().value == "browser11");
  CHECK(stats->top_browsers.front().clicks == 12);
  CHECK(stats->top_browsers.back().value == "browser02");
  CHECK(stats->total_unique_visitors == 1);
}

TEST_CASE("top list entries with equal clicks are ordered by value",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  std::vector<ClickRow> rows;
  for (const char* os : {"Windows", "Android", "Windows", "Linux", "Android", "iOS"}) {
    rows.push_back(
        Human(link, "2035-04-03T08:00:00Z", "192.0.2.1", "Chrome", os, "desktop", "", ""));
  }
  REQUIRE_THAT(store->Record(UniqueBatchId("stats-ties"), rows, true), IsOk());
  auto stats = store->Stats(link, At("2035-04-03T00:00:00Z"), At("2035-04-04T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(Pairs(stats->top_os) == Top{{"Android", 2}, {"Windows", 2}, {"Linux", 1}, {"iOS", 1}});
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", 6}});
}

TEST_CASE("stats reject a reversed range and too many buckets", "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  const absl::Time t = At("2035-05-01T00:00:00Z");
  CHECK_THAT(store->Stats(link, t, t - absl::Hours(1), StatsGranularity::kHour),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "end_time: before start_time"));
  CHECK_THAT(store->Stats(link, t, t + absl::Hours(24 * 31), StatsGranularity::kHour), IsOk());
  CHECK_THAT(store->Stats(link, t, t + absl::Hours(24 * 31 + 1), StatsGranularity::kHour),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "granularity: at most 744 hourly buckets, got 745"));
  // Widened to whole buckets before they are counted: 744 hours from 00:30
  // touch 745 of them.
  CHECK_THAT(store->Stats(link, t + absl::Minutes(30), t + absl::Minutes(30) + absl::Hours(24 * 31),
                          StatsGranularity::kHour),
             HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(store->Stats(link, t, t + absl::Hours(24 * 3 * 366), StatsGranularity::kDay), IsOk());
  CHECK_THAT(store->Stats(link, t, t + absl::Hours(24 * (3 * 366 + 1)), StatsGranularity::kDay),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "granularity: at most 1098 daily buckets, got 1099"));
}

TEST_CASE("the human total counts human clicks only", "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  RecordSample(*store, link, false);
  auto total = store->HumanTotal(link);
  REQUIRE_THAT(total, IsOk());
  CHECK(*total == 5);
  auto none = store->HumanTotal(NextLinkId());
  REQUIRE_THAT(none, IsOk());
  CHECK(*none == 0);
}

}  // namespace
}  // namespace shortener::clicks::testing
