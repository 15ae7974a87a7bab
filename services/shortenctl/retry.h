// When and how long shortenctl's import and export wait before calling
// again: calls that may succeed later (UNAVAILABLE, DEADLINE_EXCEEDED, a
// full queue's or a rate limit's RESOURCE_EXHAUSTED) are retried with
// exponential backoff and jitter, or after the wait the service asked for
// (the `retry-after-ms` trailing metadata ShortenClient keeps as a status
// payload); requests too large for the service or for the key's burst are
// to be split instead.
// Backoff is used by one thread; the functions are pure.
#ifndef SHORTENER_SERVICES_SHORTENCTL_RETRY_H_
#define SHORTENER_SERVICES_SHORTENCTL_RETRY_H_

#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace shortener::ctl {

// The payload ShortenClient attaches to an error that came with
// `retry-after-ms` trailing metadata: the milliseconds as decimal text.
inline constexpr char kRetryAfterPayload[] = "shortener/retry-after-ms";

// The wait `status` asks for (its kRetryAfterPayload), if any.
std::optional<absl::Duration> RetryAfter(const absl::Status& status);

// Whether a smaller request would go through: INVALID_ARGUMENT naming the
// request's size or item count ("request: ...", "requests: ..."), gRPC's
// RESOURCE_EXHAUSTED for a message over the receive limit, or the rate
// limiter's "exceed the burst".
bool IsTooLarge(const absl::Status& status);

// Whether the same call may succeed later: UNAVAILABLE, DEADLINE_EXCEEDED,
// RESOURCE_EXHAUSTED that is not IsTooLarge.
bool IsRetryable(const absl::Status& status);

// "UNAVAILABLE: database is down" (without payloads), and "retrying in
// 1.5s" for a wait: for the notes of retries.
std::string DescribeRetry(const absl::Status& status, absl::Duration wait);

class Backoff {
 public:
  // Waits `first`, doubling up to `longest`, each with +-20 % jitter; at
  // most `attempts` retries in a row.
  explicit Backoff(absl::Duration first, int attempts = 8,
                   absl::Duration longest = absl::Seconds(30));

  // The wait before retrying after `status` (RetryAfter when it says, but
  // at most two minutes), or nullopt when it is not retryable or the
  // retries are used up.
  std::optional<absl::Duration> Next(const absl::Status& status);

  // After a success: the next failure starts from `first` again.
  void Reset() { failures_ = 0; }

 private:
  absl::Duration first_;
  int attempts_;
  absl::Duration longest_;
  int failures_ = 0;
  std::minstd_rand random_;
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_RETRY_H_
