// Shared by the outage tests (in-memory and Postgres source): draws ids while
// the source is down until Next fails, recording how long the failing call
// took.
#ifndef SHORTENER_TESTS_LIB_IDALLOC_OUTAGE_UTIL_H_
#define SHORTENER_TESTS_LIB_IDALLOC_OUTAGE_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/idalloc/segment_id_allocator.h"

namespace shortener::idalloc {

struct OutageDraw {
  absl::Status failure;         // the first failure (OK if none within `most`)
  absl::Duration failed_after;  // how long the failing call took
  int64_t served = 0;           // ids served before it
};

// Calls Next with a deadline of `per_call` each, appending ids to `ids`,
// until a call fails or `most` + 1 ids were served.
inline OutageDraw DrawUntilFailure(SegmentIdAllocator& allocator, int64_t most,
                                   absl::Duration per_call, std::vector<int64_t>& ids) {
  OutageDraw draw;
  for (; draw.served <= most; ++draw.served) {
    const absl::Time start = absl::Now();
    absl::StatusOr<int64_t> id = allocator.Next(start + per_call);
    if (!id.ok()) {
      draw.failure = id.status();
      draw.failed_after = absl::Now() - start;
      break;
    }
    ids.push_back(*id);
  }
  return draw;
}

}  // namespace shortener::idalloc

#endif  // SHORTENER_TESTS_LIB_IDALLOC_OUTAGE_UTIL_H_
