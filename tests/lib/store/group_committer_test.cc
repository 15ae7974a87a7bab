// GroupCommitter over InMemoryLinkStore behind a FaultPlan (slowed down or
// held at a gate, so that batches form the way they do in front of a real
// database; the plan records every CreateLinks batch).
#include "lib/store/group_committer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

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

constexpr char kCreate[] = "CreateLinks";

// Counts down completions; Wait returns whether all came within 10 s.
class Countdown {
 public:
  explicit Countdown(int n) : left_(n) {}
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--left_ == 0) zero_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return zero_.wait_for(lock, std::chrono::seconds(10), [this] { return left_ <= 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable zero_;
  int left_;
};

// The callers of one test: `done` counts successes (`ok`; no Catch
// assertions off the main thread) and completions (`all`).
struct Callers {
  explicit Callers(int n) : all(n) {}
  std::function<void(absl::StatusOr<CreateOutcome>)> Callback(bool require_created = false) {
    return [this, require_created](absl::StatusOr<CreateOutcome> r) {
      if (r.ok() && (!require_created || r->created)) ++ok;
      all.Done();
    };
  }
  Countdown all;
  std::atomic<int> ok{0};
};

// Options with a busy-committer rule: a second committer joins once
// `backlog` links are queued or the busy one has been committing `after`.
GroupCommitOptions ParallelOptions(int threads, int backlog, absl::Duration after) {
  GroupCommitOptions options;
  options.committer_threads = threads;
  options.parallel_backlog = backlog;
  options.parallel_after = after;
  return options;
}

TEST_CASE("links that arrive while both committers are busy share one transaction",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.CloseGate();
  GroupCommitter committer(&f.store,
                           GroupCommitOptions{/*max_batch=*/1000, /*committer_threads=*/2});
  constexpr int kLinks = 64;
  std::string owner = UniqueName("owner");
  std::vector<NewLink> links;
  for (int i = 0; i < kLinks; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/" + std::to_string(i)));
  }
  Callers callers(kLinks);
  auto done = callers.Callback(/*require_created=*/true);
  // One link occupies each committer (their CreateLinks wait at the gate; the
  // second starts after parallel_after); everything after that queues up.
  committer.Create(links[0], done);
  REQUIRE(f.plan.WaitForCalls(1, kCreate));
  committer.Create(links[1], done);
  REQUIRE(f.plan.WaitForCalls(2, kCreate));
  for (int i = 2; i < kLinks; ++i) committer.Create(links[i], done);
  f.plan.OpenGate();
  REQUIRE(callers.all.Wait());
  CHECK(callers.ok == kLinks);
  CHECK(f.plan.batch_sizes(kCreate) == std::vector<size_t>{1, 1, kLinks - 2});
  CHECK(committer.GetStats().batches == 3);
  CHECK(committer.GetStats().links == kLinks);
}

// Links for one owner: https://example.com/0 ... /(n-1).
std::vector<NewLink> NumberedLinks(int n) {
  std::string owner = UniqueName("owner");
  std::vector<NewLink> links;
  for (int i = 0; i < n; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/" + std::to_string(i)));
  }
  return links;
}

TEST_CASE("a second committer starts only once parallel_backlog links are queued",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.CloseGate();
  GroupCommitter committer(&f.store, ParallelOptions(2, 8, absl::InfiniteDuration()));
  std::vector<NewLink> links = NumberedLinks(9);
  Callers callers(9);
  auto done = callers.Callback();
  committer.Create(links[0], done);
  REQUIRE(f.plan.WaitForCalls(1, kCreate));
  // 7 queued behind a busy committer: the idle one keeps waiting, so the 8th
  // finds them all still queued and the second batch takes the 8 at once.
  for (int i = 1; i < 9; ++i) committer.Create(links[i], done);
  REQUIRE(f.plan.WaitForCalls(2, kCreate));
  CHECK(f.plan.batch_sizes(kCreate) == std::vector<size_t>{1, 8});
  f.plan.OpenGate();
  REQUIRE(callers.all.Wait());
  CHECK(callers.ok == 9);
  CHECK(committer.GetStats().batches == 2);
}

TEST_CASE("below parallel_backlog the busy committer takes the queue when it is done",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.CloseGate();
  GroupCommitter committer(&f.store, ParallelOptions(3, 1000, absl::InfiniteDuration()));
  std::vector<NewLink> links = NumberedLinks(20);
  Callers callers(20);
  auto done = callers.Callback();
  committer.Create(links[0], done);
  REQUIRE(f.plan.WaitForCalls(1, kCreate));
  for (int i = 1; i < 20; ++i) committer.Create(links[i], done);
  f.plan.OpenGate();
  REQUIRE(callers.all.Wait());
  CHECK(callers.ok == 20);
  CHECK(f.plan.batch_sizes(kCreate) == std::vector<size_t>{1, 19});
}

TEST_CASE("one call after another is committed by the committer that went idle last",
          "[lib/store][concurrent]") {
  // With one shared wake-up, idle committers took turns; the one that just
  // committed is the warm one (docs/benchmarks.md: Shorten ~7 % faster).
  FaultyMemoryStore f;
  GroupCommitter committer(&f.store, ParallelOptions(3, 1000, absl::InfiniteDuration()));
  constexpr int kCalls = 100;
  for (const NewLink& link : NumberedLinks(kCalls)) {
    REQUIRE_THAT(committer.CreateAndWait(link), IsOk());
    // Time for the committer to finish its loop and wait again.
    absl::SleepFor(absl::Milliseconds(2));
  }
  std::vector<std::thread::id> threads = f.plan.threads(kCreate);
  REQUIRE(threads.size() == kCalls);
  int switches = 0;
  for (size_t i = 1; i < threads.size(); ++i) switches += threads[i] != threads[i - 1] ? 1 : 0;
  CHECK(switches <= kCalls / 10);
}

TEST_CASE("a second committer starts once the busy one has been committing parallel_after",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.CloseGate();
  GroupCommitter committer(&f.store, ParallelOptions(2, 1000, absl::Milliseconds(50)));
  std::vector<NewLink> links = NumberedLinks(2);
  Callers callers(2);
  auto done = callers.Callback();
  absl::Time start = absl::Now();
  committer.Create(links[0], done);
  REQUIRE(f.plan.WaitForCalls(1, kCreate));
  committer.Create(links[1], done);
  REQUIRE(f.plan.WaitForCalls(2, kCreate));  // while the first is still at the gate
  CHECK(absl::Now() - start >= absl::Milliseconds(50));
  f.plan.OpenGate();
  REQUIRE(callers.all.Wait());
  CHECK(callers.ok == 2);
  CHECK(f.plan.batch_sizes(kCreate) == std::vector<size_t>{1, 1});
}

TEST_CASE("an exception escaping the store fails its batch INTERNAL, not the process",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  // More than the batches of the 8 calls below: cleared once they are done.
  f.plan.ThrowNext(100, std::make_exception_ptr(std::runtime_error("store bug")), kCreate);
  GroupCommitter committer(&f.store, GroupCommitOptions{});
  std::vector<std::thread> threads;
  std::atomic<int> internal{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto r = committer.CreateAndWait(MakeNewLink(UniqueName("owner"), "https://example.com/"));
      if (r.status().code() == absl::StatusCode::kInternal &&
          r.status().message() == "create links: unexpected exception: store bug") {
        ++internal;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(internal == 8);

  f.plan.ClearFaults();
  f.plan.ThrowNext(100, std::make_exception_ptr(42), kCreate);
  std::promise<std::vector<absl::StatusOr<CreateOutcome>>> many;
  committer.CreateMany(
      {MakeNewLink(UniqueName("owner"), "https://example.com/a"),
       MakeNewLink(UniqueName("owner"), "https://example.com/b")},
      [&](std::vector<absl::StatusOr<CreateOutcome>> r) { many.set_value(std::move(r)); });
  std::vector<absl::StatusOr<CreateOutcome>> results = many.get_future().get();
  REQUIRE(results.size() == 2);
  for (const auto& r : results) {
    CHECK_THAT(r, HasCodeAndMessage(absl::StatusCode::kInternal,
                                    "create links: unexpected exception: not a std::exception"));
  }

  // The committer threads survived: once the store behaves, links go through.
  f.plan.ClearFaults();
  CHECK_THAT(committer.CreateAndWait(MakeNewLink(UniqueName("owner"), "https://example.com/")),
             IsOk());
  CHECK(f.memory.LinkCount() == 1);
}

TEST_CASE("64 threads each get their own result, grouped into fewer transactions",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.SetLatency(absl::Milliseconds(1));
  GroupCommitter committer(&f.store, GroupCommitOptions{});
  constexpr int kThreads = 64, kPerThread = 20;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string owner = "owner-" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        NewLink link = MakeNewLink(owner, "https://example.com/" + std::to_string(i));
        absl::StatusOr<CreateOutcome> r = committer.CreateAndWait(link);
        if (!r.ok() || !r->created || r->link.id != link.id || r->link.owner != owner) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
  GroupCommitter::Stats stats = committer.GetStats();
  CHECK(stats.links == kThreads * kPerThread);
  CHECK(stats.batches < stats.links / 4);
  CHECK(f.memory.LinkCount() == size_t{kThreads * kPerThread});
}

TEST_CASE("CreateMany returns per-item results in input order", "[lib/store][concurrent]") {
  InMemoryLinkStore store;
  GroupCommitter committer(&store, GroupCommitOptions{});
  std::string owner = UniqueName("owner");
  std::vector<NewLink> links;
  for (int i = 0; i < 10; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/" + std::to_string(i)));
  }
  links[3].alias = links[7].alias = UniqueName("same");
  std::promise<std::vector<absl::StatusOr<CreateOutcome>>> done;
  committer.CreateMany(
      links, [&](std::vector<absl::StatusOr<CreateOutcome>> r) { done.set_value(std::move(r)); });
  std::vector<absl::StatusOr<CreateOutcome>> results = done.get_future().get();
  REQUIRE(results.size() == 10);
  for (int i = 0; i < 10; ++i) {
    if (i == 7) {
      CHECK_THAT(results[i], HasCode(absl::StatusCode::kAlreadyExists));
    } else {
      REQUIRE_THAT(results[i], IsOk());
      CHECK(results[i]->link.id == links[i].id);
    }
  }
}

TEST_CASE("a CreateMany larger than max_batch goes out in full batches, answered in order",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  GroupCommitter committer(&f.store, GroupCommitOptions{/*max_batch=*/10, 2});
  std::string owner = UniqueName("owner");
  std::vector<NewLink> links;
  for (int i = 0; i < 25; ++i) {
    links.push_back(MakeNewLink(owner, "https://example.com/" + std::to_string(i)));
  }
  std::promise<std::vector<absl::StatusOr<CreateOutcome>>> done;
  committer.CreateMany(
      links, [&](std::vector<absl::StatusOr<CreateOutcome>> r) { done.set_value(std::move(r)); });
  std::vector<absl::StatusOr<CreateOutcome>> results = done.get_future().get();
  REQUIRE(results.size() == 25);
  for (int i = 0; i < 25; ++i) {
    REQUIRE_THAT(results[i], IsOk());
    CHECK(results[i]->link.id == links[i].id);
  }
  CHECK(committer.GetStats().batches == 3);
  CHECK(f.plan.batch_sizes(kCreate) == std::vector<size_t>{10, 10, 5});
  bool empty_done = false;
  committer.CreateMany(
      {}, [&](std::vector<absl::StatusOr<CreateOutcome>> r) { empty_done = r.empty(); });
  CHECK(empty_done);
}

TEST_CASE("a call that would take the queue past max_queued is refused whole, at once",
          "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.CloseGate();
  GroupCommitOptions options;
  options.committer_threads = 1;
  options.max_queued = 5;
  GroupCommitter committer(&f.store, options);
  std::vector<NewLink> links = NumberedLinks(8);
  // Completions of the accepted calls: links 0, 1, 7 and the CreateMany.
  Callers callers(4);
  committer.Create(links[0], callers.Callback());
  REQUIRE(f.plan.WaitForCalls(1, kCreate));  // taken: the queue is empty again
  committer.Create(links[1], callers.Callback());
  std::vector<absl::StatusOr<CreateOutcome>> many_results;
  committer.CreateMany({links[2], links[3]}, [&](std::vector<absl::StatusOr<CreateOutcome>> r) {
    many_results = std::move(r);
    callers.all.Done();
  });
  // 3 links wait; 3 more would make 6 > 5: refused whole, on this thread.
  std::vector<absl::StatusOr<CreateOutcome>> refused;
  committer.CreateMany(
      {links[4], links[5], links[6]},
      [&](std::vector<absl::StatusOr<CreateOutcome>> r) { refused = std::move(r); });
  REQUIRE(refused.size() == 3);
  for (const auto& r : refused) {
    CHECK_THAT(r, HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                                    "group committer is full: 3 links are waiting (at most 5); "
                                    "retry later"));
  }
  CHECK(committer.GetStats().refused == 3);
  // One more still fits.
  committer.Create(links[7], callers.Callback());
  f.plan.OpenGate();
  REQUIRE(callers.all.Wait());
  CHECK(callers.ok == 3);
  REQUIRE(many_results.size() == 2);
  CHECK_THAT(many_results[0], IsOk());
  CHECK_THAT(many_results[1], IsOk());
  // Nothing refused was stored.
  for (int i : {4, 5, 6}) {
    CHECK_THAT(f.memory.GetById(links[i].id), HasCode(absl::StatusCode::kNotFound));
  }
}

TEST_CASE("a call larger than max_queued is taken when the queue is empty",
          "[lib/store][concurrent]") {
  InMemoryLinkStore store;
  GroupCommitOptions options;
  options.max_queued = 2;
  GroupCommitter committer(&store, options);
  std::promise<std::vector<absl::StatusOr<CreateOutcome>>> results;
  committer.CreateMany(NumberedLinks(10), [&](std::vector<absl::StatusOr<CreateOutcome>> r) {
    results.set_value(std::move(r));
  });
  std::vector<absl::StatusOr<CreateOutcome>> got = results.get_future().get();
  REQUIRE(got.size() == 10);
  for (const auto& r : got) CHECK_THAT(r, IsOk());
}

TEST_CASE("the destructor completes everything queued", "[lib/store][concurrent]") {
  FaultyMemoryStore f;
  f.plan.SetLatency(absl::Milliseconds(2));
  std::atomic<int> ok{0};
  constexpr int kLinks = 300;
  {
    GroupCommitter committer(&f.store, GroupCommitOptions{/*max_batch=*/16, 2});
    std::string owner = UniqueName("owner");
    for (int i = 0; i < kLinks; ++i) {
      committer.Create(MakeNewLink(owner, "https://example.com/" + std::to_string(i)),
                       [&](absl::StatusOr<CreateOutcome> r) {
                         if (r.ok()) ++ok;
                       });
    }
  }
  CHECK(ok == kLinks);
  CHECK(f.memory.LinkCount() == size_t{kLinks});
}

TEST_CASE("a store outage reaches every caller of the batch", "[lib/store][concurrent]") {
  InMemoryLinkStore store;
  store.SetAvailable(false);
  GroupCommitter committer(&store, GroupCommitOptions{});
  std::vector<std::thread> threads;
  std::atomic<int> unavailable{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto r = committer.CreateAndWait(MakeNewLink(UniqueName("owner"), "https://example.com/"));
      if (absl::IsUnavailable(r.status())) ++unavailable;
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(unavailable == 8);
}

}  // namespace
}  // namespace shortener::store::testing
