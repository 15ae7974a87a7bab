#include "edge/http/request_parser.h"

#include <boost/beast/http/error.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace shortener::edge::http {
namespace {

namespace beast = boost::beast;

// What a test needs from one parse (the views copied, the parser gone).
struct Parsed {
  beast::error_code ec;
  // Set when the parse failed (not need_more): why, as the server decides.
  std::optional<RequestRefusal> refusal;
  size_t consumed = 0;
  bool done = false;
  std::string method, target, xff, user_agent, referer, purpose, sec_purpose;
  int version = 0;
  bool keep_alive = false;
};

// Feeds `bytes` the way the server does: one put() per chunk boundary in
// `splits` (offsets into bytes, increasing), each from the first byte not
// yet consumed up to the boundary, then a last one up to the end.
Parsed Parse(const std::string& bytes, const ParserLimits& limits = {},
             std::initializer_list<size_t> splits = {}) {
  RequestHead head;
  RequestParser parser(limits, &head);
  Parsed result;
  auto feed = [&](size_t end) {
    result.ec = {};
    result.consumed += parser.Put(
        absl::string_view(bytes.data() + result.consumed, end - result.consumed), result.ec);
    if (result.ec && result.ec != beast::http::error::need_more) {
      result.refusal = parser.RefusalFor(result.ec, bytes);
    }
  };
  for (size_t split : splits) {
    feed(split);
    if (result.ec && result.ec != beast::http::error::need_more) return result;
    if (parser.is_done()) break;
  }
  if (!parser.is_done()) feed(bytes.size());
  result.done = parser.is_done() && !result.ec;
  if (parser.is_header_done()) {
    result.method = std::string(parser.method());
    result.target = std::string(parser.target());
    result.xff = std::string(parser.x_forwarded_for());
    result.user_agent = std::string(parser.user_agent());
    result.referer = std::string(parser.referer());
    result.purpose = std::string(parser.purpose());
    result.sec_purpose = std::string(parser.sec_purpose());
    result.version = parser.http_version();
    result.keep_alive = parser.keep_alive();
  }
  return result;
}

const std::string kFullRequest =
    "GET /Ab3xYz9?utm=1 HTTP/1.1\r\n"
    "Host: sho.rt\r\n"
    "User-Agent: curl/8.0\r\n"
    "X-Forwarded-For: 10.0.0.1\r\n"
    "referer: https://example.com/page\r\n"
    "x-forwarded-for: 10.0.0.2, 10.0.0.3\r\n"
    "PURPOSE: prefetch\r\n"
    "Sec-Purpose: prefetch;prerender\r\n"
    "X-Forwarded-For:\r\n"
    "\r\n";

void CheckFullRequest(const Parsed& p) {
  REQUIRE_FALSE(p.ec);
  REQUIRE(p.done);
  CHECK(p.consumed == kFullRequest.size());
  CHECK(p.method == "GET");
  CHECK(p.target == "/Ab3xYz9?utm=1");
  CHECK(p.xff == "10.0.0.1, 10.0.0.2, 10.0.0.3");
  CHECK(p.user_agent == "curl/8.0");
  CHECK(p.referer == "https://example.com/page");
  CHECK(p.purpose == "prefetch");
  CHECK(p.sec_purpose == "prefetch;prerender");
  CHECK(p.version == 11);
  CHECK(p.keep_alive);
}

TEST_CASE("the parser keeps method target and the listed fields whatever their case",
          "[edge/http][parser]") {
  CheckFullRequest(Parse(kFullRequest));
}

TEST_CASE("the parser gives the same request for every split of the bytes into two reads",
          "[edge/http][parser]") {
  for (size_t split = 0; split <= kFullRequest.size(); ++split) {
    INFO("split at " << split);
    CheckFullRequest(Parse(kFullRequest, {}, {split}));
  }
}

TEST_CASE("the parser gives the same request when fed one byte at a time", "[edge/http][parser]") {
  RequestHead head;
  RequestParser parser(ParserLimits{}, &head);
  size_t consumed = 0;
  for (size_t end = 1; end <= kFullRequest.size() && !parser.is_done(); ++end) {
    beast::error_code ec;
    consumed += parser.Put(absl::string_view(kFullRequest.data() + consumed, end - consumed), ec);
    REQUIRE((!ec || ec == beast::http::error::need_more));
  }
  REQUIRE(parser.is_done());
  CHECK(parser.target() == "/Ab3xYz9?utm=1");
  CHECK(parser.x_forwarded_for() == "10.0.0.1, 10.0.0.2, 10.0.0.3");
}

// "GET / HTTP/1.1" with Host and `fields` (each ending in CRLF).
std::string GetWith(const std::string& fields) {
  return "GET / HTTP/1.1\r\nHost: sho.rt\r\n" + fields + "\r\n";
}

// Expects `bytes` to be refused for `reason`, with `status`.
void ExpectRefused(const std::string& bytes, RequestRefusal reason, int status,
                   const ParserLimits& limits = {}) {
  INFO(absl::CHexEscape(bytes));
  const Parsed p = Parse(bytes, limits);
  REQUIRE(p.refusal.has_value());
  CHECK(RequestRefusalName(*p.refusal) == RequestRefusalName(reason));
  CHECK(RequestRefusalStatus(*p.refusal) == status);
  CHECK_FALSE(p.done);
}

TEST_CASE("absent fields are empty and HTTP/1.0 is not keep-alive by default",
          "[edge/http][parser]") {
  const Parsed p = Parse("GET / HTTP/1.0\r\n\r\n");
  REQUIRE(p.done);
  CHECK(p.version == 10);
  CHECK_FALSE(p.keep_alive);
  CHECK(p.xff.empty());
  CHECK(p.user_agent.empty());
  CHECK(p.referer.empty());
  CHECK(p.purpose.empty());
  CHECK(p.sec_purpose.empty());
  CHECK(Parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
  CHECK_FALSE(Parse(GetWith("Connection: close\r\n")).keep_alive);
}

TEST_CASE("a Content-Length body is consumed exactly and the next request is left",
          "[edge/http][parser]") {
  const std::string request = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
  const Parsed p = Parse(request + GetWith(""));
  REQUIRE(p.done);
  CHECK(p.consumed == request.size());
  CHECK(p.method == "POST");
  // Optional whitespace around the value is not part of it.
  const std::string spaced = "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: \t5 \r\n\r\nhello";
  const Parsed q = Parse(spaced + GetWith(""));
  REQUIRE(q.done);
  CHECK(q.consumed == spaced.size());
}

TEST_CASE("a body over the limit is refused as body_too_large with 413", "[edge/http][parser]") {
  ParserLimits limits;
  limits.max_body_bytes = 10;
  ExpectRefused("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n",
                RequestRefusal::kBodyTooLarge, 413, limits);
  CHECK(Parse("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", limits).done);
}

TEST_CASE("a request line up to max_request_line is accepted and one byte more is not",
          "[edge/http][parser]") {
  ParserLimits limits;
  limits.max_request_line = 64;
  // "GET " + target + " HTTP/1.1" is 13 + target bytes.
  const std::string fits = "GET /" + std::string(64 - 14, 'a') + " HTTP/1.1";
  REQUIRE(fits.size() == 64);
  CHECK(Parse(fits + "\r\nHost: a\r\n\r\n", limits).done);
  CHECK_FALSE(RequestLineTooLong(fits + "\r\n", limits.max_request_line));
  const std::string longer = "GET /" + std::string(64 - 13, 'a') + " HTTP/1.1";
  ExpectRefused(longer + "\r\nHost: a\r\n\r\n", RequestRefusal::kLineTooLong, 414, limits);
  CHECK(RefusalForParseError(beast::http::error::header_limit, longer + "\r\n\r\n",
                             limits.max_request_line) == RequestRefusal::kLineTooLong);
  CHECK(RequestLineTooLong(longer + "\r", limits.max_request_line));
  CHECK(RequestLineTooLong(longer + "\r\n", limits.max_request_line));
  CHECK(RequestLineTooLong(std::string(200, 'a'), limits.max_request_line));
  CHECK_FALSE(RequestLineTooLong(std::string(65, 'a'), limits.max_request_line));
}

TEST_CASE("a head over the header limit is 431 unless the request line had not ended",
          "[edge/http][parser]") {
  const absl::string_view fields = "GET / HTTP/1.1\r\nA: b\r\nC: d\r\n";
  const auto refusal = [](absl::string_view bytes, size_t max_line) {
    return RefusalForParseError(beast::http::error::header_limit, bytes, max_line);
  };
  CHECK(refusal(fields, 8192) == RequestRefusal::kHeadTooLarge);
  CHECK(refusal("GET /aaaaaaaa", 8192) == RequestRefusal::kLineTooLong);
  CHECK(refusal(fields, 10) == RequestRefusal::kLineTooLong);
  ParserLimits limits;
  limits.max_header_bytes = 64;
  ExpectRefused(GetWith("User-Agent: " + std::string(64, 'u') + "\r\n"),
                RequestRefusal::kHeadTooLarge, 431, limits);
}

TEST_CASE("more field lines than max_header_fields are refused with 431", "[edge/http][parser]") {
  ParserLimits limits;
  limits.max_header_fields = 5;
  // Host and four more: five.
  CHECK(Parse(GetWith("A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n"), limits).done);
  ExpectRefused(GetWith("A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n"), RequestRefusal::kTooManyFields,
                431, limits);
  // Empty values count too.
  ExpectRefused(GetWith("A:\r\nA:\r\nA:\r\nA:\r\nA:\r\n"), RequestRefusal::kTooManyFields, 431,
                limits);
  CHECK(ParserLimits().max_header_fields == 100);
}

TEST_CASE("unsupported versions are 505 and other malformed requests 400", "[edge/http][parser]") {
  for (const char* request :
       {"GET / HTTP/2.0\r\n\r\n", "GET / HTTP/0.9\r\n\r\n", "GET / HTTP/1.2\r\n\r\n"}) {
    ExpectRefused(request, RequestRefusal::kVersion, 505);
  }
  for (const char* request :
       {"HELLO\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET / HTTP/x\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Header\r\n\r\n", " / HTTP/1.1\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "GET / HTTP/1.1\r\n Host: a\r\n\r\n",
        "GET / HTTP/1.1\r\n: a\r\n\r\n", "GET / HTTP/1.1\r\nHo(st: a\r\n\r\n"}) {
    ExpectRefused(request, RequestRefusal::kMalformed, 400);
  }
}

TEST_CASE("line ends other than CRLF are refused", "[edge/http][parser]") {
  ExpectRefused("GET / HTTP/1.1\nHost: a\n\n", RequestRefusal::kMalformed, 400);
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\nUser-Agent: x\r\n\r\n", RequestRefusal::kMalformed,
                400);
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\r\n\n" + GetWith(""), RequestRefusal::kMalformed, 400);
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\rUser-Agent: x\r\n\r\n", RequestRefusal::kMalformed,
                400);
  ExpectRefused("GET / HTTP/1.1\rHost: a\r\n\r\n", RequestRefusal::kMalformed, 400);
}

