// Exhaustive tests of the byte-level checks that run before libcurl: every
// byte value and every Unicode code point, in the spirit of leveldb's
// coding_test.
#include "lib/url/url_scan.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::url::internal {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

std::string EncodeUtf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// The message substring CheckCharacters must give for `byte` between "a"
// and "z" in a path, or "" if the byte is acceptable there.
std::string ExpectedProblemForByte(int byte) {
  if (byte < 0x20 || byte == 0x7F) return "contains a control character at position 20";
  if (byte == ' ') return "contains a space at position 20";
  if (byte == '\\') return "contains a backslash at position 20";
  if (byte == '%') return "broken percent-encoding at position 20";
  if (byte >= 0x80) return "invalid UTF-8 at position 20";  // alone, never valid
  return "";
}

TEST_CASE("every byte value in a path is accepted or named precisely", "[lib/url]") {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string raw =
        absl::StrCat("http://example.com/a", std::string(1, static_cast<char>(byte)), "z");
    const std::string problem = ExpectedProblemForByte(byte);
    INFO("byte " << byte);
    if (problem.empty()) {
      CHECK_THAT(CheckCharacters(raw), IsOk());
    } else {
      CHECK_THAT(CheckCharacters(raw), HasCodeAndMessage(kInvalid, problem));
    }
  }
}

bool IsRejectedCodePoint(char32_t cp) {
  const bool c1 = cp >= 0x80 && cp <= 0x9F;
  const bool space = cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
                     cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
  const bool format = (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
                      (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) ||
                      cp == 0xFEFF;
  return c1 || space || format;
}

TEST_CASE("every non-ASCII code point is accepted unless invisible or a surrogate", "[lib/url]") {
  int failures = 0;
  for (char32_t cp = 0x80; cp <= 0x10FFFF; ++cp) {
    const absl::Status st = CheckCharacters(absl::StrCat("http://h/", EncodeUtf8(cp)));
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    bool as_expected;
    if (surrogate) {
      as_expected = absl::StrContains(st.message(), "invalid UTF-8 at position 9");
    } else if (IsRejectedCodePoint(cp)) {
      as_expected = st.code() == kInvalid && absl::StrContains(st.message(), "position 9");
    } else {
      as_expected = st.ok();
    }
    // One CHECK per code point would make a million assertions.
    if (!as_expected && ++failures <= 5) FAIL_CHECK("code point " << cp << ": " << st);
  }
  CHECK(failures == 0);
}

TEST_CASE("malformed UTF-8 sequences are rejected", "[lib/url]") {
  const char* const kBad[] = {
      "\xC0\xAF",          // overlong "/"
      "\xE0\x80\xAF",      // overlong "/"
      "\xF0\x80\x80\xAF",  // overlong "/"
      "\xF4\x90\x80\x80",  // beyond U+10FFFF
      "\xF8\x88\x80\x80",  // five-byte lead
      "\xE2\x82",          // truncated
      "\xC3",              // truncated at the end
      "\xBF",              // lone continuation
  };
  for (const char* bad : kBad) {
    INFO(bad);
    CHECK_THAT(CheckCharacters(absl::StrCat("http://h/", bad)),
               HasCodeAndMessage(kInvalid, "invalid UTF-8 at position 9"));
  }
}

TEST_CASE("percent-encoding needs two hex digits", "[lib/url]") {
  CHECK_THAT(CheckCharacters("http://h/%41%7e%C3%a4"), IsOk());
  CHECK_THAT(CheckCharacters("http://h/%4"), HasCodeAndMessage(kInvalid, "position 9"));
  CHECK_THAT(CheckCharacters("http://h/%"), HasCodeAndMessage(kInvalid, "position 9"));
  CHECK_THAT(CheckCharacters("http://h/%g0"), HasCodeAndMessage(kInvalid, "position 9"));
  CHECK_THAT(CheckCharacters("http://h/%%41"), HasCodeAndMessage(kInvalid, "position 9"));
}

TEST_CASE("encoding disallowed bytes leaves only URL characters and is idempotent", "[lib/url]") {
  for (int byte = 0; byte < 256; ++byte) {
    const std::string once = EncodeDisallowedBytes(std::string(1, static_cast<char>(byte)));
    INFO("byte " << byte << " -> " << once);
    CHECK(EncodeDisallowedBytes(once) == once);
    for (char c : once) {
      const auto u = static_cast<unsigned char>(c);
      CHECK((u > 0x20 && u < 0x7F));
      CHECK(std::string("\"<>\\^`{|}").find(c) == std::string::npos);
    }
  }
  CHECK(EncodeDisallowedBytes("/a%2Fb?c=[1]&d=!$'()*+,;:@~") == "/a%2Fb?c=[1]&d=!$'()*+,;:@~");
  CHECK(EncodeDisallowedBytes("\xC3\xBC") == "%C3%BC");
}

TEST_CASE("the scheme is extracted only from absolute URLs", "[lib/url]") {
  CHECK(ExtractScheme("HTTPS://x").value() == "https");
  CHECK(ExtractScheme("svn+ssh://x").value() == "svn+ssh");
  CHECK(ExtractScheme("example.com:8080/x").value() == "example.com");
  CHECK_THAT(ExtractScheme("//x/y"), HasCodeAndMessage(kInvalid, "scheme-relative"));
  CHECK_THAT(ExtractScheme("/a:b"), HasCodeAndMessage(kInvalid, "has no scheme"));
  CHECK_THAT(ExtractScheme("?a:b"), HasCodeAndMessage(kInvalid, "has no scheme"));
  CHECK_THAT(ExtractScheme(":x"), HasCodeAndMessage(kInvalid, "has no scheme"));
  CHECK_THAT(ExtractScheme("1http://x"), HasCodeAndMessage(kInvalid, "has no scheme"));
  CHECK_THAT(ExtractScheme("ht_tp://x"), HasCodeAndMessage(kInvalid, "has no scheme"));
}

TEST_CASE("quoted message excerpts are short and valid UTF-8", "[lib/url]") {
  CHECK(QuoteForMessage("abc") == "\"abc\"");
  std::string long_host;
  for (int i = 0; i < 100; ++i) long_host += "\xC3\xBC";
  const std::string quoted = QuoteForMessage(long_host);
  CHECK(quoted.size() <= 64 + 5);
  CHECK(CheckCharacters(quoted).ok());
  CHECK(absl::EndsWith(quoted, "...\""));
}

}  // namespace
}  // namespace shortener::url::internal
