// ClassifyRequest: methods, lengths, built-in paths, code syntax, prefilter.
#include "edge/request_target.h"

#include <catch2/catch.hpp>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "tests/edge/alloc_counter.h"
#include "tests/lib/codec/codec_test_util.h"

namespace shortener::edge {
namespace {

using ::shortener::codec::ShortCodec;
using ::shortener::codec::testing::kAlphabet;
using ::shortener::codec::testing::MakeCodec;

std::string EncodeOrDie(const ShortCodec& codec, uint64_t id) {
  absl::StatusOr<std::string> code = codec.Encode(id);
  REQUIRE(code.ok());
  return *code;
}

TargetKind KindOf(absl::string_view method, absl::string_view target) {
  static const ShortCodec codec = MakeCodec();
  return ClassifyRequest(method, target, codec).kind;
}

BadTargetReason ReasonOf(absl::string_view target) {
  static const ShortCodec codec = MakeCodec();
  RequestTarget result = ClassifyRequest("GET", target, codec);
  CHECK(result.kind == TargetKind::kBadRequest);
  CHECK(result.code.empty());
  return result.bad_reason;
}

TEST_CASE("GET and HEAD of a generated code are looked up as a code", "[edge]") {
  const ShortCodec codec = MakeCodec();
  const std::string target = "/" + EncodeOrDie(codec, 12345);
  for (absl::string_view method : {"GET", "HEAD"}) {
    RequestTarget result = ClassifyRequest(method, target, codec);
    CHECK(result.kind == TargetKind::kLookupCode);
    CHECK(result.method == (method == "GET" ? Method::kGet : Method::kHead));
    CHECK(result.code == target.substr(1));
    // A view into the caller's target, not a copy.
    CHECK(result.code.data() == target.data() + 1);
  }
}

TEST_CASE("a generated-shape code whose check fails is prefiltered", "[edge]") {
  const ShortCodec codec = MakeCodec();
  const std::string code = EncodeOrDie(codec, 987654);
  int passing = 0;
  for (const char* c = kAlphabet; *c != '\0'; ++c) {
    std::string mutated = code;
    mutated.back() = *c;
    // The result views into the target: keep it alive while the result is used.
    const std::string target = "/" + mutated;
    RequestTarget result = ClassifyRequest("GET", target, codec);
    if (result.kind == TargetKind::kLookupCode) {
      ++passing;
      CHECK(mutated == code);
    } else {
      CHECK(result.kind == TargetKind::kPrefiltered);
      CHECK(result.code == mutated);
    }
  }
  // Exactly one check character verifies: the real one.
  CHECK(passing == 1);
}

TEST_CASE("valid alias syntax outside the generated shape is an alias", "[edge]") {
  CHECK(KindOf("GET", "/my-link_1") == TargetKind::kLookupAlias);
  CHECK(KindOf("GET", "/a") == TargetKind::kLookupAlias);
  CHECK(KindOf("HEAD", "/" + std::string(64, 'x')) == TargetKind::kLookupAlias);
  // Reserved alias names that are not built-in paths are simply unknown
  // aliases (the service never creates them).
  CHECK(KindOf("GET", "/admin") == TargetKind::kLookupAlias);
}

TEST_CASE("the query string is ignored for codes and built-in paths", "[edge]") {
  const ShortCodec codec = MakeCodec();
  RequestTarget result = ClassifyRequest("GET", "/my-alias?utm=1&x=%2F", codec);
  CHECK(result.kind == TargetKind::kLookupAlias);
  CHECK(result.code == "my-alias");
  CHECK(KindOf("GET", "/healthz?probe=1") == TargetKind::kHealthz);
  CHECK(ReasonOf("/?x=1") == BadTargetReason::kEmpty);
}

TEST_CASE("built-in paths are recognised exactly", "[edge]") {
  CHECK(KindOf("GET", "/healthz") == TargetKind::kHealthz);
  CHECK(KindOf("HEAD", "/readyz") == TargetKind::kReadyz);
  CHECK(KindOf("GET", "/metrics") == TargetKind::kMetrics);
  CHECK(KindOf("GET", "/favicon.ico") == TargetKind::kFavicon);
  CHECK(KindOf("GET", "/robots.txt") == TargetKind::kRobots);
  CHECK(KindOf("GET", "/healthz/") == TargetKind::kBadRequest);
  CHECK(KindOf("GET", "/robots.TXT") == TargetKind::kBadRequest);
}

TEST_CASE("malformed targets are 400 with a specific reason", "[edge]") {
  CHECK(ReasonOf("") == BadTargetReason::kNotOriginForm);
  CHECK(ReasonOf("*") == BadTargetReason::kNotOriginForm);
  CHECK(ReasonOf("http://example.com/abc") == BadTargetReason::kNotOriginForm);
  CHECK(ReasonOf("/") == BadTargetReason::kEmpty);
  CHECK(ReasonOf("/..") == BadTargetReason::kDotSegment);
  CHECK(ReasonOf("/a..b") == BadTargetReason::kDotSegment);
  CHECK(ReasonOf("/../etc/passwd") == BadTargetReason::kDotSegment);
  CHECK(ReasonOf("/a%2Fb") == BadTargetReason::kPercent);
  CHECK(ReasonOf("/%41bc") == BadTargetReason::kPercent);
  CHECK(ReasonOf("/a/b") == BadTargetReason::kSlash);
  CHECK(ReasonOf("//") == BadTargetReason::kSlash);
  CHECK(ReasonOf("/a.b") == BadTargetReason::kBadCharacter);
  CHECK(ReasonOf("/a b") == BadTargetReason::kBadCharacter);
  CHECK(ReasonOf("/a#b") == BadTargetReason::kBadCharacter);
  CHECK(ReasonOf("/caf\xc3\xa9") == BadTargetReason::kBadCharacter);
  CHECK(ReasonOf(std::string("/a\0b", 4)) == BadTargetReason::kBadCharacter);
  CHECK(ReasonOf("/a\r\nLocation: x") == BadTargetReason::kBadCharacter);
  CHECK(ReasonOf("/" + std::string(65, 'x')) == BadTargetReason::kTooLong);
}

TEST_CASE("methods other than GET and HEAD are 405, before target checks", "[edge]") {
  for (absl::string_view method :
       {"POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "get", "Head", ""}) {
    CHECK(KindOf(method, "/my-alias") == TargetKind::kMethodNotAllowed);
    CHECK(KindOf(method, "/..") == TargetKind::kMethodNotAllowed);
  }
  CHECK(ParseMethod("GET") == Method::kGet);
  CHECK(ParseMethod("HEAD") == Method::kHead);
  CHECK(ParseMethod("GETX") == Method::kOther);
}

TEST_CASE("an over-long request line is 414, checked first", "[edge]") {
  const ShortCodec codec = MakeCodec();
  // "GET " + target + " HTTP/1.1" is exactly the limit.
  const size_t limit = 8 * 1024;
  std::string target = "/a?" + std::string(limit - 4 - 9 - 3, 'q');
  CHECK(ClassifyRequest("GET", target, codec).kind == TargetKind::kLookupAlias);
  target += 'q';
  CHECK(ClassifyRequest("GET", target, codec).kind == TargetKind::kUriTooLong);
  CHECK(ClassifyRequest("POST", target, codec).kind == TargetKind::kUriTooLong);

  RequestTargetOptions small;
  small.max_request_line = 32;
  CHECK(ClassifyRequest("GET", "/abc", codec, small).kind == TargetKind::kLookupAlias);
  CHECK(ClassifyRequest("GET", "/" + std::string(40, 'a'), codec, small).kind ==
        TargetKind::kUriTooLong);
}

TEST_CASE("classification never allocates", "[edge]") {
  const ShortCodec codec = MakeCodec();
  const std::vector<std::string> targets = {
      "/" + EncodeOrDie(codec, 1), "/zzzzzzz", "/my-alias?x=1", "/healthz", "/a%2Fb",
      "/" + std::string(100, 'a'), "http://x/"};
  const size_t before = testing::ThreadAllocations();
  size_t lookups = 0;
  for (const std::string& target : targets) {
    RequestTarget result = ClassifyRequest("GET", target, codec);
    if (result.kind == TargetKind::kLookupCode) ++lookups;
  }
  CHECK(testing::ThreadAllocations() == before);
  CHECK(lookups == 1);
}

TEST_CASE("random targets classify consistently", "[edge]") {
  const ShortCodec codec = MakeCodec();
  std::mt19937 rng(20261122);
  const std::string chars = std::string(kAlphabet) + "_-./%?#\r\n \x80\xff";
  std::uniform_int_distribution<size_t> pick(0, chars.size() - 1);
  std::uniform_int_distribution<int> length(0, 80);
  for (int i = 0; i < 20000; ++i) {
    std::string target = "/";
    for (int n = length(rng); n > 0; --n) target += chars[pick(rng)];
    RequestTarget result = ClassifyRequest("GET", target, codec);
    switch (result.kind) {
      case TargetKind::kLookupCode:
      case TargetKind::kLookupAlias:
      case TargetKind::kPrefiltered:
        REQUIRE(!result.code.empty());
        REQUIRE(result.code.size() <= kMaxCodeLength);
        REQUIRE(result.code.data() == target.data() + 1);
        for (char c : result.code) {
          REQUIRE((isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'));
        }
        REQUIRE((result.kind == TargetKind::kLookupAlias) == !codec.IsGeneratedShape(result.code));
        break;
      default:
        REQUIRE(result.code.empty());
    }
  }
}

}  // namespace
}  // namespace shortener::edge
