// LinkStats over the in-memory link and click stores (the click store behind
// its fault-injecting wrapper) and a ManualClock: GetLink's click count,
// GetClickStats' range defaults at the clock's time, ownership (another
// tenant's link is NOT_FOUND and its clicks are never read), the order of
// the checks, store failures and a full blocking pool.
#include "services/shorten/link_stats.h"

#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "lib/clicks/in_memory_click_store.h"
#include "tests/services/shorten/shortener_stack.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_click_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::FaultPlan;
using shortener::testing::FaultyClickStore;
using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

// 2027-01-15T08:00:00Z: on an hour boundary.
const absl::Time kNow = kStackNow;

std::shared_ptr<const auth::Principal> Tenant(const std::string& tenant) {
  auto principal = std::make_shared<auth::Principal>();
  principal->key_name = tenant + "-key";
  principal->tenant = tenant;
  principal->scopes = auth::ScopeSet{auth::Scope::kShorten, auth::Scope::kStats};
  return principal;
}

struct Fixture {
  Fixture() { stats = std::make_unique<LinkStats>(shortener, &faulty_clicks, pool, clock); }

  LinkView Shorten(const std::string& url, std::shared_ptr<const auth::Principal> owner) {
    return stack.Shorten(url, std::move(owner));
  }

  // `humans` human and `bots` bot clicks on `link_id` at `when`.
  void Click(int64_t link_id, absl::Time when, int humans, int bots) {
    std::vector<clicks::ClickRow> rows;
    for (int i = 0; i < humans + bots; ++i) {
      clicks::ClickRow row;
      row.link_id = link_id;
      row.time = when;
      row.bot = i >= humans;
      row.client_id = "client-" + std::to_string(i);
      row.device = row.bot ? "bot" : "desktop";
      rows.push_back(row);
    }
    REQUIRE_THAT(clicks_memory.Record("batch-" + std::to_string(++batches), rows, true), IsOk());
  }

  absl::StatusOr<LinkWithClicks> GetLink(const std::string& code,
                                         std::shared_ptr<const auth::Principal> caller) {
    std::promise<absl::StatusOr<LinkWithClicks>> p;
    stats->GetLink(code, std::move(caller),
                   [&p](absl::StatusOr<LinkWithClicks> link) { p.set_value(std::move(link)); });
    return p.get_future().get();
  }

  absl::StatusOr<clicks::ClickStats> GetClickStats(const std::string& code,
                                                   std::shared_ptr<const auth::Principal> caller,
                                                   const ClickStatsQuery& query = {}) {
    std::promise<absl::StatusOr<clicks::ClickStats>> p;
    stats->GetClickStats(
        code, std::move(caller), query,
        [&p](absl::StatusOr<clicks::ClickStats> got) { p.set_value(std::move(got)); });
    return p.get_future().get();
  }

  ShortenerStack stack;
  ManualClock& clock = stack.clock;
  Shortener* shortener = stack.shortener.get();
  ThreadPool* pool = stack.blocking_pool.get();
  clicks::InMemoryClickStore clicks_memory;
  FaultPlan click_faults;
  FaultyClickStore faulty_clicks{&clicks_memory, &click_faults};
  std::unique_ptr<LinkStats> stats;
  int batches = 0;
};

TEST_CASE("GetLink answers the owner's link with its human clicks ever counted",
          "[services/shorten][stats]") {
  Fixture f;
  const auto acme = Tenant("acme");
  const LinkView link = f.Shorten("https://example.com/counted", acme);
  f.Click(link.link.id, kNow - absl::Hours(24 * 400), 2, 5);
  f.Click(link.link.id, kNow, 3, 0);
  absl::StatusOr<LinkWithClicks> got = f.GetLink(link.code, acme);
  REQUIRE_THAT(got, IsOk());
  CHECK(got->view.code == link.code);
  CHECK(got->view.link.long_url == "https://example.com/counted");
  CHECK(got->view.link.owner == "acme");
  CHECK(got->human_clicks == 5);
  // A link never clicked: 0, not an error.
  const LinkView quiet = f.Shorten("https://example.com/quiet", acme);
  got = f.GetLink(quiet.code, acme);
  REQUIRE_THAT(got, IsOk());
  CHECK(got->human_clicks == 0);
}

