// ShortenServiceImpl's UpdateLink and GetLink's FULL view (issue 21, item
// 2) over gRPC, against the in-memory twins of ServiceHarness: the mask,
// each field, the checks Shorten applies, the history, the invalidation
// every edge gets, and the tenant rule.
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

v1::UpdateLinkRequest Update(const std::string& code, std::vector<std::string> paths) {
  v1::UpdateLinkRequest request;
  request.mutable_link()->set_code(code);
  for (const std::string& path : paths) request.mutable_update_mask()->add_paths(path);
  return request;
}

v1::ResolveResponse ResolveOf(ServiceHarness& h, const std::string& key, const std::string& code) {
  v1::ResolveRequest request;
  request.set_code(code);
  v1::ResolveResponse response;
  REQUIRE_THAT(h.Call(&Stub::Resolve, key, request, &response), IsOk());
  return response;
}

TEST_CASE("UpdateLink re-points a link, edges are told, and GetLink FULL shows the history",
          "[services/shorten][rpc][update]") {
  ServiceHarness h;
  const std::string tenant = h.TenantKey("acme");
  const std::string code = h.NewCode(tenant, "https://example.com/typo");
  std::unique_ptr<grpc::ClientContext> watch = ServiceHarness::Context(h.EdgeKey());
  v1::WatchInvalidationsRequest subscribe;
  subscribe.set_subscriber("edge-1");
  auto stream = h.stub->WatchInvalidations(watch.get(), subscribe);
  v1::Invalidation invalidation;
  REQUIRE(stream->Read(&invalidation));
  REQUIRE(invalidation.drop_all());

  h.clock.Advance(absl::Minutes(1));
  v1::UpdateLinkRequest request = Update(code, {"long_url", "redirect_type", "labels"});
  request.mutable_link()->set_long_url("HTTPS://Example.com/fixed");
  request.mutable_link()->set_redirect_type(v1::REDIRECT_TYPE_TEMPORARY);
  (*request.mutable_link()->mutable_labels())["campaign"] = "spring";
  request.mutable_link()->set_max_clicks(99);  // not in the mask: ignored
  v1::Link updated;
  REQUIRE_THAT(h.Call(&Stub::UpdateLink, tenant, request, &updated), IsOk());
  CHECK(updated.code() == code);
  CHECK(updated.long_url() == "https://example.com/fixed");
  CHECK(updated.redirect_type() == v1::REDIRECT_TYPE_TEMPORARY);
  CHECK(updated.labels().at("campaign") == "spring");
  CHECK(updated.max_clicks() == 0);
  CHECK(updated.history_size() == 0);  // only GetLink FULL has it

  // Every subscriber is told to drop the code.
  REQUIRE(stream->Read(&invalidation));
  CHECK(std::vector<std::string>(invalidation.codes().begin(), invalidation.codes().end()) ==
        std::vector<std::string>{code});
  const v1::ResolveResponse resolved = ResolveOf(h, tenant, code);
  CHECK(resolved.long_url() == "https://example.com/fixed");
  CHECK(resolved.redirect_type() == v1::REDIRECT_TYPE_TEMPORARY);

  v1::GetLinkRequest get;
  get.set_code(code);
  v1::Link basic;
  REQUIRE_THAT(h.Call(&Stub::GetLink, tenant, get, &basic), IsOk());
  CHECK(basic.history_size() == 0);
  get.set_view(v1::LINK_VIEW_FULL);
  v1::Link full;
  REQUIRE_THAT(h.Call(&Stub::GetLink, tenant, get, &full), IsOk());
  REQUIRE(full.history_size() == 1);
  const v1::LinkChange& change = full.history(0);
  CHECK(grpcutil::FromProtoTimestamp(change.change_time()) == kStackNow + absl::Minutes(1));
  CHECK(change.actor() == "acme (api key 2)");
  REQUIRE(change.fields_size() == 3);
  CHECK(change.fields(0).field() == "long_url");
  CHECK(change.fields(0).old_value() == "https://example.com/typo");
  CHECK(change.fields(0).new_value() == "https://example.com/fixed");
  CHECK(change.fields(1).field() == "redirect_type");
  CHECK(change.fields(1).old_value() == "302");
  CHECK(change.fields(1).new_value() == "307");
  CHECK(change.fields(2).field() == "labels");
  CHECK(change.fields(2).new_value() == "campaign=spring");

  // The same again changes nothing: no history, no invalidation.
  REQUIRE_THAT(h.Call(&Stub::UpdateLink, tenant, request, &updated), IsOk());
  REQUIRE_THAT(h.Call(&Stub::GetLink, tenant, get, &full), IsOk());
  CHECK(full.history_size() == 1);
  h.hub.Close();
  while (stream->Read(&invalidation)) CHECK(invalidation.codes_size() == 0);
  stream->Finish();
}

