// ReadBatcher over InMemoryLinkStore behind a FaultPlan, which counts,
// slows down, holds or breaks GetByIds and GetByAliases so that batches
// form the way they do in front of a real database.
#include "lib/store/read_batcher.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/lib/store/faulty_memory_store.h"
#include "tests/lib/store/link_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::store::testing {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

using ::shortener::testing::FaultPlan;

constexpr char kGetByIds[] = "GetByIds";
constexpr char kGetByAliases[] = "GetByAliases";

// Look-ups one at a time reached the store: the batcher must never make them.
int64_t SingleCalls(const FaultPlan& plan) {
  return plan.calls("GetById") + plan.calls("GetByAlias");
}

// Creates `n` links with aliases and returns the aliases.
std::vector<std::string> AddAliases(LinkStore& store, int n) {
  std::vector<NewLink> links;
  std::vector<std::string> aliases;
  for (int i = 0; i < n; ++i) {
    links.push_back(MakeNewLink(UniqueName("owner"), absl::StrCat("https://example.com/al/", i)));
    links.back().alias = UniqueName("alias");
    aliases.push_back(*links.back().alias);
  }
  for (const auto& r : Create(store, std::move(links))) REQUIRE_THAT(r, IsOk());
  return aliases;
}

// Creates `n` links and returns their ids.
std::vector<int64_t> AddLinks(LinkStore& store, int n) {
  std::vector<NewLink> links;
  for (int i = 0; i < n; ++i) {
    links.push_back(MakeNewLink(UniqueName("owner"), absl::StrCat("https://example.com/r/", i)));
  }
  std::vector<int64_t> ids;
  for (const NewLink& l : links) ids.push_back(l.id);
  for (const auto& r : Create(store, std::move(links))) REQUIRE_THAT(r, IsOk());
  return ids;
}

