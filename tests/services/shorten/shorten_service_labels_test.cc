// ShortenServiceImpl's labels (issue 19, item 2) over gRPC, against the
// in-memory twins of ServiceHarness: labels set by Shorten and BatchShorten
// and shown by GetLink, their rule's errors (per item in a batch), dedupe
// by URL and labels, and GetClickStats by filter: its errors, the tenant
// rules, an unknown label's empty answer, and a label's counts equal to the
// sum over its links.
#include <catch2/catch.hpp>
#include <map>
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

struct Labels {
  ServiceHarness h;
  std::string tenant = h.TenantKey("acme");
  std::string edge = h.EdgeKey();

  absl::Status Shorten(const std::string& url, std::map<std::string, std::string> labels,
                       v1::ShortenResponse* response) {
    v1::ShortenRequest request;
    request.set_long_url(url);
    request.mutable_labels()->insert(labels.begin(), labels.end());
    return h.Call(&Stub::Shorten, tenant, request, response);
  }
  absl::Status Stats(const std::string& key, const v1::GetClickStatsRequest& request,
                     v1::GetClickStatsResponse* response) {
    return h.Call(&Stub::GetClickStats, key, request, response);
  }
};

v1::GetClickStatsRequest StatsOfLabel(const std::string& filter, const std::string& tenant = "") {
  v1::GetClickStatsRequest request;
  request.set_filter(filter);
  request.set_tenant(tenant);
  return request;
}

v1::ClickEvent Click(const std::string& code, absl::Time when) {
  v1::ClickEvent event;
  event.set_code(code);
  *event.mutable_time() = grpcutil::ToProtoTimestamp(when);
  event.set_client_ip("198.51.100.23");
  event.set_user_agent(
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/124.0.0.0 Safari/537.36");
  event.set_http_status(302);
  return event;
}

TEST_CASE("Shorten keeps labels, GetLink shows them, and dedupe covers them",
          "[services/shorten][rpc][labels]") {
  Labels l;
  v1::ShortenResponse first, again, other, none;
  REQUIRE_THAT(l.Shorten("https://example.com/sale", {{"campaign", "spring-sale"}}, &first),
               IsOk());
  CHECK(first.created());
  REQUIRE(first.link().labels().size() == 1);
  CHECK(first.link().labels().at("campaign") == "spring-sale");
  REQUIRE_THAT(l.Shorten("https://example.com/sale", {{"campaign", "spring-sale"}}, &again),
               IsOk());
  CHECK_FALSE(again.created());
  CHECK(again.code() == first.code());
  REQUIRE_THAT(l.Shorten("https://example.com/sale", {{"campaign", "summer-sale"}}, &other),
               IsOk());
  CHECK(other.created());
  CHECK(other.code() != first.code());
  REQUIRE_THAT(l.Shorten("https://example.com/sale", {}, &none), IsOk());
  CHECK(none.created());
  CHECK(none.link().labels().empty());

  v1::GetLinkRequest get;
  get.set_code(first.code());
  v1::Link link;
  REQUIRE_THAT(l.h.Call(&Stub::GetLink, l.tenant, get, &link), IsOk());
  REQUIRE(link.labels().size() == 1);
  CHECK(link.labels().at("campaign") == "spring-sale");
}

TEST_CASE("labels breaking the rule are INVALID_ARGUMENT naming them, per item in a batch",
          "[services/shorten][rpc][labels]") {
  Labels l;
  v1::ShortenResponse response;
  CHECK_THAT(l.Shorten("https://example.com/x", {{"Campaign", "x"}}, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "labels: key \"Campaign\" must match [a-z][a-z0-9_-]{0,62}"));
  CHECK_THAT(l.Shorten("https://example.com/x", {{"campaign", std::string(64, 'a')}}, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "labels: value of \"campaign\" must match [a-z0-9_-]{0,63}"));
  std::map<std::string, std::string> seventeen;
  for (int i = 0; i < 17; ++i) seventeen.emplace("k" + std::to_string(i), "");
  CHECK_THAT(
      l.Shorten("https://example.com/x", seventeen, &response),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "labels: at most 16 per link, got 17"));

  v1::BatchShortenRequest batch;
  v1::ShortenRequest* good = batch.add_requests();
  good->set_long_url("https://example.com/good");
  (*good->mutable_labels())["campaign"] = "spring-sale";
  v1::ShortenRequest* bad = batch.add_requests();
  bad->set_long_url("https://example.com/bad");
  (*bad->mutable_labels())["campaign"] = "Spring Sale";
  v1::BatchShortenResponse answer;
  REQUIRE_THAT(l.h.Call(&Stub::BatchShorten, l.tenant, batch, &answer), IsOk());
  REQUIRE(answer.results_size() == 2);
  REQUIRE(answer.results(0).has_response());
  CHECK(answer.results(0).response().link().labels().at("campaign") == "spring-sale");
  REQUIRE(answer.results(1).has_error());
  CHECK(answer.results(1).error().code() == static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  CHECK(answer.results(1).error().message() ==
        "labels: value of \"campaign\" must match [a-z0-9_-]{0,63}, got \"Spring Sale\"");
}

TEST_CASE("GetClickStats by filter refuses bad filters and enforces the tenant rules",
          "[services/shorten][rpc][labels]") {
  Labels l;
  v1::ShortenResponse made;
  REQUIRE_THAT(l.Shorten("https://example.com/f", {{"campaign", "spring-sale"}}, &made), IsOk());
  v1::GetClickStatsResponse stats;
  auto invalid = [&](const v1::GetClickStatsRequest& request, const std::string& message) {
    CHECK_THAT(l.Stats(l.tenant, request, &stats),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, message));
  };
  v1::GetClickStatsRequest both = StatsOfLabel("labels.campaign = \"spring-sale\"");
  both.set_code(made.code());
  invalid(both, "code, filter: give exactly one");
  invalid(v1::GetClickStatsRequest(), "code, filter: give exactly one");
  v1::GetClickStatsRequest tenant_with_code;
  tenant_with_code.set_code(made.code());
  tenant_with_code.set_tenant("acme");
  invalid(tenant_with_code, "tenant: only with filter");
  invalid(StatsOfLabel("labels.campaign = \"a\" AND labels.channel = \"sms\""),
          "filter: only one label condition is supported");
  invalid(StatsOfLabel("state = ACTIVE"), "filter: unknown field \"state\"");
  invalid(StatsOfLabel("labels.campaign != \"a\""), "filter: labels support only \"=\"");
  invalid(StatsOfLabel("labels.Campaign = \"a\""),
          "filter: labels: key \"Campaign\" must match [a-z][a-z0-9_-]{0,62}");
  invalid(StatsOfLabel("labels.campaign = \"Spring Sale\""),
          "filter: labels: value of \"campaign\" must match [a-z0-9_-]{0,63}");
  invalid(StatsOfLabel("labels.campaign OR"), "filter: at byte");
  invalid(StatsOfLabel("   "), "filter: give one label condition");

  // Another tenant: only an admin may name it.
  CHECK_THAT(l.Stats(l.tenant, StatsOfLabel("labels.campaign = \"spring-sale\"", "globex"), &stats),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "tenant: api key \"acme\" may read only its own tenant \"acme\""));
  CHECK_THAT(l.Stats(l.tenant, StatsOfLabel("labels.campaign = \"spring-sale\"", "acme"), &stats),
             IsOk());
  CHECK_THAT(
      l.Stats(l.h.admin_key, StatsOfLabel("labels.campaign = \"spring-sale\"", "acme"), &stats),
      IsOk());
  // A label no link ever had (and the admin's own tenant, which has none):
  // empty statistics, the same buckets.
  REQUIRE_THAT(l.Stats(l.tenant, StatsOfLabel("labels.campaign = \"no-such\""), &stats), IsOk());
  CHECK(stats.buckets_size() == 8);
  CHECK(stats.total_human_clicks() == 0);
  REQUIRE_THAT(l.Stats(l.h.admin_key, StatsOfLabel("labels.campaign = \"spring-sale\""), &stats),
               IsOk());
  CHECK(stats.total_human_clicks() == 0);
}

