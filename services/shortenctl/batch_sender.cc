#include "services/shortenctl/batch_sender.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace shortener::ctl {
namespace {

// Calls that must go through before a batch cut for a deadline doubles.
constexpr int kCallsBeforeGrowing = 8;

absl::Status ItemStatus(const v1::BatchShortenResult& result) {
  if (result.has_response()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(result.error().code()),
                      result.error().message());
}

}  // namespace

BatchSender::BatchSender(ShortenClient& client, absl::Duration first_backoff,
                         std::function<void(const std::string&)> note)
    : client_(client), backoff_(first_backoff), note_(std::move(note)) {}

absl::StatusOr<std::vector<v1::BatchShortenResult>> BatchSender::Send(
    const std::vector<v1::ShortenRequest>& requests) {
  std::vector<std::optional<v1::BatchShortenResult>> results(requests.size());
  std::deque<size_t> pending;
  for (size_t i = 0; i < requests.size(); ++i) pending.push_back(i);
  std::vector<size_t> again;  // items to retry once `pending` is through
  absl::Status again_status;
  while (!pending.empty() || !again.empty()) {
    if (pending.empty()) {
      std::optional<absl::Duration> wait = backoff_.Next(again_status);
      if (!wait.has_value()) break;  // their last errors stand
      note_(absl::StrCat(again.size(), " items failed ", DescribeRetry(again_status, *wait)));
      absl::SleepFor(*wait);
      pending.assign(again.begin(), again.end());
      again.clear();
    }
    v1::BatchShortenRequest call;
    std::vector<size_t> items;
    size_t bytes = 0;
    while (!pending.empty() && static_cast<int>(items.size()) < max_items_) {
      const size_t item_bytes = requests[pending.front()].ByteSizeLong() + 8;
      if (!items.empty() && bytes + item_bytes > kMaxBatchBytes) break;
      bytes += item_bytes;
      items.push_back(pending.front());
      *call.add_requests() = requests[pending.front()];
      pending.pop_front();
    }
    absl::StatusOr<v1::BatchShortenResponse> response = client_.BatchShorten(call);
    if (!response.ok()) {
      pending.insert(pending.begin(), items.begin(), items.end());
      if (IsTooLarge(response.status()) && items.size() > 1) {
        max_items_ = ceiling_ = static_cast<int>(items.size() / 2);
        note_(absl::StrCat(absl::StatusCodeToString(response.status().code()), ": ",
                           response.status().message(), "; sending ", max_items_,
                           " items per call from now on"));
        continue;
      }
      if (absl::IsDeadlineExceeded(response.status()) && items.size() > 1) {
        // A service too slow for the batch within --timeout: smaller calls
        // (retried at once: the ids make them safe), larger again once
        // they go through.
        max_items_ = static_cast<int>(items.size() / 2);
        quick_calls_ = 0;
        note_(absl::StrCat(absl::StatusCodeToString(response.status().code()), ": ",
                           response.status().message(), "; sending ", max_items_,
                           " items per call for now"));
        continue;
      }
      std::optional<absl::Duration> wait = backoff_.Next(response.status());
      if (!wait.has_value()) return response.status();
      note_(DescribeRetry(response.status(), *wait));
      absl::SleepFor(*wait);
      continue;
    }
    for (size_t k = 0; k < items.size(); ++k) {
      v1::BatchShortenResult result;
      if (static_cast<int>(k) < response->results_size()) {
        result = std::move(*response->mutable_results(static_cast<int>(k)));
      } else {
        result.mutable_error()->set_code(static_cast<int>(absl::StatusCode::kInternal));
        result.mutable_error()->set_message("the service returned no result for this item");
      }
      const absl::Status status = ItemStatus(result);
      if (IsRetryable(status)) {
        again.push_back(items[k]);
        again_status = status;
      }
      results[items[k]] = std::move(result);
    }
    if (again.empty()) backoff_.Reset();
    if (max_items_ < ceiling_ && ++quick_calls_ >= kCallsBeforeGrowing) {
      max_items_ = std::min(2 * max_items_, ceiling_);
      quick_calls_ = 0;
    }
  }
  std::vector<v1::BatchShortenResult> out;
  out.reserve(results.size());
  for (std::optional<v1::BatchShortenResult>& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace shortener::ctl
