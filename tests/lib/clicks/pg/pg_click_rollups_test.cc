// PgClickStore's rollups on a real PostgreSQL, what the contract suite
// cannot see: the pending rows and their merge (reads the same before and
// after, a replayed batch changes nothing, reads consistent while merges
// run), the bound on values per hour, the HyperLogLog estimate at 10^6
// visitors and from real ingest, and the fold of old hours into days
// (FoldRollups with a ManualClock).
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "lib/clicks/pg/queries.h"
#include "lib/clicks/pg/rollup_upkeep.h"
#include "lib/clicks/rollups.h"
#include "lib/common/clock.h"
#include "lib/pg/migrations.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/lib/clicks/pg/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks {
namespace {

using shortener::testing::IsOk;
using shortener::testing::PgCluster;
using shortener::testing::SharedPgCluster;
using testing::At;
using testing::Human;
using testing::NextLinkId;
using testing::Pairs;
using testing::Top;
using testing::UniqueBatchId;

int64_t Scalar(const std::string& conninfo, const std::string& sql) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

// Rows of `table` for link `link`.
int64_t Rows(const std::string& conninfo, const std::string& table, int64_t link) {
  return Scalar(conninfo, absl::StrCat("SELECT count(*) FROM ", table,
                                       " WHERE kind = 'l' AND subject = ", link));
}

// Pending rows (one per subject and hour of a batch) of link `link`.
int64_t Pending(const std::string& conninfo, int64_t link) {
  return Rows(conninfo, "click_rollup_pending", link);
}

void MergeAll(PgClickStore& store) {
  absl::StatusOr<int64_t> moved;
  do {
    moved = store.MergePendingRollups(100000);
    REQUIRE_THAT(moved, IsOk());
  } while (*moved == 100000);
}

absl::StatusOr<ClickStats> Day(PgClickStore& store, int64_t link, const char* day) {
  return store.Stats(link, At(day), At(day) + absl::Hours(24), StatsGranularity::kDay);
}

// Everything a reader sees of `s`, as text: equal texts, equal answers.
std::string Describe(const ClickStats& s) {
  std::string out = absl::StrCat(s.total_human_clicks, "/", s.total_bot_clicks, "/",
                                 s.total_unique_visitors, " [");
  for (const StatsBucket& b : s.buckets) {
    absl::StrAppend(&out, b.human_clicks, "/", b.bot_clicks, "/", b.unique_visitors, " ");
  }
  for (const auto* list :
       {&s.top_browsers, &s.top_os, &s.top_devices, &s.top_countries, &s.top_referrers}) {
    absl::StrAppend(&out, "] [");
    for (const CountedValue& v : *list) absl::StrAppend(&out, v.value, "=", v.clicks, " ");
  }
  return out + "]";
}

std::vector<ClickRow> Sample(int64_t link) {
  return {Human(link, "2036-01-10T10:05:00Z", "192.0.2.1", "Chrome", "Android", "mobile", "a.test",
                "DE"),
          Human(link, "2036-01-10T10:06:00Z", "192.0.2.2", "Firefox", "Linux", "desktop", "b.test",
                "FR"),
          Human(link, "2036-01-10T11:06:00Z", "192.0.2.1", "Chrome", "Android", "mobile", "a.test",
                "DE"),
          testing::Bot(link, "2036-01-10T11:30:00Z")};
}

TEST_CASE("a merge moves pending rollups and reads stay the same, replays change nothing",
          "[lib/clicks/pg][rollups][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = NextLinkId();
  const std::string batch = UniqueBatchId("merge");
  REQUIRE_THAT(store->Record(batch, Sample(link), true), IsOk());
  CHECK(Pending(conninfo, link) == 2);  // one per hour
  auto before = Day(*store, link, "2036-01-10T00:00:00Z");
  REQUIRE_THAT(before, IsOk());
  CHECK(Describe(*before) ==
        "3/1/2 [3/1/2 ] [Chrome=2 Firefox=1 ] [Android=2 Linux=1 ] [mobile=2 desktop=1 ] "
        "[DE=2 FR=1 ] [a.test=2 b.test=1 ]");
  MergeAll(*store);
  CHECK(Pending(conninfo, link) == 0);
  CHECK(Rows(conninfo, "click_rollup_hours", link) == 2);
  auto after = Day(*store, link, "2036-01-10T00:00:00Z");
  REQUIRE_THAT(after, IsOk());
  CHECK(Describe(*after) == Describe(*before));
  // The batch again, after its merge: a duplicate, nothing added anywhere.
  auto replay = store->Record(batch, Sample(link), true);
  REQUIRE_THAT(replay, IsOk());
  CHECK(replay->duplicate);
  CHECK(Pending(conninfo, link) == 0);
  MergeAll(*store);
  auto again = Day(*store, link, "2036-01-10T00:00:00Z");
  REQUIRE_THAT(again, IsOk());
  CHECK(Describe(*again) == Describe(*before));
  // Rollup counts agree with click_counts row for row.
  CHECK(Scalar(conninfo, absl::StrCat("SELECT sum(human + bot) FROM click_rollup_hours"
                                      " WHERE subject = ",
                                      link)) == 4);
  CHECK(Scalar(conninfo,
               absl::StrCat("SELECT sum(count) FROM click_counts WHERE link_id = ", link)) == 4);
}

TEST_CASE("a merge adds each link's human clicks to its rank once (link_click_totals)",
          "[lib/clicks/pg][rollups][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t clicked = NextLinkId();
  const int64_t bots_only = NextLinkId();
  const int64_t gone = NextLinkId();  // clicks for a link with no row
  const std::string owner = UniqueBatchId("rank-owner");
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    for (int64_t id : {clicked, bots_only}) {
      tx.exec_params(
          "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time)"
          " VALUES ($1, 'https://example.com/', sha256('x'), $2, now())",
          id, owner);
    }
  }
  auto totals = [&](int64_t id) {
    return Scalar(conninfo, absl::StrCat("SELECT coalesce(sum(human), -1) FROM link_click_totals"
                                         " WHERE link_id = ",
                                         id, " AND owner = '", owner, "'"));
  };
  std::vector<ClickRow> rows = Sample(clicked);  // 3 human clicks over two hours, 1 bot
  rows.push_back(testing::Bot(bots_only, "2036-01-10T05:00:00Z"));
  rows.push_back(testing::Click(gone, At("2036-01-10T05:00:00Z")));
  const std::string batch = UniqueBatchId("rank");
  REQUIRE_THAT(store->Record(batch, rows, false), IsOk());
  // Nothing before the merge: the rank follows the rollups.
  CHECK(totals(clicked) == -1);
  MergeAll(*store);
  CHECK(totals(clicked) == 3);
  CHECK(totals(bots_only) == -1);  // no human click, no row
  CHECK(Scalar(conninfo,
               absl::StrCat("SELECT count(*) FROM link_click_totals WHERE link_id = ", gone)) == 0);
  // A replayed batch and a second merge add nothing; a new batch adds.
  REQUIRE_THAT(store->Record(batch, rows, false), IsOk());
  MergeAll(*store);
  CHECK(totals(clicked) == 3);
  REQUIRE_THAT(store->Record(UniqueBatchId("rank"), Sample(clicked), false), IsOk());
  MergeAll(*store);
  CHECK(totals(clicked) == 6);
}

