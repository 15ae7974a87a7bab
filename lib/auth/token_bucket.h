// A per-key token-bucket rate limiter: each key may make `burst` requests at
// once and then `rate_per_second` on average. Implemented as GCRA (one
// "theoretical arrival time" per key, in absl::Duration's exact integer
// arithmetic), which grants exactly what a token bucket with the same rate
// and burst grants, without floating-point drift.
//
// Time is passed in (`now`), never read, so tests drive it with a fake clock
// and the caller decides which clock (the Authorizer passes its Clock's).
//
// Memory: a bucket that is full again is dropped when the map reaches
// RateLimiterOptions::max_keys. Dropping a full bucket loses nothing (a new
// bucket starts full), so no grace period is needed; the map holds at most
// max(max_keys, 2 x the keys used within their last burst / rate) entries.
// `key_id` must name an authenticated key (the key's id or hash), never
// client-chosen text, or that bound is the client's to choose.
//
// Thread safety: thread-safe; one std::mutex (absl::Mutex in Debian's abseil
// is invisible to TSan) held for a hash lookup and a few additions.
#ifndef SHORTENER_LIB_AUTH_TOKEN_BUCKET_H_
#define SHORTENER_LIB_AUTH_TOKEN_BUCKET_H_

#include <cstddef>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::auth {

struct RateLimiterOptions {
  // Map size at which full buckets are swept out. Default 100000.
  size_t max_keys = 100000;
};

class RateLimiter {
 public:
  struct Decision {
    bool allowed = false;
    // When refused: how long until one request would be allowed (> 0).
    // Zero when allowed.
    absl::Duration retry_after = absl::ZeroDuration();
  };

  explicit RateLimiter(RateLimiterOptions options = {});
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Takes one token from `key_id`'s bucket at time `now` if there is one.
  // A refusal takes nothing. A key seen for the first time starts with a
  // full bucket (`burst` tokens). `rate_per_second` and `burst` may change
  // between calls (a key's limit was edited): the new limit applies from
  // that call, and what was used and not yet refilled carries over. A limit that can never grant
  // (rate <= 0, NaN, or burst < 1) refuses with retry_after = absl::InfiniteDuration(): a
  // misconfigured limit fails closed. `now` going backwards is treated as
  // no time passing.
  //
  // `cost` tokens are taken at once (a batch of items counts as that many
  // requests), all or none; a cost above `burst` can never be granted and
  // is refused with retry_after = absl::InfiniteDuration(). cost < 1 counts
  // as 1.
  Decision TryAcquire(absl::string_view key_id, double rate_per_second, int burst, absl::Time now,
                      int cost = 1);

  // Number of buckets held (for tests and metrics).
  size_t size() const;

 private:
  void SweepFullBuckets(absl::Time now);  // requires mu_

  const RateLimiterOptions options_;
  mutable std::mutex mu_;
  // Theoretical arrival time per key: the bucket is full when tat <= now and
  // holds burst - (tat - now) / interval tokens otherwise. Guarded by mu_.
  absl::flat_hash_map<std::string, absl::Time> tat_;
  size_t sweep_at_;  // guarded by mu_; map size that triggers the next sweep
};

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_TOKEN_BUCKET_H_
