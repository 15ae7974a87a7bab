// InvalidationHub: what subscribers receive, in which order and batching,
// and what happens to a subscriber that does not keep up.
#include "services/shorten/invalidation_hub.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace shortener::service {
namespace {

// A subscriber as the stream adapter is one, minus gRPC: `wake` counts and
// signals; the test Takes messages on its own thread. The wake state is
// shared with the hub's callback, so the hub may outlive the subscriber (and
// wake it while it is being destroyed).
struct FakeSubscriber {
  struct WakeState {
    std::mutex mu;
    std::condition_variable woken;
    int wakes = 0;
  };

  explicit FakeSubscriber(InvalidationHub& hub)
      : state(std::make_shared<WakeState>()), subscription(*hub.Subscribe([s = state] {
          std::lock_guard<std::mutex> lock(s->mu);
          s->wakes += 1;
          s->woken.notify_all();
        })) {}

  // Waits until woken more than `seen` times (up to 5 s); the new count.
  int WaitForWake(int seen) {
    std::unique_lock<std::mutex> lock(state->mu);
    state->woken.wait_for(lock, std::chrono::seconds(5), [&] { return state->wakes > seen; });
    return state->wakes;
  }
  int Wakes() {
    std::lock_guard<std::mutex> lock(state->mu);
    return state->wakes;
  }
  // Every code of the messages pending now (none: empty); drop_all
  // messages count in `drop_alls`.
  std::vector<std::string> TakeAll(int* drop_alls = nullptr, int* messages = nullptr) {
    std::vector<std::string> codes;
    while (auto batch = subscription->Take()) {
      if (messages != nullptr) *messages += 1;
      if (batch->drop_all && drop_alls != nullptr) *drop_alls += 1;
      codes.insert(codes.end(), batch->codes.begin(), batch->codes.end());
    }
    return codes;
  }