TEST_CASE("taking pending rows is one pass whatever the statistics say",
          "[lib/clicks/pg][rollups][pg]") {
  // Statistics taken while the table is nearly empty once made PostgreSQL
  // run "id IN (subquery)" as a nested loop over every pending row: 26 s
  // for one merge. Here too the statistics are older than the rows.
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewTestClickStore(conninfo);
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    tx.exec("ANALYZE click_rollup_pending");
  }
  constexpr int kLinks = 400;
  const int64_t first = NextLinkId();
  std::vector<ClickRow> rows;
  for (int i = 0; i < kLinks; ++i) {
    const int64_t link = i == 0 ? first : NextLinkId();
    rows.push_back(Human(link, "2036-02-01T10:05:00Z", "192.0.2.1", "Chrome", "Android", "mobile",
                         "a.test", "DE"));
  }
  REQUIRE_THAT(store->Record(UniqueBatchId("take"), rows, true), IsOk());
  REQUIRE(Scalar(conninfo, "SELECT count(*) FROM click_rollup_pending") == kLinks);
  std::string sql = pg_queries::kTakePending.sql;
  sql.replace(sql.find("$1"), 2, "20000");
  std::string plan;
  {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    for (const pqxx::row& row : tx.exec("EXPLAIN " + sql)) {
      absl::StrAppend(&plan, row[0].as<std::string>(), "\n");
    }
  }
  CAPTURE(plan);
  CHECK(plan.find("Join") == std::string::npos);
  CHECK(plan.find("Nested Loop") == std::string::npos);
  // And it takes the oldest rows, at most as many as asked.
  absl::StatusOr<int64_t> moved = store->MergePendingRollups(150);
  REQUIRE_THAT(moved, IsOk());
  CHECK(*moved == 150);
  CHECK(Scalar(conninfo, "SELECT count(*) FROM click_rollup_pending") == kLinks - 150);
  MergeAll(*store);
  CHECK(Scalar(conninfo, "SELECT count(*) FROM click_rollup_pending") == 0);
  CHECK(Scalar(conninfo, "SELECT sum(human) FROM click_rollup_hours WHERE kind = 'l'") == kLinks);
}

