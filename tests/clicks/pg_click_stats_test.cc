// PgClickStore's reads on a real PostgreSQL: Stats (buckets with zeros,
// uniques, totals, top lists, range edges, limits) and HumanTotal. Times are
// in 2035 so no retention test of this binary drops their partitions.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "tests/clicks/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::SharedPgCluster;

absl::Time At(const char* text) {
  absl::Time t;
  std::string err;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, text, &t, &err));
  return t;
}

std::unique_ptr<PgClickStore> NewStore() { return NewTestClickStore(SharedPgCluster().ConnInfo()); }

// A human click of `client` with the given browser, os, device, referrer and
// country.
ClickRow Human(int64_t link, const char* time, const std::string& client,
               const std::string& browser, const std::string& os, const std::string& device,
               const std::string& referrer, const std::string& country) {
  ClickRow r;
  r.link_id = link;
  r.time = At(time);
  r.client_id = ClientId(client, "Mozilla/5.0");
  r.browser = browser;
  r.os = os;
  r.device = device;
  r.referrer_host = referrer;
  r.country = country;
  return r;
}

ClickRow Bot(int64_t link, const char* time) {
  ClickRow r;
  r.link_id = link;
  r.time = At(time);
  r.bot = true;
  r.client_id = ClientId("203.0.113.9", "Googlebot/2.1");
  r.browser = "Googlebot";
  r.os = "Other";
  r.device = "bot";
  return r;
}

// Link 20001: clients A (twice) and B in the 10:00 hour with one bot, C at
// 12:15, B again the next day.
void RecordSample(PgClickStore& store, int64_t link, bool visits) {
  const std::string tag = absl::StrCat(link);
  REQUIRE_THAT(store.Record("stats-a-" + tag,
                            {Human(link, "2035-03-10T10:05:00Z", "192.0.2.1", "Chrome", "Android",
                                   "mobile", "example.com", "DE"),
                             Human(link, "2035-03-10T10:40:00Z", "192.0.2.1", "Chrome", "Android",
                                   "mobile", "example.com", "DE"),
                             Human(link, "2035-03-10T10:50:00Z", "192.0.2.2", "Firefox", "Windows",
                                   "desktop", "news.test", "FR"),
                             Bot(link, "2035-03-10T10:30:00Z")},
                            visits),
               IsOk());
  REQUIRE_THAT(store.Record("stats-b-" + tag,
                            {Human(link, "2035-03-10T12:15:00Z", "192.0.2.3", "Chrome", "Android",
                                   "mobile", "example.com", "DE"),
                             Human(link, "2035-03-11T09:00:00Z", "192.0.2.2", "Firefox", "Windows",
                                   "desktop", "", "")},
                            visits),
               IsOk());
}

std::vector<std::pair<std::string, int64_t>> Pairs(const std::vector<CountedValue>& list) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const CountedValue& v : list) out.emplace_back(v.value, v.clicks);
  return out;
}

using Top = std::vector<std::pair<std::string, int64_t>>;

