// redirect-edge end to end: Postgres, shorten-service and redirect-edge as
// real processes, spoken to over real HTTP.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/edge/e2e/edge_fixture.h"

namespace shortener::testing {
namespace {

void CheckRedirect(const HttpResponse& r, int status, const std::string& location) {
  INFO(r.raw_head);
  CHECK(r.status == status);
  CHECK(r.Header("location") == location);
  CHECK(r.Header("content-length") == "0");
  CHECK(r.body.empty());
}

TEST_CASE("edge redirects GET and HEAD with the stored URL and no-cache headers",
          "[edge/e2e][e2e]") {
  EdgeFixture f;
  const std::string url = "https://example.com/landing?utm_source=sms&x=%C3%A9#frag";
  const v1::ShortenResponse created = f.Shorten(url);
  const std::string stored = created.link().long_url();

  const HttpResponse get = f.Get("/" + created.code());
  CheckRedirect(get, 302, stored);
  CHECK(get.reason == "Found");
  // A 302 must not be reused by browsers or shared caches: it may be
  // revoked a second later.
  CHECK(get.Header("cache-control") == "private, max-age=0");
  CHECK(get.Has("date"));

  const HttpResponse head = f.Get("/" + created.code(), "HEAD");
  CheckRedirect(head, 302, stored);

  // The query string of the request is not part of the code.
  CheckRedirect(f.Get("/" + created.code() + "?utm=1"), 302, stored);

  SECTION("custom aliases redirect too") {
    v1::ShortenRequest request;
    request.set_long_url("https://example.org/spring-sale");
    request.set_custom_alias("spring-sale");
    f.Shorten(request);
    CheckRedirect(f.Get("/spring-sale"), 302, "https://example.org/spring-sale");
  }
  SECTION("each redirect type gives its status") {
    const std::pair<v1::RedirectType, int> types[] = {
        {v1::REDIRECT_TYPE_MOVED_PERMANENTLY, 301},
        {v1::REDIRECT_TYPE_TEMPORARY, 307},
        {v1::REDIRECT_TYPE_PERMANENT, 308},
    };
    for (const auto& [type, status] : types) {
      v1::ShortenRequest request;
      request.set_long_url(absl::StrCat("https://example.net/", status));
      request.set_redirect_type(type);
      const v1::ShortenResponse r = f.Shorten(request);
      const HttpResponse response = f.Get("/" + r.code());
      CheckRedirect(response, status, absl::StrCat("https://example.net/", status));
      if (status == 307) {
        CHECK(response.Header("cache-control") == "private, max-age=0");
      } else {
        CHECK(response.Header("cache-control") == "private, max-age=300");
      }
    }
  }
}

TEST_CASE("edge answers unknown revoked expired and malformed requests with their statuses",
          "[edge/e2e][e2e]") {
  EdgeFixture f;
  SECTION("unknown code 404, unknown alias 404") {
    const HttpResponse unknown = f.Get("/" + f.UnknownCode());
    CHECK(unknown.status == 404);
    CHECK(unknown.Header("cache-control") == "no-store");
    CHECK(f.Get("/no-such-alias").status == 404);
  }
  SECTION("revoked 410, also when it was cached before") {
    const v1::ShortenResponse created = f.Shorten("https://example.com/to-revoke");
    CHECK(f.Get("/" + created.code()).status == 302);  // now cached
    f.Revoke(created.code());
    // Through the invalidation stream; the edge must stop redirecting.
    const absl::Time deadline = absl::Now() + absl::Seconds(2);
    int status = 0;
    while (absl::Now() < deadline && (status = f.Get("/" + created.code()).status) != 410) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    CHECK(status == 410);
    CHECK(f.Get("/" + created.code(), "HEAD").status == 410);
  }
  SECTION("expired 410") {
    v1::ShortenRequest request;
    request.set_long_url("https://example.com/short-lived");
    *request.mutable_expire_time() =
        grpcutil::ToProtoTimestamp(absl::Now() + absl::Milliseconds(1500));
    const v1::ShortenResponse created = f.Shorten(request);
    CHECK(f.Get("/" + created.code()).status == 302);  // cached, capped at expiry
    absl::SleepFor(absl::Milliseconds(1700));
    CHECK(f.Get("/" + created.code()).status == 410);
  }
  SECTION("malformed paths 400 without echoing them") {
    const std::vector<std::string> targets = {
        "/a%2Fb", "/abc/def",     "/..", "/a..b", "/abc%00", "/ab$cd", "/" + std::string(65, 'a'),
        "/",      "/%3Cscript%3E"};
    for (const std::string& target : targets) {
      const HttpResponse r = f.Get(target);
      INFO(target);
      CHECK(r.status == 400);
      CHECK(r.body.size() < 64);
      CHECK_FALSE(absl::StrContains(r.raw_head + r.body, "script"));
    }
  }
  SECTION("other methods 405 with Allow") {
    for (const std::string& method :
         std::vector<std::string>{"POST", "PUT", "DELETE", "OPTIONS", "get"}) {
      const HttpResponse r = f.Get("/abc", method);
      INFO(method);
      CHECK(r.status == 405);
      CHECK(r.Header("allow") == "GET, HEAD");
    }
  }
  SECTION("over-long request line 414, counted") {
    const HttpResponse r = f.Get("/" + std::string(9000, 'a'));
    CHECK(r.status == 414);
    CHECK(r.Header("connection") == "close");
    CHECK(f.edge->Metric("edge_http_responses_total{code=\"414\"}") == 1);
  }
}

TEST_CASE("edge serves health readiness metrics favicon and robots", "[edge/e2e][e2e]") {
  EdgeFixture f;
  CHECK(f.Get("/healthz").status == 200);
  CHECK(f.Get("/readyz").status == 200);
  CHECK(f.Get("/favicon.ico").status == 204);
  const HttpResponse robots = f.Get("/robots.txt");
  CHECK(robots.status == 200);
  CHECK(absl::StrContains(robots.body, "User-agent"));

  const v1::ShortenResponse created = f.Shorten("https://example.com/metrics");
  f.Get("/" + created.code());
  f.Get("/" + created.code());
  f.Get("/" + f.PrefilteredCode());
  f.Get("/a%2F");
  auto admin_metrics = HttpGet(f.edge->admin_port(), "/metrics");
  REQUIRE(admin_metrics.ok());
  const HttpResponse& metrics = *admin_metrics;
  CHECK(metrics.status == 200);
  CHECK(metrics.Header("cache-control") == "no-store");
  INFO(metrics.body);
  CHECK(absl::StrContains(metrics.body, "# TYPE edge_http_responses_total counter"));
  CHECK(f.edge->Metric("edge_http_responses_total{code=\"302\"}") == 2);
  CHECK(f.edge->Metric("edge_cache_hits_total") == 1);
  CHECK(f.edge->Metric("edge_cache_misses_total") == 1);
  CHECK(f.edge->Metric("edge_prefilter_rejections_total") == 1);
  CHECK(f.edge->Metric("edge_bad_requests_total{reason=\"percent\"}") == 1);
  CHECK(f.edge->Metric("edge_resolve_duration_seconds_count") == 1);
  CHECK(f.edge->Metric("edge_cache_coalesced_total") == 0);

  SECTION("readyz fails when the service is gone") {
    f.service->process().Signal(SIGKILL);
    f.service->process().Wait(absl::Seconds(5));
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    int status = 0;
    while (absl::Now() < deadline && (status = f.Get("/readyz").status) != 503) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    CHECK(status == 503);
    CHECK(f.Get("/healthz").status == 200);
  }
}

// The response without its Date line: what stays the same between requests.
std::string WithoutDate(const HttpResponse& response) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(response.raw_head, "\r\n")) {
    if (!absl::StartsWithIgnoreCase(line, "date:")) absl::StrAppend(&out, line, "\r\n");
  }
  return out + response.body;
}

