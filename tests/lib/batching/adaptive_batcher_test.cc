// AdaptiveBatcher, with a blocking and an asynchronous executor (each test
// over both where the rule is the same): batch forming, the in-flight and
// queue bounds, groups, the parallel rule, deadlines, shutdown, and many
// threads at once.
#include "lib/batching/adaptive_batcher.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "tests/lib/batching/test_executors.h"

namespace shortener::batching::testing {
namespace {

using Sizes = std::vector<size_t>;
using Queued = AdaptiveBatcher<int>::Queued;

AdaptiveBatcherOptions Options(int max_batch, int max_in_flight, int max_queued = 1024) {
  AdaptiveBatcherOptions options;
  options.max_batch = max_batch;
  options.max_in_flight = max_in_flight;
  options.max_queued = max_queued;
  return options;
}

// Options with a parallel rule: another batch starts while one is out only
// once `backlog` items are queued or the oldest has been out `after`.
AdaptiveBatcherOptions ParallelRule(int max_in_flight, int backlog,
                                    BatchClock::duration after = BatchClock::duration::max()) {
  AdaptiveBatcherOptions options = Options(100, max_in_flight);
  options.parallel_backlog = backlog;
  options.parallel_after = after;
  return options;
}

BatchClock::time_point In(std::chrono::milliseconds d) { return BatchClock::now() + d; }

// Holds the rig's executor and has item 0 taken, alone: one slot is busy
// until Release, and the queue is empty.
template <typename Rig>
void HoldFirstBatch(Rig& rig, BatchClock::time_point deadline = BatchClock::time_point::max()) {
  rig.Hold();
  rig.batcher.Submit(0, deadline);
  REQUIRE(rig.journal.WaitForBatches(1));
}

TEMPLATE_TEST_CASE("batcher: an idle batcher executes a lone item at once, as a batch of one",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(256, 2));
  rig.batcher.Submit(7);
  REQUIRE(rig.journal.WaitForAnswers(1));
  CHECK(rig.journal.batches() == std::vector<std::vector<int>>{{7}});
  CHECK(rig.journal.How(7) == "executed");
  const auto stats = rig.batcher.GetStats();
  CHECK(stats.batches == 1);
  CHECK(stats.items == 1);
}

TEMPLATE_TEST_CASE("batcher: items queued while every slot is busy go out together, max_batch each",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(/*max_batch=*/4, /*max_in_flight=*/1));
  HoldFirstBatch(rig);
  for (int i = 1; i <= 10; ++i) rig.batcher.Submit(i);
  CHECK(rig.batcher.GetStats().queued == 10);
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(11));
  CHECK(rig.journal.batches() ==
        std::vector<std::vector<int>>{{0}, {1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10}});
  CHECK(rig.batcher.GetStats().batches == 4);
  CHECK(rig.batcher.GetStats().items == 11);
}

TEMPLATE_TEST_CASE("batcher: stats count each batch's size and its oldest item's queue wait",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(/*max_batch=*/4, /*max_in_flight=*/1));
  HoldFirstBatch(rig);
  for (int i = 1; i <= 5; ++i) rig.batcher.Submit(i);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(6));
  const auto stats = rig.batcher.GetStats();
  // Batches of 1, 4 and 1: buckets le=1 (2), le=2 (0), le=4 (1).
  REQUIRE(stats.batch_sizes.count() == 3);
  CHECK(stats.batch_sizes.sum() == 6);
  CHECK(stats.batch_sizes.counts()[0] == 2);
  CHECK(stats.batch_sizes.counts()[1] == 0);
  CHECK(stats.batch_sizes.counts()[2] == 1);
  // The second batch's oldest item waited the 20 ms the first was held, at
  // least; the first batch's item hardly waited.
  REQUIRE(stats.queue_wait_seconds.count() == 3);
  CHECK(stats.queue_wait_seconds.sum() >= 0.020);
}

TEMPLATE_TEST_CASE("batcher: at most max_in_flight batches are out at once", "[lib/batching]",
                   BlockingRig, AsyncRig) {
  TestType rig(Options(100, /*max_in_flight=*/2));
  HoldFirstBatch(rig);
  rig.batcher.Submit(1);  // a second slot is free: it goes at once, alone
  REQUIRE(rig.journal.WaitForBatches(2));
  for (int i = 2; i < 6; ++i) rig.batcher.Submit(i);
  auto stats = rig.batcher.GetStats();
  CHECK(stats.in_flight == 2);
  CHECK(stats.queued == 4);
  CHECK(rig.journal.batches().size() == 2);
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(6));
  CHECK(rig.journal.batch_sizes() == Sizes{1, 1, 4});
}

