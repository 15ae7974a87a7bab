// The template definitions of AdaptiveBatcher; include
// lib/batching/adaptive_batcher.h, not this file.
#ifndef SHORTENER_LIB_BATCHING_ADAPTIVE_BATCHER_IMPL_H_
#define SHORTENER_LIB_BATCHING_ADAPTIVE_BATCHER_IMPL_H_

#include "lib/batching/adaptive_batcher.h"

namespace shortener::batching {

template <typename Item>
AdaptiveBatcher<Item>::AdaptiveBatcher(AdaptiveBatcherOptions options,
                                       BatchExecutor<Item>* executor,
                                       BlockingBatchExecutor<Item>* blocking,
                                       AsyncBatchExecutor<Item>* async)
    : options_(NormalizedOptions(options)),
      executor_(executor),
      blocking_(blocking),
      async_(async),
      by_age_(options_.parallel_backlog > 1 && options_.parallel_after != Clock::duration::max()),
      has_timer_(options_.expire_on_time || by_age_) {
  const size_t slots = static_cast<size_t>(options_.max_in_flight);
  busy_since_.assign(slots, Clock::time_point::max());
  if (blocking_ != nullptr) {
    work_ = std::make_unique<std::condition_variable[]>(slots);
    idle_.reserve(slots);
    workers_.reserve(slots);
    for (size_t i = 0; i < slots; ++i) workers_.emplace_back([this, i] { WorkLoop(i); });
  } else {
    // Slot 0 is taken first.
    for (size_t i = slots; i > 0; --i) free_slots_.push_back(i - 1);
  }
  if (has_timer_) timer_ = std::thread([this] { TimerLoop(); });
}

template <typename Item>
void AdaptiveBatcher<Item>::Submit(Item item, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (std::optional<Refusal> refusal = Admit(1, deadline)) {
    lock.unlock();
    executor_->Refuse(absl::MakeSpan(&item, 1), *refusal);
    return;
  }
  Enqueue(std::move(item), deadline, 1, Clock::now());
  Dispatch(lock);
}

template <typename Item>
void AdaptiveBatcher<Item>::SubmitGroup(std::vector<Item> items, Clock::time_point deadline) {
  if (items.empty()) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (std::optional<Refusal> refusal = Admit(items.size(), deadline)) {
    lock.unlock();
    executor_->Refuse(absl::MakeSpan(items), *refusal);
    return;
  }
  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < items.size(); ++i) {
    Enqueue(std::move(items[i]), deadline, items.size() - i, now);
  }
  Dispatch(lock);
}

template <typename Item>
std::optional<Refusal> AdaptiveBatcher<Item>::Admit(size_t n, Clock::time_point deadline) {
  if (closing_) return Refusal{Refusal::Reason::kShuttingDown};
  if (deadline != Clock::time_point::max() && Clock::now() >= deadline) {
    stats_.expired_queued += n;
    return Refusal{Refusal::Reason::kExpired};
  }
  const size_t max_queued = static_cast<size_t>(options_.max_queued);
  if (!queue_.empty() && queue_.size() + n > max_queued) {
    stats_.refused_queue_full += n;
    return Refusal{Refusal::Reason::kQueueFull, queue_.size(), max_queued};
  }
  return std::nullopt;
}

template <typename Item>
void AdaptiveBatcher<Item>::Enqueue(Item item, Clock::time_point deadline, size_t group_left,
                                    Clock::time_point now) {
  queue_.push_back(Entry{std::move(item), deadline, group_left, now});
  if (deadline != Clock::time_point::max()) ++queued_with_deadline_;
}

template <typename Item>
void AdaptiveBatcher<Item>::Dispatch(std::unique_lock<std::mutex>& lock) {
  // Only what stays queued needs the timer for its deadline.
  const Clock::time_point deadline =
      options_.expire_on_time ? queue_.back().deadline : Clock::time_point::max();
  if (async_ != nullptr) {
    StartBatches(lock, deadline);
    return;
  }
  std::condition_variable* wake = nullptr;
  if (MayStart()) {
    wake = PickIdle();
  } else {
    ArmTimer(deadline);
  }
  lock.unlock();
  // A thread that is busy finds the queue when it is done; waking one for
  // nothing would cost a context switch per item.
  if (wake != nullptr) wake->notify_one();
}

template <typename Item>
bool AdaptiveBatcher<Item>::MayStart() const {
  if (queue_.empty() || busy_ >= options_.max_in_flight) return false;
  if (closing_ || busy_ == 0) return true;
  if (queue_.size() >= static_cast<size_t>(options_.parallel_backlog)) return true;
  return by_age_ && Clock::now() >= ParallelAt();
}

template <typename Item>
typename AdaptiveBatcher<Item>::Clock::time_point AdaptiveBatcher<Item>::ParallelAt() const {
  if (!by_age_) return Clock::time_point::max();
  const Clock::time_point oldest = *std::min_element(busy_since_.begin(), busy_since_.end());
  // Saturating: a huge parallel_after must not overflow.
  if (options_.parallel_after >= Clock::time_point::max() - oldest) {
    return Clock::time_point::max();
  }
  return oldest + options_.parallel_after;
}

