// Click recording end to end: the real redirect-edge in front of the real
// shorten-service and its database. Counts are read from click_counts
// directly: what was stored, not what was sent.
#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <pqxx/pqxx>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/edge/e2e/edge_fixture.h"
#include "tests/support/test_geoip_db.h"

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

// Clicks stored so far (human and bot), over every link.
int64_t StoredClicks(EdgeFixture& f, bool bot) {
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec_params1("SELECT coalesce(sum(count), 0) FROM click_counts WHERE bot = $1", bot)[0]
      .as<int64_t>();
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
          "[edge/e2e][clicks][e2e]") {
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

  CHECK(WaitForMetricAtLeast(*f.edge, "edge_clicks_acknowledged_total", 2));
  CHECK(f.edge->Metric("edge_clicks_queued_total") == 2);
  CHECK(f.edge->Metric("edge_clicks_dropped_total{reason=\"queue_full\"}") == 0);
  CHECK(f.edge->Metric("edge_clicks_spooled_total") == 0);
  // Stored: the two GETs, as human clicks (test-browser and HttpGet's own
  // agent are not bots), with the referrer's host.
  CHECK(StoredClicks(f, false) + StoredClicks(f, true) == 2);
  {
    pqxx::connection conn(f.cluster->ConnInfo());
    pqxx::nontransaction tx(conn);
    CHECK(tx.exec1("SELECT count(*) FROM visits WHERE referrer_host = 'ref.example'")[0]
              .as<int64_t>() == 1);
  }
  REQUIRE(f.edge->process().Signal(SIGTERM));
  CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  CHECK(ServedRecordClicks(f) >= 1);
}

constexpr char kBrowser[] =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36";

// "value:clicks " per entry.
std::string Tops(const google::protobuf::RepeatedPtrField<v1::CountedValue>& list) {
  std::string out;
  for (const v1::CountedValue& v : list) absl::StrAppend(&out, v.value(), ":", v.clicks(), " ");
  return out;
}

TEST_CASE("clicks through the edge get region, city and network from the City and ASN databases",
          "[edge/e2e][clicks][e2e]") {
  auto geoip = TestGeoIpDb::Create();
  INFO(geoip.status().ToString());
  REQUIRE(geoip.ok());
  // The edge believes the test's X-Forwarded-For (it connects from
  // 127.0.0.1), so clients come from the databases' networks.
  EdgeFixture f({"--click_flush_interval=100ms", "--trusted_proxies=127.0.0.0/8"},
                {"--geoip_db=" + (*geoip)->city_path(), "--geoip_asn_db=" + (*geoip)->asn_path()});
  CHECK_THAT(f.service->Log(),
             Catch::Contains("clicks get their network from " + (*geoip)->asn_path() +
                             " (Shortener-Test-ASN built "));
  const v1::ShortenResponse link = f.Shorten("https://example.com/where");
  // 10.0.0.1 is in neither database.
  for (const char* ip :
       {"203.0.113.7", "203.0.113.8", "198.51.100.3", "2001:db8:5::1", "10.0.0.1"}) {
    CHECK(f.Get("/" + link.code(), "GET",
                absl::StrCat("X-Forwarded-For: ", ip, "\r\nUser-Agent: ", kBrowser, "\r\n"))
              .status == 302);
  }
  REQUIRE(WaitForMetricAtLeast(*f.edge, "edge_clicks_acknowledged_total", 5));

  v1::GetClickStatsRequest request;
  request.set_code(link.code());
  v1::GetClickStatsResponse stats;
  grpc::Status status = f.stub->GetClickStats(EdgeFixture::Ctx().get(), request, &stats);
  INFO(status.error_message());
  REQUIRE(status.ok());
  CHECK(stats.total_human_clicks() == 5);
  CHECK(Tops(stats.top_countries()) == "US:3 JP:1 ");
  CHECK(Tops(stats.top_regions()) == "US-IL:2 JP-13:1 US-MO:1 ");
  CHECK(Tops(stats.top_cities()) ==
        "Springfield (US-IL):2 Springfield (US-MO):1 T\xC5\x8Dky\xC5\x8D (JP-13):1 ");
  CHECK(Tops(stats.top_networks()) ==
        "AS64500 Example Net B.V.:2 AS4200000000:1 AS64501 Beispiel GmbH & Co. KG:1 ");

  // The visits keep the places and the anonymised addresses they came from.
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  std::string visits;
  for (const pqxx::row& row :
       tx.exec("SELECT host(ip), coalesce(country, '-'), coalesce(region, '-'),"
               " coalesce(city, '-'), coalesce(network, '-') FROM visits ORDER BY ip")) {
    for (const pqxx::field& field : row) absl::StrAppend(&visits, field.c_str(), "|");
    visits += "\n";
  }
  CHECK(visits ==
        "10.0.0.0|-|-|-|-|\n"
        "198.51.100.0|US|US-MO|Springfield (US-MO)|AS4200000000|\n"
        "203.0.113.0|US|US-IL|Springfield (US-IL)|AS64500 Example Net B.V.|\n"
        "203.0.113.0|US|US-IL|Springfield (US-IL)|AS64500 Example Net B.V.|\n"
        "2001:db8:5::|JP|JP-13|T\xC5\x8Dky\xC5\x8D (JP-13)|AS64501 Beispiel GmbH & Co. KG|\n");
}

