// ShortenServiceImpl's ListLinks (issue 21, item 1) over gRPC, against the
// in-memory twins of ServiceHarness: pages and tokens, filters, orders,
// click counts, the tenant rules and every refusal naming its field.
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

struct Listing {
  ServiceHarness h;
  std::string tenant = h.TenantKey("acme");
  std::string edge = h.EdgeKey();

  std::string Shorten(const std::string& url, std::map<std::string, std::string> labels = {}) {
    v1::ShortenRequest request;
    request.set_long_url(url);
    request.set_force_new(true);
    request.mutable_labels()->insert(labels.begin(), labels.end());
    v1::ShortenResponse response;
    REQUIRE_THAT(h.Call(&Stub::Shorten, tenant, request, &response), IsOk());
    return response.code();
  }

  absl::Status List(const std::string& key, const v1::ListLinksRequest& request,
                    v1::ListLinksResponse* response) {
    return h.Call(&Stub::ListLinks, key, request, response);
  }

  // The codes of every page, following next_page_token.
  std::vector<std::string> ListAll(v1::ListLinksRequest request, const std::string& key = "") {
    std::vector<std::string> codes;
    for (int page = 0; page < 100; ++page) {
      v1::ListLinksResponse response;
      REQUIRE_THAT(List(key.empty() ? tenant : key, request, &response), IsOk());
      REQUIRE(response.links_size() <= (request.page_size() == 0 ? 100 : request.page_size()));
      for (const v1::Link& link : response.links()) codes.push_back(link.code());
      if (response.next_page_token().empty()) return codes;
      request.set_page_token(response.next_page_token());
    }
    FAIL("more than 100 pages");
    return codes;
  }

  void Click(const std::string& code, int times) { REQUIRE(h.Click(edge, code, times) == times); }
};

v1::ListLinksRequest Request(int page_size, const std::string& filter = "",
                             const std::string& order_by = "") {
  v1::ListLinksRequest request;
  request.set_page_size(page_size);
  request.set_filter(filter);
  request.set_order_by(order_by);
  return request;
}

std::vector<std::string> Reversed(std::vector<std::string> v) { return {v.rbegin(), v.rend()}; }

TEST_CASE("ListLinks pages through the caller's links with tokens, newest first by default",
          "[services/shorten][rpc][list]") {
  Listing l;
  std::vector<std::string> codes;
  for (int i = 0; i < 7; ++i) {
    codes.push_back(l.Shorten("https://example.com/p/" + std::to_string(i)));
    l.h.clock.Advance(absl::Seconds(1));
  }
  const std::string other = l.h.TenantKey("globex");
  v1::ShortenRequest theirs;
  theirs.set_long_url("https://example.com/theirs");
  v1::ShortenResponse their_link;
  REQUIRE_THAT(l.h.Call(&Stub::Shorten, other, theirs, &their_link), IsOk());

  CHECK(l.ListAll(Request(3)) == Reversed(codes));
  CHECK(l.ListAll(Request(0)) == Reversed(codes));
  CHECK(l.ListAll(Request(2, "", "create_time")) == codes);
  CHECK(l.ListAll(Request(2, "", "  create_time   asc ")) == codes);
  CHECK(l.ListAll(Request(100, "", "create_time desc")) == Reversed(codes));

  // Each item is the whole link, as GetLink shows it.
  v1::ListLinksResponse page;
  REQUIRE_THAT(l.List(l.tenant, Request(1), &page), IsOk());
  REQUIRE(page.links_size() == 1);
  CHECK(page.links(0).code() == codes.back());
  CHECK(page.links(0).short_url() == "https://sho.rt/" + codes.back());
  CHECK(page.links(0).long_url() == "https://example.com/p/6");
  CHECK(page.links(0).state() == v1::LINK_STATE_ACTIVE);
  CHECK(page.links(0).owner() == "acme");
  CHECK_FALSE(page.next_page_token().empty());

  // The other tenant sees only its own.
  CHECK(l.ListAll(Request(10), other) == std::vector<std::string>{their_link.code()});
}

TEST_CASE("ListLinks filters by labels, state, create time and host, and counts clicks",
          "[services/shorten][rpc][list]") {
  Listing l;
  const std::string spring = l.Shorten("https://shop.example.com/a", {{"campaign", "spring"}});
  l.h.clock.Advance(absl::Seconds(1));
  const absl::Time middle = l.h.clock.Now();
  const std::string both =
      l.Shorten("https://example.com/b", {{"campaign", "spring"}, {"channel", "sms"}});
  l.h.clock.Advance(absl::Seconds(1));
  const std::string plain = l.Shorten("https://EXAMPLE.com/c");
  l.h.clock.Advance(absl::Seconds(1));
  l.Click(spring, 3);
  l.Click(both, 5);
  v1::RevokeRequest revoke;
  revoke.set_code(plain);
  v1::Link revoked;
  REQUIRE_THAT(l.h.Call(&Stub::Revoke, l.tenant, revoke, &revoked), IsOk());

  CHECK(l.ListAll(Request(1, "labels.campaign = \"spring\"")) ==
        std::vector<std::string>{both, spring});
  CHECK(l.ListAll(Request(1, "labels.campaign = \"spring\" AND labels.channel = \"sms\"")) ==
        std::vector<std::string>{both});
  CHECK(l.ListAll(Request(10, "labels.campaign = \"autumn\"")).empty());
  CHECK(l.ListAll(Request(10, "state = REVOKED")) == std::vector<std::string>{plain});
  CHECK(l.ListAll(Request(10, "state != LINK_STATE_REVOKED")) ==
        std::vector<std::string>{both, spring});
  const std::string from = absl::FormatTime(absl::RFC3339_full, middle, absl::UTCTimeZone());
  CHECK(l.ListAll(Request(10, "create_time >= \"" + from + "\"")) ==
        std::vector<std::string>{plain, both});
  CHECK(l.ListAll(Request(10, "create_time < \"" + from + "\"")) ==
        std::vector<std::string>{spring});
  CHECK(l.ListAll(Request(10, "create_time > \"" + from + "\"")) ==
        std::vector<std::string>{plain});
  // The host is compared in its canonical form, whatever case either has.
  CHECK(l.ListAll(Request(10, "long_url_host = \"Example.COM\"")) ==
        std::vector<std::string>{plain, both});

  v1::ListLinksResponse page;
  REQUIRE_THAT(l.List(l.tenant, Request(10), &page), IsOk());
  std::map<std::string, int64_t> clicks;
  for (const v1::Link& link : page.links()) clicks[link.code()] = link.click_count();
  CHECK(clicks == std::map<std::string, int64_t>{{spring, 3}, {both, 5}, {plain, 0}});

  // Most clicked first, then the never clicked.
  CHECK(l.ListAll(Request(1, "", "click_count desc")) ==
        std::vector<std::string>{both, spring, plain});
}

