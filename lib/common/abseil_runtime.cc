#include "lib/common/abseil_runtime.h"

#include "absl/synchronization/mutex.h"

namespace shortener::common {

void DisableMutexDeadlockDetection() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace shortener::common
