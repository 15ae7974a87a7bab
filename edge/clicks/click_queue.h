// The bounded in-memory queue between the event loops (producers) and the
// click sender (the one consumer).
//
// Push never blocks on anything but a short critical section (a move into a
// deque): when the queue is full (events or bytes) or closed, the event is
// dropped and counted, so a redirect never waits for analytics. The
// consumer is woken only when a whole batch is waiting (or by its own
// timeout), not on every push, so producers rarely pay for a wake-up.
//
// Thread safety: all methods are thread-safe; WaitForBatch and Pop are meant
// for one consumer thread.
#ifndef SHORTENER_EDGE_CLICKS_CLICK_QUEUE_H_
#define SHORTENER_EDGE_CLICKS_CLICK_QUEUE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "edge/clicks/click_event.h"

namespace shortener::edge {

struct ClickQueueOptions {
  size_t max_events = 100'000;          // --click_queue_events
  size_t max_bytes = 64 * 1024 * 1024;  // --click_queue_bytes (ApproximateBytes)
};

struct ClickQueueStats {
  uint64_t pushed = 0;        // events accepted
  uint64_t dropped_full = 0;  // events refused: queue full (or closed)
  uint64_t events = 0;        // events waiting now
  uint64_t bytes = 0;         // their approximate bytes
};

class ClickQueue {
 public:
  explicit ClickQueue(ClickQueueOptions options);

  // Queues `event`; false (and counted) when the queue is full or closed.
  bool Push(ClickEvent event);

  // Waits until at least `batch` events wait, the queue is closed, or
  // `deadline` passes. True if `batch` events wait.
  bool WaitForBatch(size_t batch, std::chrono::steady_clock::time_point deadline);

  // Removes and returns up to `max` of the oldest events.
  std::vector<ClickEvent> Pop(size_t max);

  // Refuses further pushes (counted as drops) and wakes the consumer.
  void Close();

  ClickQueueStats Stats() const;

 private:
  const ClickQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ClickEvent> events_;  // guarded by mu_
  size_t bytes_ = 0;               // guarded by mu_
  size_t wake_at_ = 0;             // guarded by mu_; 0: the consumer is not waiting
  bool closed_ = false;            // guarded by mu_
  std::atomic<uint64_t> pushed_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CLICKS_CLICK_QUEUE_H_
