// PeriodicTask: runs at once, then every period (or at once again when
// asked), and its destructor neither waits out the period nor returns while
// a run is in progress.
#include "services/shorten/periodic_task.h"

#include <atomic>
#include <catch2/catch.hpp>

#include "absl/time/clock.h"

namespace shortener::service {
namespace {

TEST_CASE("a periodic task runs at start and again each period", "[services/shorten][concurrent]") {
  std::atomic<int> runs{0};
  {
    PeriodicTask task(absl::Milliseconds(20), [&runs] { ++runs; });
    absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (runs.load() < 3 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
  }
  CHECK(runs.load() >= 3);
}

TEST_CASE("destroying a periodic task does not wait for its period",
          "[services/shorten][concurrent]") {
  std::atomic<int> runs{0};
  absl::Time start = absl::Now();
  {
    PeriodicTask task(absl::Hours(24), [&runs] { ++runs; });
    absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (runs.load() < 1 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  }
  CHECK(runs.load() == 1);
  CHECK(absl::Now() - start < absl::Seconds(5));
}

TEST_CASE("RunSoon runs the task again without waiting out its period, once per call",
          "[services/shorten][concurrent]") {
  std::atomic<int> runs{0};
  PeriodicTask task(absl::Hours(24), [&runs] { ++runs; });
  absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (runs.load() < 1 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  REQUIRE(runs.load() == 1);
  task.RunSoon();
  while (runs.load() < 2 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
  CHECK(runs.load() == 2);
  // Nothing asked: no more runs for a day.
  absl::SleepFor(absl::Milliseconds(50));
  CHECK(runs.load() == 2);
}

TEST_CASE("destroying a periodic task waits for the run in progress",
          "[services/shorten][concurrent]") {
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  {
    PeriodicTask task(absl::Hours(24), [&] {
      started = true;
      absl::SleepFor(absl::Milliseconds(100));
      finished = true;
    });
    while (!started.load()) absl::SleepFor(absl::Milliseconds(1));
  }
  CHECK(finished.load());
}

}  // namespace
}  // namespace shortener::service
