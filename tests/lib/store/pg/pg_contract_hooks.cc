// SetRankedClicks and SetCountedClicks for the PgLinkStore contract
// binaries: the rows the rollup merge keeps in link_click_totals
// (migration 0012) and RecordClicks in click_counts, written directly.
#include <pqxx/pqxx>
#include <string>

#include "tests/lib/store/link_store_contract.h"
#include "tests/support/pg_cluster.h"

namespace shortener::store::testing {

void SetRankedClicks(LinkStore&, int64_t link_id, const std::string& owner, int64_t human) {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  tx.exec_params(
      "INSERT INTO link_click_totals (link_id, owner, human) VALUES ($1, $2, $3)"
      " ON CONFLICT (link_id) DO UPDATE SET human = EXCLUDED.human",
      link_id, owner, human);
}

void SetCountedClicks(LinkStore&, int64_t link_id, int64_t human) {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  tx.exec_params(
      "INSERT INTO click_counts (link_id, hour, bot, count) VALUES ($1, '2030-01-01', false, $2)"
      " ON CONFLICT (link_id, hour, bot) DO UPDATE SET count = EXCLUDED.count",
      link_id, human);
}

}  // namespace shortener::store::testing
