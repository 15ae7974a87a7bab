// Property tests of UrlPolicy: whatever it accepts is a fixed point of
// Normalize and is made only of characters a URL may carry unencoded.
// Random inputs are seeded, so a failure reproduces.
#include <catch2/catch.hpp>
#include <iterator>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/url/url_policy.h"
#include "tests/support/status_matchers.h"

namespace shortener::url {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

UrlPolicyOptions TestOptions() {
  UrlPolicyOptions options;
  options.short_domains = {"sho.rt"};
  // The spellings of local hosts ("[::1]", "0x7f.1", "h") are part of what
  // must normalise to fixed points; whether they are refused is
  // url_host_test.cc's.
  options.allow_private_targets = true;
  return options;
}

// The normalised form may hold printable ASCII only, and none of the
// characters RFC 3986 excludes.
bool IsUrlCharacters(const std::string& url) {
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7F || std::string("\"<>\\^`{|}").find(c) != std::string::npos) {
      return false;
    }
  }
  return true;
}

TEST_CASE("every printable ASCII byte in a path normalises idempotently", "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  for (char c = '!'; c <= '~'; ++c) {
    if (c == '\\' || c == '%') continue;  // refused, see the bad table
    const std::string raw = absl::StrCat("http://example.com/a", std::string(1, c), "z");
    INFO("input: " << raw);
    const absl::StatusOr<std::string> once = policy.Normalize(raw);
    REQUIRE_THAT(once, IsOk());
    CHECK(IsUrlCharacters(*once));
    CHECK(policy.Normalize(*once).value() == *once);
  }
}

// A random URL assembled from awkward pieces, most of which should fail.
std::string RandomUrl(std::mt19937& rng) {
  static const char* const kSchemes[] = {"http", "HTTPS", "hTtP", "ftp", "http:", "http:/"};
  static const char* const kHosts[] = {
      "example.com", "EXAMPLE.com.",   "bücher.de", "[::1]",    "[2001:DB8::A]",
      "192.0.2.1",   "0x7f.1",         "sho.rt",    "a.sho.rt", "ex%61mple.com",
      "%C3%BC.de",   "exa%25mple.com", "a..b",      "",         "user@h",
      "h:80",        "h:443",          "h:0",       "h:65535",  "1.2.3"};
  static const char* const kPieces[] = {"/", "/", "a", "Z", "%2F", "%2e",  "%",  "%4", "..", ".",
                                        "?", "#", "&", "=", "ä",   "€",    "\"", "<",  "{",  "|",
                                        "^", "`", "[", "]", "@",   ":",    ";",  "+",  "~",  "'",
                                        "!", "*", "(", "$", ",",   "\xFF", " ",  "\\", "\t"};
  const auto pick = [&rng](const auto& array) {
    return std::string(array[std::uniform_int_distribution<size_t>(0, std::size(array) - 1)(rng)]);
  };
  std::string url = pick(kSchemes) + "://" + pick(kHosts);
  const int pieces = std::uniform_int_distribution<int>(0, 12)(rng);
  for (int i = 0; i < pieces; ++i) url += pick(kPieces);
  return url;
}

TEST_CASE("accepted random URLs are fixed points made of URL characters", "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  std::mt19937 rng(20240611);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string raw = RandomUrl(rng);
    const absl::StatusOr<std::string> once = policy.Normalize(raw);
    if (!once.ok()) {
      REQUIRE_THAT(once, HasCodeAndMessage(kInvalid, "long_url: "));
      continue;
    }
    ++accepted;
    INFO("input: " << raw << " normalised: " << *once);
    const absl::StatusOr<std::string> twice = policy.Normalize(*once);
    REQUIRE_THAT(twice, IsOk());
    REQUIRE(*twice == *once);
    REQUIRE(IsUrlCharacters(*once));
  }
  CHECK(accepted > 500);  // the pieces are chosen to fail often
}

}  // namespace
}  // namespace shortener::url