TEST_CASE("metrics are served on the admin listener only; the public port answers them 404",
          "[edge/e2e][e2e]") {
  EdgeFixture f;
  const v1::ShortenResponse created = f.Shorten("https://example.com/admin-port");
  REQUIRE(f.Get("/" + created.code()).status == 302);
  // Public: /metrics gets exactly the bytes of an unknown path, Date aside,
  // with or without a query, for GET and HEAD.
  const HttpResponse unknown = f.Get("/" + f.PrefilteredCode());
  REQUIRE(unknown.status == 404);
  for (const std::string target : {"/metrics", "/metrics?format=prometheus"}) {
    INFO(target);
    const HttpResponse hidden = f.Get(target);
    CHECK(hidden.status == 404);
    CHECK(WithoutDate(hidden) == WithoutDate(unknown));
    CHECK_FALSE(absl::StrContains(hidden.body, "edge_"));
  }
  CHECK(f.Get("/metrics", "HEAD").status == 404);
  // Health checks stay on the public port for load balancers.
  CHECK(f.Get("/healthz").status == 200);
  CHECK(f.Get("/readyz").status == 200);

  // Admin: metrics, health, readiness; nothing else.
  const double public_200s = f.edge->Metric("edge_http_responses_total{code=\"200\"}");
  const int admin = f.edge->admin_port();
  REQUIRE(admin != f.edge->port());
  auto metrics = HttpGet(admin, "/metrics");
  REQUIRE(metrics.ok());
  CHECK(metrics->status == 200);
  CHECK(absl::StrContains(metrics->body, "# TYPE edge_http_responses_total counter"));
  CHECK(absl::StrContains(metrics->body, "edge_http_responses_total{code=\"302\"} 1\n"));
  // The public port's two 404s for /metrics (and the GET of the unknown
  // code) are counted; the admin port's requests are not public traffic.
  CHECK(absl::StrContains(metrics->body, "edge_http_responses_total{code=\"404\"} 4\n"));
  auto health = HttpGet(admin, "/healthz");
  REQUIRE(health.ok());
  CHECK(health->status == 200);
  CHECK(health->body == "ok\n");
  auto ready = HttpGet(admin, "/readyz?probe=1");
  REQUIRE(ready.ok());
  CHECK(ready->status == 200);
  CHECK(ready->body == "ready\n");
  auto head = HttpGet(admin, "/metrics", "HEAD");
  REQUIRE(head.ok());
  CHECK(head->status == 200);
  CHECK(head->body.empty());
  auto other = HttpGet(admin, "/" + created.code());
  REQUIRE(other.ok());
  CHECK(other->status == 404);  // no redirects here
  CHECK(other->body == "not found\n");
  auto post = HttpGet(admin, "/metrics", "POST");
  REQUIRE(post.ok());
  CHECK(post->status == 405);
  CHECK(post->Header("allow") == "GET, HEAD");
  CHECK(f.edge->Metric("edge_http_responses_total{code=\"200\"}") == public_200s);
  CHECK(f.edge->Metric("edge_http_responses_total{code=\"405\"}") == 0);
}

