// ShortenServiceImpl's DeleteLink, RevokeLinks and DeleteLinks (issue 21,
// item 3) over gRPC, against the in-memory twins of ServiceHarness: what a
// deletion removes and keeps, the edges told, the alias held, codes never
// given again, the bulk walks with their tokens, and the refusals.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/grpcutil/status.h"
#include "tests/services/shorten/service_harness.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using Stub = v1::ShortenService::Stub;

struct Removal {
  ServiceHarness h;
  std::string tenant = h.TenantKey("acme", {"shorten", "resolve", "revoke", "delete", "stats"});
  std::string edge = h.EdgeKey();

  std::string Shorten(const std::string& url, std::map<std::string, std::string> labels = {},
                      const std::string& alias = "", const std::string& key = "") {
    v1::ShortenRequest request;
    request.set_long_url(url);
    request.set_force_new(true);
    request.set_custom_alias(alias);
    request.mutable_labels()->insert(labels.begin(), labels.end());
    v1::ShortenResponse response;
    REQUIRE_THAT(h.Call(&Stub::Shorten, key.empty() ? tenant : key, request, &response), IsOk());
    return response.code();
  }

  absl::Status Delete(const std::string& code, const std::string& key = "") {
    v1::DeleteLinkRequest request;
    request.set_code(code);
    google::protobuf::Empty empty;
    return h.Call(&Stub::DeleteLink, key.empty() ? tenant : key, request, &empty);
  }

  absl::Status Resolve(const std::string& code) {
    v1::ResolveRequest request;
    request.set_code(code);
    v1::ResolveResponse response;
    return h.Call(&Stub::Resolve, tenant, request, &response);
  }

  int64_t Click(const std::string& code, int times) { return h.Click(edge, code, times); }

  int64_t LabelClicks(const std::string& filter) {
    v1::GetClickStatsRequest request;
    request.set_filter(filter);
    v1::GetClickStatsResponse stats;
    REQUIRE_THAT(h.Call(&Stub::GetClickStats, tenant, request, &stats), IsOk());
    return stats.total_human_clicks();
  }

  // Every call of a bulk walk until next_page_token is empty: the codes.
  template <typename Request, typename Response, typename Method>
  std::vector<std::string> Walk(Method method, Request request, int* calls = nullptr) {
    std::vector<std::string> codes;
    for (int call = 1; call < 100; ++call) {
      Response response;
      REQUIRE_THAT(h.Call(method, tenant, request, &response), IsOk());
      REQUIRE(response.codes_size() <= (request.page_size() == 0 ? 1000 : request.page_size()));
      codes.insert(codes.end(), response.codes().begin(), response.codes().end());
      if (response.next_page_token().empty()) {
        if (calls != nullptr) *calls = call;
        return codes;
      }
      request.set_page_token(response.next_page_token());
    }
    FAIL("more than 100 calls");
    return codes;
  }
};

std::set<std::string> SetOf(const std::vector<std::string>& codes) {
  return {codes.begin(), codes.end()};
}

TEST_CASE("DeleteLink makes a link gone everywhere, tells the edges, and its clicks are erased",
          "[services/shorten][rpc][delete]") {
  Removal r;
  const std::string code = r.Shorten("https://example.com/private", {{"campaign", "spring"}});
  const std::string other = r.Shorten("https://example.com/kept", {{"campaign", "spring"}});
  REQUIRE(r.Click(code, 3) == 3);
  REQUIRE(r.Click(other, 2) == 2);
  std::unique_ptr<grpc::ClientContext> watch = ServiceHarness::Context(r.edge);
  v1::WatchInvalidationsRequest subscribe;
  subscribe.set_subscriber("edge-1");
  auto stream = r.h.stub->WatchInvalidations(watch.get(), subscribe);
  v1::Invalidation invalidation;
  REQUIRE(stream->Read(&invalidation));
  REQUIRE(invalidation.drop_all());

  REQUIRE_THAT(r.Delete(code), IsOk());
  REQUIRE(stream->Read(&invalidation));
  CHECK(std::vector<std::string>(invalidation.codes().begin(), invalidation.codes().end()) ==
        std::vector<std::string>{code});
  CHECK(r.h.erase_requests.load() == 1);
  const std::string gone = "code \"" + code + "\" does not exist";
  CHECK_THAT(r.Resolve(code), HasCodeAndMessage(absl::StatusCode::kNotFound, gone));
  v1::GetLinkRequest get;
  get.set_code(code);
  v1::Link link;
  CHECK_THAT(r.h.Call(&Stub::GetLink, r.tenant, get, &link),
             HasCodeAndMessage(absl::StatusCode::kNotFound, gone));
  v1::GetClickStatsRequest stats_request;
  stats_request.set_code(code);
  v1::GetClickStatsResponse stats;
  CHECK_THAT(r.h.Call(&Stub::GetClickStats, r.tenant, stats_request, &stats),
             HasCode(absl::StatusCode::kNotFound));
  v1::ListLinksRequest list;
  v1::ListLinksResponse page;
  REQUIRE_THAT(r.h.Call(&Stub::ListLinks, r.tenant, list, &page), IsOk());
  REQUIRE(page.links_size() == 1);
  CHECK(page.links(0).code() == other);
  CHECK_THAT(r.Delete(code), HasCodeAndMessage(absl::StatusCode::kNotFound, gone));

  // The eraser erases its clicks, not the campaign's nor the other link's.
  absl::StatusOr<int64_t> id = r.h.stack.shortener->LinkIdOf(code);
  REQUIRE_THAT(id, IsOk());
  CHECK(*r.h.click_memory.HumanTotal(*id) == 3);  // until the eraser runs
  absl::StatusOr<int64_t> erased = r.h.eraser->EraseDue();
  REQUIRE_THAT(erased, IsOk());
  CHECK(*erased == 1);
  CHECK(*r.h.click_memory.HumanTotal(*id) == 0);
  for (const clicks::ClickRow& visit : r.h.click_memory.Visits()) CHECK(visit.link_id != *id);
  CHECK(r.LabelClicks("labels.campaign = \"spring\"") == 5);
  CHECK(*r.h.eraser->EraseDue() == 0);  // nothing left to erase

  // Clicks the edges still send for it are not counted.
  CHECK(r.Click(code, 4) == 0);
  CHECK(*r.h.click_memory.HumanTotal(*id) == 0);
}

