#include "edge/clicks/click_queue.h"

#include <algorithm>
#include <utility>

namespace shortener::edge {

ClickQueue::ClickQueue(ClickQueueOptions options) : options_(options) {}

bool ClickQueue::Push(ClickEvent event) {
  const size_t bytes = event.ApproximateBytes();
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || events_.size() >= options_.max_events || bytes_ + bytes > options_.max_bytes) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    events_.push_back(std::move(event));
    bytes_ += bytes;
    wake = wake_at_ != 0 && events_.size() >= wake_at_;
    if (wake) wake_at_ = 0;  // one notification per wait
  }
  pushed_.fetch_add(1, std::memory_order_relaxed);
  if (wake) cv_.notify_one();
  return true;
}

bool ClickQueue::WaitForBatch(size_t batch, std::chrono::steady_clock::time_point deadline) {
  batch = std::max<size_t>(1, batch);
  std::unique_lock<std::mutex> lock(mu_);
  while (events_.size() < batch && !closed_) {
    wake_at_ = batch;
    if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  wake_at_ = 0;
  return events_.size() >= batch;
}

std::vector<ClickEvent> ClickQueue::Pop(size_t max) {
  std::vector<ClickEvent> out;
  std::lock_guard<std::mutex> lock(mu_);
  const size_t n = std::min(max, events_.size());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    bytes_ -= events_.front().ApproximateBytes();
    out.push_back(std::move(events_.front()));
    events_.pop_front();
  }
  return out;
}

void ClickQueue::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

ClickQueueStats ClickQueue::Stats() const {
  ClickQueueStats stats;
  stats.pushed = pushed_.load(std::memory_order_relaxed);
  stats.dropped_full = dropped_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  stats.events = events_.size();
  stats.bytes = bytes_;
  return stats;
}

}  // namespace shortener::edge
