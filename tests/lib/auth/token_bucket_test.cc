// The per-key token-bucket rate limiter, driven by a fake clock.
#include "lib/auth/token_bucket.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace shortener::auth {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1700000000);

// Acquires until the first refusal at `now`; returns the number granted.
int DrainAt(RateLimiter& limiter, absl::string_view key, double rate, int burst, absl::Time now,
            RateLimiter::Decision* refusal) {
  for (int granted = 0; granted < 100000; ++granted) {
    RateLimiter::Decision d = limiter.TryAcquire(key, rate, burst, now);
    if (!d.allowed) {
      *refusal = d;
      return granted;
    }
    CHECK(d.retry_after == absl::ZeroDuration());
  }
  return -1;
}

TEST_CASE("a fresh key gets exactly burst requests at once, then waits 1/rate",
          "[lib/auth][ratelimit]") {
  struct Case {
    double rate;
    int burst;
    absl::Duration first_retry;
  };
  for (const Case& c : {Case{10, 5, absl::Milliseconds(100)}, Case{1, 1, absl::Seconds(1)},
                        Case{0.5, 3, absl::Seconds(2)}, Case{1000, 100, absl::Milliseconds(1)},
                        Case{4, 20, absl::Milliseconds(250)}}) {
    INFO("rate " << c.rate << " burst " << c.burst);
    RateLimiter limiter;
    RateLimiter::Decision refusal;
    CHECK(DrainAt(limiter, "k", c.rate, c.burst, kT0, &refusal) == c.burst);
    CHECK_FALSE(refusal.allowed);
    CHECK(refusal.retry_after == c.first_retry);
    // Refusals take nothing: asking again says the same.
    CHECK(limiter.TryAcquire("k", c.rate, c.burst, kT0).retry_after == c.first_retry);
    // Just before the wait is over: still refused, for the remainder.
    const absl::Duration early = absl::Nanoseconds(1);
    RateLimiter::Decision d = limiter.TryAcquire("k", c.rate, c.burst, kT0 + c.first_retry - early);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after == early);
    // At retry_after exactly: one more, then refused again.
    CHECK(limiter.TryAcquire("k", c.rate, c.burst, kT0 + c.first_retry).allowed);
    CHECK_FALSE(limiter.TryAcquire("k", c.rate, c.burst, kT0 + c.first_retry).allowed);
  }
}

TEST_CASE("a request of several tokens takes all or none", "[lib/auth][ratelimit]") {
  RateLimiter limiter;
  // rate 10/s, burst 10: 7 then 3 fit, then nothing.
  CHECK(limiter.TryAcquire("k", 10, 10, kT0, 7).allowed);
  RateLimiter::Decision d = limiter.TryAcquire("k", 10, 10, kT0, 4);
  CHECK_FALSE(d.allowed);
  CHECK(d.retry_after == absl::Milliseconds(100));  // one token short
  CHECK(limiter.TryAcquire("k", 10, 10, kT0, 3).allowed);
  d = limiter.TryAcquire("k", 10, 10, kT0, 2);
  CHECK_FALSE(d.allowed);
  CHECK(d.retry_after == absl::Milliseconds(200));
  // 200 ms later exactly two tokens are back.
  CHECK(limiter.TryAcquire("k", 10, 10, kT0 + absl::Milliseconds(200), 2).allowed);
  CHECK_FALSE(limiter.TryAcquire("k", 10, 10, kT0 + absl::Milliseconds(200)).allowed);
  // More than a full bucket can never be granted, even to a fresh key.
  d = limiter.TryAcquire("fresh", 10, 10, kT0, 11);
  CHECK_FALSE(d.allowed);
  CHECK(d.retry_after == absl::InfiniteDuration());
  CHECK(limiter.TryAcquire("fresh", 10, 10, kT0, 10).allowed);
}

TEST_CASE("tokens refill at the rate and cap at burst", "[lib/auth][ratelimit]") {
  RateLimiter limiter;
  RateLimiter::Decision refusal;
  REQUIRE(DrainAt(limiter, "k", 10, 5, kT0, &refusal) == 5);
  // 350 ms at 10/s: 3 tokens (3.5, rounded down), next one 50 ms later.
  CHECK(DrainAt(limiter, "k", 10, 5, kT0 + absl::Milliseconds(350), &refusal) == 3);
  CHECK(refusal.retry_after == absl::Milliseconds(50));
  // A long idle period refills to burst, never more.
  CHECK(DrainAt(limiter, "k", 10, 5, kT0 + absl::Hours(1), &refusal) == 5);
  // A steady 10/s client is never refused; 11/s is.
  absl::Time t = kT0 + absl::Hours(2);
  REQUIRE(DrainAt(limiter, "k", 10, 5, t, &refusal) == 5);
  int refused = 0;
  for (int i = 0; i < 100; ++i) {
    t += absl::Milliseconds(100);
    if (!limiter.TryAcquire("k", 10, 5, t).allowed) ++refused;
  }
  CHECK(refused == 0);
  int granted = 0;
  for (int i = 0; i < 111; ++i) {  // 10.09 s
    t += absl::Seconds(1) / 11;
    if (limiter.TryAcquire("k", 10, 5, t).allowed) ++granted;
  }
  CHECK(granted == 100);  // 10 s worth at 10/s; the bucket was empty at the start
}

