// BatchSender: ShortenRequests through BatchShorten in calls of bounded
// size, retrying what may succeed later (retry.h): a failed call whole, or
// the items that failed UNAVAILABLE or RESOURCE_EXHAUSTED (the requests
// keep their request_ids, so a retry never creates a link twice). A call
// refused as too large is split in halves, and the smaller size kept for
// later calls; one that runs out of time (DEADLINE_EXCEEDED) is split too,
// and the size doubles again, up to the largest that went through, after
// eight calls that do.
// Not thread-safe; uses `client` (which must outlive it) one call at a time.
#ifndef SHORTENER_SERVICES_SHORTENCTL_BATCH_SENDER_H_
#define SHORTENER_SERVICES_SHORTENCTL_BATCH_SENDER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/shortenctl/client.h"
#include "services/shortenctl/retry.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::ctl {

// Items per BatchShorten call at most (the service's limit).
inline constexpr int kMaxBatchItems = 1000;
// Encoded bytes per call at most: under the service's limit for its
// default --max_url_length with room for labels (services/shorten/
// request_limits.h), and a bound on what one retry sends again.
inline constexpr size_t kMaxBatchBytes = 512 * 1024;

class BatchSender {
 public:
  // `note` gets a line for people whenever a call is retried or split.
  BatchSender(ShortenClient& client, absl::Duration first_backoff,
              std::function<void(const std::string&)> note);

  // One result per request, in order: the service's, or for an item whose
  // retries ran out its last error. Fails with the call's status when a
  // call fails in a way retrying cannot mend (PERMISSION_DENIED, ...) or
  // keeps failing after the retries.
  absl::StatusOr<std::vector<v1::BatchShortenResult>> Send(
      const std::vector<v1::ShortenRequest>& requests);

  // The most items a call carries now.
  int max_items() const { return max_items_; }

 private:
  ShortenClient& client_;
  Backoff backoff_;
  std::function<void(const std::string&)> note_;
  int max_items_ = kMaxBatchItems;
  int ceiling_ = kMaxBatchItems;  // the most items a call may carry at all
  int quick_calls_ = 0;           // calls through since the last cut
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_BATCH_SENDER_H_
