// SetRankedClicks for the PgLinkStore contract binaries: the row the
// rollup merge keeps in link_click_totals (migration 0012), written
// directly.
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

}  // namespace shortener::store::testing
