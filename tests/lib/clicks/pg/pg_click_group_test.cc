// PgClickStore's group commit on a real PostgreSQL: several batches in one
// transaction (RecordGroup) keep their own outcomes (a duplicate in a group
// writes nothing, a failure fails every batch of its transaction), Record
// groups concurrent batches up to record_group_batches and refuses beyond
// record_queue, and a campaign's clicks over many links add one pending
// rollup row per hour for their label.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/clicks/clicks.h"
#include "lib/clicks/pg/pg_click_store.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/lib/clicks/pg/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;
using shortener::testing::SharedPgCluster;
using testing::NextLinkId;
using testing::UniqueBatchId;

const absl::Time kHour = absl::FromUnixSeconds(2'100'000'000);  // 2036-07-18T13:20:00Z

std::vector<ClickRow> Clicks(int64_t link_id, int n) {
  std::vector<ClickRow> rows;
  for (int i = 0; i < n; ++i) {
    rows.push_back(testing::Click(link_id, kHour + absl::Seconds(i)));
  }
  return rows;
}

int64_t Number(const std::string& sql, int64_t param) {
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec_params1(sql, param)[0].as<int64_t>();
}

int64_t Counted(int64_t link_id) {
  return Number("SELECT coalesce(sum(count), 0) FROM click_counts WHERE link_id = $1", link_id);
}

int64_t Visits(int64_t link_id) {
  return Number("SELECT count(*) FROM visits WHERE link_id = $1", link_id);
}

TEST_CASE("a grouped transaction writes its new batches and answers duplicates",
          "[lib/clicks/pg][group][pg]") {
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo());
  const int64_t a = NextLinkId(), b = NextLinkId(), c = NextLinkId();
  const std::vector<ClickRow> rows_a = Clicks(a, 3), rows_b = Clicks(b, 2), rows_c = Clicks(c, 4);
  const std::string old_id = UniqueBatchId("group-old"), new_id = UniqueBatchId("group-new");
  const std::string other_id = UniqueBatchId("group-other");
  REQUIRE_THAT(store->Record(old_id, rows_a, true), IsOk());

  const std::vector<PgClickStore::BatchToRecord> group = {
      {new_id, rows_b, true},    {old_id, rows_a, true},  // recorded before: nothing again
      {new_id, rows_b, true},                             // the same id twice in one group: once
      {other_id, rows_c, false},                          // counted, no visits
      {"", rows_c, true},                                 // invalid: refused alone
  };
  std::vector<absl::StatusOr<RecordOutcome>> results = store->RecordGroup(group);
  REQUIRE(results.size() == 5);
  REQUIRE_THAT(results[0], IsOk());
  CHECK_FALSE(results[0]->duplicate);
  CHECK(results[0]->counted == 2);
  CHECK(results[0]->visits == 2);
  REQUIRE_THAT(results[1], IsOk());
  CHECK(results[1]->duplicate);
  CHECK(results[1]->counted == 0);
  REQUIRE_THAT(results[2], IsOk());
  CHECK(results[2]->duplicate);
  REQUIRE_THAT(results[3], IsOk());
  CHECK(results[3]->counted == 4);
  CHECK(results[3]->visits == 0);
  CHECK_THAT(results[4], HasCode(absl::StatusCode::kInvalidArgument));
  CHECK(Counted(a) == 3);
  CHECK(Visits(a) == 3);
  CHECK(Counted(b) == 2);
  CHECK(Visits(b) == 2);
  CHECK(Counted(c) == 4);
  CHECK(Visits(c) == 0);
  // One rollup row per link and hour, in the link's rollups.
  REQUIRE_THAT(store->MergePendingRollups(100000), IsOk());
  CHECK(Number("SELECT human FROM click_rollup_hours WHERE kind = 'l' AND subject = $1", c) == 4);
}