// Answers collected from callbacks on reader threads, checked on the test
// thread (Catch2 assertions are not thread-safe).
struct Answers {
  void Set(int64_t asked, absl::StatusOr<Link> r) {
    std::lock_guard<std::mutex> lock(mu);
    results.emplace(asked, std::move(r));
    done.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return done.wait_for(lock, std::chrono::seconds(20), [&] { return results.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable done;
  std::multimap<int64_t, absl::StatusOr<Link>> results;
};

TEST_CASE("an idle batcher answers a single look-up at once, with one query", "[lib/store]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 1);
  ReadBatcher batcher(&f.store, ReadBatchOptions{});
  absl::Time start = absl::Now();
  absl::StatusOr<Link> link = batcher.GetByIdAndWait(ids[0]);
  // No batching window: a quiet service adds no latency (generous bound for
  // a loaded machine; the batcher itself never sleeps).
  CHECK(absl::Now() - start < absl::Milliseconds(500));
  REQUIRE_THAT(link, IsOk());
  CHECK(link->id == ids[0]);
  CHECK(f.plan.calls(kGetByIds) == 1);
  CHECK(SingleCalls(f.plan) == 0);
  CHECK(batcher.GetStats().batches == 1);
  CHECK(batcher.GetStats().lookups == 1);
}

TEST_CASE("unknown ids are NOT_FOUND like GetById, present ones are answered", "[lib/store]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 2);
  ReadBatcher batcher(&f.store, ReadBatchOptions{});
  int64_t unknown = NextId();
  CHECK_THAT(
      batcher.GetByIdAndWait(unknown),
      HasCodeAndMessage(absl::StatusCode::kNotFound, absl::StrCat("no link with id ", unknown)));
  CHECK(batcher.GetByIdAndWait(ids[1])->id == ids[1]);
}

TEST_CASE("200 concurrent look-ups take far fewer queries and each gets its own answer",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.SetLatency(absl::Milliseconds(5));
  std::vector<int64_t> ids = AddLinks(f.memory, 150);
  ReadBatcher batcher(&f.store, ReadBatchOptions{});
  Answers answers;
  std::vector<int64_t> asked;
  for (int i = 0; i < 200; ++i) {
    // 150 present (some asked twice), and some unknown ids.
    int64_t id = i < 150 ? ids[i] : (i < 180 ? ids[i - 150] : NextId());
    asked.push_back(id);
  }
  // 8 threads ask at once, as concurrent Resolve calls do.
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < asked.size(); i += 8) {
        int64_t id = asked[i];
        batcher.GetById(id,
                        [&answers, id](absl::StatusOr<Link> r) { answers.Set(id, std::move(r)); });
      }
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(answers.WaitFor(asked.size()));
  std::lock_guard<std::mutex> lock(answers.mu);
  CHECK(answers.results.size() == 200);
  int ok = 0, not_found = 0, wrong = 0;
  for (const auto& [id, r] : answers.results) {
    if (r.ok()) {
      ok += 1;
      if (r->id != id) wrong += 1;
    } else if (absl::IsNotFound(r.status())) {
      not_found += 1;
    }
  }
  CHECK(ok == 180);
  CHECK(not_found == 20);
  CHECK(wrong == 0);
  // Two readers: the first look-ups go alone, the rest queue behind them.
  CHECK(f.plan.calls(kGetByIds) <= 20);
  CHECK(batcher.GetStats().lookups == 200);
  CHECK(batcher.GetStats().batches == f.plan.calls(kGetByIds));
  // An id asked twice in one batch is looked up once.
  CHECK(f.plan.items(kGetByIds) <= 200);
}

TEST_CASE("look-ups that arrive while every reader is busy share the next query",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 100);
  ReadBatchOptions options;
  options.reader_threads = 1;
  ReadBatcher batcher(&f.store, options);
  Answers answers;
  auto ask = [&](int64_t id) {
    batcher.GetById(id, [&answers, id](absl::StatusOr<Link> r) { answers.Set(id, std::move(r)); });
  };
  // The reader takes the first one alone and is held in its query; then 99
  // queue up.
  f.plan.CloseGate();
  ask(ids[0]);
  REQUIRE(f.plan.WaitForCalls(1, kGetByIds));
  for (int i = 1; i < 100; ++i) ask(ids[i]);
  f.plan.OpenGate();
  REQUIRE(answers.WaitFor(100));
  CHECK(f.plan.batch_sizes(kGetByIds) == std::vector<size_t>{1, 99});
}

TEST_CASE("max_batch bounds the ids of one query", "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.SetLatency(absl::Milliseconds(20));
  std::vector<int64_t> ids = AddLinks(f.memory, 100);
  ReadBatchOptions options;
  options.reader_threads = 1;
  options.max_batch = 30;
  ReadBatcher batcher(&f.store, options);
  Answers answers;
  for (int64_t id : ids) {
    batcher.GetById(id, [&answers, id](absl::StatusOr<Link> r) { answers.Set(id, std::move(r)); });
  }
  REQUIRE(answers.WaitFor(100));
  // At least ceil(100 / 30) queries, none over 30 ids.
  CHECK(f.plan.calls(kGetByIds) >= 4);
  CHECK(f.plan.items(kGetByIds) == 100);
  for (size_t n : f.plan.batch_sizes(kGetByIds)) CHECK(n <= 30);
}

TEST_CASE("a store outage fails every look-up of the batch with its status",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.SetLatency(absl::Milliseconds(2));
  std::vector<int64_t> ids = AddLinks(f.memory, 50);
  f.memory.SetAvailable(false);
  ReadBatcher batcher(&f.store, ReadBatchOptions{});
  Answers answers;
  for (int64_t id : ids) {
    batcher.GetById(id, [&answers, id](absl::StatusOr<Link> r) { answers.Set(id, std::move(r)); });
  }
  REQUIRE(answers.WaitFor(50));
  std::lock_guard<std::mutex> lock(answers.mu);
  int unavailable = 0;
  for (const auto& [id, r] : answers.results)
    unavailable += absl::IsUnavailable(r.status()) ? 1 : 0;
  CHECK(unavailable == 50);
}

TEST_CASE("an exception escaping GetByIds fails its read batch INTERNAL, not the process",
          "[lib/store]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 1);
  ReadBatcher batcher(&f.store, ReadBatchOptions{});
  f.plan.ThrowNext(1, std::make_exception_ptr(std::runtime_error("boom")), kGetByIds);
  CHECK_THAT(batcher.GetByIdAndWait(ids[0]),
             HasCodeAndMessage(absl::StatusCode::kInternal, "unexpected exception: boom"));
  CHECK_THAT(batcher.GetByIdAndWait(ids[0]), IsOk());
}

// Answers by alias, from callbacks on reader threads.
struct AliasAnswers {
  void Set(const std::string& asked, absl::StatusOr<Link> r) {
    std::lock_guard<std::mutex> lock(mu);
    results.emplace(asked, std::move(r));
    done.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return done.wait_for(lock, std::chrono::seconds(20), [&] { return results.size() >= n; });
  }
  std::mutex mu;
  std::condition_variable done;
  std::multimap<std::string, absl::StatusOr<Link>> results;
};

TEST_CASE("aliases queued while the reader is busy share one GetByAliases call",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 1);
  std::vector<std::string> aliases = AddAliases(f.memory, 60);
  ReadBatchOptions options;
  options.reader_threads = 1;
  auto owned = std::make_unique<ReadBatcher>(&f.store, options);
  ReadBatcher& batcher = *owned;
  f.plan.CloseGate();
  Answers first;
  batcher.GetById(ids[0], [&first](absl::StatusOr<Link> r) { first.Set(0, std::move(r)); });
  REQUIRE(f.plan.WaitForCalls(1, "", absl::Seconds(20)));
  // 60 known aliases, one asked twice, 10 unknown, and an id: one batch.
  AliasAnswers answers;
  auto ask = [&](const std::string& alias) {
    batcher.GetByAlias(
        alias, [&answers, alias](absl::StatusOr<Link> r) { answers.Set(alias, std::move(r)); });
  };
  for (const std::string& alias : aliases) ask(alias);
  ask(aliases[0]);
  for (int i = 0; i < 10; ++i) ask(UniqueName("unknown"));
  batcher.GetById(ids[0], [&first](absl::StatusOr<Link> r) { first.Set(1, std::move(r)); });
  f.plan.OpenGate();
  REQUIRE(answers.WaitFor(71));
  REQUIRE(first.WaitFor(2));
  // The batch held both kinds: one query each, every key once.
  CHECK(f.plan.calls(kGetByAliases) == 1);
  CHECK(f.plan.items(kGetByAliases) == 70);
  CHECK(f.plan.calls(kGetByIds) == 2);
  CHECK(SingleCalls(f.plan) == 0);
  CHECK(batcher.GetStats().queries == 3);
  // The reader may still be releasing its copies of the answers: join it
  // before reading ours (abseil's reference counts are invisible to TSan).
  owned.reset();
  std::lock_guard<std::mutex> lock(answers.mu);
  int found = 0, not_found = 0;
  for (const auto& [alias, r] : answers.results) {
    if (r.ok() && r->alias == alias) found += 1;
    if (absl::IsNotFound(r.status()) && absl::StrContains(r.status().message(), alias)) {
      not_found += 1;
    }
  }
  CHECK(found == 61);
  CHECK(not_found == 10);
}

