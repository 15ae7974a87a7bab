// Runs wrk (Debian's 4.1) as a child process and reads its report:
// requests/s, request count, latency percentiles (--latency), errors, plus
// "edgebench <key> <value>" lines a Lua script's done() prints, and the CPU
// wrk itself used (it is often the limit on two cores).
#ifndef SHORTENER_TESTS_BENCH_EDGE_WRK_RUNNER_H_
#define SHORTENER_TESTS_BENCH_EDGE_WRK_RUNNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::bench::edge {

struct WrkOptions {
  std::string wrk = "/usr/bin/wrk";
  // Prepended to the command, e.g. {"/usr/bin/taskset", "-c", "1"}.
  std::vector<std::string> launcher;
  int threads = 1;                       // -t
  int connections = 64;                  // -c
  int seconds = 10;                      // -d
  int timeout_s = 5;                     // --timeout
  std::string url;                       // http://127.0.0.1:PORT/path
  std::string script;                    // -s, optional
  std::vector<std::string> script_args;  // after "--"
  std::string log_path;                  // wrk's stdout and stderr (required)
  // Polled every 100 ms while wrk runs; when it returns true wrk gets SIGINT
  // and reports what it did so far (a run that ends on a condition).
  std::function<bool()> stop_when;
};

struct WrkResult {
  double requests_per_s = 0;
  int64_t requests = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  int64_t non_2xx_3xx = 0;
  int64_t socket_errors = 0;                         // connect + read + write + timeout
  double wrk_cpu_s = 0;                              // user + system of wrk
  std::map<std::string, std::string> script_values;  // "edgebench KEY VALUE" lines
  std::string command;
  std::string output;
};

absl::StatusOr<WrkResult> RunWrk(const WrkOptions& options);

// Parses wrk's report text; INTERNAL if it holds no "Requests/sec" line.
absl::StatusOr<WrkResult> ParseWrkOutput(absl::string_view output);

}  // namespace shortener::bench::edge

#endif  // SHORTENER_TESTS_BENCH_EDGE_WRK_RUNNER_H_
