// RecordClicks through the real service on a private cluster: counts per
// hour and bot flag, a retried batch counted once, unknown codes skipped,
// aliases resolved, visits with anonymised IPs (or none with
// --record_visits=false, statistics complete all the same: they come from
// the rollups), invalid batches refused.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"
#include "tests/support/test_geoip_db.h"

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

TEST_CASE("RecordClicks counts a batch once and stores anonymised visits",
          "[services/shorten/e2e][clicks][pg][e2e]") {
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
  AddEvent(req, "!!bad!!", hour, kChrome);        // refused
  v1::RecordClicksResponse resp;
  grpc::Status st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  CHECK(resp.accepted() == 5);
  REQUIRE(resp.refused_size() == 1);
  CHECK(resp.refused(0).index() == 6);
  // The edge's retry of the same batch changes nothing.
  st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  CHECK(resp.accepted() == 0);
  CHECK(resp.refused_size() == 1);

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

constexpr char kIphoneSafari[] =
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1";
constexpr char kFirefox[] =
    "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0";

v1::GetClickStatsResponse Stats(E2eFixture& f, const std::string& code, absl::Time start,
                                absl::Time end, v1::Granularity granularity) {
  v1::GetClickStatsRequest req;
  req.set_code(code);
  *req.mutable_start_time() = grpcutil::ToProtoTimestamp(start);
  *req.mutable_end_time() = grpcutil::ToProtoTimestamp(end);
  req.set_granularity(granularity);
  v1::GetClickStatsResponse out;
  grpc::Status st = f.stub->GetClickStats(E2eFixture::Ctx().get(), req, &out);
  INFO(st.error_message());
  REQUIRE(st.ok());
  return out;
}

std::string Tops(const google::protobuf::RepeatedPtrField<v1::CountedValue>& values) {
  std::string out;
  for (const v1::CountedValue& v : values) absl::StrAppend(&out, v.value(), "=", v.clicks(), " ");
  return out;
}

TEST_CASE("GetClickStats reports buckets totals unique visitors and top lists",
          "[services/shorten/e2e][clicks][pg][e2e]") {
  E2eFixture f;
  v1::ShortenResponse link;
  REQUIRE(f.Shorten("https://example.com/stats", &link).ok());
  v1::ShortenResponse other;
  REQUIRE(f.Shorten("https://example.com/other", &other).ok());

  const absl::Time day1 = absl::FromUnixSeconds(1893456000);  // 2030-01-01T00:00:00Z
  v1::RecordClicksRequest req;
  req.set_batch_id("stats-1");
  // Hour 0: client A twice, client B once (unique 2). Hour 1: A again and a
  // bot. Day 2: client C. Another link's click must not show.
  AddEvent(req, link.code(), day1 + absl::Minutes(1), kChrome, "192.0.2.10");
  AddEvent(req, link.code(), day1 + absl::Minutes(2), kChrome, "192.0.2.10");
  AddEvent(req, link.code(), day1 + absl::Minutes(10), kIphoneSafari, "198.51.100.7");
  AddEvent(req, link.code(), day1 + absl::Minutes(70), kChrome, "192.0.2.10");
  AddEvent(req, link.code(), day1 + absl::Minutes(71), kGooglebot, "66.249.66.1");
  AddEvent(req, link.code(), day1 + absl::Hours(25), kFirefox, "203.0.113.9");
  AddEvent(req, other.code(), day1 + absl::Minutes(3), kChrome, "192.0.2.10");
  req.mutable_events(2)->set_referer("https://t.co/abc");
  req.mutable_events(5)->clear_referer();
  v1::RecordClicksResponse recorded;
  REQUIRE(f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &recorded).ok());
  REQUIRE(recorded.accepted() == 7);

  SECTION("by hour") {
    v1::GetClickStatsResponse s =
        Stats(f, link.code(), day1, day1 + absl::Hours(3), v1::GRANULARITY_HOUR);
    REQUIRE(s.buckets_size() == 3);
    CHECK(grpcutil::FromProtoTimestamp(s.buckets(0).start_time()) == day1);
    CHECK(grpcutil::FromProtoTimestamp(s.buckets(2).start_time()) == day1 + absl::Hours(2));
    CHECK(s.buckets(0).human_clicks() == 3);
    CHECK(s.buckets(0).bot_clicks() == 0);
    CHECK(s.buckets(0).unique_visitors() == 2);
    CHECK(s.buckets(1).human_clicks() == 1);
    CHECK(s.buckets(1).bot_clicks() == 1);
    CHECK(s.buckets(1).unique_visitors() == 1);
    CHECK(s.buckets(2).human_clicks() == 0);
    CHECK(s.total_human_clicks() == 4);
    CHECK(s.total_bot_clicks() == 1);
    CHECK(s.total_unique_visitors() == 2);  // A in two hours counts once
    CHECK(Tops(s.top_browsers()) == "Chrome=3 Safari=1 ");
    CHECK(Tops(s.top_os()) == "Windows=3 iOS=1 ");
    CHECK(Tops(s.top_devices()) == "desktop=3 mobile=1 ");
    CHECK(Tops(s.top_referrers()) == "news.example.org=3 t.co=1 ");
    CHECK(s.top_countries().empty());  // no --geoip_db
  }
  SECTION("by day, with a range that is widened to whole days") {
    v1::GetClickStatsResponse s =
        Stats(f, link.code(), day1 + absl::Hours(5), day1 + absl::Hours(30), v1::GRANULARITY_DAY);
    REQUIRE(s.buckets_size() == 2);
    CHECK(grpcutil::FromProtoTimestamp(s.buckets(0).start_time()) == day1);
    CHECK(s.buckets(0).human_clicks() == 4);
    CHECK(s.buckets(0).bot_clicks() == 1);
    CHECK(s.buckets(0).unique_visitors() == 2);
    CHECK(s.buckets(1).human_clicks() == 1);
    CHECK(s.buckets(1).unique_visitors() == 1);
    CHECK(s.total_human_clicks() == 5);
    CHECK(s.total_unique_visitors() == 3);
    CHECK(Tops(s.top_browsers()) == "Chrome=3 Firefox=1 Safari=1 ");
  }
  SECTION("GetLink reports the human total") {
    v1::GetLinkRequest get;
    get.set_code(link.code());
    v1::Link got;
    REQUIRE(f.stub->GetLink(E2eFixture::Ctx().get(), get, &got).ok());
    CHECK(got.click_count() == 5);
    get.set_code(other.code());
    REQUIRE(f.stub->GetLink(E2eFixture::Ctx().get(), get, &got).ok());
    CHECK(got.click_count() == 1);
  }
  SECTION("bad ranges and granularities are refused naming the field") {
    v1::GetClickStatsRequest bad;
    bad.set_code(link.code());
    *bad.mutable_start_time() = grpcutil::ToProtoTimestamp(day1);
    *bad.mutable_end_time() = grpcutil::ToProtoTimestamp(day1);
    v1::GetClickStatsResponse out;
    grpc::Status st = f.stub->GetClickStats(E2eFixture::Ctx().get(), bad, &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(), Catch::Contains("start_time"));

    *bad.mutable_end_time() = grpcutil::ToProtoTimestamp(day1 + absl::Hours(24 * 40));
    bad.set_granularity(v1::GRANULARITY_HOUR);
    st = f.stub->GetClickStats(E2eFixture::Ctx().get(), bad, &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(), Catch::Contains("744"));

    bad.set_granularity(static_cast<v1::Granularity>(7));
    st = f.stub->GetClickStats(E2eFixture::Ctx().get(), bad, &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(), Catch::Contains("granularity"));

    bad.set_granularity(v1::GRANULARITY_DAY);
    bad.mutable_start_time()->set_seconds(-99999999999);
    st = f.stub->GetClickStats(E2eFixture::Ctx().get(), bad, &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(), Catch::Contains("start_time"));

    bad.clear_start_time();
    bad.set_code("no-such-link");
    st = f.stub->GetClickStats(E2eFixture::Ctx().get(), bad, &out);
    CHECK(st.error_code() == grpc::StatusCode::NOT_FOUND);
  }
}

