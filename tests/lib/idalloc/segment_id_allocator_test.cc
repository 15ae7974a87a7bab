#include "lib/idalloc/segment_id_allocator.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "lib/idalloc/segment_source.h"
#include "tests/lib/idalloc/outage_util.h"
#include "tests/support/status_matchers.h"

namespace shortener::idalloc {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

IdAllocatorOptions FixedStep(int64_t step) {
  IdAllocatorOptions options;
  options.initial_step = options.min_step = options.max_step = step;
  options.lease_retry_backoff = absl::Milliseconds(20);
  return options;
}

// Draws `count` ids in this thread; stops at the first error.
absl::StatusOr<std::vector<int64_t>> Draw(SegmentIdAllocator& allocator, int64_t count) {
  std::vector<int64_t> ids;
  ids.reserve(count);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (int64_t i = 0; i < count; ++i) {
    absl::StatusOr<int64_t> id = allocator.Next(deadline);
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  return ids;
}

// Draws `per_thread` ids in each of `threads` threads; returns them all.
std::vector<int64_t> DrawConcurrently(SegmentIdAllocator& allocator, int threads,
                                      int64_t per_thread) {
  std::vector<std::vector<int64_t>> drawn(threads);
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      absl::StatusOr<std::vector<int64_t>> ids = Draw(allocator, per_thread);
      if (ids.ok()) {
        drawn[t] = std::move(*ids);
      } else {
        failures.fetch_add(1);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  CHECK(failures.load() == 0);
  std::vector<int64_t> all;
  for (const std::vector<int64_t>& ids : drawn) all.insert(all.end(), ids.begin(), ids.end());
  return all;
}

// Waits until the background leaser has as many segments ready as it keeps
// once the current segment passed its prefetch point (prefetch_depth), i.e.
// until it has caught up. `installed` is the number of segments callers have
// switched to so far (leases - installed are ready). Polls counters, not the
// clock: on a loaded machine the leaser may take long to be scheduled, which
// is not what the tests below are about. Gives up (returns false) after 10 s.
bool WaitForPrefetch(const SegmentIdAllocator& allocator, int64_t installed) {
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (true) {
    const SegmentIdAllocator::Stats stats = allocator.GetStats();
    if (stats.leases - installed >= stats.prefetch_depth) return true;
    if (absl::Now() > give_up) return false;
    absl::SleepFor(absl::Milliseconds(1));
  }
}

void CheckAllUnique(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  if (!ids.empty()) CHECK(ids.front() >= 1);
}

TEST_CASE("ids are unique across 8 threads drawing 200k each", "[lib/idalloc][concurrent]") {
  InMemorySegmentSource source;
  SegmentIdAllocator allocator(&source, IdAllocatorOptions{});
  std::vector<int64_t> ids = DrawConcurrently(allocator, 8, 200000);
  CHECK(ids.size() == 8 * 200000);
  CheckAllUnique(ids);
  CHECK(allocator.GetStats().ids_issued >= 8 * 200000);
}

TEST_CASE("ids are unique across 8 threads when tiny segments switch constantly",
          "[lib/idalloc][concurrent]") {
  InMemorySegmentSource source;
  IdAllocatorOptions options = FixedStep(64);
  options.prefetch_threshold = 0.5;
  SegmentIdAllocator allocator(&source, options);
  std::vector<int64_t> ids = DrawConcurrently(allocator, 8, 50000);
  CHECK(ids.size() == 8 * 50000);
  CheckAllUnique(ids);
  CHECK(source.lease_count() >= 8 * 50000 / 64);
}

TEST_CASE("the constructor does not block and the first Next waits for the first lease",
          "[lib/idalloc]") {
  InMemorySegmentSource source;
  source.SetLatency(absl::Seconds(2));
  const absl::Time start = absl::Now();
  SegmentIdAllocator allocator(&source, IdAllocatorOptions{});
  // Far below the lease's 2 s: the constructor did not wait for it.
  CHECK(absl::Now() - start < absl::Seconds(1));
  absl::StatusOr<int64_t> id = allocator.Next(absl::Now() + absl::Seconds(30));
  REQUIRE_THAT(id, IsOk());
  CHECK(*id == 1);
  CHECK(absl::Now() - start >= absl::Milliseconds(1900));
  CHECK(allocator.GetStats().waits == 1);
}

TEST_CASE("the next segment is prefetched in the background so a switch never waits",
          "[lib/idalloc]") {
  InMemorySegmentSource source;
  IdAllocatorOptions options = FixedStep(1000);  // prefetch point: offset 100
  options.max_prefetched_segments = 1;           // a plain double buffer
  SegmentIdAllocator allocator(&source, options);
  REQUIRE_THAT(Draw(allocator, 1), IsOk());  // the first segment (may wait)
  const SegmentIdAllocator::Stats before = allocator.GetStats();
  REQUIRE(before.leases == 1);

  for (int64_t segment = 1; segment <= 8; ++segment) {
    // Past the prefetch point: the next segment is leased with no caller
    // asking for it...
    REQUIRE_THAT(Draw(allocator, 200), IsOk());
    REQUIRE(WaitForPrefetch(allocator, segment));
    CHECK(allocator.GetStats().leases == segment + 1);
    // ...so the caller who uses it up switches without waiting.
    REQUIRE_THAT(Draw(allocator, 800), IsOk());
  }
  const SegmentIdAllocator::Stats after = allocator.GetStats();
  CHECK(after.waits == before.waits);
  CHECK(after.leases - before.leases == 8);
  CHECK(after.prefetch_depth == 1);
}

TEST_CASE("the step doubles when segments go fast and halves when they go slowly",
          "[lib/idalloc]") {
  InMemorySegmentSource source;
  ManualClock clock(absl::FromUnixSeconds(1700000000));
  IdAllocatorOptions options;
  options.initial_step = 100;
  options.min_step = 100;
  options.max_step = 800;
  options.target_segment_lifetime = absl::Minutes(15);
  options.max_prefetched_segments = 1;  // only the step adapts here
  options.clock = &clock;
  SegmentIdAllocator allocator(&source, options);

  // Fast: the clock stands still, every segment lasts 0 s.
  REQUIRE_THAT(Draw(allocator, 6000), IsOk());
  std::vector<int64_t> steps = source.requested_steps();
  REQUIRE(steps.size() >= 5);
  CHECK(steps.front() == 100);
  CHECK(std::is_sorted(steps.begin(), steps.end()));
  CHECK(steps.back() == 800);
  CHECK(allocator.GetStats().current_step == 800);

  // Slow: an hour passes for every 100 ids, so every segment outlives twice
  // the target.
  const size_t slow_start = steps.size();
  for (int i = 0; i < 40; ++i) {
    clock.Advance(absl::Hours(1));
    REQUIRE_THAT(Draw(allocator, 100), IsOk());
  }
  steps = source.requested_steps();
  std::vector<int64_t> slow(steps.begin() + slow_start, steps.end());
  REQUIRE(slow.size() >= 3);
  CHECK(std::is_sorted(slow.rbegin(), slow.rend()));
  CHECK(slow.back() == 100);
  CHECK(allocator.GetStats().current_step == 100);
}

TEST_CASE("more segments are kept ahead while leases outlast segments at max_step",
          "[lib/idalloc]") {
  InMemorySegmentSource source;
  ManualClock clock(absl::FromUnixSeconds(1700000000));
  IdAllocatorOptions options = FixedStep(1000);
  options.max_prefetched_segments = 3;
  options.clock = &clock;
  SegmentIdAllocator allocator(&source, options);
  // Every lease takes far longer than a segment lasts: each switch waits, and
  // each wait keeps one more segment ahead, up to the maximum.
  source.SetLatency(absl::Milliseconds(30));
  REQUIRE_THAT(Draw(allocator, 5000), IsOk());
  CHECK(allocator.GetStats().prefetch_depth == 3);

  // Leases are quick and segments last hours, and ids are drawn at a pace
  // that leaves the leaser time to prefetch (the test waits for it past each
  // prefetch point): back to a double buffer, without a caller waiting.
  source.SetLatency(absl::ZeroDuration());
  int64_t installed = 5;  // 5000 ids of 1000-id segments
  REQUIRE(WaitForPrefetch(allocator, installed));
  const int64_t waits_before = allocator.GetStats().waits;
  for (int i = 0; i < 10; ++i) {
    clock.Advance(absl::Hours(1));
    REQUIRE_THAT(Draw(allocator, 200), IsOk());  // switches, then passes the prefetch point
    ++installed;
    REQUIRE(WaitForPrefetch(allocator, installed));
    REQUIRE_THAT(Draw(allocator, 800), IsOk());
  }
  CHECK(allocator.GetStats().prefetch_depth == 1);
  CHECK(allocator.GetStats().current_step == 1000);
  CHECK(allocator.GetStats().waits == waits_before);
}

TEST_CASE(
    "an unavailable source makes Next fail UNAVAILABLE within its deadline and "
    "recovers without a restart",
    "[lib/idalloc]") {
  InMemorySegmentSource source;
  const IdAllocatorOptions options = FixedStep(100);
  SegmentIdAllocator allocator(&source, options);
  absl::StatusOr<std::vector<int64_t>> before = Draw(allocator, 300);
  REQUIRE_THAT(before, IsOk());

  source.SetAvailable(false);
  // The current and the prefetched segments still serve a few hundred ids.
  const int64_t most = 100 * (1 + options.max_prefetched_segments);
  const OutageDraw draw = DrawUntilFailure(allocator, most, absl::Milliseconds(300), *before);
  const absl::Status& failure = draw.failure;
  const absl::Duration failed_after = draw.failed_after;
  const int64_t served = draw.served;
  CHECK(served <= most);
  CHECK_THAT(failure, HasCodeAndMessage(absl::StatusCode::kUnavailable,
                                        "no id segment available before the deadline"));
  CHECK_THAT(failure,
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "in-memory source is unavailable"));
  CHECK(failed_after >= absl::Milliseconds(250));
  // Bounded, not tight: the deadline plus slack for a loaded machine.
  CHECK(failed_after < absl::Milliseconds(300) + absl::Milliseconds(1500));

  source.SetAvailable(true);
  absl::StatusOr<std::vector<int64_t>> after = Draw(allocator, 500);
  REQUIRE_THAT(after, IsOk());
  CHECK(after->front() > *std::max_element(before->begin(), before->end()));
  before->insert(before->end(), after->begin(), after->end());
  CheckAllUnique(*before);
}

TEST_CASE("a hanging source makes Next fail at the caller's deadline", "[lib/idalloc]") {
  InMemorySegmentSource source;
  source.SetLatency(absl::Seconds(10));
  IdAllocatorOptions options;
  // Bounds the destructor's wait; longer than the check below may take, so
  // the lease is still in progress when Next gives up.
  options.lease_timeout = absl::Seconds(2);
  SegmentIdAllocator allocator(&source, options);
  const absl::Time start = absl::Now();
  CHECK_THAT(allocator.Next(start + absl::Milliseconds(200)),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "lease in progress"));
  // Bounded by the deadline plus slack, far below the source's 10 s.
  CHECK(absl::Now() - start < absl::Milliseconds(200) + absl::Milliseconds(1500));
}

TEST_CASE("an unknown sequence makes Next fail UNAVAILABLE naming the cause", "[lib/idalloc]") {
  InMemorySegmentSource source;
  IdAllocatorOptions options;
  options.sequence = "no-such-sequence";
  SegmentIdAllocator allocator(&source, options);
  CHECK_THAT(allocator.Next(absl::Now() + absl::Milliseconds(200)),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, "unknown sequence"));
}

