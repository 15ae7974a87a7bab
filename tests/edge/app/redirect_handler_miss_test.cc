// RedirectHandler's miss path over the in-memory upstream: stale entries
// served only while the upstream cannot answer, a link's expiry enforced at
// the edge (also against a cached entry and a skewed upstream clock), the
// miss deadline, the resolve queue bound and the alias-miss bound.
#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "edge/app/redirect_handler.h"
#include "tests/edge/app/handler_rig.h"

namespace shortener::edge::testing {
namespace {

constexpr absl::string_view kFound = "HTTP/1.1 302 Found";
constexpr absl::string_view kGone = "HTTP/1.1 410 Gone";
constexpr absl::string_view kUnavailable = "HTTP/1.1 503 Service Unavailable";

// The body after the header block.
std::string Body(const std::string& response) {
  return response.substr(response.find("\r\n\r\n") + 4);
}

RigOptions ShortTtl() {
  RigOptions options;
  options.cache.positive_ttl = absl::Seconds(1);
  options.cache.negative_ttl = absl::Seconds(1);
  options.cache.stale_grace = absl::Minutes(1);
  return options;
}

TEST_CASE("miss: past its TTL an entry is served stale only while the upstream cannot answer",
          "[edge/app][concurrent]") {
  HandlerRig rig(ShortTtl());
  const std::string code = rig.Code(101);
  rig.upstream.SetLink(code, "https://example.com/old");
  CHECK(StatusLine(rig.Get("/" + code)) == kFound);

  // Past the TTL, the upstream is asked first; it answers: its answer wins.
  rig.Advance(absl::Seconds(2));
  rig.upstream.SetLink(code, "https://example.com/new");
  CHECK(absl::StrContains(rig.Get("/" + code), "\r\nLocation: https://example.com/new\r\n"));
  CHECK(rig.upstream.Calls().size() == 2);

  // Past the TTL again, the upstream down: the stale entry beats a 503.
  rig.Advance(absl::Seconds(2));
  rig.upstream.SetAvailable(false);
  const std::string stale = rig.Get("/" + code);
  CHECK(StatusLine(stale) == kFound);
  CHECK(absl::StrContains(stale, "\r\nLocation: https://example.com/new\r\n"));
  CHECK(absl::StrContains(stale, "\r\nDate: Tue, 02 Jan 2024 03:04:09 GMT\r\n"));
  CHECK(rig.upstream.Calls().size() == 3);  // it was asked
  CHECK(rig.Metric("edge_cache_stale_hits_total") == 1);

  // Past TTL + grace nothing is left to serve.
  rig.Advance(absl::Minutes(2));
  CHECK(StatusLine(rig.Get("/" + code)) == kUnavailable);
}

TEST_CASE("miss: a revoked or unknown answer is never replaced by a stale redirect",
          "[edge/app][concurrent]") {
  HandlerRig rig(ShortTtl());
  const std::string code = rig.Code(102);
  rig.upstream.SetLink(code, "https://example.com/r");
  CHECK(StatusLine(rig.Get("/" + code)) == kFound);
  rig.Advance(absl::Seconds(2));
  rig.upstream.Revoke(code);
  CHECK(StatusLine(rig.Get("/" + code)) == kGone);
  rig.Advance(absl::Seconds(2));
  rig.upstream.SetAvailable(false);
  CHECK(StatusLine(rig.Get("/" + code)) == kGone);  // the stale entry is the 410
}

TEST_CASE("miss: a cached link whose expire_time passes is no longer redirected",
          "[edge/app][concurrent]") {
  HandlerRig rig;  // a 60 s TTL: the link's expiry, not the TTL, ends the entry
  const std::string code = rig.Code(103);
  InMemoryLink link;
  link.location = "https://example.com/soon";
  link.expire_time = rig.wall.Now() + absl::Seconds(10);
  rig.upstream.SetLink(code, link);
  CHECK(StatusLine(rig.Get("/" + code)) == kFound);
  rig.Advance(absl::Seconds(5));
  CHECK(StatusLine(rig.Get("/" + code)) == kFound);
  CHECK(rig.upstream.Calls().size() == 1);  // a hit

  // Past the expiry the entry is gone, with no stale period: even with the
  // upstream down the edge does not redirect.
  rig.Advance(absl::Seconds(6));
  rig.upstream.SetAvailable(false);
  CHECK(StatusLine(rig.Get("/" + code)) == kUnavailable);
  rig.upstream.SetAvailable(true);
  CHECK(StatusLine(rig.Get("/" + code)) == kGone);
  CHECK(rig.upstream.Calls().size() == 3);
}

TEST_CASE("miss: an active answer already past its expire_time by the edge's clock is a 410",
          "[edge/app][concurrent]") {
  // The upstream's clock runs 5 s behind the edge's: it still calls the
  // link active.
  ManualClock upstream_clock(absl::FromTimeT(ProtocolHarness::kUnixSecond) - absl::Seconds(5));
  HandlerRig rig;
  InMemoryLinkResolver skewed(upstream_clock);
  ResolveBatcher batcher(&skewed, {});
  RedirectHandlerOptions options;
  options.clock = &rig.wall;
  RedirectHandler handler(&rig.codec, &rig.cache, &skewed, &batcher, &rig.metrics, {}, options);
  ProtocolHarness connection(http::HttpServerOptions(), &handler);
  connection.context().SetClock(MonotonicNowNs(), ProtocolHarness::kUnixSecond);

  const std::string code = rig.Code(104);
  InMemoryLink link;
  link.location = "https://example.com/late";
  link.expire_time = rig.wall.Now() - absl::Seconds(1);
  skewed.SetLink(code, link);
  for (int i = 0; i < 2; ++i) {
    connection.Send(Request("/" + code));
    CHECK(StatusLine(rig.Finish(connection)) == kGone);
  }
  CHECK(skewed.Calls().size() == 1);  // the 410 is cached like any answer
  batcher.Drain();
}

TEST_CASE("miss: no answer within miss_deadline of the request's arrival is a 503",
          "[edge/app][concurrent]") {
  RigOptions options;
  options.handler.miss_deadline = absl::Milliseconds(200);
  HandlerRig rig(options);
  const std::string code = rig.Code(105);
  rig.upstream.SetLink(code, "https://example.com/slow");
  rig.upstream.Hold();
  const auto sent = std::chrono::steady_clock::now();
  const std::string response = rig.Get("/" + code);
  CHECK(std::chrono::steady_clock::now() - sent >= std::chrono::milliseconds(190));
  CHECK(response ==
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
        "Cache-Control: no-store\r\n"
        "Retry-After: 1\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 34\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "timed out waiting for the service\n");
  CHECK(rig.Metric("edge_miss_refusals_total{reason=\"deadline\"}") == 1);

  // A cached link within its grace is served instead of the 503.
  rig.upstream.Release();
  RigOptions cached = ShortTtl();
  cached.handler.miss_deadline = absl::Milliseconds(200);
  HandlerRig second(cached);
  second.upstream.SetLink(code, "https://example.com/slow");
  CHECK(StatusLine(second.Get("/" + code)) == kFound);
  second.Advance(absl::Seconds(2));
  second.upstream.Hold();
  CHECK(StatusLine(second.Get("/" + code)) == kFound);
  CHECK(second.Metric("edge_miss_refusals_total{reason=\"deadline\"}") == 1);
}

TEST_CASE("miss: with the resolve queue full a miss is answered 503 at once, without asking",
          "[edge/app][concurrent]") {
  RigOptions options;
  options.batcher.max_in_flight = 1;
  options.batcher.max_queued = 1;
  HandlerRig rig(options);
  const std::string out = rig.Code(106);
  const std::string queued = rig.Code(107);
  const std::string refused = rig.Code(108);
  rig.upstream.SetLink(out, "https://example.com/out");
  rig.upstream.Hold();
  rig.Start(rig.Connection(0), Request("/" + out));
  REQUIRE(rig.upstream.WaitForCalls(1));
  rig.Start(rig.Connection(1), Request("/" + queued));
  rig.Start(rig.Connection(2), Request("/" + refused));
  CHECK(rig.Finish(rig.Connection(2)) ==
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
        "Cache-Control: no-store\r\n"
        "Retry-After: 1\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 33\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "too many look-ups waiting; retry\n");
  CHECK(rig.Metric("edge_miss_refusals_total{reason=\"resolve_queue_full\"}") == 1);
  rig.upstream.Release();
  CHECK(StatusLine(rig.Finish(rig.Connection(0))) == kFound);
  CHECK(StatusLine(rig.Finish(rig.Connection(1))) == "HTTP/1.1 404 Not Found");
  for (const auto& call : rig.upstream.Calls()) {
    for (const std::string& code : call) CHECK(code != refused);
  }
}

TEST_CASE("miss: alias look-ups in flight are bounded; generated codes are not",
          "[edge/app][concurrent]") {
  RigOptions options;
  options.handler.max_alias_misses = 1;
  HandlerRig rig(options);
  const std::string code = rig.Code(109);
  rig.upstream.SetLink("spring-sale", "https://example.com/sale");
  rig.upstream.SetLink(code, "https://example.com/code");
  rig.upstream.Hold();
  rig.Start(rig.Connection(0), Request("/spring-sale"));
  REQUIRE(rig.upstream.WaitForCalls(1));
  // A second alias while one is out: refused at once, never asked.
  rig.Start(rig.Connection(1), Request("/made-up-alias"));
  const std::string refused = rig.Finish(rig.Connection(1));
  CHECK(StatusLine(refused) == kUnavailable);
  CHECK(Body(refused) == "too many look-ups waiting; retry\n");
  CHECK(rig.Metric("edge_miss_refusals_total{reason=\"alias_misses\"}") == 1);
  CHECK(rig.Metric("edge_alias_misses_in_flight") == 1);
  // A generated code is not counted against the bound.
  rig.Start(rig.Connection(2), Request("/" + code));
  REQUIRE(rig.upstream.WaitForCalls(2));
  rig.upstream.Release();
  CHECK(StatusLine(rig.Finish(rig.Connection(0))) == kFound);
  CHECK(StatusLine(rig.Finish(rig.Connection(2))) == kFound);
  // The alias came back: the bound has room again.
  rig.Start(rig.Connection(1), Request("/made-up-alias"));
  CHECK(StatusLine(rig.Finish(rig.Connection(1))) == "HTTP/1.1 404 Not Found");
  CHECK(rig.Metric("edge_miss_refusals_total{reason=\"alias_misses\"}") == 1);
  CHECK(rig.upstream.Calls().size() == 3);
}

TEST_CASE("miss: concurrent misses for one code share one look-up", "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(110);
  rig.upstream.SetLink(code, "https://example.com/shared");
  rig.upstream.Hold();
  for (size_t i = 0; i < 3; ++i) rig.Start(rig.Connection(i), Request("/" + code));
  REQUIRE(rig.upstream.WaitForCalls(1));
  rig.upstream.Release();
  for (size_t i = 0; i < 3; ++i) CHECK(StatusLine(rig.Finish(rig.Connection(i))) == kFound);
  CHECK(rig.upstream.Calls().size() == 1);
}

}  // namespace
}  // namespace shortener::edge::testing
