// The size bound of one RecordClicks request, shared by both ends so they
// cannot disagree: the edge cuts its click batches to fit
// (ClickSenderOptions::max_batch_bytes, edge/clicks/click_sender.h), and
// shorten-service refuses a RecordClicks request larger than this before
// any other work and sizes its receive limit to hold it
// (services/shorten/request_limits.h). A batch over it could never be
// recorded, however often it was retried.
#ifndef SHORTENER_LIB_CLICKS_CLICK_BATCH_LIMITS_H_
#define SHORTENER_LIB_CLICKS_CLICK_BATCH_LIMITS_H_

#include <cstddef>

namespace shortener::clicks {

// Encoded bytes of a RecordClicksRequest at most: 2 MiB. With the edge's
// 512-byte User-Agent and Referer, about 1 700 events of the largest kind,
// or the full 10 000 of typical ones (~200 bytes each).
inline constexpr size_t kMaxClickBatchBytes = size_t{2} << 20;

// Events in one RecordClicksRequest at most.
inline constexpr size_t kMaxClickBatchEvents = 10000;

}  // namespace shortener::clicks

#endif  // SHORTENER_LIB_CLICKS_CLICK_BATCH_LIMITS_H_
