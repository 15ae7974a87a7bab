// The Clock seam: one contract both implementations pass, and what only the
// manual clock does.
#include "lib/common/clock.h"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "absl/time/clock.h"

namespace shortener {
namespace {

// What every Clock promises: a time near "now" for the system one and the
// configured one for the manual one, and never backwards between two reads
// when nobody sets it.
void CheckClockContract(const Clock& clock, absl::Time expected_near, absl::Duration tolerance) {
  const absl::Time first = clock.Now();
  CHECK(absl::AbsDuration(first - expected_near) <= tolerance);
  absl::Time previous = first;
  for (int i = 0; i < 1000; ++i) {
    const absl::Time now = clock.Now();
    REQUIRE(now >= previous);
    previous = now;
  }
}

TEST_CASE("clock: the system clock reads the machine's time", "[lib/common][clock][concurrent]") {
  CheckClockContract(SystemClock(), absl::Now(), absl::Seconds(1));
  CHECK(&SystemClock() == &SystemClock());
}

TEST_CASE("clock: a manual clock stands still until set or advanced",
          "[lib/common][clock][concurrent]") {
  ManualClock clock;
  CheckClockContract(clock, absl::FromUnixSeconds(1767225600), absl::ZeroDuration());
  clock.Advance(absl::Minutes(5));
  CHECK(clock.Now() == absl::FromUnixSeconds(1767225600 + 300));
  clock.Set(absl::FromUnixSeconds(10));
  CHECK(clock.Now() == absl::FromUnixSeconds(10));
  ManualClock other(absl::FromUnixSeconds(42));
  CHECK(other.Now() == absl::FromUnixSeconds(42));
}

TEST_CASE("clock: a manual clock is read and advanced from many threads",
          "[lib/common][clock][concurrent]") {
  ManualClock clock(absl::UnixEpoch());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&clock] {
      for (int i = 0; i < 1000; ++i) {
        clock.Advance(absl::Milliseconds(1));
        (void)clock.Now();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(clock.Now() == absl::UnixEpoch() + absl::Seconds(4));
}

}  // namespace
}  // namespace shortener