TEST_CASE("edge sends no Location whose scheme is outside its --allowed_schemes",
          "[edge/e2e][e2e]") {
  // The service allows ftp links; the edge, by default, only http and https.
  EdgeFixture f({}, {"--allowed_schemes=http,https,ftp"});
  const v1::ShortenResponse ftp = f.Shorten("ftp://files.example/pub/a.iso");
  const v1::ShortenResponse web = f.Shorten("https://example.com/web");
  for (int i = 1; i <= 3; ++i) {
    INFO("request " << i);
    const HttpResponse refused = f.Get("/" + ftp.code());
    // Handled as an outage: 503, never a redirect, never cached (each
    // request asks the service again and is counted).
    CHECK(refused.status == 503);
    CHECK_FALSE(refused.Has("location"));
    CHECK(refused.Header("cache-control") == "no-store");
    CHECK(refused.body == "service unavailable\n");
    CHECK(f.edge->Metric("edge_upstream_unsafe_locations_total") == i);
  }
  CheckRedirect(f.Get("/" + web.code()), 302, web.link().long_url());
  CHECK_THAT(f.edge->Log(), Catch::Contains("--allowed_schemes"));
  // An edge that allows ftp too, as the service does, redirects there.
  auto ftp_edge = f.StartEdge(f.service->target(), {"--allowed_schemes=http,https,ftp"});
  auto redirected = HttpGet(ftp_edge->port(), "/" + ftp.code());
  REQUIRE(redirected.ok());
  CheckRedirect(*redirected, 302, "ftp://files.example/pub/a.iso");
  CHECK(ftp_edge->Metric("edge_upstream_unsafe_locations_total") == 0);
  // A malformed list stops the start, naming the flag.
  EdgeProcessOptions options;
  options.service_target = f.service->target();
  options.secret_file = f.service->secret_file();
  options.api_key_file = *f.service->EdgeKeyFile();
  options.extra_flags = {"--allowed_schemes=http:"};
  options.ready_timeout = absl::Seconds(10);
  const auto bad = EdgeProcess::Start(options);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("--allowed_schemes: scheme \"http:\" is not a scheme name"));
}

