#include "lib/batching/batch_executor.h"

#include <algorithm>

namespace shortener::batching {

AdaptiveBatcherOptions NormalizedOptions(AdaptiveBatcherOptions options) {
  options.max_batch = std::max(1, options.max_batch);
  options.max_in_flight = std::max(1, options.max_in_flight);
  options.max_queued = std::max(1, options.max_queued);
  options.parallel_backlog = std::max(1, options.parallel_backlog);
  if (options.parallel_after <= BatchClock::duration::zero()) options.parallel_backlog = 1;
  return options;
}

}  // namespace shortener::batching