TEST_CASE("a failed grouped transaction fails every batch in it and writes none",
          "[lib/clicks/pg][group][pg]") {
  // A link at its budget whose code cannot be made: the limit check fails
  // the transaction (INTERNAL) after every batch's rows were written in it.
  const int64_t limited = NextLinkId(), plain = NextLinkId();
  {
    pqxx::connection conn(SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(conn);
    tx.exec_params(
        "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time, max_clicks)"
        " VALUES ($1, 'https://example.com/', sha256('x'), 'anonymous', now(), 1)",
        limited);
  }
  PgClickStoreOptions options;
  options.conninfo = SharedPgCluster().ConnInfo();
  options.acquire_timeout = absl::Seconds(2);
  options.generated_code = [](int64_t) -> absl::StatusOr<std::string> {
    return absl::InternalError("no codec");
  };
  auto broken = PgClickStore::Create(options);
  REQUIRE_THAT(broken, IsOk());
  const std::vector<ClickRow> rows_plain = Clicks(plain, 5), rows_limited = Clicks(limited, 1);
  const std::string id_plain = UniqueBatchId("group-fail-a");
  const std::string id_limited = UniqueBatchId("group-fail-b");
  std::vector<absl::StatusOr<RecordOutcome>> results =
      (*broken)->RecordGroup({{id_plain, rows_plain, true}, {id_limited, rows_limited, true}});
  REQUIRE(results.size() == 2);
  CHECK_THAT(results[0], HasCode(absl::StatusCode::kInternal));
  CHECK_THAT(results[1], HasCode(absl::StatusCode::kInternal));
  CHECK(Counted(plain) == 0);
  CHECK(Visits(plain) == 0);
  CHECK(Counted(limited) == 0);
  // Nothing of either was recorded, their ids included: sent again (to a
  // store that can make codes), both are written once.
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo());
  REQUIRE_THAT(store->Record(id_plain, rows_plain, true), IsOk());
  absl::StatusOr<RecordOutcome> again = store->Record(id_limited, rows_limited, true);
  REQUIRE_THAT(again, IsOk());
  CHECK_FALSE(again->duplicate);
  CHECK(again->exhausted == std::vector<int64_t>{limited});
  CHECK(Counted(plain) == 5);
  CHECK(Counted(limited) == 1);
}