TEST_CASE("a control character in a field value is refused, HTAB and obs-text are not",
          "[edge/http][parser]") {
  for (int c = 0; c < 0x20; ++c) {
    if (c == '\t') continue;
    ExpectRefused(GetWith(std::string("User-Agent: a") + static_cast<char>(c) + "b\r\n"),
                  RequestRefusal::kMalformed, 400);
  }
  ExpectRefused(GetWith("User-Agent: a\x7f"
                        "b\r\n"),
                RequestRefusal::kMalformed, 400);
  // HTAB inside a value, and obs-text (RFC 9110 allows 0x80-0xFF; the click
  // path makes it valid UTF-8 later).
  const Parsed p = Parse(GetWith("User-Agent: a\tb \xff\xfe\x80 c\r\n"));
  REQUIRE(p.done);
  CHECK(p.user_agent == "a\tb \xff\xfe\x80 c");
}

TEST_CASE("NUL anywhere in the head is refused", "[edge/http][parser]") {
  const std::string nul(1, '\0');
  for (const std::string& request : {
           "G" + nul + "ET / HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET /a" + nul + "b HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET /" + nul + " HTTP/1.1\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.1" + nul + "\r\nHost: a\r\n\r\n",
           "GET / HTTP/1.1\r\n" + nul + "Host: a\r\n\r\n",
           "GET / HTTP/1.1\r\nHo" + nul + "st: a\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a" + nul + "\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: " + nul + "\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\n" + nul + "\r\n\r\n",
       }) {
    ExpectRefused(request, RequestRefusal::kMalformed, 400);
  }
}

