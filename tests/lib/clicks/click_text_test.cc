// The click-text rule both ends of RecordClicks apply: what the edge's
// cleaning produces always passes the service's check.
#include "lib/clicks/click_text.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace shortener::clicks {
namespace {

TEST_CASE("clean click text passes unchanged and within the bound", "[lib/clicks][text]") {
  const std::string ua =
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
      "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1";
  CHECK(CleanClickText(ua) == ua);
  CHECK(ClickTextProblem("user_agent", ua).empty());
  CHECK(ClickTextProblem("referer", "").empty());
  CHECK(ClickTextProblem("referer",
                         "https://b\xC3\xBC"
                         "cher.example/\xE2\x82\xAC")
            .empty());
  const std::string longest(kMaxClickTextBytes, 'a');
  CHECK(CleanClickText(longest) == longest);
  CHECK(ClickTextProblem("user_agent", longest).empty());
}

TEST_CASE("click text problems name the field, the byte and its position", "[lib/clicks][text]") {
  CHECK(ClickTextProblem("user_agent", "\xFF\xFE") == "user_agent: invalid UTF-8 at byte 0 (0xFF)");
  CHECK(ClickTextProblem("referer", std::string("https://a/\0", 11)) ==
        "referer: control character 0x00 at byte 10");
  CHECK(ClickTextProblem("code", "ab\x7F") == "code: control character 0x7F at byte 2");
  CHECK(ClickTextProblem("user_agent", std::string(600, 'a')) ==
        "user_agent: 600 bytes, more than 512");
  CHECK(ClickTextProblem("client_ip", "\xED\xA0\x80") ==
        "client_ip: invalid UTF-8 at byte 0 (0xED)");
}

TEST_CASE("a long User-Agent is cut at a character boundary, not inside a character",
          "[lib/clicks][text]") {
  // 511 ASCII bytes then a three-byte character: the old byte cut at 512
  // left its first byte alone at the end.
  const std::string ua = std::string(511, 'a') + "\xE2\x82\xAC" + "tail";
  const std::string cleaned = CleanClickText(ua);
  CHECK(cleaned == std::string(511, 'a'));
  CHECK(ClickTextProblem("user_agent", cleaned).empty());
}

TEST_CASE("whatever the edge cleans, the service accepts", "[lib/clicks][text]") {
  std::mt19937_64 rng(512);
  for (int i = 0; i < 20000; ++i) {
    std::string raw(rng() % 1200, '\0');
    for (char& c : raw) {
      // Mostly printable, with every kind of byte mixed in.
      const uint64_t r = rng();
      c = static_cast<char>(r % 4 == 0 ? (r >> 8) & 0xFF : 0x20 + (r >> 8) % 0x5F);
    }
    const std::string cleaned = CleanClickText(raw);
    INFO(i);
    REQUIRE(cleaned.size() <= kMaxClickTextBytes);
    REQUIRE(ClickTextProblem("user_agent", cleaned).empty());
    REQUIRE(CleanClickText(cleaned) == cleaned);
  }
}

}  // namespace
}  // namespace shortener::clicks
