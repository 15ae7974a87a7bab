// What a benchmark window cost, read from /proc: CPU seconds of one process
// (all its threads), of a process and its children (nginx's master and
// workers, the postmaster and its backends), of this driver's reaped
// children (wrk, pgbench), per-CPU busy time of the machine, and a process's
// resident memory.
//
// All functions are best effort: what cannot be read is 0 (a probe must
// never stop a benchmark). Not thread-safe only in the sense that they read
// a moving system; each call is independent.
#ifndef SHORTENER_TESTS_BENCH_EDGE_PROC_STATS_H_
#define SHORTENER_TESTS_BENCH_EDGE_PROC_STATS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace shortener::bench::edge {

// utime + stime of every thread of `pid`, in seconds (clock-tick resolution,
// 10 ms here: use windows of seconds).
double ProcessCpuSeconds(pid_t pid);

// `root` (including the children it has reaped: cutime + cstime) plus its
// live direct children. The difference of two samples is the cost of the
// tree over the window even when children exit in between.
double ProcessTreeCpuSeconds(pid_t root);

// The live processes whose parent is `root` (the postmaster's backends).
std::vector<pid_t> ChildPids(pid_t root);

// Restricts every thread of `pid` to CPU `cpu` (sched_setaffinity); children
// it forks later inherit that. INTERNAL naming the pid if a thread refuses.
absl::Status PinProcess(pid_t pid, int cpu);
// Adds CPU `cpu` to what every thread of `pid` may run on.
absl::Status AllowCpu(pid_t pid, int cpu);

// Puts every thread of `pid` in SCHED_IDLE (runs only when its CPU has
// nothing else to do) or back in SCHED_OTHER; children forked later inherit
// it. INTERNAL naming the pid if a thread refuses.
absl::Status SetIdlePriority(pid_t pid, bool idle);

// user + system CPU of this process's children that have been waited for
// (getrusage RUSAGE_CHILDREN): sampled around a child's run, its own CPU.
double ReapedChildrenCpuSeconds();

// Busy (all but idle and iowait) and total seconds of each CPU, /proc/stat.
struct CpuSample {
  std::vector<double> busy_s;
  std::vector<double> total_s;
};
CpuSample SampleCpus();
// Busy fraction (0..1) of each CPU between two samples.
std::vector<double> BusyFractions(const CpuSample& before, const CpuSample& after);

// A field of /proc/<pid>/status in kB (e.g. "VmRSS", "VmHWM"); -1 if absent.
int64_t StatusKb(pid_t pid, const std::string& field);

// The postmaster's PID from <data_dir>/postmaster.pid; 0 if unreadable.
pid_t PostmasterPid(const std::string& data_dir);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_PROC_STATS_H_
