#include "services/shortenctl/retry.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace shortener::ctl {

std::optional<absl::Duration> RetryAfter(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kRetryAfterPayload);
  int64_t ms = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &ms) || ms < 0) {
    return std::nullopt;
  }
  return absl::Milliseconds(ms);
}

bool IsTooLarge(const absl::Status& status) {
  const absl::string_view message = status.message();
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    return absl::StartsWith(message, "request: ") || absl::StartsWith(message, "requests: ");
  }
  return status.code() == absl::StatusCode::kResourceExhausted &&
         (absl::StrContains(message, "exceed the burst") ||
          absl::StrContains(message, "larger than max"));
}

bool IsRetryable(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return true;
    case absl::StatusCode::kResourceExhausted:
      return !IsTooLarge(status);
    default:
      return false;
  }
}

std::string DescribeRetry(const absl::Status& status, absl::Duration wait) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message(),
                      "; retrying in ",
                      absl::FormatDuration(absl::Trunc(wait, absl::Milliseconds(1))));
}

Backoff::Backoff(absl::Duration first, int attempts, absl::Duration longest)
    : first_(first),
      attempts_(attempts),
      longest_(longest),
      random_(static_cast<uint32_t>(absl::ToUnixNanos(absl::Now()))) {}

std::optional<absl::Duration> Backoff::Next(const absl::Status& status) {
  if (!IsRetryable(status) || failures_ >= attempts_) return std::nullopt;
  const int doublings = std::min(failures_, 20);
  ++failures_;
  if (std::optional<absl::Duration> asked = RetryAfter(status); asked.has_value()) {
    return std::min(*asked, absl::Minutes(2));
  }
  const absl::Duration wait = std::min(first_ * (int64_t{1} << doublings), longest_);
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  return wait * jitter(random_);
}

}  // namespace shortener::ctl