TEST_CASE("a folded field line (obs-fold) is refused with 400", "[edge/http][parser]") {
  // Beast joins these into a buffer of its own that is gone once put()
  // returns: a view kept from it would dangle.
  ExpectRefused(GetWith("User-Agent: Mozilla/5.0\r\n (X11)\r\n"), RequestRefusal::kObsFold, 400);
  ExpectRefused(GetWith("X-Forwarded-For: 1.2.3.4\r\n\t5.6.7.8\r\n"), RequestRefusal::kObsFold,
                400);
  ExpectRefused(GetWith("Referer: r\r\n \r\n"), RequestRefusal::kObsFold, 400);
  // These point past the fold's CRLF into the input instead.
  ExpectRefused(GetWith("User-Agent:\r\n folded\r\n"), RequestRefusal::kObsFold, 400);
  ExpectRefused(GetWith("User-Agent: \r\n \r\n"), RequestRefusal::kObsFold, 400);
  ExpectRefused(GetWith("X-Other:\r\n\t\r\n a\r\n"), RequestRefusal::kObsFold, 400);
  ExpectRefused("GET / HTTP/1.1\r\nHost:\r\n sho.rt\r\n\r\n", RequestRefusal::kObsFold, 400);
}

TEST_CASE("any Transfer-Encoding is refused, also the smuggling shapes", "[edge/http][parser]") {
  const std::string post = "POST / HTTP/1.1\r\nHost: a\r\n";
  for (const std::string& fields : {
           std::string("Transfer-Encoding: chunked\r\n"),
           std::string("Transfer-Encoding: chunked, identity\r\n"),
           std::string("Transfer-Encoding: identity\r\n"),
           std::string("Transfer-Encoding: gzip, chunked\r\n"),
           std::string("Transfer-Encoding: xchunked\r\n"),
           std::string("Transfer-Encoding:\r\n"),
           std::string("transfer-encoding: CHUNKED\r\n"),
           // CL.TE and TE.CL
           std::string("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n"),
           std::string("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"),
       }) {
    ExpectRefused(post + fields + "\r\n0\r\n\r\n", RequestRefusal::kTransferEncoding, 400);
  }
  ExpectRefused("GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                RequestRefusal::kTransferEncoding, 400);
  // Folded, it is refused as a fold first: still 400, never a body.
  ExpectRefused(post + "Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", RequestRefusal::kObsFold,
                400);
  ExpectRefused(post + "Transfer-Encoding: identity\r\n ,chunked\r\n\r\n0\r\n\r\n",
                RequestRefusal::kObsFold, 400);
}

TEST_CASE("Content-Length must be one field of digits", "[edge/http][parser]") {
  const std::string post = "POST / HTTP/1.1\r\nHost: a\r\n";
  for (const std::string& fields : {
           std::string("Content-Length: 5\r\nContent-Length: 5\r\n"),
           std::string("Content-Length: 5\r\nContent-Length: 6\r\n"),
           std::string("Content-Length: 5, 5\r\n"),
           std::string("Content-Length: 5,5\r\n"),
           std::string("Content-Length: +5\r\n"),
           std::string("Content-Length: -5\r\n"),
           std::string("Content-Length: 5 5\r\n"),
           std::string("Content-Length: 0x5\r\n"),
           std::string("Content-Length: 5a\r\n"),
           std::string("Content-Length:\r\n"),
           std::string("Content-Length: 99999999999999999999999\r\n"),
       }) {
    ExpectRefused(post + fields + "\r\nhello", RequestRefusal::kContentLength, 400);
  }
}

TEST_CASE("Host is required in HTTP/1.1, once, and must be a host", "[edge/http][parser]") {
  ExpectRefused("GET / HTTP/1.1\r\n\r\n", RequestRefusal::kHost, 400);
  ExpectRefused("GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n", RequestRefusal::kHost, 400);
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", RequestRefusal::kHost, 400);
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", RequestRefusal::kHost, 400);
  ExpectRefused("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", RequestRefusal::kHost, 400);
  for (const char* host : {"a b", "a@b", "a/b", "[::1", "[]", "a:80x", "a:80:81", "a%2", "a%zz",
                           "\"a\"", "a\\b", "[::1]x", "a{b}"}) {
    ExpectRefused(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n",
                  RequestRefusal::kHost, 400);
  }
  for (const char* host : {"sho.rt", "sho.rt:443", "127.0.0.1:8080", "[::1]", "[2001:db8::1]:80",
                           "xn--bcher-kva.example", "a_b~c!$&'()*+,;=", "a%20b", "", "sho.rt:"}) {
    INFO(host);
    CHECK(IsValidHostValue(host));
    CHECK(Parse(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n").done);
  }
  CHECK(Parse("GET / HTTP/1.0\r\n\r\n").done);  // HTTP/1.0 may omit it
}

TEST_CASE("kept values are owned by the RequestHead, not views into the input",
          "[edge/http][parser]") {
  std::string buffer =
      "POST /code HTTP/1.1\r\nHost: a\r\nUser-Agent: ua\r\nX-Forwarded-For: 1.2.3.4\r\n"
      "Referer: r\r\nPurpose: prefetch\r\nx-forwarded-for: 5.6.7.8\r\nContent-Length: 100\r\n\r\n";
  RequestHead head;
  RequestParser parser(ParserLimits{}, &head);
  beast::error_code ec;
  parser.Put(buffer, ec);
  REQUIRE(parser.is_header_done());
  REQUIRE_FALSE(parser.is_done());
  std::fill(buffer.begin(), buffer.end(), 'z');
  CHECK(parser.method() == "POST");
  CHECK(parser.target() == "/code");
  CHECK(parser.user_agent() == "ua");
  CHECK(parser.x_forwarded_for() == "1.2.3.4, 5.6.7.8");
  CHECK(parser.referer() == "r");
  CHECK(parser.purpose() == "prefetch");
  CHECK(parser.sec_purpose().empty());
  CHECK(parser.user_agent().data() == head.user_agent.data());
  CHECK(parser.target().data() == head.target.data());

  // The next request on the same head starts empty and reuses the strings.
  const char* target_storage = head.target.data();
  RequestParser next(ParserLimits{}, &head);
  CHECK(head.user_agent.empty());
  CHECK(head.x_forwarded_for.empty());
  next.Put(GetWith(""), ec);
  REQUIRE(next.is_done());
  CHECK(next.target() == "/");
  CHECK(head.target.data() == target_storage);
}

}  // namespace
}  // namespace shortener::edge::http