TEST_CASE("another tenant's link is NOT_FOUND as an unknown code and its clicks are never read",
          "[services/shorten][stats]") {
  Fixture f;
  const LinkView link = f.Shorten("https://example.com/private", Tenant("acme"));
  const auto other = Tenant("globex");
  const std::string not_found = "code \"" + link.code + "\" does not exist";
  CHECK_THAT(f.GetLink(link.code, other),
             HasCodeAndMessage(absl::StatusCode::kNotFound, not_found));
  CHECK_THAT(f.GetClickStats(link.code, other),
             HasCodeAndMessage(absl::StatusCode::kNotFound, not_found));
  CHECK_THAT(
      f.GetLink("no-such-alias", other),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "code \"no-such-alias\" does not exist"));
  CHECK(f.click_faults.calls() == 0);
  // An admin, and a caller-less tool, see every link.
  auto admin = std::make_shared<auth::Principal>();
  admin->tenant = "admin";
  admin->scopes = auth::ScopeSet{auth::Scope::kAdmin};
  CHECK_THAT(f.GetLink(link.code, admin), IsOk());
  CHECK_THAT(f.GetLink(link.code, nullptr), IsOk());
}

TEST_CASE("GetClickStats defaults to the week of days before the clock's now",
          "[services/shorten][stats]") {
  Fixture f;
  const auto acme = Tenant("acme");
  const LinkView link = f.Shorten("https://example.com/weekly", acme);
  f.Click(link.link.id, kNow - absl::Hours(24 * 3), 4, 1);
  f.Click(link.link.id, kNow - absl::Hours(24 * 8), 7, 0);  // before the default week
  absl::StatusOr<clicks::ClickStats> stats = f.GetClickStats(link.code, acme);
  REQUIRE_THAT(stats, IsOk());
  // [now - 7 days, now) widened to whole UTC days: 2027-01-08 to 2027-01-15
  // inclusive.
  REQUIRE(stats->buckets.size() == 8);
  CHECK(stats->buckets.front().start == absl::FromUnixSeconds(1799366400));  // 2027-01-08
  CHECK(stats->buckets.back().start == absl::FromUnixSeconds(1799971200));   // 2027-01-15
  CHECK(stats->total_human_clicks == 4);
  CHECK(stats->total_bot_clicks == 1);
  CHECK(stats->buckets[4].human_clicks == 4);  // 2027-01-12

  // The range moves with the clock: a week later, none of these clicks.
  f.clock.Advance(absl::Hours(24 * 7));
  stats = f.GetClickStats(link.code, acme);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->buckets.front().start == absl::FromUnixSeconds(1799971200));
  CHECK(stats->total_human_clicks == 0);
}

TEST_CASE("GetClickStats by the hour defaults to the day before now and honours a given range",
          "[services/shorten][stats]") {
  Fixture f;
  const auto acme = Tenant("acme");
  const LinkView link = f.Shorten("https://example.com/hourly", acme);
  f.Click(link.link.id, kNow - absl::Minutes(90), 2, 0);
  ClickStatsQuery query;
  query.granularity = clicks::StatsGranularity::kHour;
  absl::StatusOr<clicks::ClickStats> stats = f.GetClickStats(link.code, acme, query);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->buckets.size() == 24);
  CHECK(stats->buckets.front().start == kNow - absl::Hours(24));
  CHECK(stats->buckets[22].human_clicks == 2);  // 06:00 to 07:00

  query.start = kNow - absl::Hours(3);
  query.end = kNow - absl::Hours(1);
  stats = f.GetClickStats(link.code, acme, query);
  REQUIRE_THAT(stats, IsOk());
  REQUIRE(stats->buckets.size() == 2);
  CHECK(stats->total_human_clicks == 2);
}