TEST_CASE("stats read while batches are recorded and merged are one consistent state",
          "[lib/clicks/pg][rollups][concurrent][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = NextLinkId();
  const std::vector<ClickRow> rows(7, Human(link, "2036-01-11T10:00:00Z", "192.0.2.1", "Chrome",
                                            "Android", "mobile", "a.test", ""));
  constexpr int kBatches = 60;
  std::atomic<int> started{0}, finished{0};
  std::atomic<bool> failed{false};
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) {
      started.fetch_add(1);
      if (!store->Record(absl::StrCat("consistent-", link, "-", i), rows, false).ok())
        failed = true;
      finished.fetch_add(1);
    }
  });
  std::thread merger([&] {
    while (finished.load() < kBatches) {
      if (!store->MergePendingRollups(3).ok()) failed = true;
    }
  });
  int reads = 0, inconsistent = 0;
  const absl::Time day = At("2036-01-11T00:00:00Z");
  while (finished.load() < kBatches) {
    const int low = finished.load();
    auto stats = store->Stats(link, day, day + absl::Hours(24), StatsGranularity::kDay);
    const int high = started.load();
    if (!stats.ok()) {
      failed = true;
      break;
    }
    ++reads;
    // A batch is in all of the answer or in none of it, once.
    const int64_t n = stats->total_human_clicks;
    const int64_t by_browser = stats->top_browsers.empty() ? 0 : stats->top_browsers[0].clicks;
    if (n % 7 != 0 || n < 7 * low || n > 7 * high || by_browser != n) ++inconsistent;
  }
  writer.join();
  merger.join();
  CHECK_FALSE(failed.load());
  CHECK(reads > 0);
  CHECK(inconsistent == 0);
  MergeAll(*store);
  auto stats = store->Stats(link, day, day + absl::Hours(24), StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 7 * kBatches);
}

