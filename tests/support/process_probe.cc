#include "tests/support/process_probe.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace shortener::testing {
namespace {

// "VmRSS:	   12345 kB" -> bytes, if `line` is the field `name`.
bool ParseKilobytes(absl::string_view line, absl::string_view name, uint64_t* bytes) {
  if (!absl::ConsumePrefix(&line, name) || !absl::ConsumePrefix(&line, ":")) return false;
  line = absl::StripAsciiWhitespace(line);
  if (!absl::ConsumeSuffix(&line, "kB")) return false;
  uint64_t kilobytes = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &kilobytes)) return false;
  *bytes = kilobytes * 1024;
  return true;
}

absl::Status CheckCpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    return absl::FailedPreconditionError(absl::StrCat("no CPU ", cpu));
  }
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof(mine), &mine) == 0 && !CPU_ISSET(cpu, &mine)) {
    return absl::FailedPreconditionError(absl::StrCat("CPU ", cpu, " is not usable here"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ProcessMemory> ReadProcessMemory(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  if (!in) return absl::NotFoundError(absl::StrCat("no process ", pid));
  ProcessMemory memory;
  bool rss = false;
  bool peak = false;
  for (std::string line; std::getline(in, line);) {
    rss = rss || ParseKilobytes(line, "VmRSS", &memory.rss_bytes);
    peak = peak || ParseKilobytes(line, "VmHWM", &memory.peak_rss_bytes);
  }
  // A zombie has no Vm* lines left.
  if (!rss || !peak) return absl::NotFoundError(absl::StrCat("process ", pid, " has exited"));
  return memory;
}

absl::Status PinProcessToCpu(pid_t pid, int cpu) {
  if (absl::Status ok = CheckCpu(cpu); !ok.ok()) return ok;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return absl::NotFoundError(absl::StrCat("no process ", pid));
  int pinned = 0;
  while (dirent* entry = readdir(dir)) {
    pid_t tid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &tid)) continue;
    // A thread that exits meanwhile is no failure.
    if (sched_setaffinity(tid, sizeof(set), &set) == 0) ++pinned;
  }
  closedir(dir);
  if (pinned == 0) return absl::NotFoundError(absl::StrCat("process ", pid, " has no threads"));
  return absl::OkStatus();
}

absl::Status PinThisThreadToCpu(int cpu) {
  if (absl::Status ok = CheckCpu(cpu); !ok.ok()) return ok;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0)
    return absl::InternalError(absl::StrCat("pthread_setaffinity_np: ", std::strerror(rc)));
  return absl::OkStatus();
}

std::vector<int> UsableCpus() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mine)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace shortener::testing
