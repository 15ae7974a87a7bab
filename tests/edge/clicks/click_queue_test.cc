#include "edge/clicks/click_queue.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace shortener::edge {
namespace {

ClickEvent Event(const std::string& code) {
  return MakeClickEvent(code, absl::FromUnixSeconds(1), "10.0.0.1", "ua", "", 302);
}

std::chrono::steady_clock::time_point In(int ms) {
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
}

TEST_CASE("the queue refuses and counts events past its event bound", "[edge/clicks]") {
  ClickQueueOptions options;
  options.max_events = 3;
  ClickQueue queue(options);
  for (int i = 0; i < 3; ++i) CHECK(queue.Push(Event(absl::StrCat("c", i))));
  CHECK_FALSE(queue.Push(Event("c3")));
  CHECK_FALSE(queue.Push(Event("c4")));
  ClickQueueStats stats = queue.Stats();
  CHECK(stats.pushed == 3);
  CHECK(stats.dropped_full == 2);
  CHECK(stats.events == 3);

  const std::vector<ClickEvent> popped = queue.Pop(2);
  REQUIRE(popped.size() == 2);
  CHECK(popped[0].code == "c0");
  CHECK(popped[1].code == "c1");
  CHECK(queue.Push(Event("c5")));  // room again
  CHECK(queue.Stats().events == 2);
}

TEST_CASE("the queue refuses events past its byte bound", "[edge/clicks]") {
  ClickQueueOptions options;
  options.max_bytes = 2 * Event("c0").ApproximateBytes();
  ClickQueue queue(options);
  CHECK(queue.Push(Event("c0")));
  CHECK(queue.Push(Event("c1")));
  CHECK_FALSE(queue.Push(Event("c2")));
  CHECK(queue.Stats().bytes == options.max_bytes);
  queue.Pop(10);
  CHECK(queue.Stats().bytes == 0);
}

TEST_CASE("WaitForBatch returns at the deadline with fewer events and at once with enough",
          "[edge/clicks]") {
  ClickQueue queue(ClickQueueOptions{});
  queue.Push(Event("a"));
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(queue.WaitForBatch(2, In(50)));
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(45));
  queue.Push(Event("b"));
  CHECK(queue.WaitForBatch(2, In(10'000)));
}

TEST_CASE("a closed queue wakes its consumer and refuses pushes", "[edge/clicks]") {
  ClickQueue queue(ClickQueueOptions{});
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    queue.Close();
  });
  const auto start = std::chrono::steady_clock::now();
  const bool full = queue.WaitForBatch(5, In(10'000));
  closer.join();
  CHECK_FALSE(full);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK_FALSE(queue.Push(Event("late")));
  CHECK(queue.Stats().dropped_full == 1);
}

TEST_CASE("concurrent producers lose nothing below the bound and count every drop above it",
          "[edge/clicks][concurrent]") {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 5000;
  ClickQueueOptions options;
  options.max_events = 3000;
  ClickQueue queue(options);
  std::vector<std::string> received;
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    while (true) {
      const bool finished = done.load();
      queue.WaitForBatch(100, In(5));
      for (ClickEvent& e : queue.Pop(1000)) received.push_back(std::move(e.code));
      if (finished && queue.Stats().events == 0) break;
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&queue, p] {
      for (int i = 0; i < kPerProducer; ++i) queue.Push(Event(absl::StrCat(p, "-", i)));
    });
  }
  for (std::thread& t : producers) t.join();
  done.store(true);
  consumer.join();

  const ClickQueueStats stats = queue.Stats();
  CHECK(stats.pushed + stats.dropped_full == kProducers * kPerProducer);
  CHECK(received.size() == stats.pushed);
  CHECK(std::set<std::string>(received.begin(), received.end()).size() == received.size());
  CHECK(stats.events == 0);
  CHECK(stats.bytes == 0);
}

}  // namespace
}  // namespace shortener::edge

namespace shortener::edge {
namespace {

// What a click costs an event loop: building the event (the few string
// copies) and pushing it, with the sender's consumer popping meanwhile.
// Run by hand: edge_clicks_test "[bench]".
TEST_CASE("cost of recording one click on the hot path", "[edge/clicks][.][bench]") {
  constexpr int kEvents = 1'000'000;
  ClickQueueOptions options;
  options.max_events = 100'000;
  ClickQueue queue(options);
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    while (!done.load()) {
      queue.WaitForBatch(1000, In(1000));
      queue.Pop(1000);
    }
  });
  const std::string ua =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
      "Gecko) Version/17.1 Mobile/15E148 Safari/604.1";
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kEvents; ++i) {
    queue.Push(MakeClickEvent("Ab3xYz9", absl::Now(), "203.0.113.7", ua, "", 302));
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  done.store(true);
  queue.Close();
  consumer.join();
  const double ns = std::chrono::duration<double, std::nano>(elapsed).count() / kEvents;
  WARN("per click: " << ns << " ns; dropped " << queue.Stats().dropped_full << " of " << kEvents);
}

}  // namespace
}  // namespace shortener::edge