template <typename Item>
void AdaptiveBatcher<Item>::ArmTimer(Clock::time_point deadline) {
  if (!has_timer_) return;
  Clock::time_point at = deadline;
  if (busy_ > 0 && busy_ < options_.max_in_flight && !queue_.empty()) {
    at = std::min(at, ParallelAt());
  }
  if (at < timer_at_) {
    timer_at_ = at;
    timer_wake_.notify_one();
  }
}

template <typename Item>
std::vector<Item> AdaptiveBatcher<Item>::TakeBatch(std::vector<Item>& expired) {
  const Clock::time_point now = Clock::now();
  if (queued_with_deadline_ > 0) TakeExpired(now, expired);
  const size_t max_batch = static_cast<size_t>(options_.max_batch);
  std::vector<Item> batch;
  batch.reserve(std::min(queue_.size(), max_batch));
  if (!queue_.empty()) {
    stats_.queue_wait_seconds.Observe(
        std::chrono::duration<double>(now - queue_.front().enqueued).count());
  }
  size_t group_rest = 0;  // items of the group taken last still to come
  while (!queue_.empty() && batch.size() < max_batch) {
    Entry& front = queue_.front();
    // A group that starts here and does not fit in what is left waits for
    // the next batch, unless the batch is empty (then it is split).
    if (group_rest == 0 && !batch.empty() && batch.size() + front.group_left > max_batch) break;
    group_rest = front.group_left - 1;
    if (front.deadline != Clock::time_point::max()) --queued_with_deadline_;
    batch.push_back(std::move(front.item));
    queue_.pop_front();
  }
  if (!batch.empty()) {
    stats_.batches += 1;
    stats_.items += batch.size();
    stats_.batch_sizes.Observe(static_cast<double>(batch.size()));
  }
  return batch;
}

template <typename Item>
typename AdaptiveBatcher<Item>::Clock::time_point AdaptiveBatcher<Item>::TakeExpired(
    Clock::time_point now, std::vector<Item>& expired) {
  Clock::time_point earliest = Clock::time_point::max();
  if (queued_with_deadline_ == 0) return earliest;
  // Deadlines are nearly in queue order; the queue is bounded (max_queued).
  auto keep = queue_.begin();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->deadline <= now) {
      expired.push_back(std::move(it->item));
      continue;
    }
    earliest = std::min(earliest, it->deadline);
    if (keep != it) *keep = std::move(*it);
    ++keep;
  }
  const size_t n = static_cast<size_t>(queue_.end() - keep);
  queue_.erase(keep, queue_.end());
  queued_with_deadline_ -= n;
  stats_.expired_queued += n;
  return earliest;
}

template <typename Item>
void AdaptiveBatcher<Item>::RefuseExpired(std::vector<Item>& expired) {
  if (!expired.empty()) {
    executor_->Refuse(absl::MakeSpan(expired), Refusal{Refusal::Reason::kExpired});
  }
}

template <typename Item>
void AdaptiveBatcher<Item>::StartBatches(std::unique_lock<std::mutex>& lock,
                                         Clock::time_point deadline) {
  for (;;) {
    Started started;
    std::vector<Item> expired;
    // Holds a slot while what expired is answered, when no batch came of it.
    size_t expired_slot = kNoSlot;
    while (MayStart()) {
      const size_t slot = TakeSlot();
      std::vector<Item> batch = TakeBatch(expired);
      if (batch.empty()) {
        expired_slot = slot;
        break;
      }
      started.emplace_back(slot, std::move(batch));
    }
    if (!queue_.empty()) ArmTimer(deadline);
    AsyncBatchExecutor<Item>* const async = async_;
    lock.unlock();
    // Nothing taken: no slot holds Shutdown back, so once unlocked the
    // batcher may be gone (a FinishBatch that freed the last slot).
    if (started.empty() && expired_slot == kNoSlot) return;
    // Before any Start: every slot taken above is still held, so Shutdown
    // cannot return while these are answered.
    RefuseExpired(expired);
    for (auto& [slot, batch] : started) {
      async->Start(std::move(batch), BatchFinished(this, slot));
    }
    if (expired_slot == kNoSlot) return;
    lock.lock();
    ReleaseSlot(expired_slot);
  }
}

template <typename Item>
size_t AdaptiveBatcher<Item>::TakeSlot() {
  const size_t slot = free_slots_.back();
  free_slots_.pop_back();
  ++busy_;
  if (by_age_) busy_since_[slot] = Clock::now();
  return slot;
}

template <typename Item>
void AdaptiveBatcher<Item>::ReleaseSlot(size_t slot) {
  busy_since_[slot] = Clock::time_point::max();
  free_slots_.push_back(slot);
  if (--busy_ == 0) all_done_.notify_all();
}

