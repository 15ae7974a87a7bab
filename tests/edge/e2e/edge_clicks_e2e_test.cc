// Click recording end to end: the real redirect-edge in front of the real
// shorten-service. Until the service implements RecordClicks it answers
// UNIMPLEMENTED (after checking the edge key's record_clicks scope): the
// edge must still call it, and keep the batches rather than drop them.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

// Waits until `sample` is at least `value`.
bool WaitForMetricAtLeast(const EdgeProcess& edge, const std::string& sample, double value) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (edge.Metric(sample) < value) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return true;
}

// The number after "RecordClicks=" in the service's shutdown summary.
int ServedRecordClicks(EdgeFixture& f) {
  f.service->process().Signal(SIGTERM);
  REQUIRE(f.service->process().Wait(absl::Seconds(15)) == 0);
  const std::string log = f.service->Log();
  const size_t at = log.find(" RecordClicks=");
  REQUIRE(at != std::string::npos);
  return std::atoi(log.c_str() + at + std::string(" RecordClicks=").size());
}

TEST_CASE("redirects produce click events and HEAD requests and prefetches do not",
          "[edge_e2e][clicks]") {
  EdgeFixture f({"--click_flush_interval=100ms"});
  const v1::ShortenResponse link = f.Shorten("https://example.com/clicked");
  const std::string target = "/" + link.code();
  CHECK(f.Get(target).status == 302);  // a miss: the event is pushed with the answer
  CHECK(f.Get(target, "GET", "User-Agent: test-browser\r\nReferer: https://ref.example/\r\n")
            .status == 302);  // a hit
  CHECK(f.Get(target, "HEAD").status == 302);
  CHECK(f.Get(target, "GET", "Purpose: prefetch\r\n").status == 302);
  CHECK(f.Get(target, "GET", "Sec-Purpose: Prefetch;prerender\r\n").status == 302);
  CHECK(f.Get("/" + f.UnknownCode()).status == 404);

  CHECK(WaitForMetricAtLeast(*f.edge, "edge_click_rpcs_total", 1));
  CHECK(f.edge->Metric("edge_clicks_queued_total") == 2);
  CHECK(f.edge->Metric("edge_clicks_dropped_total{reason=\"queue_full\"}") == 0);
  // Refused today (UNIMPLEMENTED): kept in the spool, not dropped.
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_clicks_spooled_total", 2));
  CHECK(f.edge->Metric("edge_clicks_dropped_total{reason=\"spool_full\"}") == 0);
  REQUIRE(f.edge->process().Signal(SIGTERM));
  CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  CHECK(ServedRecordClicks(f) >= 1);
}

TEST_CASE("SIGTERM sends the queued clicks before the edge exits", "[edge_e2e][clicks]") {
  EdgeFixture f({"--click_flush_interval=1h"});
  const v1::ShortenResponse link = f.Shorten("https://example.com/flushed");
  CHECK(f.Get("/" + link.code()).status == 302);
  CHECK(f.Get("/" + link.code()).status == 302);
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_clicks_queued_total", 2));
  CHECK(f.edge->Metric("edge_click_rpcs_total") == 0);
  const absl::Time term = absl::Now();
  REQUIRE(f.edge->process().Signal(SIGTERM));
  CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  // A refusal is not waited on for --click_flush_timeout.
  CHECK(absl::Now() - term < absl::Seconds(4));
  CHECK(ServedRecordClicks(f) == 1);
}

TEST_CASE("clicks the service refuses are kept in the spool directory across restarts",
          "[edge_e2e][clicks]") {
  char templ[] = "/tmp/edge_clicks_e2e.XXXXXX";
  REQUIRE(mkdtemp(templ) != nullptr);
  const std::string spool = templ;
  EdgeFixture f({"--click_flush_interval=100ms", "--click_spool_dir=" + spool});
  const v1::ShortenResponse link = f.Shorten("https://example.com/spooled");
  CHECK(f.Get("/" + link.code()).status == 302);
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_click_spool_batches", 1));
  SECTION("after SIGTERM") {
    REQUIRE(f.edge->process().Signal(SIGTERM));
    CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  }
  SECTION("after SIGKILL: a spooled batch was synced before it counted as spooled") {
    REQUIRE(f.edge->process().Signal(SIGKILL));
    f.edge->process().Wait(absl::Seconds(10));
  }
  CHECK_FALSE(std::filesystem::is_empty(spool));
  // A new edge on the same directory picks the batch up (and tries it).
  f.edge = f.StartEdge(f.service->target(),
                       {"--click_flush_interval=100ms", "--click_spool_dir=" + spool});
  CHECK(f.edge->Metric("edge_click_spool_batches") == 1);
  CHECK(absl::StrContains(f.edge->Log(), "left by a previous run will be replayed"));
  f.edge.reset();
  std::filesystem::remove_all(spool);
}

}  // namespace
}  // namespace shortener::testing
