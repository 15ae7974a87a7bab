// AdaptiveBatcher: callers on many threads hand over items; the batcher
// groups them into batches and has its executor (batch_executor.h) execute
// each batch with one call, which answers every item with its own result.
// The one implementation behind the edge's ResolveBatcher (codes ->
// Resolve / BatchResolve), the service's ReadBatcher (ids and aliases ->
// GetByIds / GetByAliases) and GroupCommitter (links -> CreateLinks).
//
// Adaptive, with no batching window: while fewer than max_in_flight batches
// are out, what is queued starts at once (a quiet system adds no latency);
// while all are out, items queue, and the next batch to finish takes
// everything queued (up to max_batch) as its next batch, on its own thread.
// The busier the system, the bigger the batches.
//
// Rules (each has a test in tests/lib/batching/adaptive_batcher_test.cc):
// - Bound: at most max_queued items wait. A Submit that would take the queue
//   past it is refused whole at once, on the calling thread (kQueueFull),
//   and nothing of it is queued; one that finds the queue empty is always
//   taken, however large.
// - Groups: the items of one SubmitGroup go into one batch when they fit in
//   what is left of it; else they wait for the next batch, unless they come
//   first (then they are split over consecutive batches).
// - Parallel batches: with the default options a free slot starts a batch
//   at once. With a parallel rule (parallel_backlog, parallel_after), while
//   a batch is out another starts only once that many items are queued or
//   the oldest batch out has run that long; otherwise the busy one takes
//   the queue when it is done: fewer, bigger batches for many small calls.
// - Deadlines: an item may carry one. Past it at Submit, the item is
//   answered kExpired at once. An item whose deadline passes while queued
//   is never executed: it is answered kExpired at its deadline by the
//   batcher's timer thread (expire_on_time), or else when the next batch is
//   formed. What happens to a deadline once the batch is out is the
//   executor's business (it sees the items).
// - Blocking executors run on max_in_flight threads of the batcher; new
//   work wakes the thread that went idle last, so that under a steady
//   stream of small calls one warm thread does most of the work.
// - Shutdown: kExecute executes everything queued, kRefuse answers it
//   kShuttingDown; either way later Submits are refused kShuttingDown, and
//   Shutdown returns once every batch out has finished.
//
// Thread-safe. Executors' calls never run under the batcher's lock.
// Synchronised with std::mutex, which ThreadSanitizer sees (the system
// abseil is not instrumented).
#ifndef SHORTENER_LIB_BATCHING_ADAPTIVE_BATCHER_H_
#define SHORTENER_LIB_BATCHING_ADAPTIVE_BATCHER_H_

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "lib/batching/batch_executor.h"
#include "lib/common/histogram_counts.h"

namespace shortener::batching {

template <typename Item>
class AdaptiveBatcher final : private batching_internal::BatchFinisher {
 public:
  using Clock = BatchClock;

  // `executor` must outlive the batcher. The first starts max_in_flight
  // threads that run batches; either starts a timer thread when
  // expire_on_time is set or the parallel rule has an age.
  AdaptiveBatcher(AdaptiveBatcherOptions options, BlockingBatchExecutor<Item>* executor)
      : AdaptiveBatcher(options, executor, executor, nullptr) {}
  AdaptiveBatcher(AdaptiveBatcherOptions options, AsyncBatchExecutor<Item>* executor)
      : AdaptiveBatcher(options, executor, nullptr, executor) {}
  // Shutdown(kExecute), unless Shutdown was called already.
  ~AdaptiveBatcher() { Shutdown(Queued::kExecute); }
  AdaptiveBatcher(const AdaptiveBatcher&) = delete;
  AdaptiveBatcher& operator=(const AdaptiveBatcher&) = delete;

  // Queues `item` for a batch and returns without waiting for it; when a
  // slot is free and the executor is asynchronous, the batch starts on this
  // thread. The item is answered by the executor: through its batch, or
  // Refuse (see the file comment) on this thread at once when it is refused.
  void Submit(Item item, Clock::time_point deadline = Clock::time_point::max());
  // Queues `items` together (a group, see the file comment), all or none.
  void SubmitGroup(std::vector<Item> items, Clock::time_point deadline = Clock::time_point::max());

  // What Shutdown does with the items still queued.
  enum class Queued { kExecute, kRefuse };
  // Refuses new items, executes or refuses what is queued, waits until
  // every batch out has finished, and stops the batcher's threads. A second
  // call waits for the first. Never from an executor's call.
  void Shutdown(Queued queued);

