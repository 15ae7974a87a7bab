#include "services/shorten/readiness.h"

#include <utility>

#include "lib/common/log.h"

namespace shortener::service {

Readiness::Readiness(std::function<absl::Status()> ping, absl::Duration period)
    : ping_(std::move(ping)), task_(std::make_unique<PeriodicTask>(period, [this] { Probe(); })) {}

void Readiness::Probe() {
  const absl::Status answer = ping_();
  database_ok_.store(answer.ok(), std::memory_order_relaxed);
  if (answer.ok() == logged_ok_) return;
  logged_ok_ = answer.ok();
  if (answer.ok()) {
    LogInfo("readiness: the database answers again: /readyz 200");
  } else {
    LogWarning("readiness: the database does not answer (%s): /readyz 503", answer.ToString());
  }
}

}  // namespace shortener::service
