#include "tests/bench/edge/wrk_runner.h"

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "tests/bench/common/bench_util.h"
#include "tests/bench/edge/proc_stats.h"
#include "tests/support/subprocess.h"

namespace shortener::bench::edge {
namespace {

// wrk prints times as "812.00us", "1.23ms", "2.00s", "1.00m"; to ms.
bool ParseTimeMs(absl::string_view text, double* ms) {
  struct Unit {
    const char* suffix;
    double to_ms;
  };
  // "ms" before "s", "us" before "s".
  static constexpr Unit kUnits[] = {
      {"us", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}};
  for (const Unit& u : kUnits) {
    absl::string_view t = text;
    if (!absl::ConsumeSuffix(&t, u.suffix)) continue;
    double v = 0;
    if (!absl::SimpleAtod(t, &v)) return false;
    *ms = v * u.to_ms;
    return true;
  }
  return false;
}

// wrk's counts with a unit suffix ("1.50k") are only in the thread table;
// the totals we read are plain integers.
bool ParseInt(absl::string_view text, int64_t* v) {
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(text), v);
}

}  // namespace

absl::StatusOr<WrkResult> ParseWrkOutput(absl::string_view output) {
  WrkResult r;
  bool have_rate = false;
  bool in_distribution = false;
  for (absl::string_view raw : absl::StrSplit(output, '\n')) {
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    std::vector<absl::string_view> w = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (absl::StartsWith(line, "Latency Distribution")) {
      in_distribution = true;
      continue;
    }
    if (in_distribution && w.size() == 2 && absl::EndsWith(w[0], "%")) {
      double ms = 0;
      if (ParseTimeMs(w[1], &ms)) {
        if (w[0] == "50%") r.p50_ms = ms;
        if (w[0] == "90%") r.p90_ms = ms;
        if (w[0] == "99%") r.p99_ms = ms;
      }
      continue;
    }
    in_distribution = false;
    if (w.size() >= 3 && w[1] == "requests" && w[2] == "in") {
      ParseInt(w[0], &r.requests);
    } else if (absl::StartsWith(line, "Requests/sec:") && w.size() >= 2) {
      have_rate = absl::SimpleAtod(w[1], &r.requests_per_s);
    } else if (absl::StartsWith(line, "Non-2xx or 3xx responses:") && w.size() >= 4) {
      ParseInt(w[3], &r.non_2xx_3xx);
    } else if (absl::StartsWith(line, "Socket errors:")) {
      // "Socket errors: connect 0, read 0, write 0, timeout 0"
      for (size_t i = 2; i + 1 < w.size(); i += 2) {
        int64_t n = 0;
        absl::string_view num = w[i + 1];
        absl::ConsumeSuffix(&num, ",");
        if (ParseInt(num, &n)) r.socket_errors += n;
      }
    } else if (w.size() >= 3 && w[0] == "edgebench") {
      r.script_values[std::string(w[1])] = std::string(w[2]);
    }
  }
  if (!have_rate) return absl::InternalError("wrk printed no Requests/sec line");
  return r;
}

absl::StatusOr<WrkResult> RunWrk(const WrkOptions& o) {
  std::vector<std::string> argv = o.launcher;
  argv.insert(argv.end(), {o.wrk, absl::StrCat("-t", o.threads), absl::StrCat("-c", o.connections),
                           absl::StrCat("-d", o.seconds, "s"),
                           absl::StrCat("--timeout=", o.timeout_s, "s"), "--latency"});
  if (!o.script.empty()) argv.insert(argv.end(), {"-s", o.script});
  argv.push_back(o.url);
  if (!o.script_args.empty()) {
    argv.push_back("--");
    argv.insert(argv.end(), o.script_args.begin(), o.script_args.end());
  }
  std::remove(o.log_path.c_str());
  const double cpu_before = ReapedChildrenCpuSeconds();
  absl::StatusOr<testing::Subprocess> child = testing::Subprocess::Spawn(argv, o.log_path);
  if (!child.ok()) return child.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(o.seconds + 60);
  bool interrupted = false;
  std::optional<int> rc;
  while (!rc.has_value()) {
    rc = child->Wait(absl::Milliseconds(100));
    if (rc.has_value()) break;
    if (!interrupted && o.stop_when && o.stop_when()) {
      child->Signal(SIGINT);
      interrupted = true;
    }
    if (absl::Now() > deadline) {
      child->Signal(SIGKILL);
      child->Wait(absl::Seconds(5));
      return absl::DeadlineExceededError(
          absl::StrCat("wrk did not finish; output:\n", Tail(ReadFile(o.log_path), 2000)));
    }
  }
  const double cpu_after = ReapedChildrenCpuSeconds();
  std::string output = ReadFile(o.log_path);
  if (*rc != 0) {
    return absl::InternalError(
        absl::StrCat("wrk failed (exit ", *rc, "); output:\n", Tail(output, 2000)));
  }
  absl::StatusOr<WrkResult> r = ParseWrkOutput(output);
  if (!r.ok()) {
    return absl::InternalError(
        absl::StrCat(r.status().message(), "; output:\n", Tail(output, 2000)));
  }
  r->wrk_cpu_s = cpu_after - cpu_before;
  r->command = absl::StrJoin(argv, " ");
  r->output = std::move(output);
  return r;
}

}  // namespace shortener::bench::edge