TEMPLATE_TEST_CASE(
    "batcher: a submission past max_queued is refused whole, at once, and nothing "
    "of it is queued",
    "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(100, 1, /*max_queued=*/3));
  HoldFirstBatch(rig);  // taken: the queue is empty again
  for (int i = 1; i <= 3; ++i) rig.batcher.Submit(i);
  // 3 wait; 2 more would make 5 > 3: both answered before SubmitGroup returns.
  rig.batcher.SubmitGroup({4, 5});
  CHECK(rig.journal.How(4) == "queue full");
  CHECK(rig.journal.How(5) == "queue full");
  CHECK(rig.journal.last_queue_full().queued == 3);
  CHECK(rig.journal.last_queue_full().max_queued == 3);
  rig.batcher.Submit(6);
  CHECK(rig.journal.How(6) == "queue full");
  auto stats = rig.batcher.GetStats();
  CHECK(stats.refused_queue_full == 3);
  CHECK(stats.queued == 3);
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(7));
  for (int i = 0; i <= 3; ++i) CHECK(rig.journal.How(i) == "executed");
  // Refused items never reached the executor.
  CHECK(rig.journal.batches() == std::vector<std::vector<int>>{{0}, {1, 2, 3}});
  // And there is room again; a group larger than the bound fits an empty queue.
  rig.batcher.SubmitGroup({10, 11, 12, 13, 14});
  REQUIRE(rig.journal.WaitForAnswers(12));
  for (int i = 10; i <= 14; ++i) CHECK(rig.journal.How(i) == "executed");
}

TEMPLATE_TEST_CASE("batcher: a group goes into one batch when it fits, else waits, unless first",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(/*max_batch=*/5, 1));
  HoldFirstBatch(rig);
  rig.batcher.Submit(1);
  rig.batcher.SubmitGroup({2, 3, 4});
  rig.batcher.SubmitGroup({5, 6, 7});  // 4 + 3 > 5: the next batch
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(8));
  CHECK(rig.journal.batches() == std::vector<std::vector<int>>{{0}, {1, 2, 3, 4}, {5, 6, 7}});
  // A group larger than max_batch at the front is split.
  rig.batcher.SubmitGroup({10, 11, 12, 13, 14, 15, 16});
  REQUIRE(rig.journal.WaitForAnswers(15));
  CHECK(rig.journal.batch_sizes() == Sizes{1, 4, 3, 5, 2});
}

TEMPLATE_TEST_CASE("batcher: with a parallel rule a second batch starts only at the backlog",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(ParallelRule(2, /*backlog=*/8));
  HoldFirstBatch(rig);
  // 7 queued behind a busy slot: the free one waits; the 8th starts it.
  for (int i = 1; i < 8; ++i) rig.batcher.Submit(i);
  CHECK(rig.batcher.GetStats().in_flight == 1);
  rig.batcher.Submit(8);
  REQUIRE(rig.journal.WaitForBatches(2));
  CHECK(rig.journal.batch_sizes() == Sizes{1, 8});
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(9));
}

TEMPLATE_TEST_CASE("batcher: below the backlog the busy slot takes the queue when it is done",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(ParallelRule(3, /*backlog=*/1000));
  HoldFirstBatch(rig);
  for (int i = 1; i < 20; ++i) rig.batcher.Submit(i);
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(20));
  CHECK(rig.journal.batch_sizes() == Sizes{1, 19});
}

TEMPLATE_TEST_CASE("batcher: with a parallel rule a second batch starts once the first is old",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(ParallelRule(2, /*backlog=*/1000, /*after=*/std::chrono::milliseconds(50)));
  const BatchClock::time_point start = BatchClock::now();
  HoldFirstBatch(rig);
  rig.batcher.Submit(1);
  REQUIRE(rig.journal.WaitForBatches(2));  // while the first is still held
  CHECK(BatchClock::now() - start >= std::chrono::milliseconds(50));
  CHECK(rig.journal.batch_sizes() == Sizes{1, 1});
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(2));
}

