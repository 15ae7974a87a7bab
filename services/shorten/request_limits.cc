#include "services/shorten/request_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/clicks/click_batch_limits.h"

namespace shortener::service {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// What a method's items are called in its request.
const char* ItemName(Rpc rpc) {
  switch (rpc) {
    case Rpc::kBatchShorten:
      return "requests";
    case Rpc::kBatchResolve:
      return "codes";
    case Rpc::kRecordClicks:
      return "events";
    default:
      return "items";
  }
}

}  // namespace

RequestLimits::RequestLimits(size_t max_url_length)
    : shorten_bytes_(max_url_length + kMaxCodeBytes + kMaxRequestIdBytes + kShortenFramingBytes) {}

size_t RequestLimits::MaxBytes(Rpc rpc) const {
  switch (rpc) {
    case Rpc::kShorten:
      return shorten_bytes_;
    case Rpc::kUpdateLink:
      // A Link with a URL, labels and a code; its mask's five paths.
      return shorten_bytes_ + kLabelsBytes;
    case Rpc::kBatchShorten:
      return kMaxBatchItems * (shorten_bytes_ + kItemFramingBytes);
    case Rpc::kBatchResolve:
      return kMaxBatchItems * (kMaxCodeBytes + kItemFramingBytes);
    case Rpc::kRecordClicks:
      return clicks::kMaxClickBatchBytes;
    case Rpc::kCreateApiKey:
      return kApiKeyRequestBytes;
    case Rpc::kListLinks:
    case Rpc::kRevokeLinks:
    case Rpc::kDeleteLinks:
      return kListRequestBytes;
    case Rpc::kResolve:
    case Rpc::kGetLink:
    case Rpc::kRevoke:
    case Rpc::kDeleteLink:
    case Rpc::kGetClickStats:
    case Rpc::kGetQrCode:
    case Rpc::kWatchInvalidations:
    case Rpc::kListApiKeys:
    case Rpc::kRevokeApiKey:
      return kSmallRequestBytes;
  }
  return kSmallRequestBytes;
}

size_t RequestLimits::MaxItems(Rpc rpc) const {
  switch (rpc) {
    case Rpc::kBatchShorten:
    case Rpc::kBatchResolve:
      return kMaxBatchItems;
    case Rpc::kRecordClicks:
      return clicks::kMaxClickBatchEvents;
    default:
      return 0;
  }
}

size_t RequestLimits::ReceiveLimit() const {
  size_t largest = 0;
  for (size_t i = 0; i < kRpcCount; ++i) largest = std::max(largest, MaxBytes(static_cast<Rpc>(i)));
  return (largest + kMiB - 1) / kMiB * kMiB;
}

absl::Status RequestLimits::Check(Rpc rpc, size_t bytes, size_t items) const {
  const size_t max_bytes = MaxBytes(rpc);
  if (bytes > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("request: ", bytes, " bytes, more than the ",
                                                   max_bytes, " a ", RpcName(rpc),
                                                   " request may take"));
  }
  const size_t max_items = MaxItems(rpc);
  if (max_items != 0 && items > max_items) {
    return absl::InvalidArgumentError(absl::StrCat(ItemName(rpc), ": ", items, ", more than the ",
                                                   max_items, " a ", RpcName(rpc),
                                                   " request may carry"));
  }
  return absl::OkStatus();
}

}  // namespace shortener::service
