// RedirectHandler over the in-memory upstream, without sockets: the exact
// response for every resolve outcome (on the miss that asks and on the hit
// that follows), HEAD, /readyz, the invalidation sink's effect on the
// cache, and which requests are recorded as clicks.
#include "edge/app/redirect_handler.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/edge/app/handler_rig.h"

namespace shortener::edge::testing {
namespace {

constexpr absl::string_view kNotFoundBody = "not found\n";
const std::string kNotFound = absl::StrCat(
    "HTTP/1.1 404 Not Found\r\n"
    "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
    "Cache-Control: no-store\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 10\r\n"
    "Connection: keep-alive\r\n"
    "\r\n",
    kNotFoundBody);

std::string RedirectBytes(absl::string_view status_and_reason, absl::string_view location,
                          absl::string_view max_age) {
  return absl::StrCat("HTTP/1.1 ", status_and_reason, "\r\nDate: ", kDate,
                      "\r\nLocation: ", location, "\r\nCache-Control: private, max-age=", max_age,
                      "\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n");
}

TEST_CASE("handler: an active link is redirected with its status; the hit that follows is the same",
          "[edge/app][concurrent]") {
  struct Case {
    int status;
    const char* status_and_reason;
    const char* max_age;
  };
  for (const Case& c :
       {Case{302, "302 Found", "0"}, Case{301, "301 Moved Permanently", "300"},
        Case{307, "307 Temporary Redirect", "0"}, Case{308, "308 Permanent Redirect", "300"}}) {
    INFO("redirect status " << c.status);
    HandlerRig rig;
    const std::string code = rig.Code(1000 + c.status);
    const std::string url = absl::StrCat("https://example.com/r", c.status);
    InMemoryLink link;
    link.location = url;
    link.redirect_status = c.status;
    rig.upstream.SetLink(code, link);
    const std::string expected = RedirectBytes(c.status_and_reason, url, c.max_age);
    CHECK(rig.Get("/" + code) == expected);                    // a miss, answered deferred
    CHECK(rig.Get("/" + code + "?utm_source=x") == expected);  // a hit
    CHECK(rig.upstream.Calls().size() == 1);
    CHECK(rig.Metric(absl::StrCat("edge_http_responses_total{code=\"", c.status, "\"}")) == 2);
  }
}

TEST_CASE("handler: the 302 of a miss, byte for byte", "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(42);
  rig.upstream.SetLink(code, "https://example.com/a?b=c");
  CHECK(rig.Get("/" + code) ==
        "HTTP/1.1 302 Found\r\n"
        "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
        "Location: https://example.com/a?b=c\r\n"
        "Cache-Control: private, max-age=0\r\n"
        "Content-Length: 0\r\n"
        "Connection: keep-alive\r\n"
        "\r\n");
}

TEST_CASE("handler: outcomes that are not redirects get their status, headers and body",
          "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string unknown = rig.Code(7);
  const std::string revoked = rig.Code(8);
  const std::string expired = rig.Code(9);
  const std::string malformed = rig.Code(10);
  rig.upstream.SetLink(revoked, "https://example.com/revoked");
  rig.upstream.Revoke(revoked);
  InMemoryLink link;
  link.location = "https://example.com/expired";
  link.expire_time = rig.wall.Now() - absl::Seconds(1);
  rig.upstream.SetLink(expired, link);
  rig.upstream.SetMalformed(malformed);

  const std::string gone =
      "HTTP/1.1 410 Gone\r\n"
      "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
      "Cache-Control: no-store\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n"
      "Content-Length: 5\r\n"
      "Connection: keep-alive\r\n"
      "\r\n"
      "gone\n";
  const std::string bad_request =
      "HTTP/1.1 400 Bad Request\r\n"
      "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
      "Cache-Control: no-store\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n"
      "Content-Length: 12\r\n"
      "Connection: keep-alive\r\n"
      "\r\n"
      "bad request\n";
  // Each twice: the miss that asks, then the cached answer.
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    CHECK(rig.Get("/" + unknown) == kNotFound);
    CHECK(rig.Get("/no-such-alias") == kNotFound);
    CHECK(rig.Get("/" + revoked) == gone);
    CHECK(rig.Get("/" + expired) == gone);
    CHECK(rig.Get("/" + malformed) == bad_request);
  }
  CHECK(rig.upstream.Calls().size() == 5);
}

TEST_CASE("handler: an unreachable upstream with nothing cached is a 503 that is not cached",
          "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(11);
  rig.upstream.SetLink(code, "https://example.com/u");
  rig.upstream.SetAvailable(false);
  const std::string unavailable =
      "HTTP/1.1 503 Service Unavailable\r\n"
      "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
      "Cache-Control: no-store\r\n"
      "Retry-After: 1\r\n"
      "Content-Type: text/plain; charset=utf-8\r\n"
      "Content-Length: 20\r\n"
      "Connection: keep-alive\r\n"
      "\r\n"
      "service unavailable\n";
  CHECK(rig.Get("/" + code) == unavailable);
  CHECK(rig.Get("/" + code) == unavailable);
  CHECK(rig.upstream.Calls().size() == 2);  // asked again: no answer is ever cached
  rig.upstream.SetAvailable(true);
  CHECK(StatusLine(rig.Get("/" + code)) == "HTTP/1.1 302 Found");
}

TEST_CASE("handler: HEAD gets the headers of GET without the body", "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(12);
  rig.upstream.SetLink(code, "https://example.com/h");
  const std::string head_redirect =
      "HTTP/1.1 302 Found\r\n"
      "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
      "Location: https://example.com/h\r\n"
      "Cache-Control: private, max-age=0\r\n"
      "Content-Length: 0\r\n"
      "Connection: keep-alive\r\n"
      "\r\n";
  CHECK(rig.Ask(Request("/" + code, "", "HEAD")) == head_redirect);  // miss
  CHECK(rig.Ask(Request("/" + code, "", "HEAD")) == head_redirect);  // hit
  // The same Content-Length, no body.
  const std::string head_not_found = kNotFound.substr(0, kNotFound.size() - kNotFoundBody.size());
  CHECK(rig.Ask(Request("/" + rig.Code(13), "", "HEAD")) == head_not_found);
}

TEST_CASE("handler: Connection: close is honoured on a deferred answer", "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(14);
  rig.upstream.SetLink(code, "https://example.com/c");
  const std::string response = rig.Get("/" + code, "Connection: close\r\n");
  CHECK(absl::StrContains(response, "\r\nConnection: close\r\n"));
  CHECK(rig.Connection().protocol().finishing());
}

TEST_CASE("handler: /readyz follows the upstream's readiness", "[edge/app][concurrent]") {
  HandlerRig rig;
  CHECK(rig.Get("/readyz") ==
        "HTTP/1.1 200 OK\r\n"
        "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
        "Cache-Control: no-store\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 6\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "ready\n");
  rig.upstream.SetAvailable(false);
  CHECK(rig.Get("/readyz") ==
        "HTTP/1.1 503 Service Unavailable\r\n"
        "Date: Tue, 02 Jan 2024 03:04:05 GMT\r\n"
        "Cache-Control: no-store\r\n"
        "Retry-After: 1\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 10\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "not ready\n");
  CHECK(rig.Metric("edge_service_ready") == 0);
  CHECK(rig.upstream.Calls().empty());
}

TEST_CASE("handler: as the invalidation sink, DropAll empties the cache and Invalidate one code",
          "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string a = rig.Code(21);
  const std::string b = rig.Code(22);
  rig.upstream.SetLink(a, "https://example.com/a1");
  rig.upstream.SetLink(b, "https://example.com/b1");
  rig.Get("/" + a);
  rig.Get("/" + b);
  REQUIRE(rig.upstream.Calls().size() == 2);

  // The link of `a` changed upstream: only the invalidated code asks again.
  rig.upstream.SetLink(a, "https://example.com/a2");
  rig.upstream.SetLink(b, "https://example.com/b2");
  rig.handler->MessageReceived(1, false);
  rig.handler->Invalidate(a);
  CHECK(absl::StrContains(rig.Get("/" + a), "Location: https://example.com/a2\r\n"));
  CHECK(absl::StrContains(rig.Get("/" + b), "Location: https://example.com/b1\r\n"));
  CHECK(rig.upstream.Calls().size() == 3);

  // A (re)subscription drops everything: every code asks again.
  rig.handler->StreamStarting();
  rig.handler->MessageReceived(0, true);
  rig.handler->DropAll();
  rig.handler->StreamState(true);
  CHECK(absl::StrContains(rig.Get("/" + b), "Location: https://example.com/b2\r\n"));
  CHECK(rig.upstream.Calls().size() == 4);
  CHECK(rig.Metric("edge_invalidation_stream_up") == 1);
  CHECK(rig.Metric("edge_invalidation_stream_starts_total") == 1);
  CHECK(rig.Metric("edge_invalidation_messages_total") == 2);
  CHECK(rig.Metric("edge_cache_invalidations_total") == 1);
  rig.handler->StreamState(false);
  CHECK(rig.Metric("edge_invalidation_stream_up") == 0);
}

TEST_CASE("handler: a Location the edge refuses is never sent or cached",
          "[edge/app][concurrent]") {
  HandlerRig rig;
  const std::string code = rig.Code(23);
  rig.upstream.SetLink(code, "javascript:alert(1)");
  for (int i = 0; i < 2; ++i) {
    const std::string response = rig.Get("/" + code);
    CHECK(StatusLine(response) == "HTTP/1.1 503 Service Unavailable");
    CHECK_FALSE(absl::StrContains(response, "javascript"));
  }
  CHECK(rig.upstream.Calls().size() == 2);
  CHECK(rig.Metric("edge_upstream_unsafe_locations_total") == 2);
}

// The events the handler queued so far.
std::vector<ClickEvent> Clicks(HandlerRig& rig) { return rig.clicks->Pop(1000); }

TEST_CASE("handler: a redirect of a GET is one click, on a miss and on a hit",
          "[edge/app][concurrent]") {
  RigOptions options;
  options.record_clicks = true;
  HandlerRig rig(options);
  const std::string code = rig.Code(31);
  InMemoryLink link;
  link.location = "https://example.com/click";
  link.redirect_status = 307;
  rig.upstream.SetLink(code, link);
  const std::string headers = "User-Agent: Mozilla/5.0 test\r\nReferer: https://ref.example/\r\n";
  rig.Get("/" + code, headers);  // miss: the event is queued with the answer
  REQUIRE(rig.clicks->WaitForBatch(1, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  std::vector<ClickEvent> events = Clicks(rig);
  REQUIRE(events.size() == 1);
  CHECK(events[0].code == code);
  CHECK(events[0].time == rig.wall.Now());
  CHECK(events[0].client_ip == "203.0.113.7");
  CHECK(events[0].user_agent == "Mozilla/5.0 test");
  CHECK(events[0].referer == "https://ref.example/");
  CHECK(events[0].http_status == 307);

  rig.wall.Advance(absl::Seconds(3));
  rig.Get("/" + code, headers);  // hit: queued before Handle returns
  events = Clicks(rig);
  REQUIRE(events.size() == 1);
  CHECK(events[0].time == rig.wall.Now());
  CHECK(events[0].http_status == 307);
}

TEST_CASE("handler: HEAD, prefetches and answers that are not redirects are not clicks",
          "[edge/app][concurrent]") {
  RigOptions options;
  options.record_clicks = true;
  HandlerRig rig(options);
  const std::string code = rig.Code(32);
  const std::string unknown = rig.Code(33);
  rig.upstream.SetLink(code, "https://example.com/noclick");
  // Cached first (HEAD: no click), so every request below is a hit,
  // decided before Handle returns.
  CHECK(StatusLine(rig.Ask(Request("/" + code, "", "HEAD"))) == "HTTP/1.1 302 Found");
  CHECK(StatusLine(rig.Get("/" + unknown)) == "HTTP/1.1 404 Not Found");
  CHECK(rig.clicks->Stats().pushed == 0);

  CHECK(StatusLine(rig.Ask(Request("/" + code, "", "HEAD"))) == "HTTP/1.1 302 Found");
  CHECK(StatusLine(rig.Get("/" + code, "Purpose: prefetch\r\n")) == "HTTP/1.1 302 Found");
  CHECK(StatusLine(rig.Get("/" + code, "Sec-Purpose: prefetch;prerender\r\n")) ==
        "HTTP/1.1 302 Found");
  CHECK(StatusLine(rig.Get("/" + unknown)) == "HTTP/1.1 404 Not Found");
  CHECK(StatusLine(rig.Get("/robots.txt")) == "HTTP/1.1 200 OK");
  CHECK(rig.clicks->Stats().pushed == 0);
  CHECK(StatusLine(rig.Get("/" + code)) == "HTTP/1.1 302 Found");
  CHECK(rig.clicks->Stats().pushed == 1);
}

TEST_CASE("handler: without a click queue redirects record nothing and still work",
          "[edge/app][concurrent]") {
  HandlerRig rig;  // ClickRecording all null
  const std::string code = rig.Code(34);
  rig.upstream.SetLink(code, "https://example.com/none");
  CHECK(StatusLine(rig.Get("/" + code)) == "HTTP/1.1 302 Found");
  CHECK(StatusLine(rig.Get("/" + code)) == "HTTP/1.1 302 Found");
  CHECK(rig.Metric("edge_clicks_queued_total") == 0);
}

}  // namespace
}  // namespace shortener::edge::testing
