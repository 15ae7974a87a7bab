// The status table: every outcome and local decision, cache headers, and the
// Location safety check.
#include "edge/http_status.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "edge/response_builder.h"

namespace shortener::edge {
namespace {

ResponsePlan Active(int status, absl::string_view location) {
  ResolveResult result;
  result.outcome = ResolveOutcome::kActive;
  result.redirect_status = status;
  result.location = location;
  return PlanForOutcome(result);
}

ResponsePlan Outcome(ResolveOutcome outcome) {
  ResolveResult result;
  result.outcome = outcome;
  return PlanForOutcome(result);
}

bool HasHeader(const ResponsePlan& plan, absl::string_view line) {
  return plan.headers.find(line) != absl::string_view::npos;
}

TEST_CASE("temporary redirects carry the URL and are not cacheable", "[edge]") {
  for (int status : {302, 307}) {
    ResponsePlan plan = Active(status, "https://example.com/a?b=c");
    CHECK(plan.status == status);
    CHECK(plan.location == "https://example.com/a?b=c");
    CHECK(plan.body.empty());
    CHECK(plan.headers == "Cache-Control: private, max-age=0\r\n");
  }
  CHECK(Active(302, "https://x/").reason == "Found");
  CHECK(Active(307, "https://x/").reason == "Temporary Redirect");
}

TEST_CASE("permanent redirects carry a bounded private max-age", "[edge]") {
  for (int status : {301, 308}) {
    ResponsePlan plan = Active(status, "https://example.com/");
    CHECK(plan.status == status);
    CHECK(plan.location == "https://example.com/");
    CHECK(plan.headers == "Cache-Control: private, max-age=300\r\n");
  }
  CHECK(Active(301, "https://x/").reason == "Moved Permanently");
  CHECK(Active(308, "https://x/").reason == "Permanent Redirect");
}

TEST_CASE(
    "an unsafe stored URL or redirect status gives 502, never a "
    "redirect",
    "[edge]") {
  for (std::string bad :
       {std::string(""), std::string("https://x/\r\nSet-Cookie: a=b"), std::string("https://x/\n"),
        std::string("https://x/\r"), std::string("https://x/\0a", 12), std::string("https://x/ a"),
        std::string("https://x/\t"), std::string("https://x/\x7f"),
        std::string("https://caf\xc3\xa9.fr/")}) {
    CHECK_FALSE(IsSafeLocation(bad));
    ResponsePlan plan = Active(302, bad);
    CHECK(plan.status == 502);
    CHECK(plan.location.empty());
    CHECK(HasHeader(plan, "Cache-Control: no-store\r\n"));
  }
  for (int status : {200, 300, 303, 304, 305, 404, 0, -1}) {
    ResponsePlan plan = Active(status, "https://example.com/");
    CHECK(plan.status == 502);
    CHECK(plan.location.empty());
  }
  CHECK(IsSafeLocation("https://example.com/%20a?q=%0D%0A#frag"));
}

TEST_CASE("a Location must be an absolute URL with an allowed scheme and a host", "[edge]") {
  // Default policy: http and https, any case (the service lower-cases them).
  for (const char* good :
       {"https://example.com/", "http://example.com", "HTTPS://EXAMPLE.COM/a", "hTTp://x/",
        "https://[2001:db8::1]:8443/p", "http://192.0.2.1/", "https://0.example/"}) {
    INFO(good);
    CHECK(IsSafeLocation(good));
    CHECK(Active(302, good).status == 302);
  }
  for (const char* bad : {
           "/relative/path",           // relative: the short domain's own path
           "//evil.example/",          // scheme-relative: takes the short link's scheme
           "evil.example/x",           // no scheme at all
           "javascript:alert(1)",      // runs in the page
           "data:text/html,<b>x</b>",  //
           "ftp://example.com/file",   // a scheme not allowed here
           "mailto:a@example.com",     //
           "https:example.com",        // no "//": a relative reference to browsers
           "https:/example.com",       //
           "https:",                   //
           "https://",                 // no host
           "https:///evil.example/",   // browsers skip the extra slash
           "https://\\evil.example/",  // browsers read "\" as "/"
           "https://@evil.example/",   // empty userinfo
           "https://:443/",            // no host, a port
           "https://?q",               //
           "https://#f",               //
           "httpss://example.com/",    // only a prefix of an allowed scheme
           "http+x://example.com/",    //
           " https://example.com/",    // leading space
       }) {
    INFO(bad);
    CHECK_FALSE(IsSafeLocation(bad));
    ResponsePlan plan = Active(302, bad);
    CHECK(plan.status == 502);
    CHECK(plan.location.empty());
  }
}

TEST_CASE("the Location policy follows --allowed_schemes", "[edge]") {
  const LocationPolicy ftp_too({"HTTP", "https", "ftp"});
  CHECK(ftp_too.allowed_schemes() == std::vector<std::string>{"http", "https", "ftp"});
  CHECK(IsSafeLocation("ftp://files.example/a.iso", ftp_too));
  CHECK(IsSafeLocation("FTP://files.example/a.iso", ftp_too));
  CHECK(IsSafeLocation("http://example.com/", ftp_too));
  const LocationPolicy https_only({"https"});
  CHECK_FALSE(IsSafeLocation("http://example.com/", https_only));
  CHECK(IsSafeLocation("https://example.com/", https_only));
  ResolveResult result;
  result.outcome = ResolveOutcome::kActive;
  result.redirect_status = 302;
  result.location = "http://example.com/";
  CHECK(PlanForOutcome(result, https_only).status == 502);
  CHECK(PlanForOutcome(result, ftp_too).status == 302);
  // The visible-ASCII rule holds whatever the schemes.
  CHECK_FALSE(IsSafeLocation("ftp://files.example/a\r\nSet-Cookie: x=y", ftp_too));
  // Exactly the 502's bytes go out, never the URL.
  result.location = "javascript:alert(document.cookie)";
  const ResponsePlan plan = PlanForOutcome(result, ftp_too);
  std::string bytes(ResponseSize(plan, {}), '\0');
  REQUIRE(WriteResponse(plan, {}, bytes.data(), bytes.size()) == bytes.size());
  CHECK(bytes ==
        "HTTP/1.1 502 Bad Gateway\r\n"
        "Cache-Control: no-store\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Length: 12\r\n"
        "Connection: keep-alive\r\n"
        "\r\n"
        "bad gateway\n");
}

TEST_CASE("non-active outcomes map to their statuses with no-store", "[edge]") {
  CHECK(Outcome(ResolveOutcome::kRevoked).status == 410);
  CHECK(Outcome(ResolveOutcome::kExpired).status == 410);
  CHECK(Outcome(ResolveOutcome::kNotFound).status == 404);
  CHECK(Outcome(ResolveOutcome::kInvalid).status == 400);
  ResponsePlan unavailable = Outcome(ResolveOutcome::kUnavailable);
  CHECK(unavailable.status == 503);
  CHECK(HasHeader(unavailable, "Retry-After: 1\r\n"));
  for (ResolveOutcome outcome :
       {ResolveOutcome::kRevoked, ResolveOutcome::kExpired, ResolveOutcome::kNotFound,
        ResolveOutcome::kInvalid, ResolveOutcome::kUnavailable, ResolveOutcome::kTimedOut,
        ResolveOutcome::kOverloaded}) {
    ResponsePlan plan = Outcome(outcome);
    CHECK(plan.location.empty());
    CHECK_FALSE(plan.body.empty());
    CHECK(HasHeader(plan, "Cache-Control: no-store\r\n"));
  }
}

TEST_CASE("a miss past its deadline or refused by a bound is a 503 with Retry-After", "[edge]") {
  const ResponsePlan unavailable = Outcome(ResolveOutcome::kUnavailable);
  const ResponsePlan timed_out = Outcome(ResolveOutcome::kTimedOut);
  const ResponsePlan overloaded = Outcome(ResolveOutcome::kOverloaded);
  for (const ResponsePlan* plan : {&timed_out, &overloaded}) {
    CHECK(plan->status == 503);
    CHECK(plan->reason == "Service Unavailable");
    CHECK(plan->headers == "Cache-Control: no-store\r\nRetry-After: 1\r\n");
  }
  CHECK(timed_out.body == "timed out waiting for the service\n");
  CHECK(overloaded.body == "too many look-ups waiting; retry\n");
  CHECK(unavailable.body == "service unavailable\n");
  // Only these three say nothing about the code.
  for (int o = 0; o <= static_cast<int>(ResolveOutcome::kOverloaded); ++o) {
    const auto outcome = static_cast<ResolveOutcome>(o);
    CHECK(IsNoAnswer(outcome) == (Outcome(outcome).status == 503));
  }
}

TEST_CASE("local decisions map to their statuses", "[edge]") {
  ResponsePlan prefiltered = PlanForTarget(TargetKind::kPrefiltered);
  ResponsePlan not_found = Outcome(ResolveOutcome::kNotFound);
  // A prober cannot tell a prefiltered code from an unknown one.
  CHECK(prefiltered.status == 404);
  CHECK(prefiltered.headers == not_found.headers);
  CHECK(prefiltered.body == not_found.body);
  // /metrics lives on the admin listener: the public port says nothing more
  // about it than about a path that does not exist.
  ResponsePlan metrics = PlanForTarget(TargetKind::kMetrics);
  CHECK(metrics.status == 404);
  CHECK(metrics.reason == not_found.reason);
  CHECK(metrics.headers == not_found.headers);
  CHECK(metrics.body == not_found.body);

  CHECK(PlanForTarget(TargetKind::kBadRequest).status == 400);
  ResponsePlan not_allowed = PlanForTarget(TargetKind::kMethodNotAllowed);
  CHECK(not_allowed.status == 405);
  CHECK(HasHeader(not_allowed, "Allow: GET, HEAD\r\n"));
  CHECK(PlanForTarget(TargetKind::kUriTooLong).status == 414);
  CHECK(PlanForTarget(TargetKind::kHealthz).status == 200);
  ResponsePlan favicon = PlanForTarget(TargetKind::kFavicon);
  CHECK(favicon.status == 204);
  CHECK(favicon.body.empty());
  CHECK(PlanForTarget(TargetKind::kRobots).status == 200);
  CHECK(PlanForReadiness(true).status == 200);
  ResponsePlan not_ready = PlanForReadiness(false);
  CHECK(not_ready.status == 503);
  CHECK(HasHeader(not_ready, "Retry-After: 1\r\n"));
  // Kinds that need a look-up or live state are not decided by the table.
  CHECK(PlanForTarget(TargetKind::kLookupCode).status == 500);
  CHECK(PlanForTarget(TargetKind::kReadyz).status == 500);
}

TEST_CASE("every plan's fixed headers are well-formed CRLF lines", "[edge]") {
  std::vector<ResponsePlan> plans = {Active(301, "https://x/"), Active(302, "https://x/"),
                                     Active(302, "bad url"), PlanForReadiness(false)};
  for (int k = 0; k <= static_cast<int>(TargetKind::kUriTooLong); ++k) {
    plans.push_back(PlanForTarget(static_cast<TargetKind>(k)));
  }
  for (int o = 0; o <= static_cast<int>(ResolveOutcome::kOverloaded); ++o) {
    plans.push_back(Outcome(static_cast<ResolveOutcome>(o)));
  }
  for (const ResponsePlan& plan : plans) {
    CHECK(plan.status >= 200);
    CHECK(plan.status <= 599);
    CHECK_FALSE(plan.reason.empty());
    REQUIRE(plan.headers.size() >= 2);
    CHECK(plan.headers.substr(plan.headers.size() - 2) == "\r\n");
    CHECK(plan.headers.find("Cache-Control: ") == 0);
    CHECK(plan.headers.find("\r\n\r\n") == absl::string_view::npos);
  }
}

}  // namespace
}  // namespace shortener::edge

namespace shortener::edge {
namespace {

TEST_CASE("protocol errors of the http layer map to fixed no-store plans", "[edge]") {
  const std::pair<int, const char*> cases[] = {{400, "Bad Request"},
                                               {413, "Content Too Large"},
                                               {414, "URI Too Long"},
                                               {431, "Request Header Fields Too Large"},
                                               {505, "HTTP Version Not Supported"},
                                               {500, "Internal Server Error"}};
  for (const auto& [status, reason] : cases) {
    INFO(status);
    const ResponsePlan plan = PlanForProtocolError(status);
    CHECK(plan.status == status);
    CHECK(plan.reason == reason);
    CHECK(plan.headers == "Cache-Control: no-store\r\n");
    CHECK(plan.location.empty());
    CHECK_FALSE(plan.body.empty());
  }
  // Anything else the server might be asked for is a 500, never a made-up
  // status line.
  CHECK(PlanForProtocolError(418).status == 500);
  CHECK(PlanForProtocolError(200).status == 500);
}

}  // namespace
}  // namespace shortener::edge
