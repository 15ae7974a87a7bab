// API keys: generation, hashing, timing-safe comparison, the bootstrap key
// rule and Bearer parsing.
#include "lib/auth/api_key.h"

#include <array>
#include <catch2/catch.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/strings/match.h"
#include "tests/support/status_matchers.h"

namespace shortener::auth {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

constexpr absl::string_view kAlphabet =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

TEST_CASE("generated keys have the prefix and 43 base62 characters", "[lib/auth]") {
  for (int i = 0; i < 100; ++i) {
    const std::string key = GenerateApiKey();
    INFO(key);
    REQUIRE(key.size() == 47);
    REQUIRE(key.size() == kApiKeyLength);
    CHECK(absl::StartsWith(key, "shk_"));
    for (char c : key.substr(4)) CHECK(kAlphabet.find(c) != absl::string_view::npos);
  }
}

TEST_CASE("generated keys are unique and uniformly distributed over 10k draws", "[lib/auth]") {
  constexpr int kDraws = 10000;
  std::unordered_set<std::string> seen;
  std::array<int, 256> counts = {};
  for (int i = 0; i < kDraws; ++i) {
    const std::string key = GenerateApiKey();
    seen.insert(key);
    for (char c : key.substr(4)) ++counts[static_cast<unsigned char>(c)];
  }
  CHECK(seen.size() == static_cast<size_t>(kDraws));
  // Chi-square of character frequencies against uniform over 62 symbols
  // (61 degrees of freedom, mean 61, sd ~11): 150 is ~8 sd, so a biased
  // mapping (e.g. byte % 62, which favours the first 8 symbols by ~25%)
  // fails and a correct generator practically never does.
  const double expected = static_cast<double>(kDraws) * kApiKeyRandomChars / 62;
  double chi2 = 0;
  for (char c : kAlphabet) {
    const double d = counts[static_cast<unsigned char>(c)] - expected;
    chi2 += d * d / expected;
  }
  INFO("chi2 = " << chi2);
  CHECK(chi2 < 150);
}

TEST_CASE("the key hash is lowercase hex SHA-256 of the key", "[lib/auth]") {
  CHECK(HashApiKey("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(HashApiKey("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string key = GenerateApiKey();
  const std::string hash = HashApiKey(key);
  CHECK(hash.size() == 64);
  CHECK(hash.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(hash == HashApiKey(key));
  CHECK_FALSE(absl::StrContains(hash, key.substr(4)));
}

TEST_CASE("constant-time comparison is equality", "[lib/auth]") {
  CHECK(ConstantTimeEquals("", ""));
  CHECK(ConstantTimeEquals("secret", "secret"));
  CHECK_FALSE(ConstantTimeEquals("secret", "secreT"));
  CHECK_FALSE(ConstantTimeEquals("secret", "Secret"));
  CHECK_FALSE(ConstantTimeEquals("secret", "secret!"));
  CHECK_FALSE(ConstantTimeEquals("secret!", "secret"));
  CHECK_FALSE(ConstantTimeEquals("", "x"));
  CHECK_FALSE(ConstantTimeEquals("x", ""));
  // Embedded NULs are compared, not treated as terminators.
  CHECK_FALSE(ConstantTimeEquals(absl::string_view("a\0b", 3), absl::string_view("a\0c", 3)));
  CHECK(ConstantTimeEquals(absl::string_view("a\0b", 3), absl::string_view("a\0b", 3)));
  const std::string h = HashApiKey("k");
  CHECK(ConstantTimeEquals(h, HashApiKey("k")));
  CHECK_FALSE(ConstantTimeEquals(h, HashApiKey("K")));
}

TEST_CASE("bootstrap keys need 32 printable non-space characters", "[lib/auth]") {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  CHECK_THAT(ValidateBootstrapKey(std::string(32, 'a')), IsOk());
  CHECK_THAT(ValidateBootstrapKey("!\"#$%&'()*+,-./0123456789:;<=>?@[\\]^_`{|}~"), IsOk());
  CHECK_THAT(ValidateBootstrapKey(GenerateApiKey()), IsOk());
  CHECK_THAT(ValidateBootstrapKey(""),
             HasCodeAndMessage(kInvalid, "at least 32 characters, got 0"));
  CHECK_THAT(ValidateBootstrapKey(std::string(31, 'a')),
             HasCodeAndMessage(kInvalid, "at least 32 characters, got 31"));
  CHECK_THAT(ValidateBootstrapKey(std::string(31, 'a') + " b"),
             HasCodeAndMessage(kInvalid, "without whitespace; character 32 is 0x20"));
  CHECK_THAT(ValidateBootstrapKey(std::string(40, 'a') + "\n"),
             HasCodeAndMessage(kInvalid, "character 41 is 0x0a"));
  CHECK_THAT(ValidateBootstrapKey("\t" + std::string(40, 'a')),
             HasCodeAndMessage(kInvalid, "character 1 is 0x09"));
  CHECK_THAT(ValidateBootstrapKey(std::string(40, 'a') + "\xc3\xa9"),
             HasCodeAndMessage(kInvalid, "printable ASCII"));
  CHECK_THAT(ValidateBootstrapKey(std::string(40, 'a') + std::string(1, '\0')),
             HasCodeAndMessage(kInvalid, "0x00"));
  // The message never repeats the key.
  const std::string secretish = std::string(20, 'Z') + " " + std::string(20, 'Q');
  CHECK_FALSE(absl::StrContains(ValidateBootstrapKey(secretish).message(), "ZZZZ"));
}

TEST_CASE("Bearer values yield the key", "[lib/auth]") {
  const std::string key = GenerateApiKey();
  for (const std::string& header :
       std::vector<std::string>{"Bearer " + key, "bearer " + key, "BEARER " + key, "bEaReR " + key,
                                "Bearer    " + key, "  Bearer " + key + " \t"}) {
    INFO(header);
    auto parsed = ParseBearer(header);
    REQUIRE_THAT(parsed, IsOk());
    CHECK(*parsed == key);
  }
  auto other = ParseBearer("Bearer x!y~z");
  REQUIRE_THAT(other, IsOk());
  CHECK(*other == "x!y~z");
}

TEST_CASE("bad authorization values are UNAUTHENTICATED with the reason", "[lib/auth]") {
  const auto kUnauth = absl::StatusCode::kUnauthenticated;
  CHECK_THAT(ParseBearer(""), HasCodeAndMessage(kUnauth, "authorization: missing"));
  CHECK_THAT(ParseBearer("   "), HasCodeAndMessage(kUnauth, "authorization: missing"));
  CHECK_THAT(ParseBearer("Basic dXNlcjpwYXNz"),
             HasCodeAndMessage(kUnauth, "scheme must be Bearer"));
  CHECK_THAT(ParseBearer("shk_abc"), HasCodeAndMessage(kUnauth, "scheme must be Bearer"));
  CHECK_THAT(ParseBearer("Bearerx shk_abc"), HasCodeAndMessage(kUnauth, "scheme must be Bearer"));
  CHECK_THAT(ParseBearer("Bearer\tshk_abc"), HasCodeAndMessage(kUnauth, "scheme must be Bearer"));
  CHECK_THAT(ParseBearer("Bearer"), HasCodeAndMessage(kUnauth, "empty bearer key"));
  CHECK_THAT(ParseBearer("Bearer    "), HasCodeAndMessage(kUnauth, "empty bearer key"));
  CHECK_THAT(ParseBearer("Bearer shk_a shk_b"),
             HasCodeAndMessage(kUnauth, "printable ASCII without whitespace"));
  CHECK_THAT(ParseBearer("Bearer shk_a\tb"),
             HasCodeAndMessage(kUnauth, "printable ASCII without whitespace"));
  CHECK_THAT(ParseBearer("Bearer shk_a\r\nX-Injected: 1"),
             HasCodeAndMessage(kUnauth, "printable ASCII without whitespace"));
  CHECK_THAT(ParseBearer(std::string("Bearer shk_\0a", 13)),
             HasCodeAndMessage(kUnauth, "printable ASCII without whitespace"));
  CHECK_THAT(ParseBearer("Bearer shk_\xc3\xa9"),
             HasCodeAndMessage(kUnauth, "printable ASCII without whitespace"));
  CHECK_THAT(ParseBearer("Bearer " + std::string(kMaxAuthorizationLength, 'a')),
             HasCodeAndMessage(kUnauth, "longer than 1024 characters"));
  CHECK_THAT(ParseBearer("Bearer " + std::string(kMaxAuthorizationLength - 7, 'a')), IsOk());
  // The key is never echoed.
  CHECK_FALSE(
      absl::StrContains(ParseBearer("Bearer secretpart extra").status().message(), "secretpart"));
}

}  // namespace
}  // namespace shortener::auth