TEST_CASE("a deleted alias is held from everyone until its time, a generated code never returns",
          "[services/shorten][rpc][delete]") {
  Removal r;
  const std::string alias = "spring-offer";
  r.Shorten("https://example.com/offer", {}, alias);
  const std::string generated = r.Shorten("https://example.com/offer");
  REQUIRE_THAT(r.Delete(alias), IsOk());
  REQUIRE_THAT(r.Delete(generated), IsOk());
  REQUIRE_THAT(r.h.eraser->EraseDue(), IsOk());

  const std::string thief = r.h.TenantKey("thief");
  v1::ShortenRequest request;
  request.set_long_url("https://evil.example/catch");
  request.set_custom_alias(alias);
  v1::ShortenResponse response;
  CHECK_THAT(r.h.Call(&Stub::Shorten, thief, request, &response),
             HasCodeAndMessage(absl::StatusCode::kAlreadyExists,
                               "custom_alias \"spring-offer\" is already taken"));
  CHECK_THAT(r.Resolve(alias), HasCode(absl::StatusCode::kNotFound));
  // The same URL again: a new code, never the deleted one.
  const std::string again = r.Shorten("https://example.com/offer");
  CHECK(again != generated);
  CHECK_THAT(r.Resolve(generated), HasCode(absl::StatusCode::kNotFound));

  // The harness holds aliases for 24 hours.
  r.h.clock.Advance(absl::Hours(24));
  REQUIRE_THAT(r.h.eraser->EraseDue(), IsOk());
  REQUIRE_THAT(r.h.Call(&Stub::Shorten, thief, request, &response), IsOk());
  CHECK(response.code() == alias);
}

