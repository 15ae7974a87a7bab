// ShortenServiceImpl's link RPCs (Shorten, BatchShorten, Resolve,
// BatchResolve, Revoke) over gRPC, against the in-memory twins of
// ServiceHarness: how each maps its request to the domain call and the
// answer back to its response, its error codes field by field, BatchShorten's
// and BatchResolve's per-item errors, and what a client sees of a store
// outage.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "lib/grpcutil/status.h"
#include "tests/services/shorten/service_harness.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using Stub = v1::ShortenService::Stub;

// A store failure whose text must never reach a client.
absl::Status DatabaseDown() {
  return absl::UnavailableError("connection to /run/postgresql/.s.PGSQL.5432 refused (role app)");
}

v1::ShortenRequest UrlRequest(const std::string& url) {
  v1::ShortenRequest request;
  request.set_long_url(url);
  return request;
}

absl::Status Shorten(ServiceHarness& h, const std::string& key, const v1::ShortenRequest& request,
                     v1::ShortenResponse* response) {
  return h.Call(&Stub::Shorten, key, request, response);
}

absl::Status Resolve(ServiceHarness& h, const std::string& key, const std::string& code,
                     v1::ResolveResponse* response) {
  v1::ResolveRequest request;
  request.set_code(code);
  return h.Call(&Stub::Resolve, key, request, response);
}

absl::Status Revoke(ServiceHarness& h, const std::string& key, const std::string& code,
                    v1::Link* response) {
  v1::RevokeRequest request;
  request.set_code(code);
  return h.Call(&Stub::Revoke, key, request, response);
}

TEST_CASE("Shorten maps every request field onto the link it answers with",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  v1::ShortenRequest request = UrlRequest("HTTPS://Example.COM:443/a?b=c");
  request.set_custom_alias("spring-sale");
  *request.mutable_expire_time() = grpcutil::ToProtoTimestamp(kStackNow + absl::Hours(1));
  request.set_redirect_type(v1::REDIRECT_TYPE_PERMANENT);
  request.set_max_clicks(5);
  request.set_request_id("campaign-1");
  v1::ShortenResponse response;
  REQUIRE_THAT(Shorten(h, key, request, &response), IsOk());
  CHECK(response.code() == "spring-sale");
  CHECK(response.short_url() == "https://sho.rt/spring-sale");
  CHECK(response.created());
  const v1::Link& link = response.link();
  CHECK(link.code() == "spring-sale");
  CHECK(link.short_url() == "https://sho.rt/spring-sale");
  CHECK(link.long_url() == "https://example.com/a?b=c");
  CHECK(link.owner() == "acme");
  CHECK(link.state() == v1::LINK_STATE_ACTIVE);
  CHECK(link.redirect_type() == v1::REDIRECT_TYPE_PERMANENT);
  CHECK(grpcutil::FromProtoTimestamp(link.create_time()) == kStackNow);
  CHECK(grpcutil::FromProtoTimestamp(link.expire_time()) == kStackNow + absl::Hours(1));
  CHECK_FALSE(link.has_revoke_time());
  CHECK(link.max_clicks() == 5);
  CHECK(link.click_count() == 0);

  // The same request_id again: the first link, not created now.
  v1::ShortenResponse again;
  REQUIRE_THAT(Shorten(h, key, request, &again), IsOk());
  CHECK(again.code() == "spring-sale");
  CHECK_FALSE(again.created());
}