TEST_CASE("GetClickStats by filter counts the clicks of every link with the label",
          "[services/shorten][rpc][labels]") {
  Labels l;
  v1::ShortenResponse a, b, unlabelled;
  REQUIRE_THAT(l.Shorten("https://example.com/a", {{"campaign", "spring-sale"}}, &a), IsOk());
  REQUIRE_THAT(
      l.Shorten("https://example.com/b", {{"campaign", "spring-sale"}, {"channel", "sms"}}, &b),
      IsOk());
  REQUIRE_THAT(l.Shorten("https://example.com/c", {}, &unlabelled), IsOk());
  v1::RecordClicksRequest record;
  record.set_batch_id("labels-1");
  const absl::Time when = kStackNow - absl::Hours(30);
  for (int i = 0; i < 3; ++i) *record.add_events() = Click(a.code(), when);
  for (int i = 0; i < 2; ++i) *record.add_events() = Click(b.code(), when);
  *record.add_events() = Click(unlabelled.code(), when);
  v1::RecordClicksResponse recorded;
  REQUIRE_THAT(l.h.Call(&Stub::RecordClicks, l.edge, record, &recorded), IsOk());
  REQUIRE(recorded.accepted() == 6);

  v1::GetClickStatsResponse stats;
  REQUIRE_THAT(l.Stats(l.tenant, StatsOfLabel("labels.campaign = \"spring-sale\""), &stats),
               IsOk());
  CHECK(stats.total_human_clicks() == 5);
  REQUIRE_THAT(l.Stats(l.tenant, StatsOfLabel("labels.channel = 'sms'"), &stats), IsOk());
  CHECK(stats.total_human_clicks() == 2);
  // Another tenant's same label counts nothing of these.
  const std::string globex = l.h.TenantKey("globex");
  REQUIRE_THAT(l.Stats(globex, StatsOfLabel("labels.campaign = \"spring-sale\""), &stats), IsOk());
  CHECK(stats.total_human_clicks() == 0);
}

}  // namespace
}  // namespace shortener::service