TEST_CASE("DeleteLink needs the delete scope and never touches another tenant's link",
          "[services/shorten][rpc][delete]") {
  Removal r;
  const std::string code = r.Shorten("https://example.com/mine");
  const std::string revoker = r.h.TenantKey("acme", {"revoke", "stats"});
  CHECK_THAT(r.Delete(code, revoker),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "lacks scope \"delete\""));
  const std::string stranger = r.h.TenantKey("stranger", {"delete"});
  CHECK_THAT(r.Delete(code, stranger), HasCodeAndMessage(absl::StatusCode::kNotFound,
                                                         "code \"" + code + "\" does not exist"));
  CHECK_THAT(r.Resolve(code), IsOk());
  CHECK_THAT(r.Delete("not a code!"), HasCode(absl::StatusCode::kInvalidArgument));
  // The store down: UNAVAILABLE, nothing deleted, and the retry deletes.
  r.h.stack.link_faults.FailNext(1, absl::UnavailableError("connection refused"), "DeleteLinks");
  CHECK_THAT(r.Delete(code), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(r.Resolve(code), IsOk());
  CHECK_THAT(r.Delete(code), IsOk());
  CHECK_THAT(r.Delete(code, r.h.admin_key), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("RevokeLinks and DeleteLinks walk a campaign in calls of page_size and nothing else",
          "[services/shorten][rpc][delete]") {
  Removal r;
  std::vector<std::string> campaign, others;
  for (int i = 0; i < 23; ++i) {
    campaign.push_back(
        r.Shorten("https://example.com/c/" + std::to_string(i), {{"campaign", "spring"}}));
    if (i % 5 == 0) others.push_back(r.Shorten("https://example.com/o/" + std::to_string(i)));
  }
  // One revoked already: not revoked again, not listed.
  v1::RevokeRequest revoke_one;
  revoke_one.set_code(campaign[4]);
  v1::Link revoked_link;
  REQUIRE_THAT(r.h.Call(&Stub::Revoke, r.tenant, revoke_one, &revoked_link), IsOk());

  v1::RevokeLinksRequest revoke;
  revoke.set_filter("labels.campaign = \"spring\"");
  revoke.set_page_size(5);
  int calls = 0;
  const std::vector<std::string> revoked =
      r.Walk<v1::RevokeLinksRequest, v1::RevokeLinksResponse>(&Stub::RevokeLinks, revoke, &calls);
  CHECK(calls >= 5);
  CHECK(revoked.size() == 22);
  std::set<std::string> want(campaign.begin(), campaign.end());
  want.erase(campaign[4]);
  CHECK(SetOf(revoked) == want);
  // Newest first, as ListLinks walks.
  CHECK(revoked.front() == campaign.back());
  for (const std::string& code : others) {
    v1::ResolveRequest request;
    request.set_code(code);
    v1::ResolveResponse resolved;
    REQUIRE_THAT(r.h.Call(&Stub::Resolve, r.tenant, request, &resolved), IsOk());
    CHECK(resolved.state() == v1::LINK_STATE_ACTIVE);
  }
  // Again: nothing left to revoke.
  CHECK(
      r.Walk<v1::RevokeLinksRequest, v1::RevokeLinksResponse>(&Stub::RevokeLinks, revoke).empty());

  v1::DeleteLinksRequest remove;
  remove.set_filter("labels.campaign = \"spring\" AND state = REVOKED");
  remove.set_page_size(7);
  const std::vector<std::string> deleted =
      r.Walk<v1::DeleteLinksRequest, v1::DeleteLinksResponse>(&Stub::DeleteLinks, remove);
  CHECK(SetOf(deleted) == std::set<std::string>(campaign.begin(), campaign.end()));
  CHECK(r.h.erase_requests.load() >= 1);
  for (const std::string& code : campaign)
    CHECK_THAT(r.Resolve(code), HasCode(absl::StatusCode::kNotFound));
  for (const std::string& code : others) CHECK_THAT(r.Resolve(code), IsOk());
  absl::StatusOr<int64_t> erased = r.h.eraser->EraseDue();
  REQUIRE_THAT(erased, IsOk());
  CHECK(*erased == 23);
}

TEST_CASE("a bulk call that fails part way answers what it did, and its token goes on from there",
          "[services/shorten][rpc][delete]") {
  Removal r;
  // 1100 links: a call of page_size 2000 reads two store pages.
  std::set<std::string> campaign;
  for (int batch = 0; batch < 2; ++batch) {
    v1::BatchShortenRequest request;
    for (int i = 0; i < (batch == 0 ? 1000 : 100); ++i) {
      v1::ShortenRequest* item = request.add_requests();
      item->set_long_url(absl::StrCat("https://example.com/bulk/", batch, "/", i));
      (*item->mutable_labels())["campaign"] = "big";
    }
    v1::BatchShortenResponse response;
    REQUIRE_THAT(r.h.Call(&Stub::BatchShorten, r.h.admin_key, request, &response), IsOk());
    for (const auto& result : response.results()) campaign.insert(result.response().code());
  }
  REQUIRE(campaign.size() == 1100);

  // The store fails the second page's read: FindLabelId, ListLinks and
  // RevokeLinks of the first page go through the gate one by one.
  testing::FaultPlan& faults = r.h.stack.link_faults;
  faults.CloseGate();
  v1::RevokeLinksRequest revoke;
  revoke.set_tenant("admin");
  revoke.set_filter("labels.campaign = \"big\"");
  revoke.set_page_size(2000);
  v1::RevokeLinksResponse first;
  absl::Status first_status;
  std::thread call(
      [&] { first_status = r.h.Call(&Stub::RevokeLinks, r.h.admin_key, revoke, &first); });
  for (int passed = 1; passed <= 3; ++passed) {
    REQUIRE(faults.WaitForCalls(passed));
    faults.PassOne();
  }
  REQUIRE(faults.WaitForCalls(4));
  faults.FailNext(1, absl::UnavailableError("connection refused"), "ListLinks");
  faults.OpenGate();
  call.join();
  REQUIRE_THAT(first_status, IsOk());
  CHECK(first.codes_size() == 1000);
  REQUIRE_FALSE(first.next_page_token().empty());

  revoke.set_page_token(first.next_page_token());
  v1::RevokeLinksResponse rest;
  REQUIRE_THAT(r.h.Call(&Stub::RevokeLinks, r.h.admin_key, revoke, &rest), IsOk());
  CHECK(rest.codes_size() == 100);
  CHECK(rest.next_page_token().empty());
  std::set<std::string> revoked(first.codes().begin(), first.codes().end());
  revoked.insert(rest.codes().begin(), rest.codes().end());
  CHECK(revoked == campaign);
  // Nothing done before the failure: the call fails.
  r.h.stack.link_faults.FailNext(1, absl::UnavailableError("connection refused"), "ListLinks");
  revoke.set_page_token("");
  CHECK_THAT(r.h.Call(&Stub::RevokeLinks, r.h.admin_key, revoke, &rest),
             HasCode(absl::StatusCode::kUnavailable));
}

TEST_CASE("an erasure pass that fails leaves its links waiting for the next pass",
          "[services/shorten][rpc][delete]") {
  Removal r;
  const std::string code = r.Shorten("https://example.com/erase-later");
  REQUIRE(r.Click(code, 2) == 2);
  REQUIRE_THAT(r.Delete(code), IsOk());
  absl::StatusOr<int64_t> id = r.h.stack.shortener->LinkIdOf(code);
  REQUIRE_THAT(id, IsOk());
  r.h.click_faults.FailNext(1, absl::UnavailableError("connection refused"), "EraseLinks");
  CHECK_THAT(r.h.eraser->EraseDue(), HasCode(absl::StatusCode::kUnavailable));
  CHECK(*r.h.click_memory.HumanTotal(*id) == 2);
  r.h.stack.link_faults.FailNext(1, absl::UnavailableError("connection refused"), "MarkErased");
  CHECK_THAT(r.h.eraser->EraseDue(), HasCode(absl::StatusCode::kUnavailable));
  absl::StatusOr<int64_t> erased = r.h.eraser->EraseDue();
  REQUIRE_THAT(erased, IsOk());
  CHECK(*erased == 1);
  CHECK(*r.h.click_memory.HumanTotal(*id) == 0);
}

TEST_CASE("RevokeLinks and DeleteLinks refuse a missing filter, big pages and foreign tokens",
          "[services/shorten][rpc][delete]") {
  Removal r;
  r.Shorten("https://example.com/a", {{"campaign", "a"}});
  r.Shorten("https://example.com/b", {{"campaign", "a"}});
  v1::DeleteLinksRequest request;
  v1::DeleteLinksResponse response;
  CHECK_THAT(r.h.Call(&Stub::DeleteLinks, r.tenant, request, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "filter: required"));
  request.set_filter("labels.campaign = \"a\"");
  request.set_page_size(10001);
  CHECK_THAT(r.h.Call(&Stub::DeleteLinks, r.tenant, request, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "page_size: must be 0 (meaning 1000) to 10000, got 10001"));
  request.set_page_size(0);
  request.set_filter("labels.campaign = ");
  CHECK_THAT(r.h.Call(&Stub::DeleteLinks, r.tenant, request, &response),
             HasCode(absl::StatusCode::kInvalidArgument));
  request.set_filter("labels.campaign = \"a\"");
  request.set_tenant("someone-else");
  CHECK_THAT(r.h.Call(&Stub::DeleteLinks, r.tenant, request, &response),
             HasCode(absl::StatusCode::kPermissionDenied));
  // A token of another filter.
  v1::RevokeLinksRequest revoke;
  revoke.set_filter("labels.campaign = \"a\"");
  revoke.set_page_size(1);
  v1::RevokeLinksResponse first;
  REQUIRE_THAT(r.h.Call(&Stub::RevokeLinks, r.tenant, revoke, &first), IsOk());
  REQUIRE(first.codes_size() == 1);
  REQUIRE_FALSE(first.next_page_token().empty());
  request.set_tenant("");
  request.set_filter("labels.campaign = \"b\"");
  request.set_page_token(first.next_page_token());
  CHECK_THAT(r.h.Call(&Stub::DeleteLinks, r.tenant, request, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "page_token"));
  // A revoke key cannot delete in bulk either; a label never used: nothing.
  const std::string revoker = r.h.TenantKey("acme", {"revoke"});
  request.set_page_token("");
  CHECK_THAT(r.h.Call(&Stub::DeleteLinks, revoker, request, &response),
             HasCode(absl::StatusCode::kPermissionDenied));
  REQUIRE_THAT(r.h.Call(&Stub::DeleteLinks, r.tenant, request, &response), IsOk());
  CHECK(response.codes_size() == 0);
  CHECK(response.next_page_token().empty());
}

}  // namespace
}  // namespace shortener::service
