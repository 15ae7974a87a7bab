// Properties of Classify beyond the corpus: hostile input (long, NUL bytes,
// non-UTF-8), bounded output, the generic bot words, version mapping.
#include "lib/useragent/user_agent.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace shortener::useragent {
namespace {

using namespace std::string_literals;  // "...\0..."s keeps embedded NULs

TEST_CASE("DeviceTypeName names every device type", "[lib/useragent]") {
  CHECK(DeviceTypeName(DeviceType::kDesktop) == "desktop");
  CHECK(DeviceTypeName(DeviceType::kMobile) == "mobile");
  CHECK(DeviceTypeName(DeviceType::kTablet) == "tablet");
  CHECK(DeviceTypeName(DeviceType::kBot) == "bot");
}

TEST_CASE("an empty or blank user agent is a bot", "[lib/useragent]") {
  for (const char* ua : {"", " ", "\t \t"}) {
    CAPTURE(ua);
    ClientInfo got = Classify(ua);
    CHECK(got.bot);
    CHECK(got.device == DeviceType::kBot);
    CHECK(got.browser == "Other");
  }
}

TEST_CASE("an unknown user agent is Other on Other desktop and not a bot", "[lib/useragent]") {
  ClientInfo expected;
  CHECK(Classify("Mozilla/5.0") == expected);
  CHECK(Classify("SomethingNew/1.0 (private)") == expected);
}

TEST_CASE("generic bot words match in any case and name the bot Other", "[lib/useragent]") {
  for (const char* ua : {"FooBot/1.0", "my-CRAWLER", "spider-man/3", "x (crawler; +http://x)"}) {
    CAPTURE(ua);
    ClientInfo got = Classify(ua);
    CHECK(got.bot);
    CHECK(got.browser == "Other");
    CHECK(got.browser_major == 0);
  }
}

TEST_CASE("named bot tokens are case sensitive like the bots themselves", "[lib/useragent]") {
  // "CURL/8" is no real agent; it is still a bot, but through the generic
  // rules only if it said "bot": here it is an unknown client.
  CHECK_FALSE(Classify("CURL/8.0").bot);
  CHECK(Classify("curl/8.0").browser == "curl");
}

TEST_CASE("a phone brand containing bot is not a bot", "[lib/useragent]") {
  ClientInfo got = Classify("Mozilla/5.0 (Linux; Android 9; Cubot KingKong) Mobile");
  CHECK_FALSE(got.bot);
  CHECK(got.device == DeviceType::kMobile);
  // ...but a bot word elsewhere in the same agent still counts.
  CHECK(Classify("Mozilla/5.0 (Linux; Android 9; CUBOT X) (compatible; FooBot/1)").bot);
}

TEST_CASE("Windows NT versions map to marketing names and unknown ones stay as sent",
          "[lib/useragent]") {
  const std::pair<const char*, const char*> cases[] = {
      {"Windows NT 10.0", "10"},   {"Windows NT 6.3", "8.1"},   {"Windows NT 6.2", "8"},
      {"Windows NT 6.1", "7"},     {"Windows NT 6.0", "Vista"}, {"Windows NT 5.1", "XP"},
      {"Windows NT 11.0", "11.0"}, {"Windows NT", ""},
  };
  for (const auto& [nt, version] : cases) {
    ClientInfo got = Classify("Mozilla/5.0 ("s + nt + "; Win64; x64) Firefox/125.0");
    CAPTURE(nt);
    CHECK(got.os == "Windows");
    CHECK(got.os_version == version);
  }
}

TEST_CASE("versions are bounded in length and range", "[lib/useragent]") {
  ClientInfo got = Classify("Mozilla/5.0 (Linux; Android 1.2.3.4.5.6) Chrome/99999999999 Mobile");
  CHECK(got.os_version == "1.2.3");
  CHECK(got.browser == "Chrome");
  CHECK(got.browser_major == 0);  // more than nine digits is no version

  got = Classify("Mozilla/5.0 (Linux; Android 12345678901234567890) Chrome/1.0");
  CHECK(got.os_version == "123456");
  CHECK(Classify("Mozilla/5.0 Chrome/").browser_major == 0);
  CHECK(Classify("Mozilla/5.0 (Linux; Android 14.; x)").os_version == "14");
}

TEST_CASE("only the first 1024 bytes are examined", "[lib/useragent]") {
  std::string padded(1024, 'x');
  padded += "curl/8.4.0";
  CHECK_FALSE(Classify(padded).bot);
  CHECK(Classify(padded).browser == "Other");

  std::string megabyte = "curl/8.4.0 " + std::string(1 << 20, 'a');
  CHECK(Classify(megabyte).browser == "curl");
}

TEST_CASE("a 1 MB hostile user agent is classified in bounded time", "[lib/useragent]") {
  // Worst case for the searches: near-misses of tokens everywhere, and the
  // case-insensitive generic words scanned over the whole prefix.
  std::string hostile;
  while (hostile.size() < (1u << 20)) hostile += "Chrom Androi iPhon Mac OS Windows N bo crawle ";
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    ClientInfo got = Classify(hostile);
    REQUIRE_FALSE(got.bot);
  }
  auto elapsed = std::chrono::steady_clock::now() - start;
  // Scanning the full megabyte would take seconds per call; the prefix
  // takes microseconds. Generous for sanitizer builds on a busy machine.
  CHECK(elapsed < std::chrono::seconds(5));
}

