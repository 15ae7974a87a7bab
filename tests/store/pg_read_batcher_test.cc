// ReadBatcher in front of PgLinkStore on a real PostgreSQL: concurrent
// look-ups of aliases (what a flood of made-up paths costs the service) are
// answered correctly by far fewer statements than look-ups.
#include <atomic>
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
#include "absl/time/clock.h"
#include "lib/store/read_batcher.h"
#include "tests/store/link_store_contract.h"
#include "tests/store/pg_test_util.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::IsOk;

// PgLinkStore, counting the statements its batched reads run.
class CountingPgStore : public LinkStore {
 public:
  explicit CountingPgStore(std::unique_ptr<PgLinkStore> store) : store_(std::move(store)) {}

  std::vector<absl::StatusOr<CreateOutcome>> CreateLinks(absl::Span<const NewLink> links) override {
    return store_->CreateLinks(links);
  }
  absl::StatusOr<Link> GetById(int64_t id) override {
    single_.fetch_add(1);
    return store_->GetById(id);
  }
  absl::StatusOr<Link> GetByAlias(const std::string& alias) override {
    single_.fetch_add(1);
    return store_->GetByAlias(alias);
  }
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByIds(
      absl::Span<const int64_t> ids) override {
    id_statements_.fetch_add(1);
    return store_->GetByIds(ids);
  }
  absl::StatusOr<std::vector<absl::StatusOr<Link>>> GetByAliases(
      absl::Span<const std::string> aliases) override {
    alias_statements_.fetch_add(1);
    return store_->GetByAliases(aliases);
  }
  absl::StatusOr<Link> Revoke(int64_t id, absl::Time when, const std::string& code) override {
    return store_->Revoke(id, when, code);
  }

  std::atomic<int64_t> single_{0};
  std::atomic<int64_t> id_statements_{0};
  std::atomic<int64_t> alias_statements_{0};

 private:
  std::unique_ptr<PgLinkStore> store_;
};

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
          "[store][pg][concurrent]") {
  const std::string conninfo = shortener::testing::SharedPgCluster().ConnInfo();
  CountingPgStore store(NewPgStore(conninfo));
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
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (store.alias_statements_.load() < 2 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
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
  INFO("alias statements: " << store.alias_statements_.load());
  CHECK(store.alias_statements_.load() <= 4);
  CHECK(store.id_statements_.load() == 0);
  CHECK(store.single_.load() == 0);
  CHECK(batcher.GetStats().lookups == 400);
}

}  // namespace
}  // namespace shortener::store::testing