TEST_CASE("an id that is ready is returned even past the deadline", "[lib/idalloc]") {
  InMemorySegmentSource source;
  SegmentIdAllocator allocator(&source, IdAllocatorOptions{});
  REQUIRE_THAT(allocator.Next(absl::Now() + absl::Seconds(5)), IsOk());
  absl::StatusOr<int64_t> id = allocator.Next(absl::InfinitePast());
  REQUIRE_THAT(id, IsOk());
  CHECK(*id == 2);
}

TEST_CASE("stats count leases, issued ids and the step", "[lib/idalloc]") {
  InMemorySegmentSource source;
  // No segment until the first draw is seen waiting for one: whether the
  // leaser would otherwise win the race is up to the scheduler.
  source.SetAvailable(false);
  const IdAllocatorOptions options = FixedStep(100);
  SegmentIdAllocator allocator(&source, options);
  absl::StatusOr<std::vector<int64_t>> drawn;
  std::thread drawer([&] { drawn = Draw(allocator, 1000); });
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (allocator.GetStats().waits == 0 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  source.SetAvailable(true);
  drawer.join();
  REQUIRE_THAT(drawn, IsOk());
  const SegmentIdAllocator::Stats stats = allocator.GetStats();
  CHECK(stats.ids_issued == 1000);
  CHECK(stats.leases >= 10);
  CHECK(stats.leases <= 10 + options.max_prefetched_segments);
  CHECK(stats.leases <= source.lease_count());  // a lease may be in flight
  CHECK(stats.current_step == 100);
  CHECK(stats.waits >= 1);
}

}  // namespace
}  // namespace shortener::idalloc