TEST_CASE("ListLinks refuses bad fields by name, foreign tokens and other tenants",
          "[services/shorten][rpc][list]") {
  Listing l;
  for (int i = 0; i < 3; ++i) l.Shorten("https://example.com/r/" + std::to_string(i));
  v1::ListLinksResponse page;
  CHECK_THAT(l.List(l.tenant, Request(-1), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "page_size: must be 0"));
  CHECK_THAT(l.List(l.tenant, Request(1001), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "page_size"));
  CHECK_THAT(
      l.List(l.tenant, Request(10, "colour = \"red\""), &page),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "filter: unknown field \"colour\""));
  CHECK_THAT(l.List(l.tenant, Request(10, "state = GONE"), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "filter: state must be ACTIVE, REVOKED or EXPIRED"));
  CHECK_THAT(l.List(l.tenant, Request(10, "create_time > \"yesterday\""), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "filter: create_time wants an RFC 3339 time"));
  CHECK_THAT(l.List(l.tenant, Request(10, "labels.Campaign = \"x\""), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "filter: labels: key"));
  CHECK_THAT(l.List(l.tenant, Request(10, "state = ACTIVE OR state = REVOKED"), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "filter: "));
  CHECK_THAT(l.List(l.tenant, Request(10, "", "click_count asc"), &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "order_by: must be"));

  v1::ListLinksRequest request = Request(1);
  request.set_page_token("not-a-token");
  CHECK_THAT(l.List(l.tenant, request, &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "page_token: not a token this service issued"));
  // A token belongs to its filter, order and tenant.
  REQUIRE_THAT(l.List(l.tenant, Request(1), &page), IsOk());
  const std::string token = page.next_page_token();
  REQUIRE_FALSE(token.empty());
  request = Request(1, "state = ACTIVE");
  request.set_page_token(token);
  CHECK_THAT(l.List(l.tenant, request, &page),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "page_token: it belongs to another filter"));
  request = Request(1, "", "create_time");
  request.set_page_token(token);
  CHECK_THAT(l.List(l.tenant, request, &page), HasCode(absl::StatusCode::kInvalidArgument));
  // The same filter written differently is the same listing.
  request = Request(5, "  ");
  request.set_page_token(token);
  REQUIRE_THAT(l.List(l.tenant, request, &page), IsOk());
  CHECK(page.links_size() == 2);

  // Another tenant: only with admin.
  request = Request(10);
  request.set_tenant("globex");
  CHECK_THAT(l.List(l.tenant, request, &page),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "may read only its own tenant \"acme\""));
  request.set_tenant("acme");
  REQUIRE_THAT(l.List(l.h.admin_key, request, &page), IsOk());
  CHECK(page.links_size() == 3);
  // A token of acme's listing is refused for another tenant's.
  v1::ListLinksRequest first = Request(1);
  first.set_tenant("acme");
  REQUIRE_THAT(l.List(l.h.admin_key, first, &page), IsOk());
  request.set_tenant("globex");
  request.set_page_token(page.next_page_token());
  CHECK_THAT(l.List(l.h.admin_key, request, &page), HasCode(absl::StatusCode::kInvalidArgument));

  // The scope is stats.
  const std::string shorten_only = l.h.TenantKey("acme-writer", {"shorten"});
  CHECK_THAT(l.List(shorten_only, Request(10), &page),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "lacks scope \"stats\""));
}

TEST_CASE("ListLinks answers UNAVAILABLE while the link store is down",
          "[services/shorten][rpc][list]") {
  Listing l;
  l.Shorten("https://example.com/down");
  l.h.stack.link_faults.FailNext(1, absl::UnavailableError("connection refused"), "ListLinks");
  v1::ListLinksResponse page;
  CHECK_THAT(l.List(l.tenant, Request(10), &page), HasCode(absl::StatusCode::kUnavailable));
  // The click totals of the page are read too: their outage fails the call.
  l.h.click_faults.FailNext(1, absl::UnavailableError("connection refused"), "HumanTotals");
  CHECK_THAT(l.List(l.tenant, Request(10), &page), HasCode(absl::StatusCode::kUnavailable));
  REQUIRE_THAT(l.List(l.tenant, Request(10), &page), IsOk());
  CHECK(page.links_size() == 1);
}

}  // namespace
}  // namespace shortener::service
