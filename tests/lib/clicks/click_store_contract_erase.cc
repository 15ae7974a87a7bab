// The ClickStore contract, erasure: EraseLinks (issue 21, item 3: a deleted
// link's clicks are erased, its labels' are kept, and none counts again).
// Every implementation passes these cases.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/lib/clicks/click_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks::testing {
namespace {

using ::shortener::testing::IsOk;

ClickStats HourStats(ClickStore& store, const Subject& subject) {
  absl::StatusOr<ClickStats> stats = store.SubjectStats(
      subject, At("2037-03-01T10:00:00Z"), At("2037-03-01T12:00:00Z"), StatsGranularity::kHour);
  REQUIRE_THAT(stats, IsOk());
  return *std::move(stats);
}

int64_t HumanTotalOf(ClickStore& store, int64_t link) {
  absl::StatusOr<int64_t> total = store.HumanTotal(link);
  REQUIRE_THAT(total, IsOk());
  return *total;
}

std::vector<ClickRow> ClicksOf(int64_t link, int humans) {
  std::vector<ClickRow> rows;
  for (int i = 0; i < humans; ++i) {
    rows.push_back(Human(link, "2037-03-01T10:05:00Z", "192.0.2." + std::to_string(i + 1), "Chrome",
                         "Android", "mobile", "example.com", "DE"));
  }
  rows.push_back(Bot(link, "2037-03-01T11:05:00Z"));
  return rows;
}

TEST_CASE("EraseLinks erases a link's clicks and keeps its label's and other links'",
          "[lib/clicks][erase][contract]") {
  auto store = NewContractClickStore();
  const int64_t erased = NextLinkId(), kept = NextLinkId(), campaign = NextLinkId();
  SetLinkLabels(erased, {campaign});
  SetLinkLabels(kept, {campaign});
  std::vector<ClickRow> rows = ClicksOf(erased, 3);
  for (const ClickRow& r : ClicksOf(kept, 2)) rows.push_back(r);
  REQUIRE_THAT(store->Record(UniqueBatchId("erase"), rows, true), IsOk());
  REQUIRE(HumanTotalOf(*store, erased) == 3);

  REQUIRE_THAT(store->EraseLinks({erased}, At("2037-03-02T00:00:00Z")), IsOk());
  CHECK(HumanTotalOf(*store, erased) == 0);
  const ClickStats gone = HourStats(*store, LinkSubject(erased));
  CHECK(gone.total_human_clicks == 0);
  CHECK(gone.total_bot_clicks == 0);
  CHECK(gone.total_unique_visitors == 0);
  CHECK(gone.top_browsers.empty());
  CHECK(gone.top_countries.empty());
  absl::StatusOr<std::vector<int64_t>> totals = store->HumanTotals({erased, kept});
  REQUIRE_THAT(totals, IsOk());
  CHECK(*totals == std::vector<int64_t>{0, 2});
  const ClickStats other = HourStats(*store, LinkSubject(kept));
  CHECK(other.total_human_clicks == 2);
  CHECK(other.total_bot_clicks == 1);
  // The campaign keeps every click, the erased link's too.
  const ClickStats label = HourStats(*store, LabelSubject(campaign));
  CHECK(label.total_human_clicks == 5);
  CHECK(label.total_bot_clicks == 2);
  CHECK(label.total_unique_visitors == 3);  // 192.0.2.1..3 in both links
  // Again: nothing changes.
  REQUIRE_THAT(store->EraseLinks({erased}, At("2037-03-02T00:00:00Z")), IsOk());
  CHECK(HourStats(*store, LabelSubject(campaign)).total_human_clicks == 5);
}

TEST_CASE("a batch recorded after its link's erasure, however late, leaves that link's rows out",
          "[lib/clicks][erase][contract]") {
  auto store = NewContractClickStore();
  const int64_t erased = NextLinkId(), kept = NextLinkId();
  REQUIRE_THAT(store->EraseLinks({erased}, At("2037-03-02T00:00:00Z")), IsOk());
  std::vector<ClickRow> rows = ClicksOf(erased, 3);               // 4 rows
  for (const ClickRow& r : ClicksOf(kept, 1)) rows.push_back(r);  // 2 rows
  absl::StatusOr<RecordOutcome> outcome = store->Record(UniqueBatchId("late"), rows, true);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->counted == 2);
  CHECK(outcome->visits == 2);
  CHECK(HumanTotalOf(*store, erased) == 0);
  CHECK(HourStats(*store, LinkSubject(erased)).total_bot_clicks == 0);
  CHECK(HumanTotalOf(*store, kept) == 1);
  // A batch of nothing but erased rows records its id only.
  const std::string only_erased = UniqueBatchId("only-erased");
  outcome = store->Record(only_erased, ClicksOf(erased, 1), false);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->counted == 0);
  outcome = store->Record(only_erased, ClicksOf(kept, 1), false);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->duplicate);
}

TEST_CASE("batches recorded while a link is erased leave nothing of it behind",
          "[lib/clicks][erase][contract][concurrent]") {
  auto store = NewContractClickStore();
  const int64_t erased = NextLinkId(), kept = NextLinkId();
  std::atomic<bool> stop{false};
  std::atomic<int64_t> kept_humans{0};
  std::atomic<int> failures{0};
  std::vector<std::string> batch_ids;
  for (int i = 0; i < 400; ++i) batch_ids.push_back(UniqueBatchId("during-erase"));
  // Made here: the helpers use Catch's assertions, which are not for
  // other threads.
  std::vector<ClickRow> rows = ClicksOf(erased, 2);
  for (const ClickRow& r : ClicksOf(kept, 1)) rows.push_back(r);
  std::thread recorder([&] {
    // Some batches before the erasure, some after, up to 400.
    for (int i = 0; i < 400 && (i < 5 || !stop.load() || i < 10); ++i) {
      if (store->Record(batch_ids[i], rows, true).ok()) {
        kept_humans += 1;
      } else {
        failures += 1;
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE_THAT(store->EraseLinks({erased}, At("2037-03-02T00:00:00Z")), IsOk());
  stop = true;
  recorder.join();
  REQUIRE(failures.load() == 0);
  CHECK(HumanTotalOf(*store, erased) == 0);
  const ClickStats gone = HourStats(*store, LinkSubject(erased));
  CHECK(gone.total_human_clicks == 0);
  CHECK(gone.total_bot_clicks == 0);
  CHECK(HumanTotalOf(*store, kept) == kept_humans.load());
}

}  // namespace
}  // namespace shortener::clicks::testing