TEMPLATE_TEST_CASE("batcher: a slot freed while the rule holds the queue starts it by age",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(ParallelRule(2, /*backlog=*/1000, /*after=*/std::chrono::milliseconds(100)));
  HoldFirstBatch(rig);
  rig.batcher.Submit(1);
  REQUIRE(rig.journal.WaitForBatches(2));  // by age, on the second slot
  rig.batcher.Submit(2);
  rig.batcher.Submit(3);  // both slots busy: queued
  // One batch finishes while the other is held: the free slot waits for
  // the rule, then starts the queue, without the held one finishing.
  rig.ReleaseOne();
  REQUIRE(rig.journal.WaitForAnswers(1));
  REQUIRE(rig.journal.WaitForBatches(3));
  CHECK(rig.journal.answers() == 1);
  CHECK(rig.journal.batch_sizes() == Sizes{1, 1, 2});
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(4));
}

TEMPLATE_TEST_CASE("batcher: a queued item is answered expired at its deadline and never executed",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  AdaptiveBatcherOptions options = Options(100, 1);
  options.expire_on_time = true;
  TestType rig(options);
  HoldFirstBatch(rig, In(std::chrono::seconds(30)));
  const BatchClock::time_point queued = BatchClock::now();
  rig.batcher.Submit(1, queued + std::chrono::milliseconds(200));
  rig.batcher.Submit(2, In(std::chrono::seconds(30)));
  // The only slot is held as long as the test wants: the answer can only
  // come from the deadline.
  REQUIRE(rig.journal.WaitForAnswers(1));
  CHECK(rig.journal.How(1) == "expired");
  CHECK(rig.journal.AnswersOf(1).front().when >= queued + std::chrono::milliseconds(200));
  auto stats = rig.batcher.GetStats();
  CHECK(stats.expired_queued == 1);
  CHECK(stats.queued == 1);
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(3));
  CHECK(rig.journal.batches() == std::vector<std::vector<int>>{{0}, {2}});
}

TEMPLATE_TEST_CASE("batcher: without expire_on_time an expired item is answered at the next batch",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(100, 1));
  HoldFirstBatch(rig);
  rig.batcher.Submit(1, In(std::chrono::milliseconds(20)));
  rig.batcher.Submit(2);
  // Nothing answers it while the slot is held.
  CHECK_FALSE(rig.journal.WaitForAnswers(1, absl::Milliseconds(100)));
  rig.Release();
  REQUIRE(rig.journal.WaitForAnswers(3));
  CHECK(rig.journal.How(1) == "expired");
  CHECK(rig.journal.batches() == std::vector<std::vector<int>>{{0}, {2}});
  CHECK(rig.batcher.GetStats().expired_queued == 1);
}

TEMPLATE_TEST_CASE("batcher: an item already past its deadline is refused at once",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(100, 1));
  rig.batcher.Submit(1, BatchClock::now() - std::chrono::milliseconds(1));
  CHECK(rig.journal.How(1) == "expired");
  CHECK(rig.journal.batches().empty());
  CHECK(rig.batcher.GetStats().expired_queued == 1);
}

TEMPLATE_TEST_CASE("batcher: Shutdown(kRefuse) answers what is queued and waits for batches out",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  TestType rig(Options(100, 1));
  HoldFirstBatch(rig);
  rig.batcher.Submit(1);
  rig.batcher.Submit(2);
  std::atomic<bool> returned{false};
  std::thread shutting([&] {
    rig.batcher.Shutdown(Queued::kRefuse);
    returned = true;
  });
  REQUIRE(rig.journal.WaitForAnswers(2));
  CHECK(rig.journal.How(1) == "shutting down");
  CHECK(rig.journal.How(2) == "shutting down");
  rig.batcher.Submit(3);  // Shutdown has begun
  CHECK(rig.journal.How(3) == "shutting down");
  // The batch out is still held.
  absl::SleepFor(absl::Milliseconds(50));
  CHECK_FALSE(returned);
  rig.Release();
  shutting.join();
  CHECK(rig.journal.How(0) == "executed");
  CHECK(rig.batcher.GetStats().in_flight == 0);
  rig.batcher.Shutdown(Queued::kExecute);  // a second call returns
}

