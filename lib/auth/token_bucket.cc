#include "lib/auth/token_bucket.h"

#include <algorithm>

namespace shortener::auth {
namespace {

// Time between two tokens, or InfiniteDuration for a limit that can never
// grant. Clamped to 1 ns so an absurd rate cannot round to zero (which would
// mean no limit at all).
absl::Duration Interval(double rate_per_second, int burst) {
  if (!(rate_per_second > 0) || burst < 1) return absl::InfiniteDuration();
  const absl::Duration interval = absl::Seconds(1) / rate_per_second;
  return std::max(interval, absl::Nanoseconds(1));
}

}  // namespace

RateLimiter::RateLimiter(RateLimiterOptions options)
    : options_(options), sweep_at_(std::max<size_t>(options.max_keys, 1)) {}

RateLimiter::Decision RateLimiter::TryAcquire(absl::string_view key_id, double rate_per_second,
                                              int burst, absl::Time now, int cost) {
  const absl::Duration interval = Interval(rate_per_second, burst);
  if (interval == absl::InfiniteDuration()) return {false, absl::InfiniteDuration()};
  // More than a full bucket can never be granted at once.
  if (cost > burst) return {false, absl::InfiniteDuration()};
  cost = std::max(cost, 1);
  // A request may be granted while the bucket's debt (tat - now) is at most
  // this: burst - cost tokens already used and not yet refilled.
  const absl::Duration tolerance = interval * (burst - cost);

  std::lock_guard<std::mutex> lock(mu_);
  auto it = tat_.find(key_id);
  if (it == tat_.end()) {
    if (tat_.size() >= sweep_at_) SweepFullBuckets(now);
    it = tat_.emplace(std::string(key_id), now).first;
  }
  // A clock that went back, or a bucket that refilled: no debt below zero.
  const absl::Time tat = std::max(it->second, now);
  const absl::Duration debt = tat - now;
  if (debt > tolerance) return {false, debt - tolerance};
  it->second = tat + interval * cost;
  return {true, absl::ZeroDuration()};
}

size_t RateLimiter::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tat_.size();
}

void RateLimiter::SweepFullBuckets(absl::Time now) {
  for (auto it = tat_.begin(); it != tat_.end();) {
    // Full (tat <= now): a fresh bucket would be identical, so dropping it
    // is lossless.
    if (it->second <= now) {
      tat_.erase(it++);
    } else {
      ++it;
    }
  }
  // Sweep again only after the map doubles, so sweeps cost O(1) per insert
  // even when every bucket is in use.
  sweep_at_ = std::max({options_.max_keys, 2 * tat_.size(), size_t{1}});
}

}  // namespace shortener::auth
