#include "lib/common/clock.h"

namespace shortener {
namespace {

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace

const Clock& SystemClock() {
  static const RealClock* const clock = new RealClock();
  return *clock;
}

ManualClock::ManualClock(absl::Time start) : now_(start) {}

absl::Time ManualClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

void ManualClock::Set(absl::Time now) {
  absl::MutexLock lock(&mu_);
  now_ = now;
}

void ManualClock::Advance(absl::Duration by) {
  absl::MutexLock lock(&mu_);
  now_ += by;
}

}  // namespace shortener
