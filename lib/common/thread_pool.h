// A fixed pool of threads running queued closures: where blocking work (a
// database read) goes so that gRPC reactor threads never block.
// Thread-safe. The destructor runs everything already queued, then joins.
//
// Uses std::mutex rather than absl::Mutex: Debian's abseil is not built with
// TSan instrumentation, so TSan cannot see absl::Mutex synchronisation.
#ifndef SHORTENER_LIB_COMMON_THREAD_POOL_H_
#define SHORTENER_LIB_COMMON_THREAD_POOL_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

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

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_THREAD_POOL_H_