TEST_CASE(
    "beyond max_queued a look-up, or a GetMany whole, is refused at once with RESOURCE_EXHAUSTED",
    "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 4);
  ReadBatchOptions options;
  options.reader_threads = 1;
  options.max_queued = 3;
  auto owned = std::make_unique<ReadBatcher>(&f.store, options);
  ReadBatcher& batcher = *owned;
  f.plan.CloseGate();
  Answers answers;
  auto ask = [&](int64_t id) {
    batcher.GetById(id, [&answers, id](absl::StatusOr<Link> r) { answers.Set(id, std::move(r)); });
  };
  ask(ids[0]);
  REQUIRE(f.plan.WaitForCalls(1, "", absl::Seconds(20)));  // taken: the queue is empty again
  ask(ids[1]);
  // Three keys would make four waiting: none of them is queued, though two
  // would fit.
  std::vector<absl::StatusOr<Link>> group;
  bool answered = false;
  batcher.GetMany({LinkKey::Id(ids[2]), LinkKey::Id(ids[3]), LinkKey::Alias("x")}, [&](auto links) {
    group = std::move(links);
    answered = true;
  });
  REQUIRE(answered);  // on this thread, before GetMany returned
  REQUIRE(group.size() == 3);
  for (const auto& r : group) {
    CHECK_THAT(r, HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                                    "read batcher is full: 3 look-ups are waiting; retry later"));
  }
  CHECK(batcher.GetStats().refused == 3);
  for (int i = 2; i < 4; ++i) ask(ids[i]);
  // The fourth waiting one: answered on this thread, before GetByAlias returns.
  absl::Status refused;
  batcher.GetByAlias("over", [&refused](absl::StatusOr<Link> r) { refused = r.status(); });
  CHECK_THAT(refused,
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                               "read batcher is full: 3 look-ups are waiting; retry later"));
  CHECK(batcher.GetStats().refused == 4);
  f.plan.OpenGate();
  REQUIRE(answers.WaitFor(4));
  CHECK(f.plan.calls(kGetByAliases) == 0);
  // And there is room again.
  AliasAnswers later;
  batcher.GetByAlias("still-unknown", [&later](absl::StatusOr<Link> r) {
    later.Set("still-unknown", std::move(r));
  });
  REQUIRE(later.WaitFor(1));
  // Join the reader before reading statuses it made (abseil's reference
  // counts are invisible to TSan).
  owned.reset();
  for (const auto& [id, r] : answers.results) CHECK_THAT(r, IsOk());
  CHECK_THAT(later.results.begin()->second, HasCode(absl::StatusCode::kNotFound));
}