TEST_CASE("Record groups concurrent batches up to record_group_batches per transaction",
          "[lib/clicks/pg][group][pg][concurrent]") {
  PgClickStoreOptions options;
  options.conninfo = SharedPgCluster().ConnInfo();
  options.generated_code = [](int64_t id) -> absl::StatusOr<std::string> {
    return TestGeneratedCode(id);
  };
  options.record_group_batches = 3;
  options.record_transactions = 1;
  auto store = PgClickStore::Create(options);
  REQUIRE_THAT(store, IsOk());
  const int64_t link = NextLinkId();
  constexpr int kThreads = 12;
  std::vector<std::vector<ClickRow>> rows(kThreads, Clicks(link, 10));
  std::vector<std::string> ids;
  for (int i = 0; i < kThreads; ++i) ids.push_back(UniqueBatchId("group-many"));
  std::atomic<int> ok{0}, counted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each batch twice: the second is a duplicate, whatever the grouping.
      for (int round = 0; round < 2; ++round) {
        absl::StatusOr<RecordOutcome> outcome = (*store)->Record(ids[t], rows[t], true);
        if (!outcome.ok()) continue;
        ok.fetch_add(1);
        counted.fetch_add(static_cast<int>(outcome->counted));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(ok.load() == 2 * kThreads);
  CHECK(counted.load() == 10 * kThreads);
  CHECK(Counted(link) == 10 * kThreads);
  const PgClickStore::GroupStats stats = (*store)->group_stats();
  CHECK(stats.batches == 2 * kThreads);
  CHECK(stats.largest <= 3);
  CHECK(stats.transactions >= (2 * kThreads + 2) / 3);
}

TEST_CASE("Record refuses a batch UNAVAILABLE while record_queue batches wait",
          "[lib/clicks/pg][group][pg][concurrent]") {
  PgClickStoreOptions options;
  options.conninfo = SharedPgCluster().ConnInfo();
  options.generated_code = [](int64_t id) -> absl::StatusOr<std::string> {
    return TestGeneratedCode(id);
  };
  options.record_transactions = 1;
  options.record_queue = 1;
  auto store = PgClickStore::Create(options);
  REQUIRE_THAT(store, IsOk());
  const int64_t link = NextLinkId();
  const std::vector<ClickRow> rows = Clicks(link, 1);
  // Another transaction holds batch id `held`: the store's one transaction
  // waits on it.
  const std::string held = UniqueBatchId("group-held");
  pqxx::connection blocker(SharedPgCluster().ConnInfo());
  auto hold = std::make_unique<pqxx::work>(blocker);
  hold->exec_params("INSERT INTO click_batches (batch_id, events) VALUES ($1, 0)", held);
  // Catch2's assertions are not thread-safe: the threads keep their
  // answers, checked once they are joined.
  absl::StatusOr<RecordOutcome> first_answer, second_answer;
  std::thread first([&] { first_answer = (*store)->Record(held, rows, true); });
  // Once the first waits on the lock, a second queues...
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (Number("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND pid <> $1",
                0) == 0) {
    REQUIRE(absl::Now() < deadline);
    absl::SleepFor(absl::Milliseconds(10));
  }
  const std::string queued_id = UniqueBatchId("group-queued");
  std::thread second([&] { second_answer = (*store)->Record(queued_id, rows, true); });
  while ((*store)->group_stats().queued == 0) {
    REQUIRE(absl::Now() < deadline);
    absl::SleepFor(absl::Milliseconds(5));
  }
  // ... and a third finds the queue at its bound.
  absl::StatusOr<RecordOutcome> refused = (*store)->Record(UniqueBatchId("group-x"), rows, true);
  CHECK_THAT(refused, HasCode(absl::StatusCode::kUnavailable));
  CHECK(std::string(refused.status().message()).find("record_queue 1") != std::string::npos);
  hold->commit();  // `held` is recorded: the first is a duplicate
  hold.reset();
  first.join();
  second.join();
  CHECK_THAT(first_answer, IsOk());
  CHECK(first_answer->duplicate);
  CHECK_THAT(second_answer, IsOk());
  CHECK(Counted(link) == 1);  // the second's click; the first wrote nothing
}

TEST_CASE("a campaign's clicks over many links add one pending row per hour for its label",
          "[lib/clicks/pg][group][labels][pg]") {
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo());
  const int64_t campaign = NextLinkId();
  constexpr int kLinks = 1000;
  std::vector<ClickRow> rows;
  std::string ids = "{";
  for (int i = 0; i < kLinks; ++i) {
    const int64_t link = NextLinkId();
    absl::StrAppend(&ids, i ? "," : "", link);
    rows.push_back(testing::Click(link, kHour + absl::Seconds(i % 60)));
  }
  ids += "}";
  {
    pqxx::connection conn(SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(conn);
    tx.exec_params(
        "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time, label_ids)"
        " SELECT id, 'https://example.com/', sha256('x'), 'tenant', now(), ARRAY[$2::bigint]"
        " FROM unnest($1::bigint[]) AS id",
        ids, campaign);
  }
  REQUIRE_THAT(store->Record(UniqueBatchId("campaign"), rows, false), IsOk());
  CHECK(Number("SELECT count(*) FROM click_rollup_pending WHERE kind = 'c' AND subject = $1",
               campaign) == 1);
  absl::StatusOr<ClickStats> stats = store->SubjectStats(
      LabelSubject(campaign), kHour, kHour + absl::Hours(1), StatsGranularity::kHour);
  REQUIRE_THAT(stats, IsOk());
  CHECK(stats->total_human_clicks == kLinks);
}

}  // namespace
}  // namespace shortener::clicks
