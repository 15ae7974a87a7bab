#include "tests/bench/shorten/pgbench_reference.h"

#include <utility>

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

absl::StatusOr<PgbenchResult> RunPgbench(const PgbenchOptions& o, ResourceProbe& probe) {
  PgbenchRun run = o.run;
  run.script = kScript;
  run.script_name = "insert_link.sql";
  const ResourceSample before = probe.Sample();
  absl::StatusOr<PgbenchReport> report = RunPgbenchScript(run);
  const ResourceSample after = probe.Sample();
  if (!report.ok()) return report.status();
  return PgbenchResult{*std::move(report), Diff(before, after)};
}

}  // namespace shortener::bench
