// Clock: the one seam through which code reads the wall-clock time (link
// expiry, key expiry and last use, rate-limit refills, click times, lease
// times). Code that reads the time takes a `const Clock&` (or pointer) and
// never calls absl::Now() itself, so tests can put it anywhere in time.
//
// Two implementations pass one contract suite (tests/lib/common/clock_test.cc):
//  - SystemClock(): the process's real clock (absl::Now()).
//  - ManualClock: stands still until a test sets or advances it.
//
// Waiting is not part of the seam: deadlines for waits on condition
// variables, sockets and RPCs are measured on std::chrono::steady_clock
// where they are waited for.
//
// Thread safety: both implementations are thread-safe.
#ifndef SHORTENER_LIB_COMMON_CLOCK_H_
#define SHORTENER_LIB_COMMON_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace shortener {

class Clock {
 public:
  virtual ~Clock() = default;
  // The current wall-clock time. SystemClock may step backwards when the
  // machine's clock is set; ManualClock only when a test sets it so.
  virtual absl::Time Now() const = 0;
};

// The real clock, shared by the whole process; never destroyed.
const Clock& SystemClock();

class ManualClock final : public Clock {
 public:
  // Starts at `start` (by default 2026-01-01T00:00:00Z, a fixed instant so
  // that test output does not depend on when the test ran).
  explicit ManualClock(absl::Time start = absl::FromUnixSeconds(1767225600));

  absl::Time Now() const override;
  void Set(absl::Time now);
  void Advance(absl::Duration by);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_CLOCK_H_
