// Small helpers shared by the benchmark drivers (tests/bench/*): reading a
// child's output file, quoting its tail in errors, picking numbers out of
// tool output (pgbench, wrk), naming the CPU in reports.
#ifndef SHORTENER_TESTS_BENCH_COMMON_BENCH_UTIL_H_
#define SHORTENER_TESTS_BENCH_COMMON_BENCH_UTIL_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

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

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_COMMON_BENCH_UTIL_H_
