#include "lib/common/thread_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "absl/time/clock.h"
#include "lib/common/status_macros.h"
#include "tests/support/status_matchers.h"

namespace shortener {
namespace {

TEST_CASE("ThreadPool runs every scheduled closure, including those queued at destruction",
          "[lib/common][concurrent]") {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(4);
    for (int i = 0; i < 10000; ++i) REQUIRE(pool.Schedule([&ran] { ran.fetch_add(1); }).ok());
  }
  CHECK(ran.load() == 10000);
}

// Blocks the pool's threads until Open().
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void WaitForWaiters(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return waiting_ >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST_CASE("ThreadPool refuses closures beyond max_queued, naming the pool, and recovers",
          "[lib/common][concurrent]") {
  using shortener::testing::HasCodeAndMessage;
  Gate gate;
  std::atomic<int> ran{0};
  ThreadPoolOptions options;
  options.name = "test pool";
  options.threads = 2;
  options.max_queued = 3;
  ThreadPool pool(options);
  // Both threads busy: what follows waits in the queue.
  for (int i = 0; i < 2; ++i) REQUIRE(pool.Schedule([&] { gate.Wait(); }).ok());
  gate.WaitForWaiters(2);
  for (int i = 0; i < 3; ++i) REQUIRE(pool.Schedule([&ran] { ran.fetch_add(1); }).ok());
  // The fourth waiting closure is refused and never runs; what it owns is
  // released at once.
  auto owned = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owned;
  absl::Status refused = pool.Schedule([&ran, owned = std::move(owned)] { ran.fetch_add(100); });
  CHECK_THAT(refused, HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                                        "test pool is full: 3 tasks are waiting; retry later"));
  CHECK(watch.expired());
  ThreadPool::Stats stats = pool.GetStats();
  CHECK(stats.queued == 3);
  CHECK(stats.refused == 1);
  CHECK(stats.scheduled == 5);

  gate.Open();
  // Room again as soon as the threads take what waits.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (ran.load() < 3 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  REQUIRE(ran.load() == 3);
  REQUIRE(pool.Schedule([&ran] { ran.fetch_add(1); }).ok());
  while (ran.load() < 4 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  CHECK(ran.load() == 4);
}

TEST_CASE("ThreadPool counts a max_queued of 0 as 1", "[lib/common][concurrent]") {
  Gate gate;
  ThreadPoolOptions options;
  options.max_queued = 0;
  ThreadPool pool(options);
  REQUIRE(pool.Schedule([&] { gate.Wait(); }).ok());
  gate.WaitForWaiters(1);
  CHECK(pool.Schedule([] {}).ok());
  CHECK(absl::IsResourceExhausted(pool.Schedule([] {})));
  gate.Open();
}

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  SHORTENER_ASSIGN_OR_RETURN(int h, Half(x));
  SHORTENER_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int x) {
  SHORTENER_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST_CASE("Status macros return the first error and pass values through",
          "[lib/common][concurrent]") {
  using shortener::testing::HasCodeAndMessage;
  using shortener::testing::IsOk;
  CHECK(*Quarter(8) == 2);
  CHECK_THAT(Quarter(6), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "odd"));
  CHECK_THAT(Quarter(3), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "odd"));
  CHECK_THAT(CheckEven(4), IsOk());
  CHECK_THAT(CheckEven(5), HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "odd"));
}

}  // namespace
}  // namespace shortener
