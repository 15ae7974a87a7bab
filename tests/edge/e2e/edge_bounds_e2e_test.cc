// redirect-edge's miss-path bounds end to end (real Postgres, service and
// edge): made-up aliases are cached as negative entries within their own
// budget and never push out links; a waiting request gets 503 at its miss
// deadline; the resolve queue and the alias look-ups in flight are bounded.
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

// A connection with one request sent and not yet answered.
HttpConnection SendGet(int port, const std::string& target) {
  auto c = HttpConnection::Connect(port);
  REQUIRE(c.ok());
  REQUIRE(c->Send(absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: sho.rt\r\n\r\n")).ok());
  return *std::move(c);
}

void CheckRefused503(const HttpResponse& r, const std::string& body) {
  INFO(r.raw_head);
  CHECK(r.status == 503);
  CHECK(r.Header("retry-after") == "1");
  CHECK(r.Header("cache-control") == "no-store");
  CHECK(r.body == body);
}

TEST_CASE("edge caches made-up aliases as negative entries that never evict links",
          "[edge/e2e][e2e]") {
  // 64 shards of 16 entries: 4 for negative answers, 12 for links.
  EdgeFixture f(
      {"--cache_entries=1024", "--negative_cache_share=0.25", "--negative_cache_ttl=60s"});
  std::vector<v1::ShortenResponse> links;
  for (int i = 0; i < 20; ++i) {
    links.push_back(f.Shorten(absl::StrCat("https://example.com/live/", i)));
    REQUIRE(f.Get("/" + links.back().code()).status == 302);
  }
  REQUIRE(f.edge->Metric("edge_cache_entries") == 20);

  // A made-up alias is asked once, then answered from the cache.
  CHECK(f.Get("/no-such-alias").status == 404);
  const double codes_sent = f.edge->Metric("edge_resolve_codes_total");
  const double hits = f.edge->Metric("edge_cache_hits_total");
  CHECK(f.Get("/no-such-alias").status == 404);
  CHECK(f.edge->Metric("edge_resolve_codes_total") == codes_sent);
  CHECK(f.edge->Metric("edge_cache_hits_total") == hits + 1);

  // A flood of distinct made-up aliases, far more than the negative budget.
  for (int i = 0; i < 600; ++i) {
    REQUIRE(f.Get(absl::StrCat("/random-", i, "-alias")).status == 404);
  }
  CHECK(f.edge->Metric("edge_cache_negative_entries") <= 256);
  CHECK(f.edge->Metric("edge_cache_negative_entries") > 0);
  // Every link is still cached: answered without asking the service.
  const double sent_before = f.edge->Metric("edge_resolve_codes_total");
  for (const v1::ShortenResponse& link : links) {
    const HttpResponse r = f.Get("/" + link.code());
    CHECK(r.status == 302);
    CHECK(r.Header("location") == link.link().long_url());
  }
  CHECK(f.edge->Metric("edge_resolve_codes_total") == sent_before);
}

TEST_CASE("edge answers a miss 503 at its deadline when the service does not answer",
          "[edge/e2e][e2e]") {
  // The call itself could wait 20 s: the request's deadline is what ends it.
  EdgeFixture f({"--miss_deadline=1s", "--resolve_timeout=20s"});
  const v1::ShortenResponse link = f.Shorten("https://example.com/slow");
  REQUIRE(f.service->process().Freeze());
  const absl::Time start = absl::Now();
  const HttpResponse r = f.Get("/" + link.code());
  const absl::Duration waited = absl::Now() - start;
  REQUIRE(f.service->process().Signal(SIGCONT));
  CheckRefused503(r, "timed out waiting for the service\n");
  CHECK(waited >= absl::Milliseconds(900));
  CHECK(waited < absl::Seconds(10));
  CHECK(f.edge->Metric("edge_miss_refusals_total{reason=\"deadline\"}") == 1);
  // Nothing was cached from it: the next request asks again and redirects.
  CHECK(f.Get("/" + link.code()).status == 302);
}

TEST_CASE("edge counts a pipelined miss's deadline from its arrival, not from its turn",
          "[edge/e2e][e2e]") {
  EdgeFixture f({"--miss_deadline=2s", "--resolve_timeout=20s"});
  const v1::ShortenResponse a = f.Shorten("https://example.com/first");
  const v1::ShortenResponse b = f.Shorten("https://example.com/second");
  REQUIRE(f.service->process().Freeze());
  // Both misses in one write: the second waits behind the first's 2 s.
  auto c = HttpConnection::Connect(f.edge->port());
  REQUIRE(c.ok());
  const absl::Time start = absl::Now();
  REQUIRE(c->Send(absl::StrCat("GET /", a.code(), " HTTP/1.1\r\nHost: sho.rt\r\n\r\n", "GET /",
                               b.code(), " HTTP/1.1\r\nHost: sho.rt\r\n\r\n"))
              .ok());
  auto first = c->Read();
  auto second = c->Read();
  const absl::Duration waited = absl::Now() - start;
  REQUIRE(f.service->process().Signal(SIGCONT));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CheckRefused503(*first, "timed out waiting for the service\n");
  CheckRefused503(*second, "timed out waiting for the service\n");
  // Its own 2 s had passed by its turn: answered at once, not 2 s later.
  CHECK(waited >= absl::Milliseconds(1900));
  CHECK(waited < absl::Milliseconds(3500));
  CHECK(f.edge->Metric("edge_miss_refusals_total{reason=\"deadline\"}") == 2);
  CHECK(f.edge->Metric("edge_resolve_rpcs_total") == 1);
}

TEST_CASE("edge refuses a miss at once when the resolve queue is full", "[edge/e2e][e2e]") {
  EdgeFixture f({"--resolve_in_flight=1", "--resolve_queue=1", "--miss_deadline=30s",
                 "--resolve_timeout=30s"});
  const v1::ShortenResponse a = f.Shorten("https://example.com/a");
  const v1::ShortenResponse b = f.Shorten("https://example.com/b");
  const v1::ShortenResponse c = f.Shorten("https://example.com/c");
  REQUIRE(f.service->process().Freeze());
  HttpConnection in_flight = SendGet(f.edge->port(), "/" + a.code());
  const bool sent = WaitForMetric(*f.edge, "edge_resolve_rpcs_total", 1, absl::Seconds(10));
  HttpConnection queued = SendGet(f.edge->port(), "/" + b.code());
  const bool waiting = WaitForMetric(*f.edge, "edge_resolve_queued_codes", 1, absl::Seconds(10));
  // Answered while the service is still frozen: nothing waits for it.
  auto refused = HttpGet(f.edge->port(), "/" + c.code());
  REQUIRE(f.service->process().Signal(SIGCONT));
  REQUIRE(sent);
  REQUIRE(waiting);
  REQUIRE(refused.ok());
  CheckRefused503(*refused, "too many look-ups waiting; retry\n");
  CHECK(f.edge->Metric("edge_miss_refusals_total{reason=\"resolve_queue_full\"}") == 1);
  for (auto [connection, link] : {std::make_pair(&in_flight, &a), std::make_pair(&queued, &b)}) {
    auto r = connection->Read();
    REQUIRE(r.ok());
    CHECK(r->status == 302);
    CHECK(r->Header("location") == link->link().long_url());
  }
  CHECK(f.Get("/" + c.code()).status == 302);
}

TEST_CASE("edge bounds alias look-ups in flight but not generated codes", "[edge/e2e][e2e]") {
  EdgeFixture f({"--max_alias_misses=1", "--miss_deadline=30s", "--resolve_timeout=30s"});
  v1::ShortenRequest request;
  request.set_long_url("https://example.org/promo");
  request.set_custom_alias("promo-one");
  f.Shorten(request);
  REQUIRE(f.service->process().Freeze());
  HttpConnection alias = SendGet(f.edge->port(), "/promo-one");
  const bool in_flight =
      WaitForMetric(*f.edge, "edge_alias_misses_in_flight", 1, absl::Seconds(10));
  auto refused = HttpGet(f.edge->port(), "/made-up-alias");
  // A code that passes the check character still goes to the service.
  HttpConnection code = SendGet(f.edge->port(), "/" + f.UnknownCode());
  const bool code_sent = WaitForMetric(*f.edge, "edge_resolve_rpcs_total", 2, absl::Seconds(10));
  REQUIRE(f.service->process().Signal(SIGCONT));
  REQUIRE(in_flight);
  REQUIRE(refused.ok());
  CheckRefused503(*refused, "too many look-ups waiting; retry\n");
  CHECK(code_sent);
  auto promo = alias.Read();
  REQUIRE(promo.ok());
  CHECK(promo->status == 302);
  CHECK(promo->Header("location") == "https://example.org/promo");
  auto unknown = code.Read();
  REQUIRE(unknown.ok());
  CHECK(unknown->status == 404);
  CHECK(f.edge->Metric("edge_miss_refusals_total{reason=\"alias_misses\"}") == 1);
  CHECK(f.edge->Metric("edge_alias_misses_in_flight") == 0);
  // With the alias answered, there is room again.
  CHECK(f.Get("/made-up-alias").status == 404);
}

}  // namespace
}  // namespace shortener::testing