  std::shared_ptr<WakeState> state;
  std::shared_ptr<InvalidationHub::Subscription> subscription;
};

InvalidationHubOptions FastFlush() {
  InvalidationHubOptions options;
  options.flush_interval = absl::Milliseconds(1);
  return options;
}

TEST_CASE("a new subscription's first message is drop_all, alone",
          "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber sub(hub);
  std::optional<InvalidationBatch> first = sub.subscription->Take();
  REQUIRE(first.has_value());
  CHECK(first->drop_all);
  CHECK(first->codes.empty());
  CHECK_FALSE(sub.subscription->Take().has_value());
  CHECK(hub.subscriber_count() == 1);
}

TEST_CASE("codes published before the first Take are covered by the initial drop_all",
          "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber sub(hub);
  hub.Publish("aaaaaaa");
  sub.WaitForWake(0);
  int drop_alls = 0, messages = 0;
  CHECK(sub.TakeAll(&drop_alls, &messages).empty());
  CHECK(drop_alls == 1);
  CHECK(messages == 1);
}

TEST_CASE("published codes reach every subscriber", "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber a(hub), b(hub);
  a.TakeAll();
  b.TakeAll();
  hub.Publish("Code001");
  a.WaitForWake(0);
  b.WaitForWake(0);
  CHECK(a.TakeAll() == std::vector<std::string>{"Code001"});
  CHECK(b.TakeAll() == std::vector<std::string>{"Code001"});
  CHECK(hub.GetStats().codes == 1);
}

TEST_CASE("hub stats tell the subscribers and the codes each has not taken yet",
          "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber a(hub), b(hub);
  a.TakeAll();
  b.TakeAll();
  hub.Publish("Code001");
  a.WaitForWake(0);
  b.WaitForWake(0);
  a.TakeAll();  // b keeps its code
  const InvalidationHub::Stats stats = hub.GetStats();
  CHECK(stats.subscribers == 2);
  CHECK(stats.pending == 0);
  CHECK(stats.backlog == 1);
  CHECK(stats.max_backlog == 1);
}

TEST_CASE("codes published close together share one message", "[services/shorten][invalidation]") {
  InvalidationHubOptions options;
  options.flush_interval = absl::Milliseconds(200);
  InvalidationHub hub(options);
  FakeSubscriber sub(hub);
  sub.TakeAll();
  absl::Time start = absl::Now();
  for (int i = 0; i < 100; ++i) hub.Publish(absl::StrCat("code", i));
  hub.Publish("code7");  // a repeat within the window is sent once
  sub.WaitForWake(0);
  // Flushed once the window of the first code is over, not before.
  CHECK(absl::Now() - start >= absl::Milliseconds(150));
  int messages = 0;
  std::vector<std::string> codes = sub.TakeAll(nullptr, &messages);
  CHECK(messages == 1);
  REQUIRE(codes.size() == 100);
  CHECK(codes.front() == "code0");
  CHECK(codes.back() == "code99");
  CHECK(hub.GetStats().batches == 1);
}

TEST_CASE(
    "a full message is flushed without waiting for the window, and messages carry at most "
    "max_codes_per_message codes",
    "[services/shorten][invalidation]") {
  InvalidationHubOptions options;
  options.flush_interval = absl::Seconds(30);
  options.max_codes_per_message = 50;
  InvalidationHub hub(options);
  FakeSubscriber sub(hub);
  sub.TakeAll();
  for (int i = 0; i < 120; ++i) hub.Publish(absl::StrCat("c", i));
  // 50 codes fill a message: flushed at once (not after 30 s); the rest
  // may wait for its window.
  absl::Time start = absl::Now();
  sub.WaitForWake(0);
  CHECK(absl::Now() - start < absl::Seconds(10));
  size_t total = 0;
  while (auto batch = sub.subscription->Take()) {
    CHECK_FALSE(batch->drop_all);
    CHECK(batch->codes.size() >= 1);
    CHECK(batch->codes.size() <= 50);
    total += batch->codes.size();
  }
  CHECK(total >= 50);
  CHECK(total <= 120);
}

TEST_CASE("a subscriber that falls behind gets one drop_all instead of its backlog",
          "[services/shorten][invalidation]") {
  InvalidationHubOptions options = FastFlush();
  options.max_pending_codes = 100;
  InvalidationHub hub(options);
  FakeSubscriber slow(hub), fast(hub);
  slow.TakeAll();
  fast.TakeAll();
  int fast_codes = 0;
  for (int i = 0; i < 150; ++i) {
    int wakes = fast.Wakes();
    hub.Publish(absl::StrCat("c", i));
    fast.WaitForWake(wakes);
    fast_codes += static_cast<int>(fast.TakeAll().size());
  }
  CHECK(fast_codes == 150);  // the reader that keeps up misses nothing
  int drop_alls = 0, messages = 0;
  std::vector<std::string> backlog = slow.TakeAll(&drop_alls, &messages);
  // Once more than 100 codes waited, they were replaced by drop_all; what
  // came after it is absorbed by it too (it is still pending).
  CHECK(drop_alls == 1);
  CHECK(messages == 1);
  CHECK(backlog.empty());
  CHECK(hub.GetStats().overflows == 1);
  // ... and the subscriber is back to codes afterwards.
  int wakes = slow.Wakes();
  hub.Publish("after");
  slow.WaitForWake(wakes);
  CHECK(slow.TakeAll() == std::vector<std::string>{"after"});
}

TEST_CASE("DropAll makes every subscriber's next message drop_all, absorbing pending codes",
          "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber a(hub), b(hub);
  a.TakeAll();
  b.TakeAll();
  hub.Publish("pending");
  a.WaitForWake(0);
  int wakes = a.Wakes();
  hub.DropAll();
  CHECK(a.Wakes() > wakes);  // DropAll wakes at once, on the calling thread
  int drop_alls = 0;
  CHECK(a.TakeAll(&drop_alls).empty());
  CHECK(drop_alls == 1);
  drop_alls = 0;
  b.TakeAll(&drop_alls);
  CHECK(drop_alls == 1);
  CHECK(hub.GetStats().drop_alls == 1);
}

TEST_CASE("an unsubscribed subscription is closed and no longer woken",
          "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber gone(hub), stays(hub);
  gone.TakeAll();
  stays.TakeAll();
  hub.Unsubscribe(gone.subscription);
  CHECK(gone.subscription->closed());
  CHECK(hub.subscriber_count() == 1);
  int gone_wakes = gone.Wakes();
  hub.Publish("x");
  stays.WaitForWake(0);
  CHECK(stays.TakeAll() == std::vector<std::string>{"x"});
  CHECK(gone.Wakes() == gone_wakes);
  CHECK_FALSE(gone.subscription->Take().has_value());
}

TEST_CASE("subscriptions beyond max_subscribers are refused until one leaves",
          "[services/shorten][invalidation]") {
  InvalidationHubOptions options = FastFlush();
  options.max_subscribers = 2;
  InvalidationHub hub(options);
  FakeSubscriber a(hub), b(hub);
  absl::StatusOr<std::shared_ptr<InvalidationHub::Subscription>> third = hub.Subscribe([] {});
  REQUIRE_FALSE(third.ok());
  CHECK(absl::IsResourceExhausted(third.status()));
  CHECK(third.status().message() ==
        "invalidation subscribers: 2 are subscribed, the limit of this replica "
        "(--max_invalidation_subscribers); subscribe to another replica or retry later");
  CHECK(hub.subscriber_count() == 2);
  // The others still get every code.
  a.TakeAll();
  hub.Publish("x");
  a.WaitForWake(0);
  CHECK(a.TakeAll() == std::vector<std::string>{"x"});
  hub.Unsubscribe(b.subscription);
  absl::StatusOr<std::shared_ptr<InvalidationHub::Subscription>> again = hub.Subscribe([] {});
  REQUIRE(again.ok());
  CHECK(hub.subscriber_count() == 2);
}

TEST_CASE("Close closes and wakes every subscription; later subscriptions start closed",
          "[services/shorten][invalidation]") {
  InvalidationHub hub(FastFlush());
  FakeSubscriber a(hub);
  hub.Close();
  CHECK(a.Wakes() == 1);
  CHECK(a.subscription->closed());
  CHECK_FALSE(a.subscription->Take().has_value());
  FakeSubscriber late(hub);
  CHECK(late.subscription->closed());
  CHECK(hub.subscriber_count() == 0);
  hub.Publish("ignored");  // no effect, no crash
}

TEST_CASE("publishers on many threads reach readers on many threads",
          "[services/shorten][concurrent]") {
  InvalidationHubOptions options;
  options.flush_interval = absl::Milliseconds(2);
  options.max_codes_per_message = 64;
  options.max_pending_codes = 1 << 20;  // no overflow in this test
  InvalidationHub hub(options);
  constexpr int kPublishers = 4, kCodesEach = 500, kReaders = 4;
  std::vector<std::unique_ptr<FakeSubscriber>> subs;
  for (int i = 0; i < kReaders; ++i) subs.push_back(std::make_unique<FakeSubscriber>(hub));
  constexpr size_t kTotal = kPublishers * kCodesEach;
  std::vector<std::set<std::string>> seen(kReaders);
  std::vector<int> drop_alls(kReaders, 0);
  // Each subscription's first message (drop_all) is taken before anything
  // is published: codes flushed while it is still pending are absorbed by it
  // (by design), so a reader that started late would miss them.
  for (int r = 0; r < kReaders; ++r) REQUIRE(subs[r]->TakeAll(&drop_alls[r]).empty());
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      // Reads until it has seen every code (or gives up after 20 s).
      absl::Time give_up = absl::Now() + absl::Seconds(20);
      int wakes = 0;
      while (absl::Now() < give_up) {
        std::vector<std::string> codes = subs[r]->TakeAll(&drop_alls[r]);
        seen[r].insert(codes.begin(), codes.end());
        if (seen[r].size() >= kTotal) return;
        wakes = subs[r]->WaitForWake(wakes);
      }
    });
  }
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&hub, p] {
      for (int i = 0; i < kCodesEach; ++i) hub.Publish(absl::StrCat("p", p, "-", i));
    });
  }
  for (std::thread& t : publishers) t.join();
  for (std::thread& t : readers) t.join();
  CHECK(hub.GetStats().codes == kPublishers * kCodesEach);
  for (int r = 0; r < kReaders; ++r) {
    CHECK(drop_alls[r] == 1);  // the initial one only
    CHECK(seen[r].size() == kTotal);
  }
}

}  // namespace
}  // namespace shortener::service
