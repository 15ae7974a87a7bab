// Helpers of the PgLinkStore tests: a store on the shared test cluster, and
// row counts read over a fresh connection (what another process would see).
#ifndef SHORTENER_TESTS_LIB_STORE_PG_PG_TEST_UTIL_H_
#define SHORTENER_TESTS_LIB_STORE_PG_PG_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <pqxx/pqxx>
#include <string>

#include "lib/store/pg/pg_link_store.h"
#include "tests/support/pg_cluster.h"

namespace shortener::store::testing {

// copy_min_links: see PgLinkStoreOptions (1: every batch that skips the read
// phase is written with COPY).
inline std::unique_ptr<PgLinkStore> NewPgStore(const std::string& conninfo, int pool_size = 4,
                                               int copy_min_links = 200) {
  PgLinkStoreOptions options;
  options.conninfo = conninfo;
  options.pool_size = pool_size;
  options.copy_min_links = copy_min_links;
  auto store = PgLinkStore::Create(options);
  REQUIRE(store.ok());
  return std::move(store).value();
}

// `sql` is a count query with one text parameter $1.
inline int64_t CountRows(const std::string& sql, const std::string& param) {
  pqxx::connection conn(shortener::testing::SharedPgCluster().ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec_params1(sql, param)[0].as<int64_t>();
}

}  // namespace shortener::store::testing

#endif  // SHORTENER_TESTS_LIB_STORE_PG_PG_TEST_UTIL_H_