// ReadBatcher::GetMany, waiting for its answer.
std::vector<absl::StatusOr<Link>> GetManyAndWait(ReadBatcher& batcher, std::vector<LinkKey> keys) {
  std::promise<std::vector<absl::StatusOr<Link>>> result;
  batcher.GetMany(std::move(keys), [&](auto links) { result.set_value(std::move(links)); });
  return result.get_future().get();
}

TEST_CASE("GetMany answers each key in its place, ids and aliases mixed, in one batch",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  std::vector<int64_t> ids = AddLinks(f.memory, 2);
  std::vector<std::string> aliases = AddAliases(f.memory, 1);
  auto batcher = std::make_unique<ReadBatcher>(&f.store, ReadBatchOptions{});
  const int64_t unknown = NextId();
  auto links = GetManyAndWait(
      *batcher, {LinkKey::Id(ids[0]), LinkKey::Alias(aliases[0]), LinkKey::Id(unknown),
                 LinkKey::Id(ids[1]), LinkKey::Alias("no-such-alias"), LinkKey::Id(ids[0])});
  CHECK(GetManyAndWait(*batcher, {}).empty());
  const ReadBatcher::Stats stats = batcher->GetStats();
  // Join the reader before reading statuses it made (abseil's reference
  // counts are invisible to TSan).
  batcher.reset();
  REQUIRE(links.size() == 6);
  REQUIRE_THAT(links[0], IsOk());
  CHECK(links[0]->id == ids[0]);
  REQUIRE_THAT(links[1], IsOk());
  CHECK(links[1]->alias == aliases[0]);
  CHECK_THAT(links[2], HasCodeAndMessage(absl::StatusCode::kNotFound,
                                         absl::StrCat("no link with id ", unknown)));
  REQUIRE_THAT(links[3], IsOk());
  CHECK(links[3]->id == ids[1]);
  CHECK_THAT(links[4], HasCodeAndMessage(absl::StatusCode::kNotFound,
                                         "no link with alias \"no-such-alias\""));
  REQUIRE_THAT(links[5], IsOk());
  CHECK(links[5]->id == ids[0]);
  CHECK(stats.batches == 1);
  CHECK(f.plan.calls(kGetByIds) == 1);
  CHECK(f.plan.calls(kGetByAliases) == 1);
  CHECK(SingleCalls(f.plan) == 0);
}

TEST_CASE("the destructor answers everything queued", "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.SetLatency(absl::Milliseconds(10));
  std::vector<int64_t> ids = AddLinks(f.memory, 40);
  Answers answers;
  {
    ReadBatchOptions options;
    options.reader_threads = 1;
    ReadBatcher batcher(&f.store, options);
    for (int64_t id : ids) {
      batcher.GetById(id,
                      [&answers, id](absl::StatusOr<Link> r) { answers.Set(id, std::move(r)); });
    }
  }
  std::lock_guard<std::mutex> lock(answers.mu);
  CHECK(answers.results.size() == 40);
}

}  // namespace
}  // namespace shortener::store::testing