TEST_CASE("GetClickStats checks its range before the link, then the store's bucket limit",
          "[services/shorten][stats]") {
  Fixture f;
  const auto acme = Tenant("acme");
  const LinkView link = f.Shorten("https://example.com/ranges", acme);
  ClickStatsQuery backwards;
  backwards.start = kNow;
  backwards.end = kNow - absl::Hours(1);
  // Even for a code that does not exist: the request itself is wrong.
  CHECK_THAT(
      f.GetClickStats("no-such-alias", acme, backwards),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "start_time: must be before end_time"));
  ClickStatsQuery future_start;
  future_start.start = kNow + absl::Hours(1);  // end defaults to now
  CHECK_THAT(f.GetClickStats(link.code, acme, future_start),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "(now)"));
  // Hours older than the hourly rollups keep: refused before the store.
  ClickStatsQuery too_old;
  too_old.granularity = clicks::StatsGranularity::kHour;
  too_old.start = kNow - absl::Hours(24 * 40);
  too_old.end = kNow - absl::Hours(24 * 39);
  CHECK_THAT(f.GetClickStats(link.code, acme, too_old),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "start_time: statistics by hour go back to"));
  CHECK(f.click_faults.calls("Stats") == 0);
  ClickStatsQuery too_long;
  too_long.granularity = clicks::StatsGranularity::kHour;
  too_long.start = kNow - absl::Hours(24 * 32);
  CHECK_THAT(f.GetClickStats(link.code, acme, too_long),
             HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(f.click_faults.calls("Stats") == 1);
}

TEST_CASE("a click store failure fails GetLink and GetClickStats rather than report zeros",
          "[services/shorten][stats]") {
  Fixture f;
  const auto acme = Tenant("acme");
  const LinkView link = f.Shorten("https://example.com/outage", acme);
  f.Click(link.link.id, kNow, 1, 0);
  f.click_faults.FailNext(1, absl::UnavailableError("click_counts: connection refused"),
                          "HumanTotal");
  CHECK_THAT(f.GetLink(link.code, acme),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "connection refused"));
  f.click_faults.FailNext(1, absl::UnavailableError("visits: connection refused"), "Stats");
  CHECK_THAT(f.GetClickStats(link.code, acme), HasCode(absl::StatusCode::kUnavailable));
  // Back: the same calls answer.
  absl::StatusOr<LinkWithClicks> got = f.GetLink(link.code, acme);
  REQUIRE_THAT(got, IsOk());
  CHECK(got->human_clicks == 1);
}

TEST_CASE("a full blocking pool fails GetLink RESOURCE_EXHAUSTED naming it",
          "[services/shorten][stats]") {
  Fixture f;
  const auto acme = Tenant("acme");
  const LinkView link = f.Shorten("https://example.com/busy", acme);
  // A pool of its own: one thread held busy, one task queued behind it.
  ThreadPool tiny(ThreadPoolOptions{"blocking pool", 1, 1});
  LinkStats stats(f.shortener, &f.faulty_clicks, &tiny, f.clock);
  f.click_faults.CloseGate();
  std::promise<absl::StatusOr<LinkWithClicks>> first, second, third;
  auto keep = [](std::promise<absl::StatusOr<LinkWithClicks>>& p) {
    return [&p](absl::StatusOr<LinkWithClicks> got) { p.set_value(std::move(got)); };
  };
  stats.GetLink(link.code, acme, keep(first));
  REQUIRE(f.click_faults.WaitForCalls(1, "HumanTotal"));  // the thread is held
  stats.GetLink(link.code, acme, keep(second));
  // The second reaches the pool's queue from a read batcher thread: wait
  // until it is there before the third comes.
  while (tiny.GetStats().queued == 0) absl::SleepFor(absl::Milliseconds(1));
  stats.GetLink(link.code, acme, keep(third));
  CHECK_THAT(third.get_future().get(),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                               "blocking pool is full: 1 tasks are waiting; retry later"));
  f.click_faults.OpenGate();
  CHECK_THAT(first.get_future().get(), IsOk());
  CHECK_THAT(second.get_future().get(), IsOk());
}

}  // namespace
}  // namespace shortener::service
