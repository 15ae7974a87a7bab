// The LinkStore contract suite on PgLinkStore with copy_min_links = 1: every
// batch that skips the read phase is written with COPY, the path that big
// batches take (store_pg_test runs the suite on the one-statement path).
#include <memory>

#include "tests/lib/store/link_store_contract.h"
#include "tests/lib/store/pg/pg_test_util.h"
#include "tests/support/pg_cluster.h"

namespace shortener::store::testing {

std::unique_ptr<LinkStore> NewContractStore() {
  return NewPgStore(shortener::testing::SharedPgCluster().ConnInfo(), /*pool_size=*/4,
                    /*copy_min_links=*/1);
}

}  // namespace shortener::store::testing