TEST_CASE("UpdateLink without a mask changes the fields set; * clears the others",
          "[services/shorten][rpc][update]") {
  ServiceHarness h;
  const std::string tenant = h.TenantKey("acme");
  const std::string code = h.NewCode(tenant, "https://example.com/masks");
  v1::UpdateLinkRequest request = Update(code, {});
  *request.mutable_link()->mutable_expire_time() =
      grpcutil::ToProtoTimestamp(kStackNow + absl::Hours(5));
  request.mutable_link()->set_max_clicks(10);
  v1::Link updated;
  REQUIRE_THAT(h.Call(&Stub::UpdateLink, tenant, request, &updated), IsOk());
  CHECK(grpcutil::FromProtoTimestamp(updated.expire_time()) == kStackNow + absl::Hours(5));
  CHECK(updated.max_clicks() == 10);
  CHECK(updated.long_url() == "https://example.com/masks");

  v1::UpdateLinkRequest all = Update(code, {"*"});
  all.mutable_link()->set_long_url("https://example.com/masks");
  REQUIRE_THAT(h.Call(&Stub::UpdateLink, tenant, all, &updated), IsOk());
  CHECK_FALSE(updated.has_expire_time());
  CHECK(updated.max_clicks() == 0);
  CHECK(updated.redirect_type() == v1::REDIRECT_TYPE_FOUND);
}

