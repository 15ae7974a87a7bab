// Hostile request heads against the real redirect-edge (issue 17, item 5,
// scenarios 1-4): request smuggling shapes, folded lines, NUL and control
// bytes, oversized heads. Each shape goes on a connection of its own, with
// the exact bytes below; the edge must answer exactly the statuses listed
// and close the connection (a refused request is never followed by an
// answer to what came after it), count each refusal under its reason, and
// meanwhile keep the canary's redirects fast, revocations within a second
// and every click counted: a request hidden in a body or behind a refused
// head is for the canary's code, so an answer to it would show as one
// canary click too many.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "tests/edge/hostile/hostile_fixture.h"

namespace shortener::testing {
namespace {

// One hostile request: its bytes, the statuses the edge must answer in
// order, and the reason it must count the refusal under (empty: none).
struct Shape {
  std::string name;
  std::string bytes;
  std::vector<int> statuses;
  std::string reason;
  // Whether the edge closes the connection after the answers (false: it
  // waits for bytes that were never sent).
  bool closed = true;
};

// Sends every shape, CHECKs what the edge answered, and returns the 302s
// (all for `decoy`: redirects the hostile traffic was allowed to get).
int64_t SendShapes(const EdgeProcess& edge, const std::vector<Shape>& shapes,
                   const v1::ShortenResponse& decoy) {
  const std::map<std::string, double> before = ReadEdgeMetrics(edge);
  std::map<std::string, int> refusals;
  int64_t redirects = 0;
  for (const Shape& shape : shapes) {
    INFO(shape.name << ": \"" << absl::CHexEscape(shape.bytes.substr(0, 300)) << "\"");
    const RawOutcome outcome = SendRaw(edge.port(), shape.bytes);
    INFO(outcome.error);
    CHECK(outcome.error.empty());
    CHECK(outcome.statuses() == shape.statuses);
    CHECK(outcome.closed == shape.closed);
    for (const HttpResponse& r : outcome.responses) {
      if (r.status == 302) {
        ++redirects;
        CHECK(r.Header("location") == decoy.link().long_url());
      } else {
        // The HTTP layer's own answers close the connection and are never
        // cached.
        CHECK(r.Header("connection") == "close");
        CHECK(r.Header("cache-control") == "no-store");
      }
    }
    if (!shape.reason.empty()) ++refusals[shape.reason];
  }
  const std::map<std::string, double> after = ReadEdgeMetrics(edge);
  for (const char* reason :
       {"malformed", "obs_fold", "transfer_encoding", "content_length", "host", "body_too_large",
        "line_too_long", "head_too_large", "too_many_fields", "version"}) {
    const std::string sample =
        absl::StrCat("edge_http_protocol_errors_total{reason=\"", reason, "\"}");
    INFO(sample);
    CHECK(MetricOr0(after, sample) - MetricOr0(before, sample) == refusals[reason]);
  }
  return redirects;
}

// A request for the canary's code: what a smuggler hides behind the first.
std::string Smuggled(const HostileFixture& f) {
  return absl::StrCat("GET /", f.canary.code(),
                      " HTTP/1.1\r\nHost: sho.rt\r\nUser-Agent: smuggler/1.0\r\n\r\n");
}

// The head of a GET for `decoy` with `fields` (each ending in CRLF) added.
std::string DecoyHead(const v1::ShortenResponse& decoy, const std::string& fields) {
  return absl::StrCat("GET /", decoy.code(), " HTTP/1.1\r\nHost: sho.rt\r\nUser-Agent: ", kChrome,
                      "\r\n", fields, "\r\n");
}

TEST_CASE("hostile: request smuggling shapes are refused and the hidden request is never answered",
          "[edge/hostile][e2e][hostile]") {
  HostileFixture f;
  const v1::ShortenResponse decoy = f.CachedLink(*f.edge, "https://example.com/decoy/smuggling");
  const std::string s = Smuggled(f);
  const std::string n = std::to_string(s.size());
  const std::string chunked_end = "0\r\n\r\n" + s;  // an empty chunked body, then the request
  const std::string in_chunk = absl::StrCat(absl::Hex(s.size()), "\r\n", s, "\r\n0\r\n\r\n");
  const std::string last = GetRequest("/" + decoy.code(), "Connection: close\r\n");
  const std::string line = absl::StrCat("GET /", decoy.code(), " HTTP/1.1");
  const std::vector<Shape> shapes = {
      {"CL.TE",
       DecoyHead(decoy, absl::StrCat("Content-Length: ", chunked_end.size(),
                                     "\r\nTransfer-Encoding: chunked\r\n")) +
           chunked_end,
       {400},
       "transfer_encoding"},
      {"TE.CL",
       DecoyHead(decoy, "Transfer-Encoding: chunked\r\nContent-Length: " + n + "\r\n") + s,
       {400},
       "transfer_encoding"},
      {"TE chunked, the request in a chunk",
       DecoyHead(decoy, "Transfer-Encoding: chunked\r\n") + in_chunk,
       {400},
       "transfer_encoding"},
      {"TE gzip, chunked",
       DecoyHead(decoy, "Transfer-Encoding: gzip, chunked\r\n") + chunked_end,
       {400},
       "transfer_encoding"},
      {"TE chunked, identity",
       DecoyHead(decoy, "Transfer-Encoding: chunked, identity\r\n") + chunked_end,
       {400},
       "transfer_encoding"},
      {"TE identity",
       DecoyHead(decoy, "Transfer-Encoding: identity\r\n") + s,
       {400},
       "transfer_encoding"},
      {"TE after a tab",
       DecoyHead(decoy, "Transfer-Encoding:\tchunked\r\n") + chunked_end,
       {400},
       "transfer_encoding"},
      {"TE lower-case name, upper-case value",
       DecoyHead(decoy, "transfer-encoding: CHUNKED\r\n") + chunked_end,
       {400},
       "transfer_encoding"},
      {"TE xchunked",
       DecoyHead(decoy, "Transfer-Encoding: xchunked\r\n") + chunked_end,
       {400},
       "transfer_encoding"},
      {"TE twice",
       DecoyHead(decoy, "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n") +
           chunked_end,
       {400},
       "transfer_encoding"},
      {"TE in HTTP/1.0",
       absl::StrCat("GET /", decoy.code(), " HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
                    chunked_end),
       {400},
       "transfer_encoding"},
      {"TE with a space before the colon",
       DecoyHead(decoy, "Transfer-Encoding : chunked\r\n") + chunked_end,
       {400},
       "malformed"},
      {"TE with a vertical tab in the name",
       DecoyHead(decoy, "Transfer-Encoding\x0b: chunked\r\n") + chunked_end,
       {400},
       "malformed"},
      {"CL twice, equal",
       DecoyHead(decoy, "Content-Length: " + n + "\r\nContent-Length: " + n + "\r\n") + s,
       {400},
       "content_length"},
      {"CL twice, conflicting",
       DecoyHead(decoy, "Content-Length: 0\r\nContent-Length: " + n + "\r\n") + s,
       {400},
       "content_length"},
      {"CL as a list",
       DecoyHead(decoy, "Content-Length: " + n + ", " + n + "\r\n") + s,
       {400},
       "content_length"},
      {"CL with a plus sign",
       DecoyHead(decoy, "Content-Length: +" + n + "\r\n") + s,
       {400},
       "content_length"},
      {"CL negative", DecoyHead(decoy, "Content-Length: -1\r\n") + s, {400}, "content_length"},
      {"CL with a space inside",
       DecoyHead(decoy, "Content-Length: 1 " + n + "\r\n") + s,
       {400},
       "content_length"},
      {"CL in hex", DecoyHead(decoy, "Content-Length: 0x40\r\n") + s, {400}, "content_length"},
      {"CL past 64 bits",
       DecoyHead(decoy, "Content-Length: 99999999999999999999999\r\n") + s,
       {400},
       "content_length"},
      {"CL with a space before the colon",
       DecoyHead(decoy, "Content-Length : " + n + "\r\n") + s,
       {400},
       "malformed"},
      {"CL over the body limit",
       DecoyHead(decoy, "Content-Length: 100000\r\n") + s,
       {413},
       "body_too_large"},
      {"bare LF line ends",
       absl::StrCat(line, "\nHost: sho.rt\nUser-Agent: ", kChrome, "\n\n", s),
       {400},
       "malformed"},
      {"bare LF inside the head",
       absl::StrCat(line, "\r\nHost: sho.rt\nX-Hidden: 1\r\n\r\n", s),
       {400},
       "malformed"},
      {"bare CR inside the head",
       absl::StrCat(line, "\r\nHost: sho.rt\rX-Hidden: 1\r\n\r\n", s),
       {400},
       "malformed"},
      {"head ended by a bare LF",
       absl::StrCat(line, "\r\nHost: sho.rt\r\n\n", s),
       {400},
       "malformed"},
      {"Host twice", DecoyHead(decoy, "Host: other.example\r\n") + s, {400}, "host"},
      {"no Host in HTTP/1.1", absl::StrCat(line, "\r\nUser-Agent: x\r\n\r\n", s), {400}, "host"},
      // Accepted: the body is read and discarded, the request in it never
      // handled; the request after the body is the next one.
      {"CL body holding a request",
       DecoyHead(decoy, "Content-Length: " + n + "\r\n") + s + last,
       {302, 302},
       ""},
      {"CL with whitespace around it",
       DecoyHead(decoy, "Content-Length: \t" + n + " \t\r\n") + s + last,
       {302, 302},
       ""},
      // The body is still incomplete: the request in it is body, waited for.
      {"CL longer than what follows",
       DecoyHead(decoy, absl::StrCat("Content-Length: ", s.size() + 32, "\r\n")) + s,
       {},
       "",
       false},
  };
  int64_t decoy_redirects = 0;
  const ScenarioFigures figures =
      f.Run("smuggling", *f.edge, [&] { decoy_redirects = SendShapes(*f.edge, shapes, decoy); });
  HostileFixture::CheckScenario(figures);
  CHECK(decoy_redirects == 4);
  f.CheckClicks(*f.edge, figures, {{decoy.code(), decoy_redirects}});
}

TEST_CASE("hostile: folded header lines (obs-fold) are refused with 400",
          "[edge/hostile][e2e][hostile]") {
  HostileFixture f;
  const v1::ShortenResponse decoy = f.CachedLink(*f.edge, "https://example.com/decoy/fold");
  const std::string s = Smuggled(f);
  const std::string line = absl::StrCat("GET /", decoy.code(), " HTTP/1.1");
  const std::vector<Shape> shapes = {
      {"User-Agent folded with a space",
       DecoyHead(decoy, "X-A: a\r\nUser-Agent: a\r\n b\r\n"),
       {400},
       "obs_fold"},
      {"folded with a tab", DecoyHead(decoy, "X-A: a\r\n\tb\r\n"), {400}, "obs_fold"},
      {"first line empty, then folded",
       DecoyHead(decoy, "Referer:\r\n https://r.example/\r\n"),
       {400},
       "obs_fold"},
      {"X-Forwarded-For folded",
       DecoyHead(decoy, "X-Forwarded-For: 203.0.113.9\r\n 198.51.100.4\r\n"),
       {400},
       "obs_fold"},
      {"Host folded",
       absl::StrCat(line, "\r\nHost: sho.rt\r\n .evil.example\r\n\r\n"),
       {400},
       "obs_fold"},
      {"a request folded into a field",
       DecoyHead(decoy, "X-A: a\r\n GET /" + f.canary.code() + " HTTP/1.1\r\n"),
       {400},
       "obs_fold"},
      {"several folds", DecoyHead(decoy, "X-A: a\r\n b\r\n c\r\n\td\r\n"), {400}, "obs_fold"},
      {"Sec-Purpose folded (a prefetch hint hidden)",
       DecoyHead(decoy, "Sec-Purpose: none\r\n prefetch\r\n"),
       {400},
       "obs_fold"},
      // Whitespace between the request line and the first field (RFC 9112
      // section 2.2: reject it, or ignore the line; never a field).
      {"a first field line starting with a space",
       absl::StrCat(line, "\r\n Host: sho.rt\r\nHost: sho.rt\r\n\r\n", s),
       {400},
       "malformed"},
  };
  int64_t decoy_redirects = 0;
  const ScenarioFigures figures =
      f.Run("obs-fold", *f.edge, [&] { decoy_redirects = SendShapes(*f.edge, shapes, decoy); });
  HostileFixture::CheckScenario(figures);
  CHECK(decoy_redirects == 0);
  f.CheckClicks(*f.edge, figures, {{decoy.code(), decoy_redirects}});
}

TEST_CASE("hostile: NUL and control bytes in the request line and fields are refused",
          "[edge/hostile][e2e][hostile]") {
  HostileFixture f;
  const v1::ShortenResponse decoy = f.CachedLink(*f.edge, "https://example.com/decoy/control");
  const std::string code = decoy.code();
  const std::string nul(1, '\0');
  const std::string close = GetRequest("/" + code, "Connection: close\r\n");
  const auto line = [&](const std::string& request_line) {
    return absl::StrCat(request_line, "\r\nHost: sho.rt\r\nUser-Agent: ", kChrome, "\r\n\r\n");
  };
  std::vector<Shape> shapes = {
      {"NUL after the target", line("GET /" + code + nul + " HTTP/1.1"), {400}, "malformed"},
      {"NUL inside the target",
       line("GET /" + code.substr(0, 3) + nul + code.substr(3) + " HTTP/1.1"),
       {400},
       "malformed"},
      {"NUL after the version", line("GET /" + code + " HTTP/1.1" + nul), {400}, "malformed"},
      {"NUL before the method", line(nul + "GET /" + code + " HTTP/1.1"), {400}, "malformed"},
      {"NUL for the first space", line("GET" + nul + "/" + code + " HTTP/1.1"), {400}, "malformed"},
      {"SOH in the target", line("GET /" + code + "\x01 HTTP/1.1"), {400}, "malformed"},
      {"DEL in the target", line("GET /" + code + "\x7f HTTP/1.1"), {400}, "malformed"},
      {"ESC in the target", line("GET /" + code + "\x1b[31m HTTP/1.1"), {400}, "malformed"},
      {"tab for a space", line("GET\t/" + code + " HTTP/1.1"), {400}, "malformed"},
      {"NUL in User-Agent", DecoyHead(decoy, "User-Agent: a" + nul + "b\r\n"), {400}, "malformed"},
      {"NUL in a field name", DecoyHead(decoy, "X-Fo" + nul + "o: b\r\n"), {400}, "malformed"},
      {"NUL as a whole value", DecoyHead(decoy, "Referer: " + nul + "\r\n"), {400}, "malformed"},
      {"NUL in X-Forwarded-For",
       DecoyHead(decoy, "X-Forwarded-For: 198.51.100.4" + nul + "\r\n"),
       {400},
       "malformed"},
      {"NUL in Host",
       absl::StrCat("GET /", code, " HTTP/1.1\r\nHost: sho" + nul + ".rt\r\n\r\n"),
       {400},
       "malformed"},
      {"SOH STX in a value", DecoyHead(decoy, "X-A: \x01\x02\r\n"), {400}, "malformed"},
      {"ESC sequence in Referer", DecoyHead(decoy, "Referer: \x1b[31mred\r\n"), {400}, "malformed"},
      {"DEL in a value", DecoyHead(decoy, "X-A: del\x7f\r\n"), {400}, "malformed"},
      {"vertical tab in a value", DecoyHead(decoy, "X-A: a\x0b b\r\n"), {400}, "malformed"},
      {"form feed in a value", DecoyHead(decoy, "X-A: \x0c\r\n"), {400}, "malformed"},
      {"NUL between two requests", DecoyHead(decoy, "") + nul + close, {302, 400}, "malformed"},
      // Allowed by RFC 9112 (HTAB, obs-text): redirected, and the click
      // counted with its text made valid UTF-8.
      {"tab inside a value", DecoyHead(decoy, "X-A: tab\there\r\n") + close, {302, 302}, ""},
      {"bytes over 0x7f in User-Agent",
       absl::StrCat("GET /", code,
                    " HTTP/1.1\r\nHost: sho.rt\r\nUser-Agent: caf\xc3\xa9 \xff\xfe\r\n",
                    "Referer: https://r.example/\xc0\xaf\r\nConnection: close\r\n\r\n"),
       {302},
       ""},
  };
  int64_t decoy_redirects = 0;
  const ScenarioFigures figures = f.Run(
      "control bytes", *f.edge, [&] { decoy_redirects = SendShapes(*f.edge, shapes, decoy); });
  HostileFixture::CheckScenario(figures);
  CHECK(decoy_redirects == 4);
  f.CheckClicks(*f.edge, figures, {{decoy.code(), decoy_redirects}});
}

TEST_CASE("hostile: oversized heads get 414 or 431 and the connection closed",
          "[edge/hostile][e2e][hostile]") {
  HostileFixture f;
  const v1::ShortenResponse decoy = f.CachedLink(*f.edge, "https://example.com/decoy/oversized");
  const std::string code = decoy.code();
  const std::string close = GetRequest("/" + code, "Connection: close\r\n");
  std::string many_fields, under_field_limit, tiny_fields;
  for (int i = 0; i < 150; ++i) absl::StrAppend(&many_fields, "X-F", i, ": v\r\n");
  // With Host and User-Agent: 100 fields, the most allowed.
  for (int i = 0; i < 98; ++i) absl::StrAppend(&under_field_limit, "X-F", i, ": v\r\n");
  for (int i = 0; i < 2000; ++i) absl::StrAppend(&tiny_fields, "a:b\r\n");
  const std::vector<Shape> shapes = {
      {"request line of 9 KiB",
       absl::StrCat("GET /", std::string(9 * 1024, 'a'), " HTTP/1.1\r\nHost: sho.rt\r\n\r\n"),
       {414},
       "line_too_long"},
      {"request line that never ends",
       "GET /" + std::string(20 * 1024, 'a'),
       {414},
       "line_too_long"},
      {"one field of 20 KiB",
       DecoyHead(decoy, "X-Big: " + std::string(20 * 1024, 'b') + "\r\n"),
       {431},
       "head_too_large"},
      {"User-Agent of 17 KiB",
       DecoyHead(decoy, "X-A: 1\r\nUser-Agent: " + std::string(17 * 1024, 'u') + "\r\n"),
       {431},
       "head_too_large"},
      {"a head that never ends",
       DecoyHead(decoy, "X-Big: " + std::string(64 * 1024, 'b')),
       {431},
       "head_too_large"},
      {"152 fields", DecoyHead(decoy, many_fields), {431}, "too_many_fields"},
      {"2002 tiny fields", DecoyHead(decoy, tiny_fields), {431}, "too_many_fields"},
      // At the limits: served.
      {"100 fields", DecoyHead(decoy, under_field_limit) + close, {302, 302}, ""},
      {"a head of nearly 16 KiB",
       DecoyHead(decoy, "X-Big: " + std::string(15 * 1024, 'b') + "\r\n") + close,
       {302, 302},
       ""},
  };
  int64_t decoy_redirects = 0;
  const ScenarioFigures figures = f.Run(
      "oversized heads", *f.edge, [&] { decoy_redirects = SendShapes(*f.edge, shapes, decoy); });
  HostileFixture::CheckScenario(figures);
  CHECK(decoy_redirects == 4);
  f.CheckClicks(*f.edge, figures, {{decoy.code(), decoy_redirects}});
}

}  // namespace
}  // namespace shortener::testing
