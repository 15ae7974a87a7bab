// Helpers of the PgLinkStore tests: a store on the shared test cluster, and
// row counts read over a fresh connection (what another process would see).
#ifndef SHORTENER_TESTS_LIB_STORE_PG_PG_TEST_UTIL_H_
#define SHORTENER_TESTS_LIB_STORE_PG_PG_TEST_UTIL_H_

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "lib/pg/notification_listener.h"
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

// Every payload NOTIFYd on the store's invalidation channel of the shared
// test cluster while it lives.
class InvalidationCollector {
 public:
  InvalidationCollector() {
    options_.conninfo = shortener::testing::SharedPgCluster().ConnInfo();
    options_.channel = PgLinkStoreOptions{}.invalidation_channel;
    pg::NotificationCallbacks callbacks;
    callbacks.on_notification = [this](const std::string& payload) {
      std::lock_guard<std::mutex> lock(mu_);
      payloads_.push_back(payload);
      cv_.notify_all();
    };
    auto listener = pg::NotificationListener::Start(options_, callbacks);
    REQUIRE(listener.ok());
    listener_ = *std::move(listener);
    REQUIRE(listener_->WaitUntilListening(absl::Now() + absl::Seconds(10)));
  }

  // Every payload received until a marker NOTIFYd now arrives (so every
  // notification committed before this call is in).
  std::vector<std::string> Received() {
    const std::string marker = "marker-" + std::to_string(++markers_);
    {
      pqxx::connection conn(options_.conninfo);
      pqxx::nontransaction tx(conn);
      tx.exec_params("SELECT pg_notify($1, $2)", options_.channel, marker);
    }
    std::unique_lock<std::mutex> lock(mu_);
    REQUIRE(cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      return std::find(payloads_.begin(), payloads_.end(), marker) != payloads_.end();
    }));
    std::vector<std::string> received;
    for (const std::string& p : payloads_) {
      if (p.rfind("marker-", 0) != 0) received.push_back(p);
    }
    return received;
  }

 private:
  pg::NotificationListenerOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> payloads_;  // guarded by mu_
  int markers_ = 0;
  std::unique_ptr<pg::NotificationListener> listener_;  // last: its thread uses the above
};

}  // namespace shortener::store::testing

#endif  // SHORTENER_TESTS_LIB_STORE_PG_PG_TEST_UTIL_H_
