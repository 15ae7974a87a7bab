// A fixed pool of threads running queued closures: where blocking work (a
// database read) goes so that gRPC reactor threads never block.
//
// Bounded: at most `max_queued` closures wait for a thread (those running
// are not counted). Schedule refuses more with RESOURCE_EXHAUSTED naming
// the pool and its bound, and does not run the closure: the caller answers
// its request with that status (for an RPC: "retry later"), so a flood of
// calls costs bounded memory instead of a queue that grows until the
// process dies.
//
// Thread-safe. The destructor runs everything already queued, then joins;
// Schedule must not be called once destruction has begun.
//
// Uses std::mutex rather than absl::Mutex: Debian's abseil is not built with
// TSan instrumentation, so TSan cannot see absl::Mutex synchronisation.
#ifndef SHORTENER_LIB_COMMON_THREAD_POOL_H_
#define SHORTENER_LIB_COMMON_THREAD_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace shortener {

struct ThreadPoolOptions {
  // Names the pool in refusals ("blocking pool"). Default "thread pool".
  std::string name = "thread pool";
  // Threads; below 1 counts as 1. Default 1.
  int threads = 1;
  // Closures waiting for a thread at most; 0 counts as 1. Default: no bound
  // (tests and tools only: every pool of a server sets one).
  size_t max_queued = std::numeric_limits<size_t>::max();
};

class ThreadPool {
 public:
  explicit ThreadPool(ThreadPoolOptions options);
  // Unbounded: for tests and tools.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `fn` for a pool thread. RESOURCE_EXHAUSTED "<name> is full:
  // <max_queued> tasks are waiting; retry later" when max_queued closures
  // wait already; `fn` is then destroyed without running.
  [[nodiscard]] absl::Status Schedule(std::function<void()> fn);

  struct Stats {
    uint64_t scheduled = 0;  // closures accepted
    uint64_t refused = 0;    // closures refused: the queue was full
    size_t queued = 0;       // waiting now
  };
  Stats GetStats() const;

  const std::string& name() const { return name_; }
  size_t max_queued() const { return max_queued_; }

 private:
  void Work();

  const std::string name_;
  const size_t max_queued_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  // Guarded by mu_:
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  Stats stats_;
  std::vector<std::thread> threads_;
};

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_THREAD_POOL_H_