TEST_CASE("Shorten refuses each bad field with INVALID_ARGUMENT naming it",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  struct Case {
    const char* what;
    v1::ShortenRequest request;
    const char* message;
  };
  std::vector<Case> cases;
  cases.push_back({"no long_url", UrlRequest(""), "long_url: is required"});
  cases.push_back({"a scheme not allowed", UrlRequest("ftp://example.com/"), "long_url: "});
  cases.push_back({"a loop to our own domain", UrlRequest("https://sho.rt/x"), "long_url: "});
  v1::ShortenRequest alias = UrlRequest("https://example.com/");
  alias.set_custom_alias("no spaces");
  cases.push_back({"an alias with a space", alias, "custom_alias: only [A-Za-z0-9_-] allowed"});
  v1::ShortenRequest redirect = UrlRequest("https://example.com/");
  redirect.set_redirect_type(static_cast<v1::RedirectType>(99));
  cases.push_back({"an unknown redirect type", redirect, "redirect_type: unknown value 99"});
  v1::ShortenRequest ancient = UrlRequest("https://example.com/");
  ancient.mutable_expire_time()->set_seconds(-62135596801);
  cases.push_back({"an expiry out of range", ancient, "expire_time: out of range"});
  v1::ShortenRequest past = UrlRequest("https://example.com/");
  *past.mutable_expire_time() = grpcutil::ToProtoTimestamp(kStackNow - absl::Seconds(1));
  cases.push_back({"an expiry before now", past, "is not in the future"});
  v1::ShortenRequest long_id = UrlRequest("https://example.com/");
  long_id.set_request_id(std::string(129, 'r'));
  cases.push_back(
      {"a long request_id", long_id, "request_id: is 129 bytes, longer than the limit of 128"});
  v1::ShortenRequest budget = UrlRequest("https://example.com/");
  budget.set_max_clicks(-1);
  cases.push_back({"a negative budget", budget, "max_clicks: must be positive"});
  for (const Case& c : cases) {
    INFO(c.what);
    v1::ShortenResponse response;
    CHECK_THAT(Shorten(h, key, c.request, &response),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, c.message));
  }
  // None of them took an id or wrote a link.
  CHECK(h.stack.link_memory.LinkCount() == 0);
}

TEST_CASE("Shorten answers refusals, a taken alias and an outage with their own codes",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  v1::ShortenResponse response;
  CHECK_THAT(Shorten(h, "", UrlRequest("https://example.com/"), &response),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "authorization: missing"));
  CHECK_THAT(Shorten(h, "not-a-key-of-ours-0123456789abcdef", UrlRequest("https://example.com/"),
                     &response),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key unknown"));
  const std::string reader = h.TenantKey("reader", {"resolve"});
  CHECK_THAT(Shorten(h, reader, UrlRequest("https://example.com/"), &response),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "api key \"reader\" lacks scope \"shorten\" (needed for Shorten)"));
  ApiKeySpec limited;
  limited.name = "acme-limited";
  limited.scopes = {"shorten"};
  limited.allowed_domains = {"example.com"};
  const std::string limited_key = h.NewKey(limited);
  CHECK_THAT(Shorten(h, limited_key, UrlRequest("https://other.org/"), &response),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied,
                               "long_url: host \"other.org\" is not among the domains api key "
                               "\"acme-limited\" may shorten to (example.com)"));

  const std::string key = h.TenantKey("acme");
  v1::ShortenRequest aliased = UrlRequest("https://example.com/a");
  aliased.set_custom_alias("taken");
  REQUIRE_THAT(Shorten(h, key, aliased, &response), IsOk());
  aliased.set_long_url("https://example.com/b");
  CHECK_THAT(Shorten(h, key, aliased, &response),
             HasCodeAndMessage(absl::StatusCode::kAlreadyExists, "custom_alias \"taken\""));

  h.stack.link_faults.FailNext(1, DatabaseDown(), "CreateLinks");
  const absl::Status outage = Shorten(h, key, UrlRequest("https://example.com/c"), &response);
  CHECK_THAT(outage, HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
  CHECK_FALSE(absl::StrContains(outage.message(), "postgresql"));
}

