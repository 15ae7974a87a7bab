// The ClickStore contract, part 3: label subjects (campaigns). Every click
// also counts under each label its link carries when the batch is counted,
// in the label's own rollups (SubjectStats with a kLabel subject). Times
// are in 2036.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "lib/clicks/rollups.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks::testing {
namespace {

using ::shortener::testing::IsOk;

ClickStats HourlyStats(ClickStore& store, const Subject& subject) {
  absl::StatusOr<ClickStats> stats = store.SubjectStats(
      subject, At("2036-05-01T10:00:00Z"), At("2036-05-01T12:00:00Z"), StatsGranularity::kHour);
  REQUIRE_THAT(stats, IsOk());
  return *std::move(stats);
}

TEST_CASE("a label's rollups sum exactly the clicks of its links",
          "[lib/clicks][labels][contract]") {
  auto store = NewContractClickStore();
  const int64_t a = NextLinkId(), b = NextLinkId(), unlabeled = NextLinkId();
  const int64_t campaign = NextLinkId();  // a label id of its own
  SetLinkLabels(a, {campaign});
  SetLinkLabels(b, {campaign});
  REQUIRE_THAT(store->Record(UniqueBatchId("labels-1"),
                             {Human(a, "2036-05-01T10:05:00Z", "192.0.2.1", "Chrome", "Android",
                                    "mobile", "example.com", "DE"),
                              Human(a, "2036-05-01T10:06:00Z", "192.0.2.1", "Chrome", "Android",
                                    "mobile", "example.com", "DE"),
                              Human(b, "2036-05-01T10:07:00Z", "192.0.2.2", "Firefox", "Windows",
                                    "desktop", "news.test", "FR"),
                              Bot(b, "2036-05-01T10:08:00Z"),
                              Human(unlabeled, "2036-05-01T10:09:00Z", "192.0.2.3", "Safari", "iOS",
                                    "mobile", "", "US")},
                             true),
               IsOk());
  REQUIRE_THAT(store->Record(UniqueBatchId("labels-2"),
                             {Human(b, "2036-05-01T11:30:00Z", "192.0.2.1", "Chrome", "Android",
                                    "mobile", "example.com", "DE")},
                             false),
               IsOk());
  const ClickStats stats = HourlyStats(*store, LabelSubject(campaign));
  REQUIRE(stats.buckets.size() == 2);
  CHECK(stats.buckets[0].human_clicks == 3);
  CHECK(stats.buckets[0].bot_clicks == 1);
  CHECK(stats.buckets[0].unique_visitors == 2);
  CHECK(stats.buckets[1].human_clicks == 1);
  CHECK(stats.total_human_clicks == 4);
  CHECK(stats.total_bot_clicks == 1);
  CHECK(stats.total_unique_visitors == 2);  // 192.0.2.1 clicked a and b
  CHECK(Pairs(stats.top_browsers) == Top{{"Chrome", 3}, {"Firefox", 1}});
  CHECK(Pairs(stats.top_countries) == Top{{"DE", 3}, {"FR", 1}});
  CHECK(Pairs(stats.top_referrers) == Top{{"example.com", 3}, {"news.test", 1}});
  // The links' own statistics are what they were without labels.
  absl::StatusOr<ClickStats> of_a = store->Stats(
      a, At("2036-05-01T10:00:00Z"), At("2036-05-01T12:00:00Z"), StatsGranularity::kHour);
  REQUIRE_THAT(of_a, IsOk());
  CHECK(of_a->total_human_clicks == 2);
  CHECK(of_a->total_bot_clicks == 0);
}

TEST_CASE("a replayed batch adds nothing to its links' labels", "[lib/clicks][labels][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  const int64_t campaign = NextLinkId();
  SetLinkLabels(link, {campaign});
  const std::string id = UniqueBatchId("labels-replay");
  const std::vector<ClickRow> rows = {
      Human(link, "2036-05-01T10:05:00Z", "192.0.2.1", "Chrome", "Android", "mobile", "", "DE")};
  REQUIRE_THAT(store->Record(id, rows, true), IsOk());
  absl::StatusOr<RecordOutcome> again = store->Record(id, rows, true);
  REQUIRE_THAT(again, IsOk());
  CHECK(again->duplicate);
  CHECK(HourlyStats(*store, LabelSubject(campaign)).total_human_clicks == 1);
}

TEST_CASE("a link with two labels counts under both", "[lib/clicks][labels][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  const int64_t spring = NextLinkId(), sms = NextLinkId();
  SetLinkLabels(link, {spring, sms});
  REQUIRE_THAT(store->Record(UniqueBatchId("labels-two"),
                             {Human(link, "2036-05-01T10:05:00Z", "192.0.2.1", "Chrome", "Android",
                                    "mobile", "", "DE"),
                              Bot(link, "2036-05-01T11:05:00Z")},
                             true),
               IsOk());
  for (int64_t label : {spring, sms}) {
    const ClickStats stats = HourlyStats(*store, LabelSubject(label));
    CHECK(stats.total_human_clicks == 1);
    CHECK(stats.total_bot_clicks == 1);
    CHECK(stats.total_unique_visitors == 1);
    CHECK(Pairs(stats.top_countries) == Top{{"DE", 1}});
  }
}

TEST_CASE("a link without labels adds nothing to any label", "[lib/clicks][labels][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId(), other = NextLinkId();
  const int64_t label = NextLinkId();
  SetLinkLabels(other, {label});  // a label of another link, never clicked
  REQUIRE_THAT(store->Record(UniqueBatchId("labels-none"),
                             {Human(link, "2036-05-01T10:05:00Z", "192.0.2.1", "Chrome", "Android",
                                    "mobile", "", "DE")},
                             true),
               IsOk());
  const ClickStats stats = HourlyStats(*store, LabelSubject(label));
  CHECK(stats.total_human_clicks == 0);
  CHECK(stats.total_bot_clicks == 0);
  CHECK(stats.total_unique_visitors == 0);
  CHECK(stats.top_browsers.empty());
  // Nor is a link id read as a label id: the link's own subject is 'l'.
  const ClickStats as_label = HourlyStats(*store, LabelSubject(link));
  CHECK(as_label.total_human_clicks == 0);
}

TEST_CASE("clicks count under the labels their link had when they were counted",
          "[lib/clicks][labels][contract]") {
  auto store = NewContractClickStore();
  const int64_t link = NextLinkId();
  const int64_t before = NextLinkId(), after = NextLinkId();
  SetLinkLabels(link, {before});
  REQUIRE_THAT(store->Record(UniqueBatchId("labels-then"),
                             {Human(link, "2036-05-01T10:05:00Z", "192.0.2.1", "Chrome", "Android",
                                    "mobile", "", "DE")},
                             true),
               IsOk());
  SetLinkLabels(link, {after});
  REQUIRE_THAT(store->Record(UniqueBatchId("labels-now"),
                             {Human(link, "2036-05-01T10:15:00Z", "192.0.2.2", "Chrome", "Android",
                                    "mobile", "", "DE"),
                              Human(link, "2036-05-01T10:16:00Z", "192.0.2.3", "Chrome", "Android",
                                    "mobile", "", "DE")},
                             true),
               IsOk());
  CHECK(HourlyStats(*store, LabelSubject(before)).total_human_clicks == 1);
  CHECK(HourlyStats(*store, LabelSubject(after)).total_human_clicks == 2);
}

}  // namespace
}  // namespace shortener::clicks::testing
