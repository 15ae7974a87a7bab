#include "lib/idalloc/segment_source.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace shortener::idalloc {

InMemorySegmentSource::InMemorySegmentSource() { AddSequence("links", 1); }

void InMemorySegmentSource::AddSequence(const std::string& name, int64_t next_id) {
  std::lock_guard<std::mutex> lock(mu_);
  next_id_[name] = next_id;
}

void InMemorySegmentSource::SetAvailable(bool available) {
  std::lock_guard<std::mutex> lock(mu_);
  available_ = available;
}

void InMemorySegmentSource::SetLatency(absl::Duration latency) {
  std::lock_guard<std::mutex> lock(mu_);
  latency_ = latency;
}

int64_t InMemorySegmentSource::lease_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lease_count_;
}

std::vector<int64_t> InMemorySegmentSource::requested_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requested_steps_;
}

absl::StatusOr<Segment> InMemorySegmentSource::Lease(const std::string& name, int64_t step,
                                                     absl::Time deadline) {
  absl::Duration latency;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requested_steps_.push_back(step);
    latency = latency_;
  }
  if (step < 1 || step > kMaxLeaseStep) {
    return absl::InvalidArgumentError(
        absl::StrCat("id segment lease: step must be in [1, ", kMaxLeaseStep, "], got ", step));
  }
  // Simulated round trip, outside the lock like a real one.
  if (latency > absl::ZeroDuration()) {
    absl::Duration left = deadline - absl::Now();
    if (left < latency) {
      absl::SleepFor(std::max(left, absl::ZeroDuration()));
      return absl::UnavailableError("id segment lease: in-memory source timed out");
    }
    absl::SleepFor(latency);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!available_) {
    return absl::UnavailableError("id segment lease: in-memory source is unavailable");
  }
  auto it = next_id_.find(name);
  if (it == next_id_.end()) {
    return absl::NotFoundError(absl::StrCat("id segment lease: unknown sequence \"", name, "\""));
  }
  Segment segment{it->second, it->second + step};
  it->second = segment.end;
  ++lease_count_;
  return segment;
}

}  // namespace shortener::idalloc
