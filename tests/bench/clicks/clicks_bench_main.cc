// clicks_bench: what click recording costs (issue 5, item 7), in one run on
// 127.0.0.1 with a private PostgreSQL and the real shorten-service and
// redirect-edge of this build tree:
//  1. redirects: cached redirects through an edge recording clicks against
//     the same edge with --record_clicks=false. Both --threads=1 pinned to
//     the server CPU; wrk (one thread, keep-alive) pinned to the load CPU,
//     alternating rounds, medians. The service and PostgreSQL, which ingest
//     the clicks of the recording edge, are pinned to the load CPU as well,
//     so the edge's CPU holds nothing but the edge. Afterwards the clicks
//     stored must equal the recording edge's redirects.
//  2. ingest: RecordClicks straight from a gRPC load generator (batches of
//     1000 realistic events, a few calls in flight) for a fixed time:
//     clicks/s, batch latency, service and PostgreSQL CPU per click, with
//     visit rows (the default) and with --record_visits=false, and with an
//     older shorten-service binary (--old_service) side by side;
//  3. stats: one link loaded with 10^7 clicks over 30 days through
//     RecordClicks, then GetClickStats timed over gRPC and end to end with
//     shortenctl stats (and the old binary's, when given), and the link's
//     rollup storage per hour;
//  4. campaign: 10^6 links with one campaign label made through
//     BatchShorten, 10^7 clicks spread over them through RecordClicks
//     (every batch over as many links as it has clicks: ingest's worst
//     case), then GetClickStats of the label timed as in 3.
// Markdown for docs/benchmarks.md goes to stdout, progress to stderr. Build
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tests/bench/clicks/clicks_bench.h"
#include "tests/bench/common/bench_util.h"

ABSL_FLAG(std::vector<std::string>, phases, std::vector<std::string>({"redirects", "ingest"}),
          "what to measure: redirects (cached, clicks on vs off), ingest (RecordClicks), stats "
          "(GetClickStats on one link loaded with --stats_clicks through RecordClicks), campaign "
          "(GetClickStats of a label on --campaign_links links with --campaign_clicks)");
ABSL_FLAG(int, seconds, 10, "length of every wrk window");
ABSL_FLAG(int, rounds, 5, "rounds of the on/off comparison (alternating order; medians)");
ABSL_FLAG(int, connections, 64, "wrk connections (keep-alive)");
ABSL_FLAG(int, warmup_seconds, 2, "wrk warm-up of each edge before the rounds");
ABSL_FLAG(int, server_cpu, 0, "CPU both edges are pinned to");
ABSL_FLAG(int, load_cpu, 1, "CPU of wrk, the service and PostgreSQL");
ABSL_FLAG(int, ingest_seconds, 10, "length of every ingest window");
ABSL_FLAG(int, ingest_rounds, 3, "ingest windows per configuration (alternating; medians)");
ABSL_FLAG(int, ingest_inflight, 4, "RecordClicks calls in flight (one connection each)");
ABSL_FLAG(int, ingest_batch, 1000, "events per RecordClicks batch (the edge's --click_batch)");
ABSL_FLAG(int, ingest_links, 300, "distinct links the ingested clicks are spread over");
ABSL_FLAG(absl::Duration, ingest_merge_interval, absl::Seconds(1),
          "ingest: this build's --rollup_merge_interval; a window ends once its rollups are "
          "merged, so a long interval would count waiting for the merge timer as ingest time");
ABSL_FLAG(bool, ingest_labels, false,
          "ingest: every link carries one campaign label (links.label_ids), so each click also "
          "counts under the label's rollups");
ABSL_FLAG(std::string, old_service, "",
          "ingest: also measure this shorten-service binary (an older build, e.g. "
          "/tmp/wt-old/build/release/bin/shorten-service) on the same database, alternating");
ABSL_FLAG(int64_t, stats_clicks, 10'000'000, "stats: clicks loaded on the one link");
ABSL_FLAG(int, stats_days, 30, "stats: days the loaded clicks are spread over (up to now)");
ABSL_FLAG(int, stats_reads, 7, "stats: timed reads of each query, after 2 warm-up reads");
ABSL_FLAG(bool, stats_record_visits, true, "stats: load with visit rows (the default service)");
ABSL_FLAG(int64_t, campaign_links, 1'000'000,
          "campaign: links made with one campaign label through BatchShorten");
