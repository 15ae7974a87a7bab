// Process-wide Abseil settings for our binaries.
#ifndef SHORTENER_LIB_COMMON_ABSEIL_RUNTIME_H_
#define SHORTENER_LIB_COMMON_ABSEIL_RUNTIME_H_

namespace shortener::common {

// Turns off absl::Mutex's deadlock detector. Debian builds Abseil without
// NDEBUG, so the detector, meant for debug builds, runs in every process that
// links it, and gRPC takes all its locks through absl::Mutex: every lock
// taken while another is held updates a process-wide lock-order graph (a
// nested lock and destroy cost ~80 ns instead of ~16 ns here), and a cycle
// in that graph, even a harmless one inside gRPC, aborts the process. Call
// first thing in main(), before any thread starts. Tests keep the detector.
void DisableMutexDeadlockDetection();

}  // namespace shortener::common

#endif  // SHORTENER_LIB_COMMON_ABSEIL_RUNTIME_H_