TEST_CASE("with --record_clicks=false redirects work and nothing is recorded",
          "[edge/e2e][clicks][e2e]") {
  EdgeFixture f({"--record_clicks=false", "--click_flush_interval=50ms"});
  const v1::ShortenResponse link = f.Shorten("https://example.com/unrecorded");
  for (int i = 0; i < 5; ++i) CHECK(f.Get("/" + link.code()).status == 302);
  absl::SleepFor(absl::Milliseconds(500));  // ten flush intervals
  CHECK(f.edge->Metric("edge_clicks_queued_total") == 0);
  CHECK(f.edge->Metric("edge_click_rpcs_total") == 0);
  REQUIRE(f.edge->process().Signal(SIGTERM));
  CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  CHECK_THAT(f.edge->Log(), Catch::Contains("--record_clicks=false: redirects are not counted"));
  CHECK(StoredClicks(f, false) + StoredClicks(f, true) == 0);
  CHECK(ServedRecordClicks(f) == 0);
}

TEST_CASE("SIGTERM sends the queued clicks before the edge exits", "[edge/e2e][clicks][e2e]") {
  EdgeFixture f({"--click_flush_interval=1h"});
  const v1::ShortenResponse link = f.Shorten("https://example.com/flushed");
  CHECK(f.Get("/" + link.code()).status == 302);
  CHECK(f.Get("/" + link.code()).status == 302);
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_clicks_queued_total", 2));
  CHECK(f.edge->Metric("edge_click_rpcs_total") == 0);
  REQUIRE(f.edge->process().Signal(SIGTERM));
  CHECK(f.edge->process().Wait(absl::Seconds(10)) == 0);
  CHECK(StoredClicks(f, false) + StoredClicks(f, true) == 2);
  CHECK(ServedRecordClicks(f) == 1);
}

TEST_CASE("clicks made while the service is down are spooled and counted once after restarts",
          "[edge/e2e][clicks][e2e]") {
  char templ[] = "/tmp/edge_clicks_e2e.XXXXXX";
  REQUIRE(mkdtemp(templ) != nullptr);
  const std::string spool = templ;
  EdgeFixture f({"--click_flush_interval=100ms", "--click_spool_dir=" + spool});
  const v1::ShortenResponse link = f.Shorten("https://example.com/spooled");
  CHECK(f.Get("/" + link.code()).status == 302);  // cached from now on
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_clicks_acknowledged_total", 1));
  // The service dies: redirects go on from the cache, their clicks go to
  // the spool directory.
  REQUIRE(f.service->process().Signal(SIGKILL));
  f.service->process().Wait(absl::Seconds(10));
  for (int i = 0; i < 5; ++i) CHECK(f.Get("/" + link.code()).status == 302);
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_clicks_spooled_total", 5));
  SECTION("the edge stopped with SIGTERM") {
    REQUIRE(f.edge->process().Signal(SIGTERM));
    CHECK(f.edge->process().Wait(absl::Seconds(15)) == 0);
  }
  SECTION("the edge killed: a spooled batch was synced before it counted as spooled") {
    REQUIRE(f.edge->process().Signal(SIGKILL));
    f.edge->process().Wait(absl::Seconds(10));
  }
  CHECK_FALSE(std::filesystem::is_empty(spool));
  // Service back; a new edge on the same directory replays the batches.
  REQUIRE(f.service->Restart().ok());
  f.edge = f.StartEdge(f.service->target(),
                       {"--click_flush_interval=100ms", "--click_spool_dir=" + spool});
  CHECK(absl::StrContains(f.edge->Log(), "left by a previous run will be replayed"));
  CHECK(WaitForMetricAtLeast(*f.edge, "edge_click_batches_replayed_total", 1));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (StoredClicks(f, false) + StoredClicks(f, true) < 6 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  CHECK(StoredClicks(f, false) + StoredClicks(f, true) == 6);  // exactly: nothing twice
  CHECK(WaitForMetric(*f.edge, "edge_click_spool_batches", 0,
                      absl::Seconds(10)));  // acknowledged, deleted
  f.edge.reset();
  std::filesystem::remove_all(spool);
}

}  // namespace
}  // namespace shortener::testing