ABSL_FLAG(int64_t, campaign_clicks, 10'000'000,
          "campaign: clicks spread over the campaign's links, through RecordClicks");
ABSL_FLAG(int, campaign_days, 30, "campaign: days the clicks are spread over (up to now), 1..35");

namespace shortener::bench::clicks {
namespace {

absl::StatusOr<Config> ConfigFromFlags(const std::string& command) {
  Config c;
  c.phases = absl::GetFlag(FLAGS_phases);
  c.seconds = absl::GetFlag(FLAGS_seconds);
  c.rounds = absl::GetFlag(FLAGS_rounds);
  c.connections = absl::GetFlag(FLAGS_connections);
  c.warmup_seconds = absl::GetFlag(FLAGS_warmup_seconds);
  c.server_cpu = absl::GetFlag(FLAGS_server_cpu);
  c.load_cpu = absl::GetFlag(FLAGS_load_cpu);
  c.ingest_seconds = absl::GetFlag(FLAGS_ingest_seconds);
  c.ingest_rounds = absl::GetFlag(FLAGS_ingest_rounds);
  c.ingest_inflight = absl::GetFlag(FLAGS_ingest_inflight);
  c.ingest_batch = absl::GetFlag(FLAGS_ingest_batch);
  c.ingest_links = absl::GetFlag(FLAGS_ingest_links);
  c.ingest_labels = absl::GetFlag(FLAGS_ingest_labels);
  c.ingest_merge_interval = absl::GetFlag(FLAGS_ingest_merge_interval);
  c.old_service = absl::GetFlag(FLAGS_old_service);
  c.stats_clicks = absl::GetFlag(FLAGS_stats_clicks);
  c.stats_days = absl::GetFlag(FLAGS_stats_days);
  c.stats_reads = absl::GetFlag(FLAGS_stats_reads);
  c.stats_record_visits = absl::GetFlag(FLAGS_stats_record_visits);
  c.campaign_links = absl::GetFlag(FLAGS_campaign_links);
  c.campaign_clicks = absl::GetFlag(FLAGS_campaign_clicks);
  c.campaign_days = absl::GetFlag(FLAGS_campaign_days);
  c.command = command;
  if (c.campaign_links < 1 || c.campaign_clicks < 1 || c.campaign_days < 1 ||
      c.campaign_days > 35) {
    return absl::InvalidArgumentError(
        "--campaign_links and --campaign_clicks must be >= 1, --campaign_days 1..35");
  }
  if (c.stats_clicks < 1 || c.stats_days < 1 || c.stats_days > 366 || c.stats_reads < 1) {
    return absl::InvalidArgumentError(
        "--stats_clicks and --stats_reads must be >= 1, --stats_days 1..366");
  }
  for (const std::string& p : c.phases) {
    if (p != "redirects" && p != "ingest" && p != "stats" && p != "campaign") {
      return absl::InvalidArgumentError(absl::StrCat("--phases: unknown phase ", p));
    }
  }
  if (c.seconds < 1 || c.rounds < 1 || c.connections < 1 || c.warmup_seconds < 0 ||
      c.ingest_seconds < 1 || c.ingest_rounds < 1 || c.ingest_inflight < 1 || c.ingest_batch < 1 ||
      c.ingest_batch > 10000 || c.ingest_links < 1 ||
      c.ingest_merge_interval < absl::Milliseconds(100) ||
      c.ingest_merge_interval > absl::Seconds(60)) {
    return absl::InvalidArgumentError(
        "--seconds, --rounds, --connections, --ingest_* must be >= 1 (--ingest_batch <= 10000, "
        "--ingest_merge_interval 0.1s..60s), --warmup_seconds >= 0");
  }
  return c;
}

}  // namespace
}  // namespace shortener::bench::clicks

int main(int argc, char** argv) {
  return shortener::bench::BenchmarkMain<shortener::bench::clicks::Config>(
      argc, argv, "clicks_bench",
      "clicks_bench: cached redirects with click recording on vs off, RecordClicks ingest",
      shortener::bench::clicks::ConfigFromFlags, shortener::bench::clicks::Run);
}