TEST_CASE("edge keeps cached links working while the service is down", "[edge/e2e][e2e]") {
  // A short TTL so the cached entry is past it when the service is gone:
  // served stale within the grace.
  EdgeFixture f({"--cache_ttl=1s", "--stale_grace=1m"});
  const v1::ShortenResponse cached = f.Shorten("https://example.com/cached");
  const v1::ShortenResponse uncached = f.Shorten("https://example.com/uncached");
  CHECK(f.Get("/" + cached.code()).status == 302);
  const std::string prefiltered = f.PrefilteredCode();

  f.service->process().Signal(SIGKILL);
  f.service->process().Wait(absl::Seconds(5));
  absl::SleepFor(absl::Milliseconds(1200));  // past the TTL

  CheckRedirect(f.Get("/" + cached.code()), 302, cached.link().long_url());
  const HttpResponse unavailable = f.Get("/" + uncached.code());
  CHECK(unavailable.status == 503);
  CHECK(unavailable.Header("retry-after") == "1");
  CHECK(unavailable.Header("cache-control") == "no-store");
  // The prefilter needs no service: 404, not 503.
  CHECK(f.Get("/" + prefiltered).status == 404);
  CHECK(f.edge->Metric("edge_cache_stale_hits_total") >= 1);
  CHECK(f.edge->Metric("edge_resolve_total{outcome=\"unavailable\"}") >= 1);

  SECTION("after the restart, uncached links work again") {
    REQUIRE(f.service->Restart().ok());
    REQUIRE(WaitForMetric(*f.edge, "edge_invalidation_stream_up", 1, absl::Seconds(10)));
    CheckRedirect(f.Get("/" + uncached.code()), 302, uncached.link().long_url());
  }
}

TEST_CASE("edge prefilter answers 404 with no RPC and no cache entry", "[edge/e2e][e2e]") {
  EdgeFixture f;
  const std::string prefiltered = f.PrefilteredCode();
  for (int i = 0; i < 5; ++i) CHECK(f.Get("/" + prefiltered).status == 404);
  CHECK(f.edge->Metric("edge_prefilter_rejections_total") == 5);
  CHECK(f.edge->Metric("edge_resolve_duration_seconds_count") == 0);
  CHECK(f.edge->Metric("edge_cache_entries") == 0);
  CHECK(f.edge->Metric("edge_cache_misses_total") == 0);
}

TEST_CASE("edge coalesces 200 concurrent cold requests into one Resolve", "[edge/e2e][e2e]") {
  EdgeFixture f({"--threads=2", "--resolve_timeout=60s"});
  const v1::ShortenResponse created = f.Shorten("https://example.com/thundering-herd");
  constexpr int kClients = 200;
  std::vector<HttpConnection> connections;
  for (int i = 0; i < kClients; ++i) {
    auto c = HttpConnection::Connect(f.edge->port());
    REQUIRE(c.ok());
    connections.push_back(*std::move(c));
  }
  const std::string request =
      absl::StrCat("GET /", created.code(), " HTTP/1.1\r\nHost: sho.rt\r\n\r\n");
  // The service is frozen (every thread stopped, not just signalled), so the
  // first miss cannot be answered before all 200 requests have arrived and
  // joined it. With a bare SIGSTOP, on a busy machine the service once
  // answered the first Resolve within 2 ms of being signalled; the requests
  // after that were cache hits and the test failed (twice in CI).
  REQUIRE(f.service->process().Freeze());
  for (HttpConnection& c : connections) REQUIRE(c.Send(request).ok());
  const bool all_joined =
      WaitForMetric(*f.edge, "edge_cache_coalesced_total", kClients - 1, absl::Seconds(30));
  const double joined = f.edge->Metric("edge_cache_coalesced_total");
  REQUIRE(f.service->process().Signal(SIGCONT));
  INFO("coalesced before SIGCONT: " << joined);
  CHECK(all_joined);
  int redirected = 0;
  for (HttpConnection& c : connections) {
    auto r = c.Read();
    if (r.ok() && r->status == 302 && r->Header("location") == created.link().long_url()) {
      ++redirected;
    }
  }
  CHECK(redirected == kClients);
  CHECK(f.edge->Metric("edge_resolve_rpcs_total") == 1);
  CHECK(f.edge->Metric("edge_cache_misses_total") == kClients);
  // The service's own count: its `served:` line at shutdown.
  f.service->process().Signal(SIGTERM);
  REQUIRE(f.service->process().Wait(absl::Seconds(15)) == 0);
  CHECK(absl::StrContains(f.service->Log(), " Resolve=1 BatchResolve=0 "));
}

