// PgClickStore on a real PostgreSQL: the ClickStore contract suite
// (click_store_contract*.cc), and what only Postgres has: batches
// idempotent across replicas, the rows of click_counts and visits, visits
// in their monthly partitions, outages, the statement count of a big
// batch, retention. Click limits: pg_click_limits_test.cc.
#include "lib/clicks/pg/pg_click_store.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/lib/clicks/pg/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks {
namespace testing {

namespace {

// A PgClickStore that merges the pending rollups after every second batch,
// so that the contract's reads find some of a link's clicks merged into the
// hourly rollups and some still pending, as in a running service.
class MergingClickStore final : public ClickStore {
 public:
  explicit MergingClickStore(std::unique_ptr<PgClickStore> store) : store_(std::move(store)) {}

  absl::StatusOr<RecordOutcome> Record(const std::string& batch_id, absl::Span<const ClickRow> rows,
                                       bool record_visits) override {
    absl::StatusOr<RecordOutcome> outcome = store_->Record(batch_id, rows, record_visits);
    if (outcome.ok() && records_.fetch_add(1) % 2 == 1) {
      absl::StatusOr<int64_t> merged = store_->MergePendingRollups(100000);
      if (!merged.ok()) return merged.status();
    }
    return outcome;
  }
  absl::StatusOr<ClickStats> Stats(int64_t link_id, absl::Time start, absl::Time end,
                                   StatsGranularity granularity) override {
    return store_->Stats(link_id, start, end, granularity);
  }
  absl::StatusOr<ClickStats> SubjectStats(const Subject& subject, absl::Time start, absl::Time end,
                                          StatsGranularity granularity) override {
    return store_->SubjectStats(subject, start, end, granularity);
  }
  absl::StatusOr<int64_t> HumanTotal(int64_t link_id) override {
    return store_->HumanTotal(link_id);
  }
  absl::StatusOr<std::vector<int64_t>> HumanTotals(absl::Span<const int64_t> link_ids) override {
    return store_->HumanTotals(link_ids);
  }
  absl::Status EraseLinks(absl::Span<const int64_t> link_ids, absl::Time when) override {
    return store_->EraseLinks(link_ids, when);
  }

 private:
  std::unique_ptr<PgClickStore> store_;
  std::atomic<int64_t> records_{0};
};

}  // namespace

std::unique_ptr<ClickStore> NewContractClickStore() {
  return std::make_unique<MergingClickStore>(
      NewTestClickStore(shortener::testing::SharedPgCluster().ConnInfo()));
}

void SetLinkLabels(int64_t link_id, const std::vector<int64_t>& label_ids) {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::work tx(conn);
  std::string ids = "{";
  for (size_t i = 0; i < label_ids.size(); ++i) absl::StrAppend(&ids, i ? "," : "", label_ids[i]);
  ids += "}";
  tx.exec_params(
      "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time, label_ids)"
      " VALUES ($1, 'https://example.com/', sha256('x'::bytea), 'tenant', now(), $2::bigint[])"
      " ON CONFLICT (id) DO UPDATE SET label_ids = EXCLUDED.label_ids",
      link_id, ids);
  tx.commit();
}

}  // namespace testing

namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::PgCluster;
using shortener::testing::SharedPgCluster;
using testing::At;
using testing::Click;

std::unique_ptr<PgClickStore> NewStore(const std::string& conninfo) {
  return NewTestClickStore(conninfo);
}

// One number from `sql` (parameter $1: a link id), read over a fresh
// connection: what another process sees.
int64_t Query(const std::string& conninfo, const std::string& sql, int64_t link_id) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  return tx.exec_params1(sql, link_id)[0].as<int64_t>();
}

int64_t Counted(const std::string& conninfo, int64_t link_id) {
  return Query(conninfo, "SELECT coalesce(sum(count), 0) FROM click_counts WHERE link_id = $1",
               link_id);
}

// One number from `sql` (no parameters), over a fresh connection.
int64_t Scalar(const std::string& conninfo, const std::string& sql) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

int64_t Visits(const std::string& conninfo, int64_t link_id) {
  return Query(conninfo, "SELECT count(*) FROM visits WHERE link_id = $1", link_id);
}

