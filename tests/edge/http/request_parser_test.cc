#include "edge/http/request_parser.h"

#include <boost/beast/http/error.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"

namespace shortener::edge::http {
namespace {

namespace beast = boost::beast;

// What a test needs from one parse (the views copied, the parser gone).
struct Parsed {
  beast::error_code ec;
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
  std::string xff_storage;
  RequestParser parser(limits, &xff_storage);
  Parsed result;
  auto feed = [&](size_t end) {
    result.ec = {};
    result.consumed +=
        parser.put(boost::asio::const_buffer(bytes.data() + result.consumed, end - result.consumed),
                   result.ec);
  };
  for (size_t split : splits) {
    feed(split);
    if (result.ec && result.ec != beast::http::error::need_more) return result;
    if (parser.is_done()) break;
  }
  if (!parser.is_done()) feed(bytes.size());
  result.done = parser.is_done();
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
          "[edge_http][parser]") {
  CheckFullRequest(Parse(kFullRequest));
}

TEST_CASE("the parser gives the same request for every split of the bytes into two reads",
          "[edge_http][parser]") {
  for (size_t split = 0; split <= kFullRequest.size(); ++split) {
    INFO("split at " << split);
    CheckFullRequest(Parse(kFullRequest, {}, {split}));
  }
}

TEST_CASE("the parser gives the same request when fed one byte at a time", "[edge_http][parser]") {
  std::string xff_storage;
  RequestParser parser(ParserLimits{}, &xff_storage);
  size_t consumed = 0;
  for (size_t end = 1; end <= kFullRequest.size() && !parser.is_done(); ++end) {
    beast::error_code ec;
    consumed +=
        parser.put(boost::asio::const_buffer(kFullRequest.data() + consumed, end - consumed), ec);
    REQUIRE((!ec || ec == beast::http::error::need_more));
  }
  REQUIRE(parser.is_done());
  CHECK(parser.target() == "/Ab3xYz9?utm=1");
  CHECK(parser.x_forwarded_for() == "10.0.0.1, 10.0.0.2, 10.0.0.3");
}

TEST_CASE("absent fields are empty and HTTP/1.0 is not keep-alive by default",
          "[edge_http][parser]") {
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
  CHECK_FALSE(Parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
}

TEST_CASE("a Content-Length body is consumed exactly and the next request is left",
          "[edge_http][parser]") {
  const std::string request = "POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello";
  const Parsed p = Parse(request + "GET /y HTTP/1.1\r\n\r\n");
  REQUIRE(p.done);
  CHECK(p.consumed == request.size());
  CHECK(p.method == "POST");
}

TEST_CASE("a chunked body is consumed exactly", "[edge_http][parser]") {
  const std::string request =
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n";
  const Parsed p = Parse(request + "GET /y HTTP/1.1\r\n\r\n");
  REQUIRE(p.done);
  CHECK(p.consumed == request.size());
}

TEST_CASE("a body over the limit fails with body_limit and maps to 413", "[edge_http][parser]") {
  ParserLimits limits;
  limits.max_body_bytes = 10;
  const std::string by_length = "POST /x HTTP/1.1\r\nContent-Length: 11\r\n\r\n";
  Parsed p = Parse(by_length, limits);
  REQUIRE(p.ec == beast::http::error::body_limit);
  CHECK(StatusForParseError(p.ec, by_length, limits.max_request_line) == 413);
  p = Parse("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello!\r\n6\r\nhello!\r\n",
            limits);
  CHECK(p.ec == beast::http::error::body_limit);
  CHECK(Parse("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789", limits).done);
}

TEST_CASE("a request line up to max_request_line is accepted and one byte more is not",
          "[edge_http][parser]") {
  ParserLimits limits;
  limits.max_request_line = 64;
  // "GET " + target + " HTTP/1.1" is 13 + target bytes.
  const std::string fits = "GET /" + std::string(64 - 14, 'a') + " HTTP/1.1";
  REQUIRE(fits.size() == 64);
  CHECK(Parse(fits + "\r\n\r\n", limits).done);
  CHECK_FALSE(RequestLineTooLong(fits + "\r\n", limits.max_request_line));
  const std::string longer = "GET /" + std::string(64 - 13, 'a') + " HTTP/1.1";
  const Parsed p = Parse(longer + "\r\n\r\n", limits);
  REQUIRE(p.ec == beast::http::error::header_limit);
  CHECK(StatusForParseError(p.ec, longer + "\r\n\r\n", limits.max_request_line) == 414);
  CHECK(RequestLineTooLong(longer + "\r", limits.max_request_line));
  CHECK(RequestLineTooLong(longer + "\r\n", limits.max_request_line));
  CHECK(RequestLineTooLong(std::string(200, 'a'), limits.max_request_line));
  CHECK_FALSE(RequestLineTooLong(std::string(65, 'a'), limits.max_request_line));
}

TEST_CASE("a head over the header limit is 431 unless the request line had not ended",
          "[edge_http][parser]") {
  const absl::string_view fields = "GET / HTTP/1.1\r\nA: b\r\nC: d\r\n";
  CHECK(StatusForParseError(beast::http::error::header_limit, fields, 8192) == 431);
  CHECK(StatusForParseError(beast::http::error::header_limit, "GET /aaaaaaaa", 8192) == 414);
  CHECK(StatusForParseError(beast::http::error::header_limit, fields, 10) == 414);
}

TEST_CASE("unsupported versions are 505 and other malformed requests 400", "[edge_http][parser]") {
  for (const char* request :
       {"GET / HTTP/2.0\r\n\r\n", "GET / HTTP/0.9\r\n\r\n", "GET / HTTP/1.2\r\n\r\n"}) {
    INFO(request);
    const Parsed p = Parse(request);
    REQUIRE(p.ec);
    CHECK(StatusForParseError(p.ec, request, 8192) == 505);
  }
  for (const char* request :
       {"HELLO\r\n\r\n", "GET / HTTP/1.1\n\n", "GET / HTTP/1.1 \r\n\r\n", "GET / HTTP/x\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Header\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        " / HTTP/1.1\r\n\r\n"}) {
    INFO(request);
    const Parsed p = Parse(request);
    REQUIRE(p.ec);
    REQUIRE(p.ec != beast::http::error::need_more);
    CHECK(StatusForParseError(p.ec, request, 8192) == 400);
  }
}

TEST_CASE("pinned views survive the buffer being overwritten", "[edge_http][parser]") {
  std::string buffer =
      "POST /code HTTP/1.1\r\nUser-Agent: ua\r\nX-Forwarded-For: 1.2.3.4\r\n"
      "Referer: r\r\nContent-Length: 100\r\n\r\n";
  std::string xff_storage, pinned;
  RequestParser parser(ParserLimits{}, &xff_storage);
  beast::error_code ec;
  parser.put(boost::asio::const_buffer(buffer.data(), buffer.size()), ec);
  REQUIRE(parser.is_header_done());
  REQUIRE_FALSE(parser.is_done());
  parser.PinViews(&pinned);
  std::fill(buffer.begin(), buffer.end(), 'z');
  CHECK(parser.method() == "POST");
  CHECK(parser.target() == "/code");
  CHECK(parser.user_agent() == "ua");
  CHECK(parser.x_forwarded_for() == "1.2.3.4");
  CHECK(parser.referer() == "r");
  CHECK(parser.purpose().empty());
}

}  // namespace
}  // namespace shortener::edge::http