TEST_CASE("edge keeps connections alive and answers pipelined requests in order",
          "[edge/e2e][e2e]") {
  EdgeFixture f;
  const v1::ShortenResponse a = f.Shorten("https://example.com/a");
  const v1::ShortenResponse b = f.Shorten("https://example.com/b");
  auto c = HttpConnection::Connect(f.edge->port());
  REQUIRE(c.ok());
  // b is cold (deferred), a warm after the first: order must hold anyway.
  std::string burst;
  const std::vector<std::string> targets = {"/" + a.code(), "/" + b.code(),        "/healthz",
                                            "/" + a.code(), "/" + f.UnknownCode(), "/" + b.code()};
  for (const std::string& t : targets)
    absl::StrAppend(&burst, "GET ", t, " HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(c->Send(burst).ok());
  const int expected[] = {302, 302, 200, 302, 404, 302};
  const std::string locations[] = {
      a.link().long_url(), b.link().long_url(), "", a.link().long_url(), "", b.link().long_url()};
  for (int i = 0; i < 6; ++i) {
    auto r = c->Read();
    REQUIRE(r.ok());
    INFO(i << " " << targets[i]);
    CHECK(r->status == expected[i]);
    CHECK(r->Header("location") == locations[i]);
    CHECK(r->Header("connection") == "keep-alive");
  }
  // The same connection keeps working; Connection: close ends it.
  REQUIRE(c->Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").ok());
  auto last = c->Read();
  REQUIRE(last.ok());
  CHECK(last->status == 200);
  CHECK(last->Header("connection") == "close");
  CHECK(c->WaitClosed());
}

TEST_CASE("edge takes the client ip from x-forwarded-for only from trusted proxies",
          "[edge/e2e][e2e]") {
  SECTION("peer is a trusted proxy") {
    EdgeFixture f({"--trusted_proxies=127.0.0.0/8", "--access_log"});
    f.Get("/healthz", "GET", "X-Forwarded-For: 198.51.100.7, 127.0.0.2\r\n");
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    while (absl::Now() < deadline && !absl::StrContains(f.edge->Log(), "client=198.51.100.7")) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    CHECK(absl::StrContains(f.edge->Log(), "client=198.51.100.7 method=GET status=200"));
  }
  SECTION("untrusted peer: the header is ignored, the socket address counts") {
    EdgeFixture f({"--trusted_proxies=10.0.0.0/8", "--access_log"});
    f.Get("/healthz", "GET", "X-Forwarded-For: 198.51.100.7\r\n");
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    while (absl::Now() < deadline && !absl::StrContains(f.edge->Log(), "access ")) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    CHECK(absl::StrContains(f.edge->Log(), "client=127.0.0.1 method=GET status=200"));
    CHECK_FALSE(absl::StrContains(f.edge->Log(), "198.51.100.7"));
  }
  SECTION("no header: the socket address") {
    EdgeFixture f({"--trusted_proxies=127.0.0.0/8", "--access_log"});
    f.Get("/healthz");
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    while (absl::Now() < deadline && !absl::StrContains(f.edge->Log(), "access ")) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    CHECK(absl::StrContains(f.edge->Log(), "client=127.0.0.1 method=GET status=200"));
    // A proxy list like this one raises no warning.
    CHECK_FALSE(absl::StrContains(f.edge->Log(), "covers a large part of the internet"));
  }
  SECTION("trusting everyone: it works as configured, and the start warns") {
    EdgeFixture f({"--trusted_proxies=0.0.0.0/0,::/0", "--access_log"});
    const std::string log = f.edge->Log();
    CHECK_THAT(log, Catch::Contains("--trusted_proxies: 0.0.0.0/0 covers a large part of the "
                                    "internet: every client in it can then pick its own address"));
    CHECK_THAT(log, Catch::Contains("--trusted_proxies: ::/0 covers a large part"));
    f.Get("/healthz", "GET", "X-Forwarded-For: 198.51.100.9\r\n");
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    while (absl::Now() < deadline && !absl::StrContains(f.edge->Log(), "access ")) {
      absl::SleepFor(absl::Milliseconds(20));
    }
    CHECK(absl::StrContains(f.edge->Log(), "client=198.51.100.9 method=GET status=200"));
  }
}

}  // namespace
}  // namespace shortener::testing

