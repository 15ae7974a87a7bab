#include "lib/common/thread_pool.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace shortener {

ThreadPool::ThreadPool(ThreadPoolOptions options)
    : name_(std::move(options.name)), max_queued_(std::max<size_t>(1, options.max_queued)) {
  const int threads = std::max(1, options.threads);
  threads_.reserve(threads);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

ThreadPool::ThreadPool(int threads) : ThreadPool(ThreadPoolOptions{"thread pool", threads}) {}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

absl::Status ThreadPool::Schedule(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= max_queued_) {
      ++stats_.refused;
      // fn is destroyed by the caller's frame, outside the lock.
      return absl::ResourceExhaustedError(
          absl::StrCat(name_, " is full: ", max_queued_, " tasks are waiting; retry later"));
    }
    queue_.push_back(std::move(fn));
    ++stats_.scheduled;
  }
  ready_.notify_one();
  return absl::OkStatus();
}

ThreadPool::Stats ThreadPool::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats = stats_;
  stats.queued = queue_.size();
  return stats;
}

void ThreadPool::Work() {
  while (true) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping and drained
      fn = std::move(queue_.front());
      queue_.pop_front();
    }
    fn();
  }
}

}  // namespace shortener
