// A fixed pool of threads running queued closures: where blocking work (a
// database read) goes so that gRPC reactor threads never block.
// Thread-safe. The destructor runs everything already queued, then joins.
#ifndef SHORTENER_LIB_COMMON_THREAD_POOL_H_
#define SHORTENER_LIB_COMMON_THREAD_POOL_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace shortener {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);

 private:
  void Work();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_THREAD_POOL_H_
