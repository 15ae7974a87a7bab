#include "tests/bench/shorten/pgbench_reference.h"

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/bench/common/bench_util.h"
#include "tests/support/subprocess.h"

namespace shortener::bench {
namespace {

// Same columns and types as `links` (deploy/postgres/migrations), with the id
// from a sequence since pgbench has no segment allocator.
constexpr char kCreateTable[] = R"sql(
DROP TABLE IF EXISTS bench_links;
CREATE TABLE bench_links (
  id              bigserial PRIMARY KEY,
  long_url        text NOT NULL,
  long_url_sha256 bytea NOT NULL,
  owner           text NOT NULL,
  create_time     timestamptz NOT NULL
);
)sql";

// One link-shaped row per transaction (pgbench wraps each script run in its
// own implicit transaction). The URL is unique per row, like the gRPC load's,
// and has the same length class. The CASTs give $n a type under -M
// extended/prepared.
constexpr char kScript[] = R"sql(\set n random(1, 9000000000000000000)
INSERT INTO bench_links (long_url, long_url_sha256, owner, create_time)
  SELECT u, sha256(convert_to(u, 'UTF8')), 'anonymous', now()
  FROM (SELECT 'https://www.example.com/campaign/landing?src=pgbench&c='
               || CAST(:client_id AS text) || '&n=' || CAST(:n AS text) AS u) AS s;
)sql";

}  // namespace

absl::Status CreatePgbenchTable(ResourceProbe& probe) { return probe.Exec(kCreateTable); }

absl::StatusOr<PgbenchResult> ParsePgbenchOutput(absl::string_view output) {
  PgbenchResult r;
  // PG 15 prints "tps = X (without initial connection time)"; older ones
  // printed two tps lines, the first including connections.
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

absl::StatusOr<PgbenchResult> RunPgbench(const PgbenchOptions& o, ResourceProbe& probe) {
  std::string script_path = o.work_dir + "/insert_link.sql";
  std::string log_path = o.work_dir + "/pgbench.log";
  {
    std::ofstream script(script_path);
    script << kScript;
    if (!script) return absl::InternalError(absl::StrCat("cannot write ", script_path));
  }
  std::vector<std::string> argv = {o.pgbench,
                                   "-h",
                                   o.socket_dir,
                                   "-p",
                                   std::to_string(o.port),
                                   "-U",
                                   o.user,
                                   "-c",
                                   std::to_string(o.clients),
                                   "-j",
                                   std::to_string(o.threads),
                                   "-T",
                                   std::to_string(o.seconds),
                                   "-n",
                                   "-M",
                                   o.protocol,
                                   "-f",
                                   script_path,
                                   o.dbname};
  // Subprocess appends to its log: start each run (round) with an empty one.
  std::remove(log_path.c_str());
  ResourceSample before = probe.Sample();
  absl::StatusOr<testing::Subprocess> child = testing::Subprocess::Spawn(argv, log_path);
  if (!child.ok()) return child.status();
  std::optional<int> rc = child->Wait(absl::Seconds(o.seconds + 120));
  ResourceSample after = probe.Sample();
  std::string output = ReadFile(log_path);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("pgbench failed (exit ", rc.value_or(-1), "); output:\n", Tail(output, 2000)));
  }
  absl::StatusOr<PgbenchResult> result = ParsePgbenchOutput(output);
  if (!result.ok()) {
    return absl::InternalError(
        absl::StrCat(result.status().message(), "; output:\n", Tail(output, 2000)));
  }
  result->resources = Diff(before, after);
  result->command = absl::StrJoin(argv, " ");
  return result;
}

}  // namespace shortener::bench