TEST_CASE("RecordClicks refuses malformed batches", "[services/shorten/e2e][clicks][pg][e2e]") {
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

TEST_CASE("RecordClicks refuses malformed events one by one and records the rest",
          "[services/shorten/e2e][clicks][pg][e2e]") {
  E2eFixture f;
  v1::ShortenResponse link;
  REQUIRE(f.Shorten("https://example.com/hostile", &link).ok());
  const absl::Time hour = absl::FromUnixSeconds(1893456000);  // 2030-01-01T00:00:00Z
  v1::RecordClicksRequest req;
  req.set_batch_id("edge-1/hostile");
  AddEvent(req, link.code(), hour, kChrome);
  AddEvent(req, link.code(), hour, "\xFF\xFE");  // 1: the user's report
  AddEvent(req, link.code(), hour, kChrome, std::string("192.0.2.7\0", 10));  // 2
  AddEvent(req, link.code(), hour, std::string(16384, 'A'));                  // 3
  AddEvent(req, link.code(), hour, std::string(511, 'a') + "\xE2\x82");       // 4: cut mid-char
  AddEvent(req, link.code(), hour, kChrome);
  req.mutable_events(5)->set_referer("https://ref.example/\r\nX-Injected: 1");  // 5
  AddEvent(req, link.code(), hour, kChrome);
  req.mutable_events(6)->clear_time();  // 6
  AddEvent(req, link.code(), hour, kChrome);
  req.mutable_events(7)->set_http_status(200);  // 7
  AddEvent(req, link.code(), hour, kChrome);
  req.mutable_events(8)->mutable_time()->set_nanos(-1);                  // 8
  AddEvent(req, link.code(), hour, "Mozilla/5.0 \xC3\xA9\xE2\x82\xAC");  // valid UTF-8: kept
  v1::RecordClicksResponse resp;
  grpc::Status st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  INFO(st.error_message());
  REQUIRE(st.ok());
  CHECK(resp.accepted() == 2);
  std::vector<int> indexes;
  for (const v1::RefusedClickEvent& r : resp.refused()) indexes.push_back(r.index());
  CHECK(indexes == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
  REQUIRE(resp.refused_size() == 8);
  CHECK(resp.refused(0).reason() == "user_agent: invalid UTF-8 at byte 0 (0xFF)");
  CHECK(resp.refused(1).reason() == "client_ip: control character 0x00 at byte 9");
  CHECK(resp.refused(2).reason() == "user_agent: 16384 bytes, more than 512");
  CHECK(resp.refused(3).reason() == "user_agent: invalid UTF-8 at byte 511 (0xE2)");
  CHECK(resp.refused(4).reason() == "referer: control character 0x0D at byte 20");
  CHECK(resp.refused(5).reason() == "time: missing");
  CHECK_THAT(resp.refused(6).reason(), Catch::StartsWith("http_status: 200"));
  CHECK_THAT(resp.refused(7).reason(), Catch::StartsWith("time: out of range"));
  // A retry: counted once, the same refusals.
  v1::RecordClicksResponse again;
  REQUIRE(f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &again).ok());
  CHECK(again.accepted() == 0);
  CHECK(again.refused_size() == 8);
  for (int i = 0; i < again.refused_size() && i < resp.refused_size(); ++i) {
    CHECK(again.refused(i).index() == resp.refused(i).index());
    CHECK(again.refused(i).reason() == resp.refused(i).reason());
  }
  CHECK(Scalar(f, "SELECT sum(count) FROM click_counts") == 2);
  CHECK(Scalar(f, "SELECT count(*) FROM visits") == 2);
  CHECK(Scalar(f, "SELECT events FROM click_batches WHERE batch_id = 'edge-1/hostile'") == 2);
  // Later batches are not held up by it.
  v1::RecordClicksRequest next;
  next.set_batch_id("edge-1/next");
  AddEvent(next, link.code(), hour, kChrome);
  REQUIRE(f.stub->RecordClicks(E2eFixture::Ctx().get(), next, &resp).ok());
  CHECK(resp.accepted() == 1);
  CHECK(resp.refused_size() == 0);
  CHECK(Scalar(f, "SELECT sum(count) FROM click_counts") == 3);
}

TEST_CASE("RecordClicks without visits keeps counts only and full IPs when asked",
          "[services/shorten/e2e][clicks][pg][e2e]") {
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
    // Statistics come from the rollups: complete without visits.
    const absl::Time t = absl::FromUnixSeconds(1893456000);
    v1::GetClickStatsResponse s = Stats(f, link.code(), t, t + absl::Hours(1), v1::GRANULARITY_DAY);
    CHECK(s.total_human_clicks() == 1);
    CHECK(s.total_unique_visitors() == 1);
    CHECK(Tops(s.top_browsers()) == "Chrome=1 ");
    CHECK(Tops(s.top_referrers()) == "news.example.org=1 ");
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

// One human click per address in `ips`, on `code`, as batch `batch_id`.
void RecordFrom(E2eFixture& f, const std::string& batch_id, const std::string& code,
                const std::vector<std::string>& ips) {
  v1::RecordClicksRequest req;
  req.set_batch_id(batch_id);
  for (const std::string& ip : ips) AddEvent(req, code, absl::Now(), kChrome, ip);
  v1::RecordClicksResponse resp;
  grpc::Status st = f.stub->RecordClicks(E2eFixture::Ctx().get(), req, &resp);
  REQUIRE(st.ok());
  CHECK(resp.accepted() == static_cast<int64_t>(ips.size()));
}

// The country of every visit with an IP, as "ip=country" ('-' for NULL), by IP.
std::string Countries(E2eFixture& f) {
  pqxx::connection conn(f.cluster->ConnInfo());
  pqxx::nontransaction tx(conn);
  std::string out;
  for (const pqxx::row& row :
       tx.exec("SELECT host(ip), coalesce(country, '-') FROM visits WHERE ip IS NOT NULL"
               " ORDER BY ip, country")) {
    absl::StrAppend(&out, row[0].as<std::string>(), "=", row[1].as<std::string>(), " ");
  }
  return out;
}

// Sends the service SIGHUP and waits (up to 10 s) until its log says `text`.
void SighupAndWaitForLog(E2eFixture& f, const std::string& text) {
  REQUIRE(f.service->process().Signal(SIGHUP));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!absl::StrContains(f.service->Log(), text) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  CHECK_THAT(f.service->Log(), Catch::Contains(text));
}

TEST_CASE("visits get their country from the GeoIP database and none without one",
          "[services/shorten/e2e][clicks][pg][e2e]") {
  auto geoip = TestGeoIpDb::Create();
  INFO(geoip.status().ToString());
  REQUIRE(geoip.ok());
  // The database is moved in place for updates, as an operator would.
  const std::string live = (*geoip)->dir() + "/live.mmdb";
  std::filesystem::copy_file((*geoip)->path(), live);
  // Countries come from the full addresses (visits keep them anonymised);
  // 10.0.0.1 is in no database, and "not-an-ip" is no address.
  const std::vector<std::string> ips = {"203.0.113.7", "2001:db8:5::1", "198.51.100.3", "10.0.0.1",
                                        "not-an-ip"};
  SECTION("with --geoip_db") {
    E2eFixture f({"--geoip_db=" + live});
    v1::ShortenResponse link;
    REQUIRE(f.Shorten("https://example.com/geo", &link).ok());
    RecordFrom(f, "geo-1", link.code(), ips);
    // Stored anonymised; the country came from the full address.
    CHECK(Countries(f) == "10.0.0.0=- 198.51.100.0=DE 203.0.113.0=NL 2001:db8:5::=JP ");
    CHECK(Scalar(f, "SELECT count(*) FROM visits WHERE ip IS NULL AND country IS NULL") == 1);

    v1::GetClickStatsRequest stats_req;
    stats_req.set_code(link.code());
    v1::GetClickStatsResponse stats;
    REQUIRE(f.stub->GetClickStats(E2eFixture::Ctx().get(), stats_req, &stats).ok());
    std::string tops;
    for (const v1::CountedValue& c : stats.top_countries()) {
      absl::StrAppend(&tops, c.value(), ":", c.clicks(), " ");
    }
    CHECK(tops == "DE:1 JP:1 NL:1 ");

    // The monthly update: a new file moved into place, then SIGHUP.
    REQUIRE((*geoip)->WriteVariant((*geoip)->dir() + "/next.mmdb", "BE").ok());
    std::filesystem::rename((*geoip)->dir() + "/next.mmdb", live);
    SighupAndWaitForLog(f, "GeoIP database reloaded");
    RecordFrom(f, "geo-2", link.code(), {"203.0.113.99"});
    CHECK(Scalar(f, "SELECT count(*) FROM visits WHERE country = 'BE'") == 1);

    // A broken update is refused; the database in effect stays.
    std::ofstream((*geoip)->dir() + "/broken.mmdb") << "not a database";
    std::filesystem::rename((*geoip)->dir() + "/broken.mmdb", live);
    SighupAndWaitForLog(f, "GeoIP database not reloaded");
    CHECK_THAT(f.service->Log(), Catch::Contains("the previous one stays"));
    RecordFrom(f, "geo-3", link.code(), {"203.0.113.98"});
    CHECK(Scalar(f, "SELECT count(*) FROM visits WHERE country = 'BE'") == 2);
  }
  SECTION("without --geoip_db") {
    E2eFixture f;
    v1::ShortenResponse link;
    REQUIRE(f.Shorten("https://example.com/geo", &link).ok());
    RecordFrom(f, "geo-1", link.code(), ips);
    CHECK(Scalar(f, "SELECT count(*) FROM visits") == 5);
    CHECK(Scalar(f, "SELECT count(*) FROM visits WHERE country IS NOT NULL") == 0);
  }
  SECTION("a --geoip_db that is not a database stops the start naming the flag") {
    auto cluster = PgCluster::Start();
    REQUIRE(cluster.ok());
    for (const std::string& bad : {(*geoip)->dir() + "/missing.mmdb", (*geoip)->dir()}) {
      ServiceProcessOptions options;
      options.conninfo = (*cluster)->ConnInfo();
      options.extra_flags = {"--geoip_db=" + bad};
      options.ready_timeout = absl::Seconds(20);
      auto service = ServiceProcess::Start(options);
      REQUIRE_FALSE(service.ok());
      CHECK_THAT(std::string(service.status().message()), Catch::Contains("--geoip_db: "));
      CHECK_THAT(std::string(service.status().message()), Catch::Contains(bad));
    }
  }
}

// Each visit's "city|network" ('-' for NULL), by IP then city.
std::string CitiesAndNetworks(E2eFixture& f) {
  return Text(f,
              "SELECT string_agg(coalesce(city, '-') || '|' || coalesce(network, '-'), ' '"
              " ORDER BY ip, city, network) FROM visits");
}

TEST_CASE("City and ASN databases: the wrong kind stops the start, both reload on SIGHUP",
          "[services/shorten/e2e][clicks][pg][e2e]") {
  auto geoip = TestGeoIpDb::Create();
  INFO(geoip.status().ToString());
  REQUIRE(geoip.ok());
  SECTION("a database of the wrong kind for its flag stops the start naming the file and type") {
    auto cluster = PgCluster::Start();
    REQUIRE(cluster.ok());
    const std::pair<std::string, std::string> cases[] = {
        {"--geoip_db=" + (*geoip)->asn_path(),
         "--geoip_db: geoip database " + (*geoip)->asn_path() +
             " is a Shortener-Test-ASN database, not a country or city database"},
        {"--geoip_asn_db=" + (*geoip)->city_path(),
         "--geoip_asn_db: geoip database " + (*geoip)->city_path() +
             " is a Shortener-Test-City database, not an ASN database"},
        {"--geoip_asn_db=" + (*geoip)->dir() + "/missing.mmdb",
         "--geoip_asn_db: geoip database " + (*geoip)->dir() + "/missing.mmdb"},
    };
    for (const auto& [flag, message] : cases) {
      INFO(flag);
      ServiceProcessOptions options;
      options.conninfo = (*cluster)->ConnInfo();
      options.extra_flags = {flag};
      options.ready_timeout = absl::Seconds(20);
      auto service = ServiceProcess::Start(options);
      REQUIRE_FALSE(service.ok());
      CHECK_THAT(std::string(service.status().message()), Catch::Contains(message));
    }
  }
  SECTION("both are reloaded on SIGHUP; a file of the wrong kind keeps the one in effect") {
    const std::string city = (*geoip)->dir() + "/city.mmdb";
    const std::string asn = (*geoip)->dir() + "/asn.mmdb";
    std::filesystem::copy_file((*geoip)->city_path(), city);
    std::filesystem::copy_file((*geoip)->asn_path(), asn);
    E2eFixture f({"--geoip_db=" + city, "--geoip_asn_db=" + asn});
    v1::ShortenResponse link;
    REQUIRE(f.Shorten("https://example.com/geo-reload", &link).ok());
    RecordFrom(f, "where-1", link.code(), {"203.0.113.7"});
    CHECK(CitiesAndNetworks(f) == "Springfield (US-IL)|AS64500 Example Net B.V.");

    // The weekly update of both, moved into place, then SIGHUP.
    const std::string next = (*geoip)->dir() + "/next.mmdb";
    REQUIRE((*geoip)->Write(TestGeoIpDb::Layout::kCity, next, "Shelbyville").ok());
    std::filesystem::rename(next, city);
    REQUIRE((*geoip)->Write(TestGeoIpDb::Layout::kAsn, next, "Other Net").ok());
    std::filesystem::rename(next, asn);
    SighupAndWaitForLog(f, "GeoIP database reloaded: Shortener-Test-ASN built ");
    CHECK_THAT(f.service->Log(), Catch::Contains("GeoIP database reloaded: Shortener-Test-City"));
    RecordFrom(f, "where-2", link.code(), {"203.0.113.8"});
    CHECK(CitiesAndNetworks(f) ==
          "Shelbyville (US-IL)|AS64500 Other Net Springfield (US-IL)|AS64500 Example Net B.V.");

    // A City database where the ASN one was: refused, the ASN one stays.
    std::filesystem::copy_file((*geoip)->city_path(), next);
    std::filesystem::rename(next, asn);
    SighupAndWaitForLog(f, "is a Shortener-Test-City database, not an ASN database");
    CHECK_THAT(f.service->Log(), Catch::Contains("GeoIP database not reloaded"));
    RecordFrom(f, "where-3", link.code(), {"2001:db8::9"});
    CHECK(Text(f, "SELECT network FROM visits WHERE host(ip) = '2001:db8::'") ==
          "AS64501 Beispiel GmbH & Co. KG");
    CHECK(Scalar(f, "SELECT count(*) FROM visits WHERE network = 'AS64500 Other Net'") == 1);
  }
}

}  // namespace
}  // namespace shortener::testing
