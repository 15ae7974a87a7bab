// SweepVisits (lib/clicks/pg/visit_retention.h) on a private PostgreSQL
// (it drops partitions) with a ManualClock: which month's partition is
// prepared, which are dropped, and that a sweep during an outage fails
// without harm.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "lib/clicks/pg/visit_retention.h"
#include "lib/common/clock.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/lib/clicks/pg/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks {
namespace {

using shortener::testing::IsOk;
using shortener::testing::PgCluster;
using testing::At;
using testing::Click;

// The visits partitions that exist, by name, oldest first.
std::vector<std::string> Partitions(const std::string& conninfo) {
  pqxx::connection conn(conninfo);
  pqxx::nontransaction tx(conn);
  std::vector<std::string> names;
  for (const pqxx::row& row :
       tx.exec("SELECT relname FROM pg_class WHERE relname LIKE 'visits\\_2%' AND relkind = 'r'"
               " ORDER BY relname")) {
    names.push_back(row[0].as<std::string>());
  }
  return names;
}

TEST_CASE("a sweep prepares next month and keeps the current month and the N before it",
          "[lib/clicks/pg][retention][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewTestClickStore(conninfo);
  REQUIRE_THAT(
      store->Record(
          "sweep-1",
          {Click(12001, At("2029-12-31T23:00:00Z")), Click(12001, At("2030-01-15T00:00:00Z")),
           Click(12001, At("2030-02-01T00:00:00Z")), Click(12001, At("2030-03-14T00:00:00Z"))},
          true),
      IsOk());
  ManualClock clock(At("2030-03-15T12:00:00Z"));

  VisitRetentionOptions options;
  options.retention_months = 1;
  VisitSweep sweep = SweepVisits(*store, clock, options);
  CHECK_THAT(sweep.prepared, IsOk());
  REQUIRE_THAT(sweep.dropped, IsOk());
  CHECK(*sweep.dropped == std::vector<std::string>{"visits_2029_12", "visits_2030_01"});
  CHECK(Partitions(conninfo) ==
        std::vector<std::string>{"visits_2030_02", "visits_2030_03", "visits_2030_04"});
  // Counts stay.
  CHECK(*store->HumanTotal(12001) == 4);

  // The next day: nothing more to drop, April is there already.
  clock.Advance(absl::Hours(24));
  sweep = SweepVisits(*store, clock, options);
  CHECK_THAT(sweep.prepared, IsOk());
  REQUIRE_THAT(sweep.dropped, IsOk());
  CHECK(sweep.dropped->empty());
  CHECK(Partitions(conninfo).size() == 3);

  // On the first of April, February's month is past the one kept.
  clock.Set(At("2030-04-01T00:00:00Z"));
  sweep = SweepVisits(*store, clock, options);
  REQUIRE_THAT(sweep.dropped, IsOk());
  CHECK(*sweep.dropped == std::vector<std::string>{"visits_2030_02"});
  CHECK(Partitions(conninfo) ==
        std::vector<std::string>{"visits_2030_03", "visits_2030_04", "visits_2030_05"});
}

TEST_CASE("without visits or retention a sweep leaves the partitions alone",
          "[lib/clicks/pg][retention][pg]") {
  auto cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  const std::string conninfo = (*cluster)->ConnInfo();
  auto store = NewTestClickStore(conninfo);
  REQUIRE_THAT(store->Record("sweep-2", {Click(12002, At("2030-01-15T00:00:00Z"))}, true), IsOk());
  ManualClock clock(At("2031-06-15T00:00:00Z"));

  VisitRetentionOptions options;
  options.record_visits = false;
  VisitSweep sweep = SweepVisits(*store, clock, options);
  CHECK_THAT(sweep.prepared, IsOk());
  REQUIRE_THAT(sweep.dropped, IsOk());
  CHECK(sweep.dropped->empty());
  CHECK(Partitions(conninfo) == std::vector<std::string>{"visits_2030_01"});

  // A stopped database: both steps fail, are logged, and nothing breaks.
  options.record_visits = true;
  options.retention_months = 3;
  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  sweep = SweepVisits(*store, clock, options);
  CHECK(absl::IsUnavailable(sweep.prepared));
  CHECK(absl::IsUnavailable(sweep.dropped.status()));
  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  sweep = SweepVisits(*store, clock, options);
  CHECK_THAT(sweep.prepared, IsOk());
  REQUIRE_THAT(sweep.dropped, IsOk());
  CHECK(*sweep.dropped == std::vector<std::string>{"visits_2030_01"});
  CHECK(Partitions(conninfo) == std::vector<std::string>{"visits_2031_07"});
}

}  // namespace
}  // namespace shortener::clicks
