// What a test may ask the kernel about the processes it started: a
// process's memory as /proc/<pid>/status reports it, and CPU pinning of a
// whole process or of the calling thread (load tests keep the load generator
// off the CPU the server under test runs on).
//
// Thread safety: free functions; each call reads or sets kernel state only.
#ifndef SHORTENER_TESTS_SUPPORT_PROCESS_PROBE_H_
#define SHORTENER_TESTS_SUPPORT_PROCESS_PROBE_H_

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace shortener::testing {

struct ProcessMemory {
  uint64_t rss_bytes = 0;       // VmRSS: resident now
  uint64_t peak_rss_bytes = 0;  // VmHWM: the most ever resident since start
};

// VmRSS and VmHWM of `pid`. NOT_FOUND once the process is gone.
absl::StatusOr<ProcessMemory> ReadProcessMemory(pid_t pid);

// Pins every thread `pid` has now to `cpu` (threads it starts later inherit
// the mask of the thread that starts them). FAILED_PRECONDITION if the
// machine has no such CPU, NOT_FOUND if the process is gone.
absl::Status PinProcessToCpu(pid_t pid, int cpu);

// Pins the calling thread to `cpu`.
absl::Status PinThisThreadToCpu(int cpu);

// The CPUs this process may run on (its affinity mask), in order.
std::vector<int> UsableCpus();

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_PROCESS_PROBE_H_
