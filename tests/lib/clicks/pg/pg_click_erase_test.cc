// PgClickStore::EraseLinks beyond the contract: the visits go too, in every
// partition (in bounded statements), with the merged and the pending
// rollups and the ListLinks rank, and erased_links remembers the links.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "lib/clicks/pg/pg_click_store.h"
#include "tests/lib/clicks/click_store_contract.h"
#include "tests/lib/clicks/pg/pg_click_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"

namespace shortener::clicks::testing {
namespace {

using ::shortener::testing::IsOk;
using ::shortener::testing::SharedPgCluster;

int64_t Count(const std::string& sql, int64_t id) {
  pqxx::connection conn(SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec_params1(sql, id)[0].as<int64_t>();
}

TEST_CASE("EraseLinks deletes a link's visits in every month, its merged rollups and its rank",
          "[lib/clicks/pg][erase][pg]") {
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo());
  const int64_t erased = NextLinkId(), kept = NextLinkId();
  // Links rows, so that the merge keeps their ListLinks rank.
  {
    pqxx::connection conn(SharedPgCluster().ConnInfo());
    pqxx::nontransaction tx(conn);
    for (int64_t id : {erased, kept}) {
      tx.exec_params(
          "INSERT INTO links (id, long_url, long_url_sha256, owner, create_time)"
          " VALUES ($1, 'https://example.com/e', sha256('e'::bytea), 'erase-owner', now())",
          id);
    }
  }
  std::vector<ClickRow> rows;
  for (const char* time : {"2038-01-10T10:00:00Z", "2038-02-10T10:00:00Z"}) {
    rows.push_back(Human(erased, time, "192.0.2.1", "Chrome", "Android", "mobile", "a.test", "DE"));
    rows.push_back(Human(kept, time, "192.0.2.2", "Firefox", "Linux", "desktop", "b.test", "FR"));
  }
  REQUIRE_THAT(store->Record(UniqueBatchId("erase-pg"), rows, true), IsOk());
  REQUIRE_THAT(store->MergePendingRollups(100000), IsOk());
  // One more, left pending.
  REQUIRE_THAT(store->Record(UniqueBatchId("erase-pg-pending"),
                             {Human(erased, "2038-02-10T11:00:00Z", "192.0.2.3", "Safari", "iOS",
                                    "mobile", "c.test", "US")},
                             true),
               IsOk());
  REQUIRE(Count("SELECT count(*) FROM visits WHERE link_id = $1", erased) == 3);
  REQUIRE(Count("SELECT count(*) FROM link_click_totals WHERE link_id = $1", erased) == 1);

  REQUIRE_THAT(store->EraseLinks({erased}, absl::Now()), IsOk());
  CHECK(Count("SELECT count(*) FROM visits WHERE link_id = $1", erased) == 0);
  CHECK(Count("SELECT count(*) FROM click_counts WHERE link_id = $1", erased) == 0);
  CHECK(Count("SELECT count(*) FROM link_click_totals WHERE link_id = $1", erased) == 0);
  for (const char* table : {"click_rollup_pending", "click_rollup_hours", "click_rollup_days",
                            "click_rollup_hour_dims", "click_rollup_day_dims"}) {
    INFO(table);
    CHECK(Count(std::string("SELECT count(*) FROM ") + table + " WHERE kind = 'l' AND subject = $1",
                erased) == 0);
  }
  CHECK(Count("SELECT count(*) FROM visits WHERE link_id = $1", kept) == 2);
  CHECK(Count("SELECT count(*) FROM link_click_totals WHERE link_id = $1", kept) == 1);
  CHECK(Count("SELECT count(*) FROM erased_links WHERE link_id = $1", erased) == 1);
}

TEST_CASE("EraseLinks deletes every one of a link's many visits, across months",
          "[lib/clicks/pg][erase][pg]") {
  auto store = NewTestClickStore(SharedPgCluster().ConnInfo());
  const int64_t erased = NextLinkId();
  // 25 000 visits, several in one microsecond, across two months.
  std::vector<ClickRow> rows;
  for (int i = 0; i < 25000; ++i) {
    ClickRow row = Click(erased, At("2038-03-31T23:00:00Z") + absl::Seconds(i / 3));
    rows.push_back(row);
  }
  REQUIRE_THAT(store->Record(UniqueBatchId("many-visits"), rows, true), IsOk());
  REQUIRE(Count("SELECT count(*) FROM visits WHERE link_id = $1", erased) == 25000);
  REQUIRE_THAT(store->EraseLinks({erased}, absl::Now()), IsOk());
  CHECK(Count("SELECT count(*) FROM visits WHERE link_id = $1", erased) == 0);
}

}  // namespace
}  // namespace shortener::clicks::testing