TEST_CASE("a batch recorded twice, also through another replica, is stored once",
          "[lib/clicks/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewStore(conninfo);
  std::vector<ClickRow> rows = {Click(1001, At("2030-01-05T10:15:00Z")),
                                Click(1001, At("2030-01-05T10:45:00Z"))};
  auto first = store->Record("pg-twice-1", rows, true);
  REQUIRE_THAT(first, IsOk());
  CHECK_FALSE(first->duplicate);
  // A retry, even with other rows (a buggy client), changes nothing.
  rows.push_back(Click(1001, At("2030-01-05T11:00:00Z")));
  auto second = store->Record("pg-twice-1", rows, true);
  REQUIRE_THAT(second, IsOk());
  CHECK(second->duplicate);
  // Nor does a retry through another replica.
  auto third = NewStore(conninfo)->Record("pg-twice-1", rows, true);
  REQUIRE_THAT(third, IsOk());
  CHECK(third->duplicate);
  CHECK(Counted(conninfo, 1001) == 2);
  CHECK(Visits(conninfo, 1001) == 2);
}

TEST_CASE("click_counts holds one row per link, UTC hour and bot flag", "[lib/clicks/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewStore(conninfo);
  const int64_t link = 3001;
  REQUIRE_THAT(
      store->Record(
          "sum-1",
          {Click(link, At("2030-01-07T10:00:00Z")), Click(link, At("2030-01-07T10:59:59Z")),
           Click(link, At("2030-01-07T10:30:00Z"), true), Click(link, At("2030-01-07T11:00:00Z"))},
          true),
      IsOk());
  REQUIRE_THAT(store->Record("sum-2",
                             {Click(link, At("2030-01-07T10:10:00Z")),
                              Click(link, At("2030-01-07T10:20:00Z"), true),
                              Click(link + 1, At("2030-01-07T10:20:00Z"))},
                             true),
               IsOk());
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  pqxx::result rows = tx.exec_params(
      "SELECT to_char(hour AT TIME ZONE 'UTC', 'HH24'), bot, count FROM click_counts"
      " WHERE link_id = $1 ORDER BY hour, bot",
      link);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0][0].as<std::string>() == "10");
  CHECK_FALSE(rows[0][1].as<bool>());
  CHECK(rows[0][2].as<int64_t>() == 3);
  CHECK(rows[1][0].as<std::string>() == "10");
  CHECK(rows[1][1].as<bool>());
  CHECK(rows[1][2].as<int64_t>() == 2);
  CHECK(rows[2][0].as<std::string>() == "11");
  CHECK(rows[2][2].as<int64_t>() == 1);
  CHECK(Counted(conninfo, link + 1) == 1);
}

TEST_CASE("visits land in the partition of their UTC month", "[lib/clicks/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewStore(conninfo);
  const int64_t link = 4001;
  ClickRow last = Click(link, At("2030-02-28T23:59:59.999999Z"));
  last.ip = "";             // unknown: NULL
  last.referrer_host = "";  // none: NULL
  last.country = "DE";
  last.region = "DE-BE";
  last.city = "Berlin (DE-BE)";
  last.network = "AS64500 Example Net B.V.";
  REQUIRE_THAT(store->Record("months-1",
                             {last, Click(link, At("2030-03-01T00:00:00Z")),
                              Click(link, At("2030-03-01T00:30:00+01:00"))},
                             true),
               IsOk());
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  pqxx::result rows = tx.exec_params(
      "SELECT tableoid::regclass::text, count(*), count(ip), max(country), max(host(ip)),"
      " count(referrer_host)"
      " FROM visits WHERE link_id = $1 GROUP BY 1 ORDER BY 1",
      link);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0][0].as<std::string>() == "visits_2030_02");
  CHECK(rows[0][1].as<int64_t>() == 2);  // 00:30+01:00 is still February in UTC
  CHECK(rows[0][2].as<int64_t>() == 1);
  CHECK(rows[0][3].as<std::string>() == "DE");
  CHECK(rows[0][4].as<std::string>() == "192.0.2.0");
  CHECK(rows[0][5].as<int64_t>() == 1);
  CHECK(rows[1][0].as<std::string>() == "visits_2030_03");
  CHECK(rows[1][1].as<int64_t>() == 1);
  pqxx::row visit = tx.exec_params1(
      "SELECT client_id, browser, browser_major, os, os_version, device, bot, referrer_host"
      " FROM visits WHERE link_id = $1 AND time = '2030-03-01T00:00:00Z'",
      link);
  CHECK(visit[0].as<std::string>() == ClientId("192.0.2.7", "Mozilla/5.0"));
  CHECK(visit[1].as<std::string>() == "Chrome");
  CHECK(visit[2].as<int>() == 120);
  CHECK(visit[3].as<std::string>() == "Android");
  CHECK(visit[4].as<std::string>() == "14");
  CHECK(visit[5].as<std::string>() == "mobile");
  CHECK_FALSE(visit[6].as<bool>());
  CHECK(visit[7].as<std::string>() == "example.com");
  // Region, city and network as given; empty ones are NULL.
  pqxx::row place = tx.exec_params1(
      "SELECT region, city, network FROM visits WHERE link_id = $1"
      " AND time = '2030-02-28T23:59:59.999999Z'",
      link);
  CHECK(place[0].as<std::string>() == "DE-BE");
  CHECK(place[1].as<std::string>() == "Berlin (DE-BE)");
  CHECK(place[2].as<std::string>() == "AS64500 Example Net B.V.");
  CHECK(tx.exec_params1("SELECT count(*) FROM visits WHERE link_id = $1 AND region IS NULL"
                        " AND city IS NULL AND network IS NULL",
                        link)[0]
            .as<int64_t>() == 2);
}

