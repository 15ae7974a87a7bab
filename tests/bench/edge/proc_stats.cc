#include "tests/bench/edge/proc_stats.h"

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace shortener::bench::edge {
namespace {

struct ProcStat {
  pid_t ppid = 0;
  double self_s = 0;      // utime + stime
  double children_s = 0;  // cutime + cstime (reaped children)
};

// /proc/<pid>/stat: "pid (comm) state ppid ... utime stime cutime cstime".
// comm may hold spaces and parentheses: fields are counted after the last ')'.
bool ReadProcStat(pid_t pid, ProcStat* out) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::vector<std::string> f = absl::StrSplit(line.substr(close + 1), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
  if (f.size() < 15) return false;
  int64_t ppid = 0, utime = 0, stime = 0, cutime = 0, cstime = 0;
  if (!absl::SimpleAtoi(f[1], &ppid) || !absl::SimpleAtoi(f[11], &utime) ||
      !absl::SimpleAtoi(f[12], &stime) || !absl::SimpleAtoi(f[13], &cutime) ||
      !absl::SimpleAtoi(f[14], &cstime)) {
    return false;
  }
  static const double kTick = static_cast<double>(sysconf(_SC_CLK_TCK));
  out->ppid = static_cast<pid_t>(ppid);
  out->self_s = static_cast<double>(utime + stime) / kTick;
  out->children_s = static_cast<double>(cutime + cstime) / kTick;
  return true;
}

}  // namespace

double ProcessCpuSeconds(pid_t pid) {
  ProcStat st;
  return pid > 0 && ReadProcStat(pid, &st) ? st.self_s : 0;
}

std::vector<pid_t> ChildPids(pid_t root) {
  std::vector<pid_t> children;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return children;
  while (struct dirent* e = readdir(dir)) {
    int64_t pid = 0;
    if (!absl::SimpleAtoi(e->d_name, &pid)) continue;
    ProcStat child;
    if (ReadProcStat(static_cast<pid_t>(pid), &child) && child.ppid == root) {
      children.push_back(static_cast<pid_t>(pid));
    }
  }
  closedir(dir);
  return children;
}

double ProcessTreeCpuSeconds(pid_t root) {
  ProcStat st;
  if (root <= 0 || !ReadProcStat(root, &st)) return 0;
  double total = st.self_s + st.children_s;
  for (pid_t child : ChildPids(root)) {
    ProcStat cs;
    if (ReadProcStat(child, &cs)) total += cs.self_s;
  }
  return total;
}

namespace {

// Calls `apply` on every thread of `pid`; the first failure, named `what`.
absl::Status ForEachThread(pid_t pid, const char* what, const std::function<int(pid_t)>& apply) {
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return absl::InternalError(absl::StrCat(what, ": no process ", pid));
  absl::Status status;
  while (struct dirent* e = readdir(dir)) {
    int64_t tid = 0;
    if (!absl::SimpleAtoi(e->d_name, &tid)) continue;
    if (apply(static_cast<pid_t>(tid)) != 0 && status.ok()) {
      status = absl::InternalError(
          absl::StrCat(what, ": thread ", tid, " of ", pid, ": ", std::strerror(errno)));
    }
  }
  closedir(dir);
  return status;
}

}  // namespace

absl::Status PinProcess(pid_t pid, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ForEachThread(pid, "sched_setaffinity",
                       [&set](pid_t tid) { return sched_setaffinity(tid, sizeof(set), &set); });
}

absl::Status AllowCpu(pid_t pid, int cpu) {
  return ForEachThread(pid, "sched_setaffinity", [cpu](pid_t tid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(tid, sizeof(set), &set) != 0) return -1;
    CPU_SET(cpu, &set);
    return sched_setaffinity(tid, sizeof(set), &set);
  });
}

absl::Status SetIdlePriority(pid_t pid, bool idle) {
  return ForEachThread(pid, "sched_setscheduler", [idle](pid_t tid) {
    sched_param param{};
    return sched_setscheduler(tid, idle ? SCHED_IDLE : SCHED_OTHER, &param);
  });
}

double ReapedChildrenCpuSeconds() {
  struct rusage ru {};
  if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return 0;
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

CpuSample SampleCpus() {
  CpuSample s;
  std::ifstream in("/proc/stat");
  std::string line;
  static const double kTick = static_cast<double>(sysconf(_SC_CLK_TCK));
  while (std::getline(in, line)) {
    // Per-CPU lines only: "cpu0 user nice system idle iowait irq softirq steal ...".
    if (!absl::StartsWith(line, "cpu") || line.size() < 4 || line[3] == ' ') continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 9) continue;
    int64_t v[8] = {};
    for (int i = 0; i < 8; ++i) absl::SimpleAtoi(f[i + 1], &v[i]);
    const int64_t total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    const int64_t idle = v[3] + v[4];
    s.busy_s.push_back(static_cast<double>(total - idle) / kTick);
    s.total_s.push_back(static_cast<double>(total) / kTick);
  }
  return s;
}

std::vector<double> BusyFractions(const CpuSample& before, const CpuSample& after) {
  std::vector<double> out;
  for (size_t i = 0; i < before.busy_s.size() && i < after.busy_s.size(); ++i) {
    const double total = after.total_s[i] - before.total_s[i];
    out.push_back(total > 0 ? (after.busy_s[i] - before.busy_s[i]) / total : 0);
  }
  return out;
}

int64_t StatusKb(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  const std::string prefix = field + ":";
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, prefix)) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, "kB");
    int64_t kb = 0;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kb) ? kb : -1;
  }
  return -1;
}

pid_t PostmasterPid(const std::string& data_dir) {
  std::ifstream in(data_dir + "/postmaster.pid");
  std::string line;
  int64_t pid = 0;
  if (!std::getline(in, line) || !absl::SimpleAtoi(line, &pid)) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace shortener::bench::edge
