// ShortenServiceImpl's click RPCs (RecordClicks, GetLink, GetClickStats)
// over gRPC, against the in-memory twins of ServiceHarness: each event's
// mapping and refusal reasons, exactly once per batch id, GetLink's click
// count, GetClickStats' range defaults at the clock's time and its field
// errors, ownership, and what a client sees of a click store outage.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "lib/grpcutil/status.h"
#include "tests/services/shorten/service_harness.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using Stub = v1::ShortenService::Stub;

constexpr char kBrowser[] =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Safari/537.36";
constexpr char kCrawler[] =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

// A redirect of `code` served at `when` to `user_agent`.
v1::ClickEvent Click(const std::string& code, absl::Time when,
                     const std::string& user_agent = kBrowser) {
  v1::ClickEvent event;
  event.set_code(code);
  *event.mutable_time() = grpcutil::ToProtoTimestamp(when);
  event.set_client_ip("198.51.100.23");
  event.set_user_agent(user_agent);
  event.set_referer("https://t.co/x");
  event.set_http_status(302);
  return event;
}

struct Clicks {
  ServiceHarness h;
  std::string tenant = h.TenantKey("acme");
  std::string edge = h.EdgeKey();

  std::string NewLink(const std::string& url, const std::string& alias = "") {
    v1::ShortenRequest request;
    request.set_long_url(url);
    request.set_custom_alias(alias);
    v1::ShortenResponse response;
    REQUIRE_THAT(h.Call(&Stub::Shorten, tenant, request, &response), IsOk());
    return response.code();
  }
  absl::Status Record(const std::string& batch_id, std::vector<v1::ClickEvent> events,
                      v1::RecordClicksResponse* response) {
    v1::RecordClicksRequest request;
    request.set_batch_id(batch_id);
    for (v1::ClickEvent& event : events) *request.add_events() = std::move(event);
    return h.Call(&Stub::RecordClicks, edge, request, response);
  }
  absl::Status GetLink(const std::string& key, const std::string& code, v1::Link* response) {
    v1::GetLinkRequest request;
    request.set_code(code);
    return h.Call(&Stub::GetLink, key, request, response);
  }
  absl::Status Stats(const std::string& key, const v1::GetClickStatsRequest& request,
                     v1::GetClickStatsResponse* response) {
    return h.Call(&Stub::GetClickStats, key, request, response);
  }
};

v1::GetClickStatsRequest StatsOf(const std::string& code) {
  v1::GetClickStatsRequest request;
  request.set_code(code);
  return request;
}

TEST_CASE("RecordClicks counts good events, names refused ones by index, and counts a batch once",
          "[services/shorten][rpc][clicks]") {
  Clicks c;
  const std::string generated = c.NewLink("https://example.com/generated");
  const std::string aliased = c.NewLink("https://example.com/aliased", "spring-sale");
  std::vector<v1::ClickEvent> events = {
      Click(generated, kStackNow),       Click("spring-sale", kStackNow),
      Click("no-such-alias", kStackNow),  // skipped: no such link
      Click(generated, kStackNow),       Click(generated, kStackNow),
      Click("bad/code", kStackNow)};
  events[3].set_http_status(200);
  events[4].clear_time();
  v1::RecordClicksResponse response;
  REQUIRE_THAT(c.Record("batch-1", events, &response), IsOk());
  CHECK(response.accepted() == 2);
  REQUIRE(response.refused_size() == 3);
  CHECK(response.refused(0).index() == 3);
  CHECK(response.refused(0).reason() ==
        "http_status: 200 is not a redirect (301, 302, 307 or 308)");
  CHECK(response.refused(1).index() == 4);
  CHECK(response.refused(1).reason() == "time: missing");
  CHECK(response.refused(2).index() == 5);
  CHECK(response.refused(2).reason() ==
        "code: \"bad/code\" is neither a short code nor an alias ([A-Za-z0-9_-], 1 to 64 "
        "characters)");

  // The same batch again: nothing counted twice, the same refusals.
  v1::RecordClicksResponse retried;
  REQUIRE_THAT(c.Record("batch-1", events, &retried), IsOk());
  CHECK(retried.accepted() == 0);
  CHECK(retried.refused_size() == 3);
  v1::Link link;
  REQUIRE_THAT(c.GetLink(c.tenant, generated, &link), IsOk());
  CHECK(link.click_count() == 1);
  REQUIRE_THAT(c.GetLink(c.tenant, aliased, &link), IsOk());
  CHECK(link.click_count() == 1);
}

