// RecordClicks through the real service on a private cluster: counts per
// hour and bot flag, a retried batch counted once, unknown codes skipped,
// aliases resolved, visits with anonymised IPs (or none with
// --record_visits=false), invalid batches refused.
#include <catch2/catch.hpp>
#include <pqxx/pqxx>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/e2e/e2e_fixture.h"

namespace shortener::testing {
namespace {

constexpr char kChrome[] =
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Safari/537.36";
constexpr char kGooglebot[] =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

void AddEvent(v1::RecordClicksRequest& req, const std::string& code, absl::Time time,
              const std::string& ua, const std::string& ip = "192.0.2.77") {
  v1::ClickEvent* e = req.add_events();
  e->set_code(code);
  *e->mutable_time() = grpcutil::ToProtoTimestamp(time);
  e->set_client_ip(ip);
  e->set_user_agent(ua);
  e->set_referer("https://News.Example.org:8443/article?id=1");
  e->set_http_status(302);
}

int64_t Scalar(E2eFixture& f, const std::string& sql) {
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<int64_t>();
}

std::string Text(E2eFixture& f, const std::string& sql) {
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  return tx.exec1(sql)[0].as<std::string>();
}

TEST_CASE("RecordClicks counts a batch once and stores anonymised visits", "[e2e][clicks]") {
  E2eFixture f;
  v1::ShortenResponse link;
  REQUIRE(f.Shorten("https://example.com/campaign", &link).ok());
  v1::ShortenRequest alias_req;
  alias_req.set_long_url("https://example.com/alias-target");
  alias_req.set_custom_alias("spring-sale");
  v1::ShortenResponse alias_link;
  REQUIRE(f.stub->Shorten(E2eFixture::Ctx().get(), alias_req, &alias_link).ok());

  const absl::Time hour = absl::FromUnixSeconds(1893456000);  // 2030-01-01T00:00:00Z
  v1::RecordClicksRequest req;
  req.set_batch_id("edge-1/batch-1");
  AddEvent(req, link.code(), hour + absl::Minutes(1), kChrome);
  AddEvent(req, link.code(), hour + absl::Minutes(59), kChrome);
  AddEvent(req, link.code(), hour + absl::Minutes(70), kChrome);
  AddEvent(req, link.code(), hour + absl::Minutes(5), kGooglebot);
  AddEvent(req, "spring-sale", hour + absl::Minutes(5), kChrome);
  AddEvent(req, "no-such-alias", hour, kChrome);  // skipped
  AddEvent(req, "!!bad!!", hour, kChrome);        // skipped
  v1::RecordClicksResponse resp;
  grpc::Status st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  CHECK(resp.accepted() == 5);
  // The edge's retry of the same batch changes nothing.
  st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  CHECK(resp.accepted() == 0);

  CHECK(Scalar(f, "SELECT sum(count) FROM click_counts") == 5);
  CHECK(Scalar(f,
               "SELECT count FROM click_counts WHERE NOT bot AND hour = '2030-01-01T00:00Z'"
               " AND link_id = (SELECT id FROM links WHERE alias IS NULL)") == 2);
  CHECK(Scalar(f, "SELECT sum(count) FROM click_counts WHERE bot") == 1);
  CHECK(Scalar(f, "SELECT count(*) FROM visits") == 5);
  CHECK(Scalar(f, "SELECT count(*) FROM visits WHERE host(ip) = '192.0.2.0'") == 5);
  CHECK(Text(f, "SELECT DISTINCT referrer_host FROM visits") == "news.example.org");
  CHECK(Text(f,
             "SELECT browser || ' ' || browser_major || ' ' || device FROM visits"
             " WHERE bot") == "Googlebot 2 bot");
  CHECK(Scalar(f,
               "SELECT count(*) FROM visits v JOIN link_aliases a ON a.link_id = v.link_id"
               " WHERE a.alias = 'spring-sale'") == 1);
  CHECK(Scalar(f, "SELECT count(DISTINCT client_id) FROM visits") == 2);

  // The daily task (first run at start) made next month's partition ahead.
  const absl::TimeZone utc = absl::UTCTimeZone();
  const std::string next_month =
      absl::StrCat("visits_", absl::FormatCivilTime(absl::ToCivilMonth(absl::Now(), utc) + 1));
  const std::string query = absl::StrCat("SELECT count(*) FROM pg_class WHERE relname = '",
                                         absl::StrReplaceAll(next_month, {{"-", "_"}}), "'");
  absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (Scalar(f, query) == 0 && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(50));
  CHECK(Scalar(f, query) == 1);
}

TEST_CASE("RecordClicks refuses malformed batches", "[e2e][clicks]") {
  E2eFixture f;
  v1::RecordClicksRequest req;
  v1::RecordClicksResponse resp;
  req.set_batch_id("no-events");
  CHECK(f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  req.set_batch_id(std::string(129, 'x'));
  AddEvent(req, "abc", absl::Now(), kChrome);
  grpc::Status st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("batch_id"));
  req.set_batch_id("too-many");
  for (int i = 0; i < 10000; ++i) AddEvent(req, "abc", absl::Now(), kChrome);
  st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("events"));
}

TEST_CASE("RecordClicks without visits keeps counts only and full IPs when asked",
          "[e2e][clicks]") {
  SECTION("record_visits false") {
    E2eFixture f({"--record_visits=false"});
    v1::ShortenResponse link;
    REQUIRE(f.Shorten("https://example.com/novisits", &link).ok());
    v1::RecordClicksRequest req;
    req.set_batch_id("b1");
    AddEvent(req, link.code(), absl::FromUnixSeconds(1893456000), kChrome);
    v1::RecordClicksResponse resp;
    REQUIRE(f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp).ok());
    CHECK(resp.accepted() == 1);
    CHECK(Scalar(f, "SELECT sum(count) FROM click_counts") == 1);
    CHECK(Scalar(f, "SELECT count(*) FROM visits") == 0);
  }
  SECTION("keep_full_ips") {
    E2eFixture f({"--keep_full_ips"});
    v1::ShortenResponse link;
    REQUIRE(f.Shorten("https://example.com/fullip", &link).ok());
    v1::RecordClicksRequest req;
    req.set_batch_id("b1");
    AddEvent(req, link.code(), absl::FromUnixSeconds(1893456000), kChrome, "2001:db8:1:2::7");
    v1::RecordClicksResponse resp;
    REQUIRE(f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp).ok());
    CHECK(Text(f, "SELECT host(ip) FROM visits") == "2001:db8:1:2::7");
  }
}

}  // namespace
}  // namespace shortener::testing
