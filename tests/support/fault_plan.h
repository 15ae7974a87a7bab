// FaultPlan: what a fault-injecting wrapper around a seam (FaultyLinkStore,
// and the same kind of wrapper for the other store seams) does to the calls
// it forwards: fail the next N calls with a given status (or throw) instead
// of forwarding them, make every call slower, hold calls at a gate until the
// test opens it; and what it saw: calls, batch sizes and calling threads
// per method.
//
// A wrapper calls OnCall(method, items) first in each method and forwards
// only if it returns OK; a failed call never reaches the wrapped object.
// Method names are the wrapped interface's ("CreateLinks", "GetByIds", ...).
//
// Thread safety: every method is thread-safe; OnCall may block (latency,
// gate) and is meant to be called from the threads under test.
#ifndef SHORTENER_TESTS_SUPPORT_FAULT_PLAN_H_
#define SHORTENER_TESTS_SUPPORT_FAULT_PLAN_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::testing {

class FaultPlan {
 public:
  // The next `n` calls of `method` (of any method when empty) fail with
  // `status` (not OK). Later FailNext calls queue behind earlier ones.
  void FailNext(int n, absl::Status status, absl::string_view method = "");
  // The next `n` calls of `method` (any when empty) throw `exception` from
  // OnCall, i.e. out of the wrapper's method (a store broken by a bug).
  // They queue with FailNext's failures, in order.
  void ThrowNext(int n, std::exception_ptr exception, absl::string_view method = "");
  // Drops the failures and throws not used yet.
  void ClearFaults();
  // Every call sleeps `latency` before it is forwarded (or failed).
  void SetLatency(absl::Duration latency);
  // While closed, calls wait at the gate (after being counted) until
  // OpenGate. Open at first.
  void CloseGate();
  void OpenGate();
  // While the gate is closed, lets one call through: the one that has
  // waited at it longest, or the next to arrive.
  void PassOne();

  // Calls started so far, of `method` or of all when empty (failed ones
  // included).
  int64_t calls(absl::string_view method = "") const;
  // The `items` of every call of `method`, in the order they started.
  std::vector<size_t> batch_sizes(absl::string_view method) const;
  // Sum of batch_sizes(method).
  int64_t items(absl::string_view method) const;
  // The thread of every call of `method`, in the order they started.
  std::vector<std::thread::id> threads(absl::string_view method) const;
  // Whether `n` calls of `method` (all when empty) have started, waiting up
  // to `timeout`.
  bool WaitForCalls(int64_t n, absl::string_view method = "",
                    absl::Duration timeout = absl::Seconds(10)) const;

  // For wrappers: counts the call (`items`: the batch size, 1 for a single
  // item), waits out the latency and the gate, and returns the injected
  // failure or OK (or throws the injected exception).
  absl::Status OnCall(absl::string_view method, size_t items = 1);

 private:
  // Waits at the closed gate (until opened or passed). With mu_ held.
  void WaitAtGate(std::unique_lock<std::mutex>& lock, int64_t call);

  struct Failure {
    std::string method;  // empty: any
    absl::Status status;
    std::exception_ptr exception;  // thrown instead, when set
  };

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<Failure> failures_;  // in order; the first matching one is used
  absl::Duration latency_ = absl::ZeroDuration();
  bool gate_open_ = true;
  // Calls at the closed gate by arrival (their call numbers), those PassOne
  // let through, and passes for calls yet to arrive.
  std::deque<int64_t> waiting_;
  std::set<int64_t> passing_;
  int passes_for_next_ = 0;
  int64_t total_calls_ = 0;
  std::map<std::string, std::vector<size_t>, std::less<>> batches_;
  std::map<std::string, std::vector<std::thread::id>, std::less<>> threads_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_FAULT_PLAN_H_