TEST_CASE("RecordClicks refuses a bad batch whole, a tenant's key, and fails in an outage",
          "[services/shorten][rpc][clicks]") {
  Clicks c;
  const std::string code = c.NewLink("https://example.com/clicked");
  v1::RecordClicksResponse response;
  CHECK_THAT(c.Record("", {Click(code, kStackNow)}, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "batch_id: must be 1 to 128 bytes, got 0"));
  CHECK_THAT(
      c.Record("empty", {}, &response),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "events: must be 1 to 10000, got 0"));
  v1::RecordClicksRequest request;
  request.set_batch_id("from-a-tenant");
  *request.add_events() = Click(code, kStackNow);
  CHECK_THAT(
      c.h.Call(&Stub::RecordClicks, c.tenant, request, &response),
      HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "lacks scope \"record_clicks\""));

  c.h.click_faults.FailNext(1, absl::UnavailableError("visits: server closed the connection"),
                            "Record");
  CHECK_THAT(c.Record("batch-2", {Click(code, kStackNow)}, &response),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
  // The edge retries with the same id: counted once, now.
  REQUIRE_THAT(c.Record("batch-2", {Click(code, kStackNow)}, &response), IsOk());
  CHECK(response.accepted() == 1);
}

TEST_CASE("GetLink answers the owner's link with its human clicks, others get NOT_FOUND",
          "[services/shorten][rpc][clicks]") {
  Clicks c;
  const std::string code = c.NewLink("https://example.com/owned");
  v1::RecordClicksResponse recorded;
  REQUIRE_THAT(
      c.Record("batch-1",
               {Click(code, kStackNow), Click(code, kStackNow), Click(code, kStackNow, kCrawler)},
               &recorded),
      IsOk());
  v1::Link link;
  REQUIRE_THAT(c.GetLink(c.tenant, code, &link), IsOk());
  CHECK(link.code() == code);
  CHECK(link.short_url() == "https://sho.rt/" + code);
  CHECK(link.long_url() == "https://example.com/owned");
  CHECK(link.owner() == "acme");
  CHECK(link.state() == v1::LINK_STATE_ACTIVE);
  CHECK(grpcutil::FromProtoTimestamp(link.create_time()) == kStackNow);
  CHECK(link.click_count() == 2);  // the crawler's click is a bot's

  const std::string other = c.h.TenantKey("globex");
  CHECK_THAT(
      c.GetLink(other, code, &link),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "code \"" + code + "\" does not exist"));
  REQUIRE_THAT(c.GetLink(c.h.admin_key, code, &link), IsOk());
  CHECK(link.click_count() == 2);

  c.h.click_faults.FailNext(1, absl::UnavailableError("click_counts: timeout"), "HumanTotal");
  CHECK_THAT(c.GetLink(c.tenant, code, &link),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
}