TEST_CASE("an hour keeps at most 256 values per dimension and the rest in other",
          "[lib/clicks/pg][rollups][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = NextLinkId();
  // 10 000 distinct referrers in one hour, in batches merged one by one,
  // and a popular one first seen after the hour is full.
  int64_t clicks = 0;
  for (int batch = 0; batch < 10; ++batch) {
    std::vector<ClickRow> rows;
    for (int i = 0; i < 1000; ++i) {
      rows.push_back(Human(link, "2036-01-12T10:00:00Z", "192.0.2.1", "Chrome", "Android", "mobile",
                           absl::StrCat("r", batch * 1000 + i, ".test"), ""));
    }
    clicks += static_cast<int64_t>(rows.size());
    REQUIRE_THAT(store->Record(UniqueBatchId("wide"), rows, false), IsOk());
    MergeAll(*store);
  }
  std::vector<ClickRow> late(30, Human(link, "2036-01-12T10:30:00Z", "192.0.2.1", "Chrome",
                                       "Android", "mobile", "late.test", ""));
  clicks += static_cast<int64_t>(late.size());
  REQUIRE_THAT(store->Record(UniqueBatchId("wide"), late, false), IsOk());
  MergeAll(*store);
  const std::string referrers = absl::StrCat(
      "FROM click_rollup_hour_dims WHERE kind = 'l' AND subject = ", link, " AND dim = 8");
  CHECK(Scalar(conninfo, "SELECT count(*) " + referrers) == kMaxValuesPerHour + 1);
  CHECK(Scalar(conninfo, "SELECT count(*) " + referrers + " AND value = ''") == 1);
  CHECK(Scalar(conninfo, "SELECT sum(human) " + referrers) == clicks);
  CHECK(Scalar(conninfo, "SELECT sum(human) " + referrers + " AND value = ''") ==
        clicks - kMaxValuesPerHour);
  // The other dimensions held one value each: exact.
  auto stats = Day(*store, link, "2036-01-12T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == clicks);
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", clicks}});
  // late.test came after the hour was full: in "other", not in the list.
  for (const CountedValue& v : stats->top_referrers) CHECK(v.value != "late.test");
  // Storage per link and hour stays bounded: 256 + 1 referrer rows.
  CHECK(Rows(conninfo, "click_rollup_hour_dims", link) == kMaxValuesPerHour + 1 + 3);
}

TEST_CASE("unique visitors at 10^6 are within three standard errors",
          "[lib/clicks/pg][rollups][sketch][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = NextLinkId();
  // 24 hourly sketches written as the merge writes them, from the hashes of
  // ClientId-shaped ids (hex of SHA-256): hour h holds visitors
  // [40 000 h, 40 000 h + 80 000), so consecutive hours share half, and the
  // day holds 10^6 distinct ones.
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec_params(
        "INSERT INTO click_rollup_hours (kind, subject, hour, human, bot, visitors)"
        " SELECT 'l', $1, '2036-02-01T00:00:00Z'::timestamptz + h * interval '1 hour', 80000, 0,"
        "        (SELECT hll_add_agg(('x' || substr(encode(sha256(('visitor-' || g)::bytea), "
        "'hex'),"
        "                                           1, 16))::bit(64)::bigint::hll_hashval,"
        "                            12, 5, 0, 1)"
        "           FROM generate_series(h * 40000, h * 40000 + 79999) g)"
        " FROM generate_series(0, 23) h",
        link);
    tx.commit();
  }
  const double three_sigma = 3 * kSketchStandardError;
  auto stats = Day(*store, link, "2036-02-01T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CAPTURE(stats->total_unique_visitors);
  CHECK(std::abs(stats->total_unique_visitors - 1e6) <= three_sigma * 1e6);
  CHECK(stats->buckets[0].unique_visitors == stats->total_unique_visitors);
  auto hours = store->Stats(link, At("2036-02-01T00:00:00Z"), At("2036-02-02T00:00:00Z"),
                            StatsGranularity::kHour);
  REQUIRE_THAT(hours, IsOk());
  for (const StatsBucket& b : hours->buckets) {
    CAPTURE(b.unique_visitors);
    CHECK(std::abs(b.unique_visitors - 80000.0) <= three_sigma * 80000);
  }
  // The same hashes the store computes: a ClientId-shaped id's first 64 bits.
  CHECK(
      Scalar(conninfo,
             "SELECT ('x' || substr(encode(sha256('x'::bytea), 'hex'), 1, 16))::bit(64)::bigint") ==
      VisitorHash("2d711642b726b04401627ca9fbac32f5"));
}

TEST_CASE("the sketch is fed by ingest: a few hundred visitors through Record",
          "[lib/clicks/pg][rollups][sketch][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = NextLinkId();
  // 600 visitors (each an address, as the recorder makes client ids), 3
  // clicks each, over three batches and two hours; half merged, half not.
  for (int batch = 0; batch < 3; ++batch) {
    std::vector<ClickRow> rows;
    for (int v = 0; v < 600; ++v) {
      ClickRow r = Human(link, batch == 2 ? "2036-02-03T11:10:00Z" : "2036-02-03T10:10:00Z",
                         absl::StrCat("10.0.", v / 250, ".", v % 250), "Chrome", "Android",
                         "mobile", "", "");
      rows.push_back(r);
    }
    REQUIRE_THAT(store->Record(UniqueBatchId("ingest-sketch"), rows, false), IsOk());
    if (batch == 0) MergeAll(*store);
  }
  auto stats = Day(*store, link, "2036-02-03T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 1800);
  CAPTURE(stats->total_unique_visitors);
  CHECK(std::abs(stats->total_unique_visitors - 600.0) <= 3 * kSketchStandardError * 600);
  MergeAll(*store);
  // Merged: the hour's sketch holds them.
  CHECK(std::abs(Scalar(conninfo, absl::StrCat("SELECT round(hll_cardinality(visitors))"
                                               " FROM click_rollup_hours WHERE subject = ",
                                               link, " AND hour = '2036-02-03T10:00:00Z'")) -
                 600.0) <= 3 * kSketchStandardError * 600);
  auto merged = Day(*store, link, "2036-02-03T00:00:00Z");
  REQUIRE_THAT(merged, IsOk());
  CHECK(merged->total_unique_visitors == stats->total_unique_visitors);
}

TEST_CASE("the fold makes old hours daily and day statistics stay the same",
          "[lib/clicks/pg][rollups][fold][pg]") {
  // Its own cluster: the fold folds every subject's old hours.
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = 4242;
  std::vector<ClickRow> rows = Sample(link);
  rows.push_back(
      Human(link, "2036-01-11T09:00:00Z", "192.0.2.9", "Safari", "iOS", "mobile", "a.test", "DE"));
  REQUIRE_THAT(store->Record("fold-1", rows, true), IsOk());
  MergeAll(*store);
  const absl::Time from = At("2036-01-10T00:00:00Z");
  auto before = store->Stats(link, from, from + absl::Hours(48), StatsGranularity::kDay);
  REQUIRE_THAT(before, IsOk());

  // 2036-02-15: the cutoff is 36 days back, 2036-01-10: nothing to fold.
  ManualClock clock(At("2036-02-15T12:00:00Z"));
  CHECK(RollupFoldCutoff(clock.Now()) == At("2036-01-10T00:00:00Z"));
  auto folded = FoldRollups(*store, clock);
  REQUIRE_THAT(folded, IsOk());
  CHECK(folded->empty());
  // A day later the 10th goes, the 11th stays hourly.
  clock.Advance(absl::Hours(24));
  folded = FoldRollups(*store, clock);
  REQUIRE_THAT(folded, IsOk());
  CHECK(*folded == std::vector<absl::Time>{At("2036-01-10T00:00:00Z")});
  CHECK(Scalar(conninfo, "SELECT count(*) FROM click_rollup_hours WHERE hour < '2036-01-11'") == 0);
  CHECK(Scalar(conninfo, "SELECT count(*) FROM click_rollup_hour_dims WHERE hour < '2036-01-11'") ==
        0);
  CHECK(Rows(conninfo, "click_rollup_days", link) == 1);
  CHECK(Rows(conninfo, "click_rollup_hours", link) == 1);
  auto after = store->Stats(link, from, from + absl::Hours(48), StatsGranularity::kDay);
  REQUIRE_THAT(after, IsOk());
  CHECK(Describe(*after) == Describe(*before));
  // By hour, a folded day's hours are not known any more.
  auto hourly = store->Stats(link, from, from + absl::Hours(24), StatsGranularity::kHour);
  REQUIRE_THAT(hourly, IsOk());
  CHECK(hourly->total_human_clicks == 0);

  // A late batch for the folded day: hourly again until the next fold,
  // which adds it to the day.
  REQUIRE_THAT(store->Record("fold-2",
                             {Human(link, "2036-01-10T23:00:00Z", "192.0.2.3", "Chrome", "Android",
                                    "mobile", "c.test", "")},
                             true),
               IsOk());
  MergeAll(*store);
  auto late = store->Stats(link, from, from + absl::Hours(24), StatsGranularity::kDay);
  REQUIRE_THAT(late, IsOk());
  CHECK(late->total_human_clicks == 4);
  CHECK(late->total_unique_visitors == 3);
  folded = FoldRollups(*store, clock);
  REQUIRE_THAT(folded, IsOk());
  CHECK(*folded == std::vector<absl::Time>{At("2036-01-10T00:00:00Z")});
  CHECK(Rows(conninfo, "click_rollup_days", link) == 1);
  auto refolded = store->Stats(link, from, from + absl::Hours(24), StatsGranularity::kDay);
  REQUIRE_THAT(refolded, IsOk());
  CHECK(Describe(*refolded) == Describe(*late));
  CHECK(Pairs(refolded->top_referrers) == Top{{"a.test", 2}, {"b.test", 1}, {"c.test", 1}});
}

TEST_CASE("a fold waits for a merge that holds the rollup lock instead of skipping its days",
          "[lib/clicks/pg][rollups][fold][concurrent][pg]") {
  // Its own cluster: the fold folds every subject's old hours.
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const int64_t link = 4343;
  REQUIRE_THAT(store->Record("fold-wait",
                             {Human(link, "2036-01-10T09:00:00Z", "192.0.2.1", "Safari", "iOS",
                                    "mobile", "a.test", "DE")},
                             true),
               IsOk());
  MergeAll(*store);
  // Another replica's merge in the middle of its transaction (a service's
  // first merge starts at the same instant as its first fold).
  pqxx::connection holder(conninfo);
  pqxx::work held(holder);
  held.exec("SELECT pg_advisory_xact_lock(32210658811801715)");
  ManualClock clock(At("2036-02-16T12:00:00Z"));  // cutoff 2036-01-11
  absl::StatusOr<std::vector<absl::Time>> folded;
  std::atomic<bool> done{false};
  std::thread fold([&] {
    folded = FoldRollups(*store, clock);
    done = true;
  });
  absl::SleepFor(absl::Milliseconds(300));
  CHECK_FALSE(done.load());  // waiting for the lock, not skipped
  held.commit();             // the merge ends
  fold.join();
  REQUIRE_THAT(folded, IsOk());
  CHECK(*folded == std::vector<absl::Time>{At("2036-01-10T00:00:00Z")});
  CHECK(Rows(conninfo, "click_rollup_days", link) == 1);
  CHECK(Rows(conninfo, "click_rollup_hours", link) == 0);
}

TEST_CASE("merge and fold of two replicas at once do the work once",
          "[lib/clicks/pg][rollups][concurrent][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto a = NewTestClickStore(conninfo);
  auto b = NewTestClickStore(conninfo);
  const int64_t link = NextLinkId();
  for (int i = 0; i < 20; ++i) {
    REQUIRE_THAT(a->Record(UniqueBatchId("two-mergers"),
                           {Human(link, "2036-03-01T10:00:00Z", absl::StrCat("192.0.2.", i),
                                  "Chrome", "Linux", "desktop", "a.test", "")},
                           false),
                 IsOk());
  }
  std::vector<absl::StatusOr<int64_t>> moved(2);
  std::thread ta([&] { moved[0] = a->MergePendingRollups(100000); });
  std::thread tb([&] { moved[1] = b->MergePendingRollups(100000); });
  ta.join();
  tb.join();
  REQUIRE_THAT(moved[0], IsOk());
  REQUIRE_THAT(moved[1], IsOk());
  CHECK(std::max(*moved[0], int64_t{0}) + std::max(*moved[1], int64_t{0}) <= 20);
  MergeAll(*a);
  auto stats = Day(*a, link, "2036-03-01T00:00:00Z");
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 20);
  CHECK(stats->total_unique_visitors == 20);
  CHECK(Pairs(stats->top_referrers) == Top{{"a.test", 20}});
  CHECK(Pending(conninfo, link) == 0);
}

TEST_CASE("migration 0009 rolls up the counts and visits recorded before it",
          "[lib/clicks/pg][rollups][migration][pg]") {
  auto cluster = PgCluster::Start(/*apply_migrations=*/false);
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  REQUIRE_THAT(pg::ApplyMigrations(conninfo, /*up_to_version=*/8), IsOk());
  // What the previous release wrote for link 77: counts of two hours (one
  // of them before the visits retention: counts only), and the visits of
  // the later hour, 300 distinct referrers among them.
  {
    pqxx::connection conn(conninfo);
    pqxx::work tx(conn);
    tx.exec("SELECT create_visits_partition('2036-04-01T00:00:00Z')");
    tx.exec(
        "INSERT INTO click_counts VALUES (77, '2036-03-01T05:00:00Z', false, 40),"
        " (77, '2036-04-02T10:00:00Z', false, 305), (77, '2036-04-02T10:00:00Z', true, 2)");
    tx.exec(
        "INSERT INTO visits (time, link_id, client_id, browser, browser_major, os, os_version,"
        "                    device, bot, referrer_host, country)"
        " SELECT '2036-04-02T10:00:00Z'::timestamptz + g * interval '1 second', 77,"
        "        substr(md5('client' || (g % 50)), 1, 32), 'Chrome', 120, 'Android', '14',"
        "        'mobile', false, CASE WHEN g < 300 THEN 'r' || g || '.test' ELSE 'top.test' END,"
        "        'DE'"
        " FROM generate_series(0, 304) g"
        " UNION ALL SELECT '2036-04-02T10:30:00Z', 77, substr(md5('bot'), 1, 32), 'Googlebot', 2,"
        "        'Other', '', 'bot', true, NULL, NULL FROM generate_series(1, 2)");
    tx.commit();
  }
  REQUIRE_THAT(pg::ApplyMigrations(conninfo), IsOk());
  auto store = NewTestClickStore(conninfo);
  auto stats = store->Stats(77, At("2036-03-01T00:00:00Z"), At("2036-04-03T00:00:00Z"),
                            StatsGranularity::kDay);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == 345);
  CHECK(stats->total_bot_clicks == 2);
  CHECK(stats->total_unique_visitors == 50);
  CHECK(stats->buckets.front().human_clicks == 40);
  CHECK(stats->buckets.front().unique_visitors == 0);  // no visits left of that day
  CHECK(Pairs(stats->top_browsers) == Top{{"Chrome", 305}});
  CHECK(Pairs(stats->top_countries) == Top{{"DE", 305}});
  // The hour's 301 referrers: the one with most clicks kept, then the
  // first 255 by name; the rest in "other".
  REQUIRE(!stats->top_referrers.empty());
  CHECK(stats->top_referrers.front().value == "top.test");
  CHECK(stats->top_referrers.front().clicks == 5);
  CHECK(Rows(conninfo, "click_rollup_hour_dims", 77) ==
        1 + 1 + 2 + 1 + 2 + kMaxValuesPerHour + 1);  // browsers, os, devices, country, referrers
  CHECK(Scalar(conninfo,
               "SELECT sum(human) FROM click_rollup_hour_dims WHERE subject = 77"
               " AND dim = 8") == 305);
}

}  // namespace
}  // namespace shortener::clicks