namespace shortener::testing {
namespace {

TEST_CASE("a revocation through one replica reaches edges of both replicas within a second",
          "[edge/e2e][e2e]") {
  EdgeFixture f;  // replica A and edge A
  EdgeFixture::Replica replica_b = f.StartReplica({});
  EdgeProcess* edge_b = replica_b.edge.get();

  std::vector<v1::ShortenResponse> links;
  for (int i = 0; i < 5; ++i) links.push_back(f.Shorten(absl::StrCat("https://example.com/r", i)));
  // Both edges cache every link.
  for (const auto& link : links) {
    REQUIRE(f.Get("/" + link.code()).status == 302);
    REQUIRE(HttpGet(edge_b->port(), "/" + link.code())->status == 302);
  }
  for (const auto& link : links) {
    const absl::Time revoked = absl::Now();
    f.Revoke(link.code());  // through replica A
    bool a_gone = false, b_gone = false;
    while (absl::Now() - revoked < absl::Seconds(1) && !(a_gone && b_gone)) {
      a_gone = a_gone || f.Get("/" + link.code()).status == 410;
      b_gone = b_gone || HttpGet(edge_b->port(), "/" + link.code())->status == 410;
      if (!(a_gone && b_gone)) absl::SleepFor(absl::Milliseconds(10));
    }
    INFO(link.code() << " after " << absl::FormatDuration(absl::Now() - revoked));
    CHECK(a_gone);
    CHECK(b_gone);
  }
}

TEST_CASE("a link re-pointed through one replica is served anew by edges of both within a second",
          "[edge/e2e][e2e]") {
  // A long TTL: only the invalidation can make the edges let go.
  EdgeFixture f({"--cache_ttl=10m"});
  EdgeFixture::Replica replica_b = f.StartReplica({"--cache_ttl=10m"});
  EdgeProcess* edge_b = replica_b.edge.get();

  for (int i = 0; i < 3; ++i) {
    const v1::ShortenResponse link = f.Shorten(absl::StrCat("https://example.com/wrong", i));
    // Both edges cache it.
    REQUIRE(f.Get("/" + link.code()).Header("location") == link.link().long_url());
    REQUIRE(HttpGet(edge_b->port(), "/" + link.code())->Header("location") ==
            link.link().long_url());
    v1::UpdateLinkRequest request;
    request.mutable_link()->set_code(link.code());
    request.mutable_link()->set_long_url(absl::StrCat("https://example.com/right", i));
    request.mutable_link()->set_redirect_type(v1::REDIRECT_TYPE_TEMPORARY);
    request.mutable_update_mask()->add_paths("long_url");
    request.mutable_update_mask()->add_paths("redirect_type");
    v1::Link updated;
    const absl::Time changed = absl::Now();
    grpc::Status status = f.stub->UpdateLink(EdgeFixture::Ctx().get(), request, &updated);
    INFO(status.error_message());
    REQUIRE(status.ok());  // through replica A
    const std::string want = absl::StrCat("https://example.com/right", i);
    bool a_new = false, b_new = false;
    while (absl::Now() - changed < absl::Seconds(1) && !(a_new && b_new)) {
      const HttpResponse a = f.Get("/" + link.code());
      a_new = a_new || (a.status == 307 && a.Header("location") == want);
      absl::StatusOr<HttpResponse> b = HttpGet(edge_b->port(), "/" + link.code());
      b_new = b_new || (b.ok() && b->status == 307 && b->Header("location") == want);
      if (!(a_new && b_new)) absl::SleepFor(absl::Milliseconds(10));
    }
    INFO(link.code() << " after " << absl::FormatDuration(absl::Now() - changed));
    CHECK(a_new);
    CHECK(b_new);
  }
}

TEST_CASE("an edge whose stream was down drops what it cached before the outage",
          "[edge/e2e][e2e]") {
  // A long TTL: only the reconnect rule can make the edge forget.
  EdgeFixture f({"--cache_ttl=10m"});
  const v1::ShortenResponse link = f.Shorten("https://example.com/outage");
  REQUIRE(f.Get("/" + link.code()).status == 302);  // cached
  // The edge's replica dies; the link is revoked through another replica
  // while the edge cannot hear about it.
  ServiceProcessOptions options;
  options.conninfo = f.cluster->ConnInfo();
  options.secret_file = f.service->secret_file();
  f.service->process().Signal(SIGKILL);
  f.service->process().Wait(absl::Seconds(5));
  REQUIRE(WaitForMetric(*f.edge, "edge_invalidation_stream_up", 0, absl::Seconds(5)));
  {
    auto other = ServiceProcess::Start(options);
    REQUIRE(other.ok());
    auto stub = (*other)->NewStub();
    v1::RevokeRequest request;
    request.set_code(link.code());
    v1::Link revoked;
    REQUIRE(stub->Revoke(EdgeFixture::Ctx().get(), request, &revoked).ok());
  }
  // While the service is down the cached entry is still served (stale is
  // better than nothing)...
  CHECK(f.Get("/" + link.code()).status == 302);
  // ...but once the stream is back, nothing from before the outage is trusted.
  REQUIRE(f.service->Restart().ok());
  REQUIRE(WaitForMetric(*f.edge, "edge_invalidation_stream_up", 1, absl::Seconds(10)));
  CHECK(f.Get("/" + link.code()).status == 410);
}

}  // namespace
}  // namespace shortener::testing

