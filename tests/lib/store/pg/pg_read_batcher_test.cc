// ReadBatcher in front of PgLinkStore on a real PostgreSQL (behind a
// FaultPlan that counts its calls): concurrent look-ups of aliases (what a
// flood of made-up paths costs the service) are answered correctly by far
// fewer statements than look-ups.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "lib/store/read_batcher.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/lib/store/pg/pg_test_util.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_link_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::IsOk;

using ::shortener::testing::FaultPlan;
using ::shortener::testing::FaultyLinkStore;

struct Answers {
  void Set(const std::string& alias, absl::StatusOr<Link> r) {
    std::lock_guard<std::mutex> lock(mu);
    results.emplace(alias, std::move(r));
    done.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return done.wait_for(lock, std::chrono::seconds(30), [&] { return results.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable done;
  std::multimap<std::string, absl::StatusOr<Link>> results;
};

TEST_CASE("400 concurrent alias look-ups cost a handful of statements, each answered right",
          "[lib/store/pg][concurrent][pg]") {
  const std::string conninfo = shortener::testing::SharedPgCluster().ConnInfo();
  std::unique_ptr<PgLinkStore> pg = NewPgStore(conninfo);
  // Counts the statements the batched reads run.
  FaultPlan plan;
  FaultyLinkStore store(pg.get(), &plan);
  std::vector<NewLink> links;
  for (int i = 0; i < 200; ++i) {
    links.push_back(MakeNewLink(UniqueName("owner"), absl::StrCat("https://example.com/pa/", i)));
    links.back().alias = UniqueName("pg-alias");
  }
  for (const auto& r : Create(store, links)) REQUIRE_THAT(r, IsOk());
  std::map<std::string, int64_t> want;
  std::vector<std::string> asked;
  for (const NewLink& l : links) {
    want[*l.alias] = l.id;
    asked.push_back(*l.alias);
  }
  for (int i = 0; i < 200; ++i) asked.push_back(UniqueName("made-up"));  // a flood's share

  ReadBatchOptions options;
  options.reader_threads = 2;
  ReadBatcher batcher(&store, options);
  // The first statement waits on a lock held here, so every look-up after it
  // queues (as under load, when the database is the bottleneck).
  pqxx::connection locker(conninfo);
  pqxx::work lock_tx(locker);
  lock_tx.exec("LOCK TABLE link_aliases IN ACCESS EXCLUSIVE MODE");
  Answers answers;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < asked.size(); i += 8) {
        const std::string alias = asked[i];
        batcher.GetByAlias(
            alias, [&answers, alias](absl::StatusOr<Link> r) { answers.Set(alias, std::move(r)); });
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Both readers are waiting on the lock with what they took; the rest is
  // queued.
  (void)plan.WaitForCalls(2, "GetByAliases", absl::Seconds(10));
  lock_tx.commit();
  REQUIRE(answers.WaitFor(asked.size()));

  std::lock_guard<std::mutex> lock(answers.mu);
  int right = 0, not_found = 0, wrong = 0;
  for (const auto& [alias, r] : answers.results) {
    auto it = want.find(alias);
    if (it != want.end() && r.ok() && r->id == it->second && r->alias == alias) {
      right += 1;
    } else if (it == want.end() && absl::IsNotFound(r.status())) {
      not_found += 1;
    } else {
      wrong += 1;
    }
  }
  CHECK(right == 200);
  CHECK(not_found == 200);
  CHECK(wrong == 0);
  // 400 look-ups: the two that met the lock, then the queue in batches of
  // at most 256 (max_batch): at most 4 statements, where one per look-up
  // made 400.
  INFO("alias statements: " << plan.calls("GetByAliases"));
  CHECK(plan.calls("GetByAliases") <= 4);
  CHECK(plan.calls("GetByIds") == 0);
  CHECK(plan.calls("GetById") + plan.calls("GetByAlias") == 0);
  CHECK(batcher.GetStats().lookups == 400);
}

}  // namespace
}  // namespace shortener::store::testing