namespace shortener::clicks {
namespace {

// By hand: build/bin/clicks_pg_test "[rollups][bench]". Where the time of
// ingest with rollups goes, for batches shaped like clicks_bench's (1000
// clicks over 300 links, a new visitor each): Record, and the merge.
TEST_CASE("rollup ingest and merge times", "[lib/clicks/pg][rollups][.][bench]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewTestClickStore(conninfo);
  const char* kBrowsers[] = {"Chrome", "Safari", "Firefox", "Samsung Internet", "WeChat"};
  const char* kOses[] = {"Android", "iOS", "Windows", "macOS"};
  const char* kDevices[] = {"mobile", "desktop", "tablet"};
  const char* kReferrers[] = {"", "", "", "www.google.com", "t.co", "l.facebook.com"};
  absl::Duration record, merge;
  int64_t n = 0;
  for (int b = 0; b < 100; ++b) {
    std::vector<ClickRow> rows;
    for (int i = 0; i < 1000; ++i, ++n) {
      rows.push_back(Human(90000000 + n % 300, "2036-06-01T10:00:00Z", absl::StrCat("ip", n),
                           kBrowsers[n % 5], kOses[n % 4], kDevices[n % 3], kReferrers[n % 6], ""));
    }
    absl::Time t = absl::Now();
    REQUIRE_THAT(store->Record(UniqueBatchId("bench"), rows, false), IsOk());
    record += absl::Now() - t;
    if (b % 10 == 9) {
      t = absl::Now();
      MergeAll(*store);
      merge += absl::Now() - t;
    }
  }
  std::printf("100 batches: Record %.1f ms per batch, merge %.1f ms per batch\n",
              absl::ToDoubleMilliseconds(record) / 100, absl::ToDoubleMilliseconds(merge) / 100);
}

}  // namespace
}  // namespace shortener::clicks
