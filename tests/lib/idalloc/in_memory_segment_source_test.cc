#include <catch2/catch.hpp>

#include "absl/time/clock.h"
#include "lib/idalloc/segment_source.h"
#include "tests/lib/idalloc/segment_source_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::idalloc {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;

TEST_CASE("InMemorySegmentSource passes the SegmentSource contract", "[lib/idalloc]") {
  InMemorySegmentSource source;
  testing::CheckSegmentSourceContract(source, "links");
}

TEST_CASE("InMemorySegmentSource starts a sequence where it is told", "[lib/idalloc]") {
  InMemorySegmentSource source;
  source.AddSequence("other", 5000);
  absl::StatusOr<Segment> s = source.Lease("other", 10, absl::Now() + absl::Seconds(1));
  REQUIRE_THAT(s, IsOk());
  CHECK(s->begin == 5000);
  CHECK(s->end == 5010);
  CHECK(source.lease_count() == 1);
  CHECK(source.requested_steps() == std::vector<int64_t>{10});
}

TEST_CASE("InMemorySegmentSource fails UNAVAILABLE while unavailable and takes no ids",
          "[lib/idalloc]") {
  InMemorySegmentSource source;
  const absl::Time deadline = absl::Now() + absl::Seconds(1);
  source.SetAvailable(false);
  CHECK_THAT(source.Lease("links", 10, deadline), HasCode(absl::StatusCode::kUnavailable));
  source.SetAvailable(true);
  absl::StatusOr<Segment> s = source.Lease("links", 10, deadline);
  REQUIRE_THAT(s, IsOk());
  CHECK(s->begin == 1);
  CHECK(source.lease_count() == 1);
}

TEST_CASE("InMemorySegmentSource latency is bounded by the deadline", "[lib/idalloc]") {
  InMemorySegmentSource source;
  source.SetLatency(absl::Seconds(10));
  const absl::Time start = absl::Now();
  CHECK_THAT(source.Lease("links", 10, start + absl::Milliseconds(100)),
             HasCode(absl::StatusCode::kUnavailable));
  CHECK(absl::Now() - start < absl::Seconds(2));
  source.SetLatency(absl::Milliseconds(20));
  CHECK_THAT(source.Lease("links", 10, absl::Now() + absl::Seconds(1)), IsOk());
}

}  // namespace
}  // namespace shortener::idalloc