template <typename Item>
void AdaptiveBatcher<Item>::FinishBatch(size_t slot) {
  std::unique_lock<std::mutex> lock(mu_);
  // Released and (when something is queued) taken again under one lock:
  // Shutdown sees the slot busy throughout.
  ReleaseSlot(slot);
  StartBatches(lock);
}

template <typename Item>
void AdaptiveBatcher<Item>::WorkLoop(size_t slot) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (MayStart()) {
      RunBatch(lock, slot);
    } else if (closing_ && queue_.empty()) {
      return;  // everything is done
    } else {
      if (!queue_.empty()) ArmTimer();  // held back by the parallel rule
      Idle(lock, slot);
    }
  }
}

template <typename Item>
void AdaptiveBatcher<Item>::RunBatch(std::unique_lock<std::mutex>& lock, size_t slot) {
  bool ran = false;
  {
    std::vector<Item> expired;
    std::vector<Item> batch = TakeBatch(expired);
    std::condition_variable* wake = nullptr;
    if (!batch.empty()) {
      ran = true;
      ++busy_;
      if (by_age_) busy_since_[slot] = Clock::now();
      // What did not fit may go to an idle thread now, not after this batch.
      if (MayStart()) {
        wake = PickIdle();
      } else if (!queue_.empty()) {
        ArmTimer();
      }
    }
    lock.unlock();
    if (wake != nullptr) wake->notify_one();
    RefuseExpired(expired);
    if (ran) blocking_->Run(std::move(batch));
  }  // the items die here, without the lock
  lock.lock();
  if (ran) {
    --busy_;
    busy_since_[slot] = Clock::time_point::max();
  }
}

template <typename Item>
void AdaptiveBatcher<Item>::Idle(std::unique_lock<std::mutex>& lock, size_t slot) {
  idle_.push_back(slot);
  work_[slot].wait(lock);
  idle_.erase(std::find(idle_.begin(), idle_.end(), slot));
}

template <typename Item>
std::condition_variable* AdaptiveBatcher<Item>::PickIdle() {
  return idle_.empty() ? nullptr : &work_[idle_.back()];
}

template <typename Item>
void AdaptiveBatcher<Item>::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!timer_stop_) {
    const Clock::time_point now = Clock::now();
    std::vector<Item> expired;
    Clock::time_point next = Clock::time_point::max();
    if (options_.expire_on_time) next = TakeExpired(now, expired);
    if (!expired.empty()) {
      if (busy_ == 0 && queue_.empty()) all_done_.notify_all();
      lock.unlock();
      RefuseExpired(expired);
      expired.clear();
      lock.lock();
      continue;
    }
    if (MayStart()) {
      if (async_ != nullptr) {
        StartBatches(lock);
        lock.lock();
        continue;
      }
      std::condition_variable* wake = PickIdle();
      if (wake != nullptr) wake->notify_one();
    } else if (busy_ > 0) {
      // Armed for the age rule while any batch is out, queue empty or not:
      // items queued meanwhile then find it armed and need not wake it (one
      // wake per parallel_after, not one per batch).
      const Clock::time_point at = ParallelAt();
      if (at > now) next = std::min(next, at);
    }
    timer_at_ = next;
    if (next == Clock::time_point::max()) {
      timer_wake_.wait(lock);
    } else {
      timer_wake_.wait_until(lock, next);
    }
  }
}

template <typename Item>
void AdaptiveBatcher<Item>::Shutdown(Queued queued) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closing_) {
    all_done_.wait(lock, [this] { return closed_; });
    return;
  }
  closing_ = true;
  std::vector<Item> refused;
  if (queued == Queued::kRefuse) {
    refused.reserve(queue_.size());
    for (Entry& entry : queue_) refused.push_back(std::move(entry.item));
    queue_.clear();
    queued_with_deadline_ = 0;
  }
  if (async_ != nullptr) {
    StartBatches(lock);  // what the parallel rule held back goes now
  } else {
    lock.unlock();
  }
  if (!refused.empty()) {
    executor_->Refuse(absl::MakeSpan(refused), Refusal{Refusal::Reason::kShuttingDown});
  }
  for (size_t i = 0; i < workers_.size(); ++i) work_[i].notify_all();
  for (std::thread& worker : workers_) worker.join();
  lock.lock();
  all_done_.wait(lock, [this] { return busy_ == 0 && queue_.empty(); });
  timer_stop_ = true;
  timer_wake_.notify_all();
  lock.unlock();
  if (timer_.joinable()) timer_.join();
  lock.lock();
  closed_ = true;
  all_done_.notify_all();
}

template <typename Item>
typename AdaptiveBatcher<Item>::Stats AdaptiveBatcher<Item>::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats = stats_;
  stats.queued = queue_.size();
  stats.in_flight = busy_;
  return stats;
}

}  // namespace shortener::batching

#endif  // SHORTENER_LIB_BATCHING_ADAPTIVE_BATCHER_IMPL_H_