TEST_CASE("hourly stats give every bucket with human bot and unique counts",
          "[pg][clicks][stats]") {
  auto store = NewStore();
  RecordSample(*store, 20001, true);
  auto stats = store->Stats(20001, At("2035-03-10T10:00:00Z"), At("2035-03-10T13:00:00Z"),
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

TEST_CASE("daily stats count a visitor of two days once in the total", "[pg][clicks][stats]") {
  auto store = NewStore();
  RecordSample(*store, 20002, true);
  auto stats = store->Stats(20002, At("2035-03-10T00:00:00Z"), At("2035-03-12T00:00:00Z"),
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

TEST_CASE("the range end is exclusive and edges round to whole buckets", "[pg][clicks][stats]") {
  auto store = NewStore();
  RecordSample(*store, 20003, true);
  auto to_noon = store->Stats(20003, At("2035-03-10T10:00:00Z"), At("2035-03-10T12:00:00Z"),
                              StatsGranularity::kHour);
  REQUIRE_THAT(to_noon, IsOk());
  CHECK(to_noon->buckets.size() == 2);
  CHECK(to_noon->total_human_clicks == 3);
  // 10:30 rounds down to 10:00 and 12:10 up to 13:00.
  auto widened = store->Stats(20003, At("2035-03-10T10:30:00Z"), At("2035-03-10T12:10:00Z"),
                              StatsGranularity::kHour);
  REQUIRE_THAT(widened, IsOk());
  REQUIRE(widened->buckets.size() == 3);
  CHECK(widened->buckets[0].start == At("2035-03-10T10:00:00Z"));
  CHECK(widened->total_human_clicks == 4);
  auto after = store->Stats(20003, At("2035-03-10T11:00:00Z"), At("2035-03-10T12:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(after, IsOk());
  CHECK(after->total_human_clicks == 0);
  CHECK(after->total_unique_visitors == 0);
  CHECK(after->top_browsers.empty());
  auto empty = store->Stats(20003, At("2035-03-10T11:00:00Z"), At("2035-03-10T11:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(empty, IsOk());
  CHECK(empty->buckets.empty());
}

TEST_CASE("without visits stats have counts but no uniques or tops", "[pg][clicks][stats]") {
  auto store = NewStore();
  RecordSample(*store, 20004, false);
  auto stats = store->Stats(20004, At("2035-03-10T00:00:00Z"), At("2035-03-12T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 5);
  CHECK(stats->total_bot_clicks == 1);
  CHECK(stats->total_unique_visitors == 0);
  CHECK(stats->top_browsers.empty());
  CHECK(stats->top_countries.empty());
}

TEST_CASE("top lists keep the ten values with most human clicks", "[pg][clicks][stats]") {
  auto store = NewStore();
  std::vector<ClickRow> rows;
  for (int i = 0; i < 12; ++i) {
    for (int n = 0; n <= i; ++n) {
      rows.push_back(Human(20005, "2035-04-02T08:00:00Z", "192.0.2.1",
                           absl::StrCat("browser", i < 10 ? "0" : "", i), "Linux", "desktop", "",
                           ""));
    }
  }
  REQUIRE_THAT(store->Record("stats-top", rows, true), IsOk());
  auto stats = store->Stats(20005, At("2035-04-02T00:00:00Z"), At("2035-04-03T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->top_browsers.size() == 10);
  CHECK(stats->top_browsers.front().value == "browser11");
  CHECK(stats->top_browsers.front().clicks == 12);
  CHECK(stats->top_browsers.back().value == "browser02");
  CHECK(stats->total_unique_visitors == 1);
}

TEST_CASE("stats reject a reversed range and too many buckets", "[pg][clicks][stats]") {
  auto store = NewStore();
  const absl::Time t = At("2035-05-01T00:00:00Z");
  CHECK_THAT(store->Stats(1, t, t - absl::Hours(1), StatsGranularity::kHour),
             HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(store->Stats(1, t, t + absl::Hours(24 * 31), StatsGranularity::kHour), IsOk());
  CHECK_THAT(store->Stats(1, t, t + absl::Hours(24 * 31 + 1), StatsGranularity::kHour),
             HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(store->Stats(1, t, t + absl::Hours(24 * 3 * 366), StatsGranularity::kDay), IsOk());
  CHECK_THAT(store->Stats(1, t, t + absl::Hours(24 * (3 * 366 + 1)), StatsGranularity::kDay),
             HasCode(absl::StatusCode::kInvalidArgument));
}

TEST_CASE("the human total counts human clicks only", "[pg][clicks][stats]") {
  auto store = NewStore();
  RecordSample(*store, 20006, false);
  auto total = store->HumanTotal(20006);
  REQUIRE_THAT(total, IsOk());
  CHECK(*total == 5);
  auto none = store->HumanTotal(20999);
  REQUIRE_THAT(none, IsOk());
  CHECK(*none == 0);
}

}  // namespace
}  // namespace shortener::clicks