TEST_CASE("without record_visits no visit row and no partition is written", "[lib/clicks/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewStore(conninfo);
  const int64_t link = 5001;
  auto outcome = store->Record("novisits-1", {Click(link, At("2031-06-01T10:00:00Z"))}, false);
  REQUIRE_THAT(outcome, IsOk());
  CHECK(Counted(conninfo, link) == 1);
  CHECK(Visits(conninfo, link) == 0);
  // Nor is a partition made for a month no visit needs.
  CHECK(Scalar(conninfo, "SELECT count(*) FROM pg_class WHERE relname = 'visits_2031_06'") == 0);
}

TEST_CASE("a big batch is recorded with a constant number of statements", "[lib/clicks/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewStore(conninfo);
  std::vector<ClickRow> rows;
  for (int i = 0; i < 5000; ++i) {
    rows.push_back(
        Click(7000 + i % 100, At("2030-01-09T00:00:00Z") + absl::Minutes(i % 600), i % 7 == 0));
  }
  // A statement per click would take seconds; five statements take well
  // under one even on a loaded machine.
  absl::Time start = absl::Now();
  auto outcome = store->Record("big-1", rows, true);
  absl::Duration took = absl::Now() - start;
  REQUIRE_THAT(outcome, IsOk());
  CHECK(outcome->counted == 5000);
  CHECK(took < absl::Seconds(3));
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  CHECK(tx.exec1("SELECT sum(count) FROM click_counts WHERE link_id BETWEEN 7000 AND 7099")[0]
            .as<int64_t>() == 5000);
  CHECK(tx.exec1("SELECT count(*) FROM visits WHERE link_id BETWEEN 7000 AND 7099")[0]
            .as<int64_t>() == 5000);
  // 100 links x 10 hours x bot or not, as far as the rows reach.
  CHECK(tx.exec1("SELECT count(*) FROM click_counts WHERE link_id BETWEEN 7000 AND 7099")[0]
            .as<int64_t>() <= 2000);
}