TEST_CASE("NUL bytes and non-UTF-8 bytes are ordinary bytes", "[lib/useragent]") {
  ClientInfo got = Classify(
      "Mozilla/5.0 (iPhone\0; CPU iPhone OS 17_4 like Mac OS X) Version/17.4 \xff\xfe Safari/604.1"s);
  CHECK(got.browser == "Safari");
  CHECK(got.browser_major == 17);
  CHECK(got.os == "iOS");
  CHECK(got.os_version == "17.4");
  CHECK(got.device == DeviceType::kMobile);

  CHECK(Classify("\0\0\0Googlebot/2.1"s).browser == "Googlebot");
  CHECK(Classify("\xc3\x28\xa0\xa1\xe2\x28\xa1 Chrome/124.0"s).browser_major == 124);
}

TEST_CASE("random fragments never break the invariants", "[lib/useragent]") {
  const std::string fragments[] = {
      "Mozilla/5.0 ", "(",          ")",           "; ",        " ",
      "Android ",     "iPhone OS ", "CPU OS ",     "iPad",      "Chrome/",
      "Version/",     "Safari/",    "Windows NT ", "Mac OS X ", "Mobile",
      "Tablet",       "; wv)",      "bot",         "cu",        "Edg/",
      "FBAN/",        "FBAV/",      "10",          "_",         ".",
      "999999999999", "\0"s,        "\xff",        "\x80",      "Linux",
      "CrOS",         "Trident/",   "rv:",         "MSIE ",     "Opera/",
  };
  std::mt19937 rng(20261122);  // seeded: a failure reproduces
  std::uniform_int_distribution<size_t> pick(0, std::size(fragments) - 1);
  std::uniform_int_distribution<int> length(0, 40);
  for (int i = 0; i < 20000; ++i) {
    std::string ua;
    for (int n = length(rng); n > 0; --n) ua += fragments[pick(rng)];
    ClientInfo got = Classify(ua);
    CAPTURE(ua);
    REQUIRE(got.bot == (got.device == DeviceType::kBot));
    REQUIRE_FALSE(got.browser.empty());
    REQUIRE_FALSE(got.os.empty());
    REQUIRE(got.browser_major >= 0);
    REQUIRE(got.os_version.size() <= 20);  // three components of six digits
    if (got.bot) REQUIRE(got.os == "Other");
    REQUIRE(Classify(ua) == got);  // deterministic
  }
}

TEST_CASE("BatchClassifier answers what Classify does, keeping at most max_agents agents",
          "[lib/useragent]") {
  const std::vector<std::string> agents = {
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like "
      "Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/124.0.0.0 Mobile Safari/537.36",
      "Googlebot/2.1 (+http://www.google.com/bot.html)",
      "",
      "curl/8.5.0",
  };
  BatchClassifier memo(3);
  std::mt19937 random(5);
  for (int i = 0; i < 200; ++i) {
    const std::string& agent = agents[random() % agents.size()];
    CAPTURE(agent);
    CHECK(memo.Classify(agent) == Classify(agent));
    CHECK(memo.agents_kept() <= 3);
  }
  CHECK(memo.agents_kept() == 3);
  // Past the bound an agent is still classified, each time afresh.
  BatchClassifier none(0);
  CHECK(none.Classify(agents[0]) == Classify(agents[0]));
  CHECK(none.Classify(agents[2]) == Classify(agents[2]));
  CHECK(none.agents_kept() == 0);
}

}  // namespace
}  // namespace shortener::useragent
