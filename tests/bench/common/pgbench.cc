#include "tests/bench/common/pgbench.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "tests/bench/common/bench_util.h"
#include "tests/support/subprocess.h"

namespace shortener::bench {

absl::StatusOr<PgbenchReport> ParsePgbenchOutput(absl::string_view output) {
  PgbenchReport r;
  // PostgreSQL 15's pgbench prints "tps = X (without initial connection
  // time)"; older ones printed two tps lines, the first with connections.
  bool found = false;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    if (absl::StrContains(line, "without initial connection time") ||
        absl::StrContains(line, "excluding connections establishing")) {
      found = NumberAfter(line, "tps = ", &r.tps);
    }
  }
  if (!found) return absl::InternalError("pgbench printed no tps line");
  if (!NumberAfter(output, "latency average = ", &r.latency_avg_ms)) {
    return absl::InternalError("pgbench printed no latency average");
  }
  return r;
}

absl::StatusOr<PgbenchReport> RunPgbenchScript(const PgbenchRun& run) {
  const std::string script_path = run.work_dir + "/" + run.script_name;
  const std::string log_path = run.work_dir + "/pgbench.log";
  {
    std::ofstream script(script_path);
    script << run.script;
    if (!script) return absl::InternalError(absl::StrCat("cannot write ", script_path));
  }
  const std::vector<std::string> argv = {run.pgbench,
                                         "-h",
                                         run.socket_dir,
                                         "-p",
                                         std::to_string(run.port),
                                         "-U",
                                         run.user,
                                         "-c",
                                         std::to_string(run.clients),
                                         "-j",
                                         std::to_string(run.threads),
                                         "-T",
                                         std::to_string(run.seconds),
                                         "-n",
                                         "-M",
                                         run.protocol,
                                         "-f",
                                         script_path,
                                         run.dbname};
  // Subprocess appends to its log: each run (round) starts with an empty one.
  std::remove(log_path.c_str());
  absl::StatusOr<testing::Subprocess> child = testing::Subprocess::Spawn(argv, log_path);
  if (!child.ok()) return child.status();
  const std::optional<int> rc = child->Wait(absl::Seconds(run.seconds + 120));
  const std::string output = ReadFile(log_path);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("pgbench failed (exit ", rc.value_or(-1), "); output:\n", Tail(output, 2000)));
  }
  absl::StatusOr<PgbenchReport> report = ParsePgbenchOutput(output);
  if (!report.ok()) {
    return absl::InternalError(
        absl::StrCat(report.status().message(), "; output:\n", Tail(output, 2000)));
  }
  report->command = absl::StrJoin(argv, " ");
  return report;
}

}  // namespace shortener::bench
