// PeriodicTask: runs a function on its own thread at start and then every
// `period` until destroyed (for housekeeping such as the visits retention
// sweep). The destructor wakes the thread and joins it, waiting for a run in
// progress.
//
// Thread-safe; the function runs on the task's thread only.
#ifndef SHORTENER_SERVICES_SHORTEN_PERIODIC_TASK_H_
#define SHORTENER_SERVICES_SHORTEN_PERIODIC_TASK_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace shortener::service {

class PeriodicTask {
 public:
  PeriodicTask(absl::Duration period, std::function<void()> fn);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Runs the function again as soon as the run in progress (if any) ends,
  // instead of at the end of the period; the period starts again from that
  // run. Calls while a run is due anyway make no extra run.
  void RunSoon();

 private:
  void Loop();

  const absl::Duration period_;
  const std::function<void()> fn_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;   // guarded by mu_
  bool soon_ = false;   // guarded by mu_
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_PERIODIC_TASK_H_