TEST_CASE("GetClickStats defaults to the week of days up to the clock's now",
          "[services/shorten][rpc][clicks]") {
  Clicks c;
  const std::string code = c.NewLink("https://example.com/weekly");
  v1::RecordClicksResponse recorded;
  REQUIRE_THAT(c.Record("batch-1",
                        {Click(code, kStackNow - absl::Hours(72)),
                         Click(code, kStackNow - absl::Hours(72), kCrawler),
                         Click(code, kStackNow - absl::Hours(24 * 8))},
                        &recorded),
               IsOk());
  v1::GetClickStatsResponse stats;
  REQUIRE_THAT(c.Stats(c.tenant, StatsOf(code), &stats), IsOk());
  // [now - 7 days, now) in whole UTC days: 2027-01-08 to 2027-01-15.
  REQUIRE(stats.buckets_size() == 8);
  CHECK(grpcutil::FromProtoTimestamp(stats.buckets(0).start_time()) ==
        absl::FromUnixSeconds(1799366400));
  CHECK(stats.buckets(4).human_clicks() == 1);  // 2027-01-12
  CHECK(stats.buckets(4).bot_clicks() == 1);
  CHECK(stats.buckets(4).unique_visitors() == 1);
  CHECK(stats.total_human_clicks() == 1);
  CHECK(stats.total_bot_clicks() == 1);
  REQUIRE(stats.top_browsers_size() == 1);
  CHECK(stats.top_browsers(0).value() == "Chrome");
  CHECK(stats.top_browsers(0).clicks() == 1);
  REQUIRE(stats.top_referrers_size() == 1);
  CHECK(stats.top_referrers(0).value() == "t.co");

  // By the hour: the 24 hours before now.
  v1::GetClickStatsRequest hourly = StatsOf(code);
  hourly.set_granularity(v1::GRANULARITY_HOUR);
  REQUIRE_THAT(c.Stats(c.tenant, hourly, &stats), IsOk());
  REQUIRE(stats.buckets_size() == 24);
  CHECK(grpcutil::FromProtoTimestamp(stats.buckets(0).start_time()) == kStackNow - absl::Hours(24));
  CHECK(stats.total_human_clicks() == 0);

  // A given range, and the default's end moving with the clock.
  v1::GetClickStatsRequest ranged = StatsOf(code);
  *ranged.mutable_start_time() = grpcutil::ToProtoTimestamp(kStackNow - absl::Hours(24 * 10));
  *ranged.mutable_end_time() = grpcutil::ToProtoTimestamp(kStackNow - absl::Hours(24 * 7));
  REQUIRE_THAT(c.Stats(c.tenant, ranged, &stats), IsOk());
  CHECK(stats.total_human_clicks() == 1);
  c.h.clock.Advance(absl::Hours(24 * 7));
  REQUIRE_THAT(c.Stats(c.tenant, StatsOf(code), &stats), IsOk());
  CHECK(grpcutil::FromProtoTimestamp(stats.buckets(0).start_time()) ==
        absl::FromUnixSeconds(1799971200));
  CHECK(stats.total_human_clicks() == 0);
}

TEST_CASE("GetClickStats refuses each bad field, another tenant's link and fails in an outage",
          "[services/shorten][rpc][clicks]") {
  Clicks c;
  const std::string code = c.NewLink("https://example.com/stats");
  v1::GetClickStatsResponse stats;
  v1::GetClickStatsRequest granularity = StatsOf(code);
  granularity.set_granularity(static_cast<v1::Granularity>(7));
  CHECK_THAT(c.Stats(c.tenant, granularity, &stats),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "granularity: unknown value 7 (GRANULARITY_HOUR or "
                               "GRANULARITY_DAY)"));
  v1::GetClickStatsRequest out_of_range = StatsOf(code);
  out_of_range.mutable_start_time()->set_seconds(253402300800);
  CHECK_THAT(c.Stats(c.tenant, out_of_range, &stats),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "start_time: out of range"));
  v1::GetClickStatsRequest backwards = StatsOf("no-such-alias");
  *backwards.mutable_start_time() = grpcutil::ToProtoTimestamp(kStackNow);
  *backwards.mutable_end_time() = grpcutil::ToProtoTimestamp(kStackNow - absl::Hours(1));
  CHECK_THAT(
      c.Stats(c.tenant, backwards, &stats),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "start_time: must be before end_time"));
  v1::GetClickStatsRequest too_long = StatsOf(code);
  too_long.set_granularity(v1::GRANULARITY_HOUR);
  *too_long.mutable_start_time() = grpcutil::ToProtoTimestamp(kStackNow - absl::Hours(24 * 40));
  CHECK_THAT(c.Stats(c.tenant, too_long, &stats), HasCode(absl::StatusCode::kInvalidArgument));

  const std::string other = c.h.TenantKey("globex");
  CHECK_THAT(
      c.Stats(other, StatsOf(code), &stats),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "code \"" + code + "\" does not exist"));
  const std::string no_stats = c.h.TenantKey("acme-shortener", {"shorten"});
  CHECK_THAT(c.Stats(no_stats, StatsOf(code), &stats),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "lacks scope \"stats\""));
  c.h.click_faults.FailNext(1, absl::UnavailableError("visits: timeout"), "Stats");
  CHECK_THAT(c.Stats(c.tenant, StatsOf(code), &stats),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
}

}  // namespace
}  // namespace shortener::service