TEST_CASE("a stopped database gives UNAVAILABLE and the batch counts once after restart",
          "[lib/clicks/pg][outage][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE(cluster.ok());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewStore(conninfo);
  std::vector<ClickRow> rows = {Click(8001, At("2030-04-01T10:00:00Z")),
                                Click(8001, At("2030-05-01T10:00:00Z"))};
  // A connection in the pool before the outage, and a partition cached.
  REQUIRE_THAT(store->Record("outage-0", {Click(8002, At("2030-04-02T10:00:00Z"))}, true), IsOk());
  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  CHECK_THAT(store->Record("outage-1", rows, true), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(store->Record("outage-1", rows, true), HasCode(absl::StatusCode::kUnavailable));
  // The rollup merge (binary results over the pooled connection) too.
  CHECK_THAT(store->MergePendingRollups(100), HasCode(absl::StatusCode::kUnavailable));
  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  CHECK(Counted(conninfo, 8001) == 0);
  CHECK(Visits(conninfo, 8001) == 0);
  CHECK(Scalar(conninfo, "SELECT count(*) FROM click_batches WHERE batch_id = 'outage-1'") == 0);
  // The same store heals; the edge re-sends the batch: counted once.
  auto resent = store->Record("outage-1", rows, true);
  REQUIRE_THAT(resent, IsOk());
  CHECK_FALSE(resent->duplicate);
  auto again = store->Record("outage-1", rows, true);
  REQUIRE_THAT(again, IsOk());
  CHECK(again->duplicate);
  CHECK(Counted(conninfo, 8001) == 2);
  CHECK(Visits(conninfo, 8001) == 2);
  // The merge heals as well and moves every pending row once: the rollups
  // count what the counts do.
  auto merged = store->MergePendingRollups(100);
  REQUIRE_THAT(merged, IsOk());
  CHECK(*merged == 3);  // outage-0's hour, outage-1's two hours
  CHECK(Scalar(conninfo, "SELECT count(*) FROM click_rollup_pending") == 0);
  CHECK(
      Scalar(
          conninfo,
          "SELECT sum(human + bot) FROM click_rollup_hours WHERE kind = 'l' AND subject = 8001") ==
      2);
}

TEST_CASE("retention drops only partitions that end by the cutoff", "[lib/clicks/pg][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE(cluster.ok());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewStore(conninfo);
  auto other_replica = NewStore(conninfo);
  const int64_t link = 9001;
  REQUIRE_THAT(store->Record("keep-1",
                             {Click(link, At("2030-01-31T23:59:59Z")),
                              Click(link, At("2030-02-15T00:00:00Z")),
                              Click(link, At("2030-03-01T00:00:00Z"))},
                             true),
               IsOk());
  // The other replica caches January's partition.
  REQUIRE_THAT(other_replica->Record("keep-2", {Click(link, At("2030-01-02T00:00:00Z"))}, true),
               IsOk());
  // Mid-February: January ends before the cutoff, February does not.
  auto dropped = store->DropVisitPartitionsOlderThan(At("2030-02-10T00:00:00Z"));
  REQUIRE_THAT(dropped, IsOk());
  CHECK(*dropped == std::vector<std::string>{"visits_2030_01"});
  CHECK(Visits(conninfo, link) == 2);
  dropped = store->DropVisitPartitionsOlderThan(At("2030-03-01T00:00:00Z"));
  REQUIRE_THAT(dropped, IsOk());
  CHECK(*dropped == std::vector<std::string>{"visits_2030_02"});
  CHECK(Visits(conninfo, link) == 1);
  // Counts are not touched by retention.
  CHECK(Counted(conninfo, link) == 4);
  // A late January click: the other replica still believes the partition
  // exists, finds it gone, creates it again.
  auto late = other_replica->Record("keep-3", {Click(link, At("2030-01-03T00:00:00Z"))}, true);
  REQUIRE_THAT(late, IsOk());
  CHECK(late->visits == 1);
  CHECK(Visits(conninfo, link) == 2);
}

TEST_CASE("a visits partition can be prepared ahead of its month", "[lib/clicks/pg][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  auto store = NewStore(conninfo);
  REQUIRE_THAT(store->PrepareVisitPartition(At("2033-05-31T23:59:59Z")), IsOk());
  REQUIRE_THAT(store->PrepareVisitPartition(At("2033-05-01T00:00:00Z")), IsOk());
  CHECK(Scalar(conninfo, "SELECT count(*) FROM pg_class WHERE relname = 'visits_2033_05'") == 1);
  // Another replica that never saw it finds it there.
  REQUIRE_THAT(NewStore(conninfo)->PrepareVisitPartition(At("2033-05-10T00:00:00Z")), IsOk());
  REQUIRE_THAT(store->Record("ahead-1", {Click(11001, At("2033-05-10T00:00:00Z"))}, true), IsOk());
  CHECK(Visits(conninfo, 11001) == 1);
}

TEST_CASE("replicas creating one partition at once all succeed",
          "[lib/clicks/pg][concurrent][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  std::vector<std::unique_ptr<PgClickStore>> replicas;
  for (int i = 0; i < 4; ++i) replicas.push_back(NewStore(conninfo));
  // Built here: At() asserts, and assertions belong to the test thread.
  const std::vector<ClickRow> rows = {Click(10001, At("2032-07-04T12:00:00Z"))};
  std::vector<absl::Status> results(replicas.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < replicas.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = replicas[i]->Record(absl::StrCat("newmonth-", i), rows, true).status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : results) CHECK_THAT(s, IsOk());
  CHECK(Visits(conninfo, 10001) == 4);
}

}  // namespace
}  // namespace shortener::clicks