TEMPLATE_TEST_CASE("batcher: Shutdown(kExecute) executes everything queued, then refuses",
                   "[lib/batching]", BlockingRig, AsyncRig) {
  // Two slots, the second held back by the rule until shutdown.
  AdaptiveBatcherOptions options = ParallelRule(2, /*backlog=*/1000, std::chrono::hours(1));
  options.max_batch = 2;
  TestType rig(options);
  HoldFirstBatch(rig);
  for (int i = 1; i <= 5; ++i) rig.batcher.Submit(i);
  CHECK(rig.batcher.GetStats().in_flight == 1);
  std::thread shutting([&] { rig.batcher.Shutdown(Queued::kExecute); });
  // Shutting down, the rule no longer holds the free slot back.
  REQUIRE(rig.journal.WaitForBatches(2));
  CHECK(rig.journal.answers() == 0);
  rig.Release();
  shutting.join();
  for (int i = 0; i <= 5; ++i) CHECK(rig.journal.How(i) == "executed");
  // In queue order; the last two may start on both slots at once.
  std::vector<std::vector<int>> batches = rig.journal.batches();
  REQUIRE(batches.size() == 4);
  std::sort(batches.begin() + 2, batches.end());
  CHECK(batches == std::vector<std::vector<int>>{{0}, {1, 2}, {3, 4}, {5}});
  rig.batcher.Submit(6);
  CHECK(rig.journal.How(6) == "shutting down");
}

TEST_CASE("batcher: new work goes to the thread that went idle last",
          "[lib/batching][concurrent]") {
  // One warm thread does the work of a steady trickle; with one shared
  // wake-up the idle threads took turns (docs/benchmarks.md).
  BlockingRig rig(Options(100, 3));
  constexpr int kItems = 100;
  for (int i = 0; i < kItems; ++i) {
    rig.batcher.Submit(i);
    REQUIRE(rig.journal.WaitForAnswers(i + 1));
    // Time for the thread to finish its loop and wait again.
    absl::SleepFor(absl::Milliseconds(2));
  }
  const std::vector<std::thread::id> threads = rig.runner.plan.threads("Run");
  REQUIRE(threads.size() == kItems);
  int switches = 0;
  for (size_t i = 1; i < threads.size(); ++i) switches += threads[i] != threads[i - 1] ? 1 : 0;
  CHECK(switches <= kItems / 10);
}

TEMPLATE_TEST_CASE("batcher: many threads at once, each item answered exactly once",
                   "[lib/batching][concurrent]", BlockingRig, AsyncRig) {
  AdaptiveBatcherOptions options = Options(/*max_batch=*/16, /*max_in_flight=*/3,
                                           /*max_queued=*/64);
  options.expire_on_time = true;
  TestType rig(options, /*completer_thread=*/true);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 300;  // in steps of 3: a single, a group of 2
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i += 3) {
        const int id = t * kPerThread + i;
        // Some deadlines are short enough to expire while queued.
        const auto deadline =
            i % 5 == 0 ? In(std::chrono::milliseconds(1)) : BatchClock::time_point::max();
        rig.batcher.Submit(id, deadline);
        rig.batcher.SubmitGroup({id + 1, id + 2}, deadline);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(rig.journal.WaitForAnswers(kThreads * kPerThread, absl::Seconds(60)));
  rig.batcher.Shutdown(Queued::kExecute);
  CHECK(rig.journal.answers() == kThreads * kPerThread);
  int wrong = 0;
  for (int id = 0; id < kThreads * kPerThread; ++id) {
    const std::string how = rig.journal.How(id);
    if (how != "executed" && how != "queue full" && how != "expired") ++wrong;
  }
  CHECK(wrong == 0);
  const auto stats = rig.batcher.GetStats();
  CHECK(stats.queued == 0);
  CHECK(stats.in_flight == 0);
  // Every item was executed, refused or expired: nothing counted twice.
  CHECK(stats.items + stats.refused_queue_full + stats.expired_queued ==
        static_cast<uint64_t>(kThreads * kPerThread));
  for (const auto& batch : rig.journal.batches()) CHECK(batch.size() <= 16);
}

TEST_CASE("batcher: destroyed as soon as Shutdown returns, while its last batch finishes elsewhere",
          "[lib/batching][concurrent]") {
  // The executor's thread finishes the last batch; Shutdown may return on
  // the owner's thread the moment the slot is free, and the owner frees the
  // batcher. FinishBatch must not touch it after that (a sanitizer build
  // reports the use after free; CI once caught ResolveBatcher doing it).
  Journal journal;
  HeldSender sender(&journal, /*completer_thread=*/true);
  constexpr int kRounds = 500;
  for (int round = 0; round < kRounds; ++round) {
    auto batcher = std::make_unique<AdaptiveBatcher<int>>(Options(4, 1), &sender);
    batcher->Submit(round);
    batcher->Shutdown(Queued::kRefuse);
    batcher.reset();
  }
  REQUIRE(journal.WaitForAnswers(kRounds));
  for (int round = 0; round < kRounds; ++round) CHECK(journal.How(round) == "executed");
}

}  // namespace
}  // namespace shortener::batching::testing
