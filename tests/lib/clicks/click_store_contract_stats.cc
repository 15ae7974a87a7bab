// The ClickStore contract, part 2: statistics (buckets with zeros, uniques,
// totals, top lists, range edges, limits) and the human total. Times are in
// 2035 so that no retention test of a Postgres binary drops their visits.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

TEST_CASE("without visits stats have counts but no uniques or tops",
          "[lib/clicks][stats][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  RecordSample(*store, link, false);
  auto stats = store->Stats(link, At("2035-03-10T00:00:00Z"), At("2035-03-12T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 5);
  CHECK(stats->total_bot_clicks == 1);
  CHECK(stats->total_unique_visitors == 0);
  CHECK(stats->top_browsers.empty());
  CHECK(stats->top_countries.empty());
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
