// RequestLimits: how large each ShortenService request may be, derived from
// the field limits the proto documents, and the server-wide receive limit
// that follows from them. Checked at the top of every handler, before the
// caller's key is looked up (ShortenServiceImpl::Authorized): a request that
// no legitimate client sends costs neither a database read nor a token of
// anyone's rate, and its answer names the limit.
//
// The arithmetic (bytes of an encoded request; framing counted generously:
// a field's tag and length varint, a Timestamp at its largest, integers as
// 10-byte varints):
//   Shorten       long_url (--max_url_length, 2048) + custom_alias 64
//                 + request_id 128 + framing 64            = 2 304
//   BatchShorten  1 000 x (Shorten + 8 for the item's own framing)
//                                                           = 2 312 000
//   BatchResolve  1 000 x (code 64 + 8)                    =    72 000
//   RecordClicks  clicks::kMaxClickBatchBytes (the edge cuts its batches
//                 to it: lib/clicks/click_batch_limits.h)   = 2 097 152
//   Resolve, GetLink, Revoke, GetClickStats, GetQrCode, RevokeApiKey,
//   ListApiKeys, WatchInvalidations (a code or an id, two
//   Timestamps, a short name)                               =       512
//   UpdateLink    as Shorten + labels 16 x (63 + 63 + 8)    = 4 448
//   ListLinks     filter 4096 + page_token 128 + tenant 200
//                 + order_by and framing                   =     5 120
//   CreateApiKey  name, tenant, scopes and allowed domains  =    65 536
// Receive limit: the largest of these rounded up to whole MiB: 3 MiB with
// the default --max_url_length (it was 16 MiB for everything). gRPC refuses
// a larger message itself, RESOURCE_EXHAUSTED, before any of our code runs.
//
// Item counts are limits too (INVALID_ARGUMENT): BatchShorten and
// BatchResolve 1 to 1 000, RecordClicks 1 to 10 000 events. The domain
// logic keeps its own checks of the same constants for callers that are not
// RPCs.
//
// Thread-safe (immutable).
#ifndef SHORTENER_SERVICES_SHORTEN_REQUEST_LIMITS_H_
#define SHORTENER_SERVICES_SHORTEN_REQUEST_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "services/shorten/rpc_counters.h"

namespace shortener::service {

// Field limits of the proto (shortener.proto).
inline constexpr size_t kMaxCodeBytes = 64;        // a code or custom alias
inline constexpr size_t kMaxRequestIdBytes = 128;  // ShortenRequest.request_id
inline constexpr size_t kMaxBatchItems = 1000;     // BatchShorten, BatchResolve
// Framing allowances (see the arithmetic above).
inline constexpr size_t kShortenFramingBytes = 64;
inline constexpr size_t kItemFramingBytes = 8;
inline constexpr size_t kSmallRequestBytes = 512;
// Labels of one link at most: 16 x (key 63 + value 63 + framing 8).
inline constexpr size_t kLabelsBytes = 16 * (63 + 63 + 8);
// ListLinks: filter (lib/filter's kMaxFilterBytes, 4096) + page_token
// (page_token.h's kMaxPageTokenBytes, 128) + tenant 200 + order_by and
// framing.
inline constexpr size_t kListRequestBytes = 5120;
inline constexpr size_t kApiKeyRequestBytes = 64 * 1024;

class RequestLimits {
 public:
  // `max_url_length`: the service's --max_url_length (raw long_url bytes).
  explicit RequestLimits(size_t max_url_length);

  // Encoded bytes a request of `rpc` may take.
  size_t MaxBytes(Rpc rpc) const;
  // Items (BatchShorten requests, BatchResolve codes, RecordClicks events)
  // it may carry; 0 for methods without items.
  size_t MaxItems(Rpc rpc) const;
  // The server-wide receive limit: the largest MaxBytes rounded up to MiB.
  size_t ReceiveLimit() const;

  // OK, or INVALID_ARGUMENT naming the limit:
  //   "request: 5000 bytes, more than the 2304 a Shorten request may take"
  //   "codes: 1001, more than the 1000 a BatchResolve request may carry"
  absl::Status Check(Rpc rpc, size_t bytes, size_t items) const;

 private:
  size_t shorten_bytes_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_REQUEST_LIMITS_H_
