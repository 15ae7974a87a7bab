// What an AdaptiveBatcher (lib/batching/adaptive_batcher.h) is configured
// with: its options, and the executor that turns a batch of items into one
// call (an RPC, a statement, a transaction) and answers every item.
//
// Two kinds of executor, for the two kinds of call:
// - BlockingBatchExecutor: the call blocks (a database round trip). The
//   batcher runs it on threads of its own, one per batch in flight.
// - AsyncBatchExecutor: the call is asynchronous (a gRPC callback call).
//   The batcher starts it on the thread that queued the item or finished the
//   previous batch, and the executor reports when the batch is answered; no
//   thread waits for it.
// Both also answer items the batcher refuses without executing them
// (BatchExecutor::Refuse): each user words its own refusals.
//
// Thread safety: the batcher calls an executor from several threads at once
// (one batch per slot, refusals on the calling threads); executors are
// written for that.
#ifndef SHORTENER_LIB_BATCHING_BATCH_EXECUTOR_H_
#define SHORTENER_LIB_BATCHING_BATCH_EXECUTOR_H_

#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace shortener::batching {

// Deadlines, batch ages and waits: monotonic time, never the wall clock.
using BatchClock = std::chrono::steady_clock;

struct AdaptiveBatcherOptions {
  // Items per batch at most. Default 256.
  int max_batch = 256;
  // Batches out at once at most; with a blocking executor, the batcher's
  // threads. Default 2.
  int max_in_flight = 2;
  // Items waiting for a batch at most (see AdaptiveBatcher::Submit).
  // Default 1024.
  int max_queued = 1024;
  // The rule for starting a batch while another is out: only when this many
  // items are queued... Default 1: at once, while a slot is free.
  int parallel_backlog = 1;
  // ... or when the oldest batch out started this long ago. Default: never
  // by age alone. Zero or less: at once.
  BatchClock::duration parallel_after = BatchClock::duration::max();
  // Whether a thread of the batcher answers a queued item at its deadline,
  // even while every slot is busy (see AdaptiveBatcher::Submit). Default
  // false: a queued item past its deadline is answered when the next batch
  // is formed.
  bool expire_on_time = false;
};

// Options below 1 count as 1; a parallel_after of zero or less (or a
// parallel_backlog of 1) means "start at once".
AdaptiveBatcherOptions NormalizedOptions(AdaptiveBatcherOptions options);

// Why an item is answered without being executed.
struct Refusal {
  enum class Reason {
    kQueueFull,     // max_queued items were waiting (Submit, at once)
    kShuttingDown,  // submitted after Shutdown began, or queued at Shutdown(kRefuse)
    kExpired,       // its deadline passed before its batch was formed
  };
  Reason reason;
  size_t queued = 0;      // kQueueFull: items waiting at the time
  size_t max_queued = 0;  // kQueueFull: the bound
};

template <typename Item>
class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;
  // Answers `items` (one submission's, or those expired or queued at
  // shutdown) without executing them. Runs without the batcher's lock: on
  // the submitting thread (kQueueFull, kShuttingDown, kExpired at once), on
  // a thread forming a batch or the timer thread (kExpired), or in
  // Shutdown (kShuttingDown). Must not call back into the batcher's
  // Shutdown.
  virtual void Refuse(absl::Span<Item> items, const Refusal& why) = 0;
};

template <typename Item>
class BlockingBatchExecutor : public BatchExecutor<Item> {
 public:
  // Executes `batch` (1 to max_batch items, oldest first) and answers every
  // item, on a thread of the batcher; may block. Must not throw: catch what
  // the call may throw and answer the items with it.
  virtual void Run(std::vector<Item> batch) = 0;
};

namespace batching_internal {
// The batcher's side of BatchFinished.
class BatchFinisher {
 public:
  virtual void FinishBatch(size_t slot) = 0;

 protected:
  ~BatchFinisher() = default;
};
}  // namespace batching_internal

// Given to AsyncBatchExecutor::Start with each batch: call it exactly once,
// after every item of the batch is answered. It frees the batch's slot (or
// starts the next batch on it, on this thread); a batch never finished
// holds its slot for good, and Shutdown waits for it. After the call the
// executor must not touch the batcher or anything its Shutdown lets go.
class BatchFinished {
 public:
  BatchFinished(BatchFinished&& other) noexcept
      : finisher_(std::exchange(other.finisher_, nullptr)), slot_(other.slot_) {}
  BatchFinished& operator=(BatchFinished&&) = delete;
  BatchFinished(const BatchFinished&) = delete;

  void operator()() {
    batching_internal::BatchFinisher* finisher = std::exchange(finisher_, nullptr);
    if (finisher != nullptr) finisher->FinishBatch(slot_);
  }

 private:
  template <typename>
  friend class AdaptiveBatcher;
  BatchFinished(batching_internal::BatchFinisher* finisher, size_t slot)
      : finisher_(finisher), slot_(slot) {}

  batching_internal::BatchFinisher* finisher_;
  size_t slot_;
};

template <typename Item>
class AsyncBatchExecutor : public BatchExecutor<Item> {
 public:
  // Starts executing `batch` (1 to max_batch items, oldest first) and
  // returns without waiting for it; answers every item later, on any
  // thread, then calls `finished`. `finished` may also run within Start.
  virtual void Start(std::vector<Item> batch, BatchFinished finished) = 0;
};

}  // namespace shortener::batching

#endif  // SHORTENER_LIB_BATCHING_BATCH_EXECUTOR_H_