TEST_CASE("UpdateLink refuses what Shorten refuses, names the field, and hides other tenants",
          "[services/shorten][rpc][update]") {
  ServiceHarness h;
  const std::string tenant = h.TenantKey("acme");
  const std::string code = h.NewCode(tenant, "https://example.com/guarded");
  v1::Link out;
  auto refused = [&](v1::UpdateLinkRequest request, absl::StatusCode status, const char* message,
                     const std::string& key = "") {
    INFO(request.DebugString());
    CHECK_THAT(h.Call(&Stub::UpdateLink, key.empty() ? tenant : key, request, &out),
               HasCodeAndMessage(status, message));
  };
  refused(Update("", {"long_url"}), absl::StatusCode::kInvalidArgument, "link.code: is required");
  refused(Update(code, {"owner"}), absl::StatusCode::kInvalidArgument,
          "update_mask: \"owner\" is not a field UpdateLink changes");
  refused(Update(code, {}), absl::StatusCode::kInvalidArgument, "update_mask: nothing to change");
  refused(Update(code, {"long_url"}), absl::StatusCode::kInvalidArgument,
          "long_url: cannot be cleared");
  v1::UpdateLinkRequest request = Update(code, {"long_url"});
  request.mutable_link()->set_long_url("javascript:alert(1)");
  refused(request, absl::StatusCode::kInvalidArgument, "long_url: ");
  request.mutable_link()->set_long_url("https://sho.rt/loop");
  refused(request, absl::StatusCode::kInvalidArgument, "long_url: ");
  request = Update(code, {"expire_time"});
  *request.mutable_link()->mutable_expire_time() =
      grpcutil::ToProtoTimestamp(kStackNow - absl::Hours(1));
  refused(request, absl::StatusCode::kInvalidArgument, "expire_time: ");
  request = Update(code, {"max_clicks"});
  request.mutable_link()->set_max_clicks(-1);
  refused(request, absl::StatusCode::kInvalidArgument, "max_clicks: must be positive");
  request = Update(code, {"labels"});
  (*request.mutable_link()->mutable_labels())["Bad"] = "x";
  refused(request, absl::StatusCode::kInvalidArgument, "labels: key \"Bad\"");
  request = Update(code, {"redirect_type"});
  request.mutable_link()->set_redirect_type(static_cast<v1::RedirectType>(42));
  refused(request, absl::StatusCode::kInvalidArgument, "link.redirect_type: unknown value 42");

  // The key's domain list applies to the new target.
  ApiKeySpec limited;
  limited.name = "acme-limited";
  limited.tenant = "acme";
  limited.scopes = {"shorten"};
  limited.allowed_domains = {"example.com"};
  const std::string limited_key = h.NewKey(limited);
  request = Update(code, {"long_url"});
  request.mutable_link()->set_long_url("https://other.org/");
  refused(request, absl::StatusCode::kPermissionDenied,
          "long_url: host \"other.org\" is not among the domains", limited_key);
  // Another tenant's link is not found; the scope is shorten.
  request.mutable_link()->set_long_url("https://example.com/mine-now");
  refused(request, absl::StatusCode::kNotFound, "", h.TenantKey("globex"));
  refused(request, absl::StatusCode::kPermissionDenied, "lacks scope \"shorten\"",
          h.TenantKey("acme-reader", {"resolve", "stats"}));
  REQUIRE_THAT(h.Call(&Stub::UpdateLink, h.admin_key, request, &out), IsOk());
  CHECK(out.long_url() == "https://example.com/mine-now");

  // A revoked link stays revoked.
  v1::RevokeRequest revoke;
  revoke.set_code(code);
  REQUIRE_THAT(h.Call(&Stub::Revoke, tenant, revoke, &out), IsOk());
  request.mutable_link()->set_long_url("https://example.com/back");
  refused(request, absl::StatusCode::kFailedPrecondition, "link is revoked");
  CHECK(ResolveOf(h, tenant, code).state() == v1::LINK_STATE_REVOKED);
}

TEST_CASE(
    "UpdateLink and GetLink FULL answer UNAVAILABLE while the store is down, changing nothing",
    "[services/shorten][rpc][update]") {
  ServiceHarness h;
  const std::string tenant = h.TenantKey("acme");
  const std::string code = h.NewCode(tenant, "https://example.com/steady");
  v1::UpdateLinkRequest request = Update(code, {"long_url"});
  request.mutable_link()->set_long_url("https://example.com/moved");
  v1::Link out;
  h.stack.link_faults.FailNext(1, absl::UnavailableError("connection refused"), "UpdateLink");
  CHECK_THAT(h.Call(&Stub::UpdateLink, tenant, request, &out),
             HasCode(absl::StatusCode::kUnavailable));
  CHECK(ResolveOf(h, tenant, code).long_url() == "https://example.com/steady");
  v1::GetLinkRequest get;
  get.set_code(code);
  get.set_view(v1::LINK_VIEW_FULL);
  h.stack.link_faults.FailNext(1, absl::UnavailableError("connection refused"), "LinkHistory");
  CHECK_THAT(h.Call(&Stub::GetLink, tenant, get, &out), HasCode(absl::StatusCode::kUnavailable));
  // Back: the same call goes through, once.
  REQUIRE_THAT(h.Call(&Stub::UpdateLink, tenant, request, &out), IsOk());
  REQUIRE_THAT(h.Call(&Stub::GetLink, tenant, get, &out), IsOk());
  CHECK(out.long_url() == "https://example.com/moved");
  CHECK(out.history_size() == 1);
}

}  // namespace
}  // namespace shortener::service
