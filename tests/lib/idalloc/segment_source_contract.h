// The behaviour every SegmentSource must have, as one check function that the
// in-memory and the Postgres source tests both run (leveldb's "same suite for
// the real thing and its twin").
#ifndef SHORTENER_TESTS_LIB_IDALLOC_SEGMENT_SOURCE_CONTRACT_H_
#define SHORTENER_TESTS_LIB_IDALLOC_SEGMENT_SOURCE_CONTRACT_H_

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "lib/idalloc/segment_source.h"
#include "tests/support/status_matchers.h"

namespace shortener::idalloc::testing {

// `sequence` must exist in `source` and be used by nobody else meanwhile.
inline void CheckSegmentSourceContract(SegmentSource& source, const std::string& sequence) {
  using shortener::testing::HasCode;
  using shortener::testing::IsOk;
  const absl::Time deadline = absl::Now() + absl::Seconds(10);

  // Consecutive leases have the asked size and do not overlap.
  absl::StatusOr<Segment> first = source.Lease(sequence, 10, deadline);
  REQUIRE_THAT(first, IsOk());
  CHECK(first->size() == 10);
  absl::StatusOr<Segment> second = source.Lease(sequence, 25, deadline);
  REQUIRE_THAT(second, IsOk());
  CHECK(second->size() == 25);
  CHECK(second->begin >= first->end);

  CHECK_THAT(source.Lease("no-such-sequence", 10, deadline), HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(source.Lease(sequence, 0, deadline), HasCode(absl::StatusCode::kInvalidArgument));
  CHECK_THAT(source.Lease(sequence, kMaxLeaseStep + 1, deadline),
             HasCode(absl::StatusCode::kInvalidArgument));

  // Concurrent leases are pairwise disjoint.
  std::mutex mu;
  std::vector<Segment> leased;
  int failures = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        absl::StatusOr<Segment> s = source.Lease(sequence, 7, deadline);
        std::lock_guard<std::mutex> lock(mu);
        if (s.ok()) {
          leased.push_back(*s);
        } else {
          ++failures;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures == 0);
  REQUIRE(leased.size() == 100);
  std::sort(leased.begin(), leased.end(),
            [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
  CHECK(leased.front().begin >= second->end);
  for (size_t i = 1; i < leased.size(); ++i) {
    CHECK(leased[i - 1].size() == 7);
    CHECK(leased[i - 1].end <= leased[i].begin);
  }
}

}  // namespace shortener::idalloc::testing

#endif  // SHORTENER_TESTS_LIB_IDALLOC_SEGMENT_SOURCE_CONTRACT_H_