TEST_CASE("BatchShorten answers every item in its slot, errors per item",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  v1::BatchShortenRequest request;
  *request.add_requests() = UrlRequest("https://example.com/1");
  *request.add_requests() = UrlRequest("https://example.com/2");
  request.mutable_requests(1)->set_redirect_type(static_cast<v1::RedirectType>(99));
  *request.add_requests() = UrlRequest("ftp://example.com/3");
  *request.add_requests() = UrlRequest("https://EXAMPLE.com/1");
  v1::BatchShortenResponse response;
  REQUIRE_THAT(h.Call(&Stub::BatchShorten, key, request, &response), IsOk());
  REQUIRE(response.results_size() == 4);
  REQUIRE(response.results(0).has_response());
  const v1::ShortenResponse& first = response.results(0).response();
  CHECK(first.created());
  CHECK(first.link().long_url() == "https://example.com/1");
  CHECK(first.link().owner() == "acme");
  REQUIRE(response.results(1).has_error());
  CHECK(response.results(1).error().code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(response.results(1).error().message() == "redirect_type: unknown value 99");
  REQUIRE(response.results(2).has_error());
  CHECK(response.results(2).error().code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(absl::StartsWith(response.results(2).error().message(), "long_url: "));
  REQUIRE(response.results(3).has_response());
  CHECK(response.results(3).response().code() == first.code());
  CHECK_FALSE(response.results(3).response().created());
}

TEST_CASE("BatchShorten items fail alone in an outage and the call names its item bounds",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  v1::BatchShortenRequest request;
  *request.add_requests() = UrlRequest("https://example.com/1");
  *request.add_requests() = UrlRequest("ftp://example.com/2");
  h.stack.link_faults.FailNext(1, DatabaseDown(), "CreateLinks");
  v1::BatchShortenResponse response;
  REQUIRE_THAT(h.Call(&Stub::BatchShorten, key, request, &response), IsOk());
  REQUIRE(response.results_size() == 2);
  CHECK(response.results(0).error().code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(response.results(0).error().message() == kOutageMessage);
  CHECK(response.results(1).error().code() == grpc::StatusCode::INVALID_ARGUMENT);

  v1::BatchShortenRequest empty;
  CHECK_THAT(h.Call(&Stub::BatchShorten, key, empty, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "requests: at least one request is required"));
  v1::BatchShortenRequest too_many;
  for (int i = 0; i < 1001; ++i) *too_many.add_requests() = UrlRequest("https://example.com/");
  CHECK_THAT(h.Call(&Stub::BatchShorten, key, too_many, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "requests: 1001, more than the 1000 a BatchShorten request may "
                               "carry"));
}

TEST_CASE("each BatchShorten item costs a token of the key's rate", "[services/shorten][rpc]") {
  ServiceHarness h;
  ApiKeySpec spec;
  spec.name = "metered";
  spec.scopes = {"shorten"};
  spec.rate_per_second = 1;
  spec.burst = 3;
  const std::string key = h.NewKey(spec);
  auto batch = [](int n) {
    v1::BatchShortenRequest request;
    for (int i = 0; i < n; ++i) {
      *request.add_requests() = UrlRequest("https://example.com/" + std::to_string(i));
    }
    return request;
  };
  v1::BatchShortenResponse response;
  CHECK_THAT(h.Call(&Stub::BatchShorten, key, batch(4), &response),
             HasCodeAndMessage(absl::StatusCode::kResourceExhausted,
                               "rate limit: 4 requests at once exceed the burst of 3"));
  CHECK_THAT(h.Call(&Stub::BatchShorten, key, batch(3), &response), IsOk());
  // The bucket is empty now: the wait goes out as trailing metadata too.
  std::unique_ptr<grpc::ClientContext> ctx = ServiceHarness::Context(key);
  const grpc::Status refused = h.stub->BatchShorten(ctx.get(), batch(1), &response);
  CHECK(refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(absl::StrContains(refused.error_message(), "retry in 1000 ms"));
  auto retry_after = ctx->GetServerTrailingMetadata().find(kRetryAfterMetadata);
  REQUIRE(retry_after != ctx->GetServerTrailingMetadata().end());
  CHECK(retry_after->second == "1000");
  h.clock.Advance(absl::Seconds(1));
  CHECK_THAT(h.Call(&Stub::BatchShorten, key, batch(1), &response), IsOk());
}

TEST_CASE("Resolve answers a link's target only while it is active", "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  v1::ShortenRequest request = UrlRequest("https://example.com/target");
  *request.mutable_expire_time() = grpcutil::ToProtoTimestamp(kStackNow + absl::Hours(1));
  request.set_redirect_type(v1::REDIRECT_TYPE_TEMPORARY);
  v1::ShortenResponse created;
  REQUIRE_THAT(Shorten(h, key, request, &created), IsOk());
  v1::ResolveResponse resolved;
  REQUIRE_THAT(Resolve(h, key, created.code(), &resolved), IsOk());
  CHECK(resolved.long_url() == "https://example.com/target");
  CHECK(resolved.state() == v1::LINK_STATE_ACTIVE);
  CHECK(resolved.redirect_type() == v1::REDIRECT_TYPE_TEMPORARY);
  CHECK(grpcutil::FromProtoTimestamp(resolved.expire_time()) == kStackNow + absl::Hours(1));

  h.clock.Advance(absl::Hours(2));
  resolved.Clear();
  REQUIRE_THAT(Resolve(h, key, created.code(), &resolved), IsOk());
  CHECK(resolved.state() == v1::LINK_STATE_EXPIRED);
  CHECK(resolved.long_url().empty());

  const std::string revoked = h.NewCode(key, "https://example.com/revoked");
  v1::Link link;
  REQUIRE_THAT(Revoke(h, key, revoked, &link), IsOk());
  resolved.Clear();
  REQUIRE_THAT(Resolve(h, key, revoked, &resolved), IsOk());
  CHECK(resolved.state() == v1::LINK_STATE_REVOKED);
  CHECK(resolved.long_url().empty());
}

TEST_CASE("Resolve tells a malformed code, an unknown one and an outage apart",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  const std::string code = h.NewCode(key, "https://example.com/x");
  v1::ResolveResponse response;
  CHECK_THAT(Resolve(h, key, "bad/code", &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "code: \"bad/code\" is neither a short code nor an alias"));
  CHECK_THAT(
      Resolve(h, key, "no-such-alias", &response),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "code \"no-such-alias\" does not exist"));
  h.stack.link_faults.FailNext(1, DatabaseDown(), "GetByIds");
  CHECK_THAT(Resolve(h, key, code, &response),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
  CHECK_THAT(Resolve(h, key, code, &response), IsOk());
}

TEST_CASE("BatchResolve answers every code in its slot as Resolve would",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  const std::string generated = h.NewCode(key, "https://example.com/generated");
  const std::string revoked = h.NewCode(key, "https://example.com/revoked");
  v1::Link link;
  REQUIRE_THAT(Revoke(h, key, revoked, &link), IsOk());
  v1::BatchResolveRequest request;
  for (const std::string& code :
       {generated, std::string("no-such-alias"), std::string("bad/code"), revoked}) {
    request.add_codes(code);
  }
  v1::BatchResolveResponse response;
  REQUIRE_THAT(h.Call(&Stub::BatchResolve, key, request, &response), IsOk());
  REQUIRE(response.results_size() == 4);
  REQUIRE(response.results(0).has_response());
  CHECK(response.results(0).response().long_url() == "https://example.com/generated");
  CHECK(response.results(0).response().state() == v1::LINK_STATE_ACTIVE);
  CHECK(response.results(1).error().code() == grpc::StatusCode::NOT_FOUND);
  CHECK(response.results(1).error().message() == "code \"no-such-alias\" does not exist");
  CHECK(response.results(2).error().code() == grpc::StatusCode::INVALID_ARGUMENT);
  REQUIRE(response.results(3).has_response());
  CHECK(response.results(3).response().state() == v1::LINK_STATE_REVOKED);
}

TEST_CASE("BatchResolve items fail alone in an outage and the call names its item bounds",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  const std::string generated = h.NewCode(key, "https://example.com/generated");
  v1::ShortenRequest aliased = UrlRequest("https://example.com/aliased");
  aliased.set_custom_alias("summer-sale");
  v1::ShortenResponse created;
  REQUIRE_THAT(Shorten(h, key, aliased, &created), IsOk());
  // Ids and aliases are looked up by separate store calls: only the ids'
  // fails.
  h.stack.link_faults.FailNext(1, DatabaseDown(), "GetByIds");
  v1::BatchResolveRequest request;
  request.add_codes(generated);
  request.add_codes("summer-sale");
  v1::BatchResolveResponse response;
  REQUIRE_THAT(h.Call(&Stub::BatchResolve, key, request, &response), IsOk());
  REQUIRE(response.results_size() == 2);
  CHECK(response.results(0).error().code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(response.results(0).error().message() == kOutageMessage);
  CHECK(response.results(1).response().long_url() == "https://example.com/aliased");

  v1::BatchResolveRequest empty;
  CHECK_THAT(h.Call(&Stub::BatchResolve, key, empty, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "codes: BatchResolve takes 1 to 1000 codes, got 0"));
  v1::BatchResolveRequest too_many;
  for (int i = 0; i < 1001; ++i) too_many.add_codes("a");
  CHECK_THAT(h.Call(&Stub::BatchResolve, key, too_many, &response),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "codes: 1001, more than the 1000 a BatchResolve request may "
                               "carry"));
}

TEST_CASE("Revoke answers the revoked link, once revoked keeps its first time",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string key = h.TenantKey("acme");
  const std::string code = h.NewCode(key, "https://example.com/to-revoke");
  v1::Link link;
  REQUIRE_THAT(Revoke(h, key, code, &link), IsOk());
  CHECK(link.code() == code);
  CHECK(link.long_url() == "https://example.com/to-revoke");
  CHECK(link.state() == v1::LINK_STATE_REVOKED);
  CHECK(grpcutil::FromProtoTimestamp(link.revoke_time()) == kStackNow);
  h.clock.Advance(absl::Minutes(5));
  link.Clear();
  REQUIRE_THAT(Revoke(h, key, code, &link), IsOk());
  CHECK(grpcutil::FromProtoTimestamp(link.revoke_time()) == kStackNow);
}

TEST_CASE("Revoke of another tenant's link is NOT_FOUND and leaves it active",
          "[services/shorten][rpc]") {
  ServiceHarness h;
  const std::string owner = h.TenantKey("acme");
  const std::string code = h.NewCode(owner, "https://example.com/mine");
  const std::string other = h.TenantKey("globex");
  v1::Link link;
  CHECK_THAT(
      Revoke(h, other, code, &link),
      HasCodeAndMessage(absl::StatusCode::kNotFound, "code \"" + code + "\" does not exist"));
  v1::ResolveResponse resolved;
  REQUIRE_THAT(Resolve(h, owner, code, &resolved), IsOk());
  CHECK(resolved.state() == v1::LINK_STATE_ACTIVE);
  const std::string no_revoke = h.TenantKey("acme-shortener", {"shorten"});
  CHECK_THAT(Revoke(h, no_revoke, code, &link),
             HasCodeAndMessage(absl::StatusCode::kPermissionDenied, "lacks scope \"revoke\""));
  h.stack.link_faults.FailNext(1, DatabaseDown(), "Revoke");
  CHECK_THAT(Revoke(h, owner, code, &link),
             HasCodeAndMessage(absl::StatusCode::kUnavailable, kOutageMessage));
  // An admin may revoke any tenant's link.
  REQUIRE_THAT(Revoke(h, h.admin_key, code, &link), IsOk());
  CHECK(link.owner() == "acme");
}

}  // namespace
}  // namespace shortener::service
