// Small helpers shared by the benchmark drivers (tests/bench/*): reading a
// child's output file, quoting its tail in errors, picking numbers out of
// tool output (pgbench, wrk), naming the CPU in reports.
#ifndef SHORTENER_TESTS_BENCH_COMMON_BENCH_UTIL_H_
#define SHORTENER_TESTS_BENCH_COMMON_BENCH_UTIL_H_

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "lib/common/abseil_runtime.h"

namespace shortener::bench {

// The whole file; empty if it cannot be read.
std::string ReadFile(const std::string& path);

// The last `n` bytes of `s` (all of it if shorter).
std::string Tail(const std::string& s, size_t n);

// The number after `prefix` on the first line that starts with it
// ("tps = 1234.5 (without ...)" with prefix "tps = " gives 1234.5).
bool NumberAfter(absl::string_view output, absl::string_view prefix, double* value);

// "model name" of the first CPU in /proc/cpuinfo, or "unknown".
std::string CpuModel();

// From now on SIGINT, SIGTERM and SIGHUP stop what this process started (the
// clusters and services in the temp dirs it owns, see
// tests/support/orphan_reaper.h) and exit with 128 + the signal, after a
// line on stderr naming `name`. Without it, a benchmark stopped by a signal
// left its cluster and service running until the next test run reaped them.
void StopChildrenOnSignals(const char* name);

// Whether a signal is stopping the process: then whatever failed on the way
// failed because of it, and the signal's own exit is on its way (this call
// then never returns).
void AwaitExitIfStoppingOnSignal();

// The main() of a benchmark driver: parses the flags, makes its Config with
// `from_flags` (given the command line, for the report) and runs it. Exits
// 2 for bad flags, 1 when the run fails, 0 otherwise; errors go to stderr
// after `name`.
template <typename Config>
int BenchmarkMain(int argc, char** argv, const char* name, const char* usage,
                  absl::StatusOr<Config> (*from_flags)(const std::string& command),
                  absl::Status (*run)(const Config& config)) {
  common::DisableMutexDeadlockDetection();
  StopChildrenOnSignals(name);
  absl::SetProgramUsageMessage(usage);
  const std::vector<std::string> args(argv, argv + argc);
  absl::ParseCommandLine(argc, argv);
  absl::StatusOr<Config> config = from_flags(absl::StrJoin(args, " "));
  if (!config.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, std::string(config.status().message()).c_str());
    return 2;
  }
  absl::Status st = run(*config);
  // A load whose cluster a signal has just stopped fails: not its error.
  AwaitExitIfStoppingOnSignal();
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, st.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_COMMON_BENCH_UTIL_H_
