#include "services/shorten/periodic_task.h"

#include <utility>

namespace shortener::service {

PeriodicTask::PeriodicTask(absl::Duration period, std::function<void()> fn)
    : period_(period), fn_(std::move(fn)), thread_([this] { Loop(); }) {}

PeriodicTask::~PeriodicTask() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PeriodicTask::RunSoon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    soon_ = true;
  }
  wake_.notify_all();
}

void PeriodicTask::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    soon_ = false;
    lock.unlock();
    fn_();
    lock.lock();
    // A condition variable rather than a sleep: shutdown must not wait a day.
    wake_.wait_for(lock, absl::ToChronoMilliseconds(period_), [this] { return stop_ || soon_; });
  }
}

}  // namespace shortener::service