  struct Stats {
    uint64_t batches = 0;             // batches formed (and executed)
    uint64_t items = 0;               // items in them
    uint64_t refused_queue_full = 0;  // items refused kQueueFull
    uint64_t expired_queued = 0;      // items answered kExpired (at Submit or queued)
    size_t queued = 0;                // items waiting now
    int in_flight = 0;                // batches out now
    // Items per batch formed.
    HistogramCounts batch_sizes{BatchSizeBounds()};
    // Per batch formed: how long its first (oldest) item had waited in the
    // queue, in seconds.
    HistogramCounts queue_wait_seconds{WaitSecondsBounds()};
  };
  Stats GetStats() const;

 private:
  struct Entry {
    Item item;
    Clock::time_point deadline;
    size_t group_left;           // items of its group from this one on (1 alone)
    Clock::time_point enqueued;  // for Stats::queue_wait_seconds
  };
  using Started = absl::InlinedVector<std::pair<size_t, std::vector<Item>>, 1>;
  static constexpr size_t kNoSlot = ~size_t{0};

  AdaptiveBatcher(AdaptiveBatcherOptions options, BatchExecutor<Item>* executor,
                  BlockingBatchExecutor<Item>* blocking, AsyncBatchExecutor<Item>* async);

  // With mu_ held: the refusal of `n` items with `deadline`, if any.
  std::optional<Refusal> Admit(size_t n, Clock::time_point deadline);
  void Enqueue(Item item, Clock::time_point deadline, size_t group_left, Clock::time_point now);
  // After items were queued: starts a batch (async) or wakes a thread.
  // Releases `lock`.
  void Dispatch(std::unique_lock<std::mutex>& lock);
  // Whether a batch may start now on a free slot. With mu_ held.
  bool MayStart() const;
  // When the parallel rule allows a batch by age (max(): not by age).
  Clock::time_point ParallelAt() const;
  // With mu_ held, when items stay queued: wakes the timer when a batch may
  // start by age (and `deadline`, when expire_on_time).
  void ArmTimer(Clock::time_point deadline = Clock::time_point::max());
  // With mu_ held: the next batch from the front of the queue, counted in
  // stats_; queued items past their deadline go to `expired` instead. Empty
  // when nothing queued is left.
  std::vector<Item> TakeBatch(std::vector<Item>& expired);
  // With mu_ held: moves queued items whose deadline is at or before `now`
  // to `expired`; returns the earliest deadline left (max() if none).
  Clock::time_point TakeExpired(Clock::time_point now, std::vector<Item>& expired);
  void RefuseExpired(std::vector<Item>& expired);

  // Asynchronous executor: takes free slots and batches while MayStart
  // (arming the timer for `deadline` if items stay queued), releases `lock`,
  // answers what expired (each slot still held), then starts the batches;
  // touches nothing of the batcher after the last Start (its `finished` may
  // let Shutdown return).
  void StartBatches(std::unique_lock<std::mutex>& lock,
                    Clock::time_point deadline = Clock::time_point::max());
  size_t TakeSlot();
  void ReleaseSlot(size_t slot);
  void FinishBatch(size_t slot) override;

  // Blocking executor: the loop of the thread of `slot`.
  void WorkLoop(size_t slot);
  void RunBatch(std::unique_lock<std::mutex>& lock, size_t slot);
  void Idle(std::unique_lock<std::mutex>& lock, size_t slot);
  // The condition variable of the thread that went idle last, if any.
  std::condition_variable* PickIdle();

  // Expires queued items on time and starts batches by age.
  void TimerLoop();

  const AdaptiveBatcherOptions options_;
  BatchExecutor<Item>* const executor_;
  BlockingBatchExecutor<Item>* const blocking_;  // one of these two
  AsyncBatchExecutor<Item>* const async_;
  const bool by_age_;     // the parallel rule has an age
  const bool has_timer_;  // timer_ runs (expire_on_time or by_age_)

  mutable std::mutex mu_;
  std::condition_variable all_done_;  // busy_ reached 0, or closed_
  std::condition_variable timer_wake_;
  // Blocking: one per thread (by slot): new work, or closing_.
  std::unique_ptr<std::condition_variable[]> work_;
  // Guarded by mu_:
  std::deque<Entry> queue_;  // oldest first
  size_t queued_with_deadline_ = 0;
  int busy_ = 0;                                           // batches out
  std::vector<Clock::time_point> busy_since_;              // by slot; max() while free
  std::vector<size_t> free_slots_;                         // async: last freed last
  std::vector<size_t> idle_;                               // blocking: last idle last
  Clock::time_point timer_at_ = Clock::time_point::max();  // the timer's next wake
  bool timer_stop_ = false;
  bool closing_ = false;  // Shutdown began
  bool closed_ = false;   // Shutdown returned
  Stats stats_;

  std::vector<std::thread> workers_;
  std::thread timer_;
};

}  // namespace shortener::batching

#include "lib/batching/adaptive_batcher_impl.h"  // IWYU pragma: export

#endif  // SHORTENER_LIB_BATCHING_ADAPTIVE_BATCHER_H_
