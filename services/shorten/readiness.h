// Readiness: what shorten-service's /readyz answers (admin listener,
// docs/operations.md "Admin listener"). Ready when all of:
//  - serving: the gRPC server has started and no termination signal came
//    (SetServing(false) when draining starts);
//  - the database answered the latest probe: `ping` runs every `period`
//    on a thread of its own (at once on construction), so /readyz itself
//    never waits on the database.
// Until the first probe has answered, not ready. A change of the
// database's answer is logged once (not every period).
//
// Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_READINESS_H_
#define SHORTENER_SERVICES_SHORTEN_READINESS_H_

#include <atomic>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "services/shorten/periodic_task.h"

namespace shortener::service {

class Readiness {
 public:
  // `ping` must be thread-safe and bound its own wait (well under `period`
  // is best); it outlives this object.
  Readiness(std::function<absl::Status()> ping, absl::Duration period);
  // Stops the probes (waits for one in progress).
  ~Readiness() = default;

  void SetServing(bool serving) { serving_.store(serving, std::memory_order_relaxed); }
  bool Ready() const {
    return serving_.load(std::memory_order_relaxed) && database_ok_.load(std::memory_order_relaxed);
  }
  bool DatabaseOk() const { return database_ok_.load(std::memory_order_relaxed); }

 private:
  void Probe();

  const std::function<absl::Status()> ping_;
  std::atomic<bool> serving_{false};
  std::atomic<bool> database_ok_{false};
  bool logged_ok_ = true;               // only the probe thread: the last state logged
  std::unique_ptr<PeriodicTask> task_;  // last: starts after the members it reads
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_READINESS_H_