TEST_CASE("a clock going backwards refills nothing", "[lib/auth][ratelimit]") {
  RateLimiter limiter;
  RateLimiter::Decision refusal;
  REQUIRE(DrainAt(limiter, "k", 1, 2, kT0, &refusal) == 2);
  CHECK(DrainAt(limiter, "k", 1, 2, kT0 - absl::Hours(1), &refusal) == 0);
  CHECK(refusal.retry_after == absl::Hours(1) + absl::Seconds(1));
  CHECK(DrainAt(limiter, "k", 1, 2, kT0 + absl::Seconds(1), &refusal) == 1);
}

TEST_CASE("keys have separate buckets", "[lib/auth][ratelimit]") {
  RateLimiter limiter;
  RateLimiter::Decision refusal;
  CHECK(DrainAt(limiter, "tenant-a", 1, 3, kT0, &refusal) == 3);
  CHECK(DrainAt(limiter, "tenant-b", 1, 3, kT0, &refusal) == 3);
  CHECK(DrainAt(limiter, "tenant-c", 5, 10, kT0, &refusal) == 10);
  CHECK_FALSE(limiter.TryAcquire("tenant-a", 1, 3, kT0).allowed);
  CHECK(limiter.size() == 3);
}

TEST_CASE("a changed limit applies from the next call", "[lib/auth][ratelimit]") {
  RateLimiter limiter;
  RateLimiter::Decision refusal;
  REQUIRE(DrainAt(limiter, "k", 1, 2, kT0, &refusal) == 2);
  // Raised burst: the 2 used stay used, 8 more are available.
  CHECK(DrainAt(limiter, "k", 1, 10, kT0, &refusal) == 8);
  // Lowered: nothing until the debt is under the new burst.
  CHECK(DrainAt(limiter, "k", 1, 3, kT0 + absl::Seconds(7), &refusal) == 0);
  CHECK(refusal.retry_after == absl::Seconds(1));
}

TEST_CASE("limits that can never grant fail closed", "[lib/auth][ratelimit]") {
  RateLimiter limiter;
  for (auto [rate, burst] : {std::pair<double, int>{0, 5},
                             {-1, 5},
                             {10, 0},
                             {10, -3},
                             {std::numeric_limits<double>::quiet_NaN(), 5}}) {
    INFO("rate " << rate << " burst " << burst);
    RateLimiter::Decision d = limiter.TryAcquire("k", rate, burst, kT0);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after == absl::InfiniteDuration());
  }
}

TEST_CASE("full buckets are dropped when the map reaches max_keys", "[lib/auth][ratelimit]") {
  RateLimiter limiter(RateLimiterOptions{/*max_keys=*/100});
  for (int i = 0; i < 100; ++i) {
    REQUIRE(limiter.TryAcquire(absl::StrCat("key", i), 1, 5, kT0).allowed);
  }
  CHECK(limiter.size() == 100);
  // One second later every bucket is full again: the next new key sweeps them.
  REQUIRE(limiter.TryAcquire("late", 1, 5, kT0 + absl::Seconds(1)).allowed);
  CHECK(limiter.size() == 1);

  // Buckets still in use are kept; the map grows past max_keys instead of
  // forgetting them, and sweeps again only once it has doubled.
  RateLimiter busy(RateLimiterOptions{/*max_keys=*/10});
  for (int i = 0; i < 30; ++i) {
    REQUIRE(busy.TryAcquire(absl::StrCat("key", i), 1, 5, kT0).allowed);
  }
  CHECK(busy.size() == 30);
  // Those buckets were not forgotten: each still holds 4 tokens, not 5.
  RateLimiter::Decision refusal;
  CHECK(DrainAt(busy, "key0", 1, 5, kT0, &refusal) == 4);
}

TEST_CASE("concurrent callers share one bucket: exactly burst grants in total",
          "[lib/auth][ratelimit][concurrent]") {
  constexpr int kThreads = 4;
  constexpr int kAttemptsPerThread = 5000;
  constexpr int kBurst = 1000;
  for (int round = 0; round < 20; ++round) {
    RateLimiter limiter;
    std::atomic<int> granted{0};
    std::atomic<int> bad_refusals{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        while (!go.load()) std::this_thread::yield();
        for (int i = 0; i < kAttemptsPerThread; ++i) {
          RateLimiter::Decision d = limiter.TryAcquire("shared", 10, kBurst, kT0);
          if (d.allowed) {
            granted.fetch_add(1);
          } else if (d.retry_after != absl::Milliseconds(100)) {
            bad_refusals.fetch_add(1);
          }
          // Other keys too, so the threads also contend on the map.
          limiter.TryAcquire(absl::StrCat("own", i % 7), 10, kBurst, kT0);
        }
      });
    }
    go.store(true);
    for (std::thread& t : threads) t.join();
    INFO("round " << round);
    CHECK(granted.load() == kBurst);
    CHECK(bad_refusals.load() == 0);
  }
}

}  // namespace
}  // namespace shortener::auth