namespace shortener::testing {
namespace {

TEST_CASE("edge groups concurrent misses of different codes into few calls", "[edge/e2e][e2e]") {
  EdgeFixture f({"--threads=2", "--resolve_in_flight=1"});
  v1::BatchShortenRequest batch;
  constexpr int kLinks = 300;
  for (int i = 0; i < kLinks; ++i) {
    v1::ShortenRequest* r = batch.add_requests();
    r->set_long_url(absl::StrCat("https://example.com/many/", i));
    r->set_force_new(true);
  }
  v1::BatchShortenResponse created;
  REQUIRE(f.stub->BatchShorten(EdgeFixture::Ctx().get(), batch, &created).ok());
  REQUIRE(created.results_size() == kLinks);
  // One pipelined burst per connection, 50 connections: 300 cold codes
  // arrive together (each connection has one miss out at a time).
  constexpr int kConnections = 50;
  std::vector<HttpConnection> connections;
  for (int c = 0; c < kConnections; ++c) {
    auto connection = HttpConnection::Connect(f.edge->port());
    REQUIRE(connection.ok());
    std::string burst;
    for (int i = c; i < kLinks; i += kConnections) {
      absl::StrAppend(&burst, "GET /", created.results(i).response().code(),
                      " HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    REQUIRE(connection->Send(burst).ok());
    connections.push_back(*std::move(connection));
  }
  int right = 0;
  for (int c = 0; c < kConnections; ++c) {
    for (int i = c; i < kLinks; i += kConnections) {
      auto r = connections[c].Read();
      REQUIRE(r.ok());
      if (r->status == 302 &&
          r->Header("location") == created.results(i).response().link().long_url()) {
        ++right;
      }
    }
  }
  CHECK(right == kLinks);
  CHECK(f.edge->Metric("edge_resolve_codes_total") == kLinks);
  const double rpcs = f.edge->Metric("edge_resolve_rpcs_total");
  INFO("rpcs " << rpcs);
  CHECK(rpcs >= 1);
  CHECK(rpcs <= kLinks / 3);  // with one call out at a time, misses queue and share calls
}

}  // namespace
}  // namespace shortener::testing
