// lib/codec/alias.h: the alias syntax every code shares, and ValidateAlias,
// the custom alias rules.
#include "lib/codec/alias.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "lib/codec/short_codec.h"
#include "tests/lib/codec/codec_test_util.h"
#include "tests/support/status_matchers.h"

namespace shortener::codec {
namespace {

using ::shortener::codec::testing::MakeCodec;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

TEST_CASE("good aliases are accepted", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  for (const std::string& alias :
       std::vector<std::string>{"spring-sale", "a", "x_1", "Z", "-", "abc123", "abcdefghijkl",
                                "Spring_Sale_2024", std::string(64, 'a'), std::string(7, '-')}) {
    INFO(alias);
    CHECK_THAT(ValidateAlias(alias, codec), IsOk());
  }
}

TEST_CASE("bad aliases are refused with the rule they break", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  CHECK_THAT(ValidateAlias("", codec),
             HasCodeAndMessage(kInvalid, "custom_alias: must not be empty"));
  CHECK_THAT(ValidateAlias(std::string(65, 'a'), codec),
             HasCodeAndMessage(kInvalid, "custom_alias: at most 64"));
  CHECK_THAT(ValidateAlias("a b", codec),
             HasCodeAndMessage(kInvalid, "custom_alias: only [A-Za-z0-9_-]"));
  CHECK_THAT(ValidateAlias("h\xc3\xa9llo", codec),
             HasCodeAndMessage(kInvalid, "custom_alias: only [A-Za-z0-9_-]"));
  CHECK_THAT(ValidateAlias("a/b", codec), HasCodeAndMessage(kInvalid, "custom_alias: only"));
  for (const char* reserved : {"healthz", "HealthZ", "readyz", "metrics", "api", "API",
                               "favicon.ico", "Robots.txt", "static", "admin", "login"}) {
    INFO(reserved);
    CHECK_THAT(ValidateAlias(reserved, codec), HasCodeAndMessage(kInvalid, "is a reserved path"));
  }
  // 7..11 letters and digits would collide with generated codes.
  for (const char* shaped : {"Abc1234", "sale2024", "abcdefghijk"}) {
    INFO(shaped);
    CHECK_THAT(ValidateAlias(shaped, codec),
               HasCodeAndMessage(kInvalid, "shape of a generated code"));
  }
  // With a shorter minimum the generated shapes start earlier.
  CHECK_THAT(ValidateAlias("ab", MakeCodec(1)),
             HasCodeAndMessage(kInvalid, "shape of a generated code"));
  CHECK_THAT(ValidateAlias("a", MakeCodec(1)), IsOk());
}

TEST_CASE("IsAliasChar holds for exactly [A-Za-z0-9_-]", "[lib/codec]") {
  const std::string allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    INFO(b);
    CHECK(IsAliasChar(c) == (allowed.find(c) != std::string::npos));
  }
}

TEST_CASE("HasAliasSyntax: 1 to 64 alias characters, whatever the reserved words and shapes",
          "[lib/codec]") {
  CHECK_FALSE(HasAliasSyntax(""));
  CHECK(HasAliasSyntax("a"));
  CHECK(HasAliasSyntax("-"));
  CHECK(HasAliasSyntax(std::string(kMaxAliasLength, 'a')));
  CHECK_FALSE(HasAliasSyntax(std::string(kMaxAliasLength + 1, 'a')));
  CHECK(kMaxAliasLength == 64);
  for (const char* bad : {"a b", "a/b", "a.b", "a%41", "h\xc3\xa9llo", "a\n", "..", "*"}) {
    INFO(bad);
    CHECK_FALSE(HasAliasSyntax(bad));
  }
  // Syntax only: what ValidateAlias refuses for other reasons still has it,
  // and so does every generated code.
  CHECK(HasAliasSyntax("healthz"));
  CHECK(HasAliasSyntax("Abc1234"));
  const ShortCodec codec = MakeCodec(1);
  for (uint64_t id : {uint64_t{0}, uint64_t{61}, uint64_t{123456789}, codec.MaxId()}) {
    absl::StatusOr<std::string> code = codec.Encode(id);
    REQUIRE_THAT(code, IsOk());
    CHECK(HasAliasSyntax(*code));
  }
}

TEST_CASE("ValidateAlias accepts only strings of alias syntax", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  // Every string of up to two characters over an alphabet that crosses the
  // syntax (good characters, '.', '/', space, a non-ASCII byte), and the
  // lengths around the limit.
  const std::string pieces = "aZ9_-./ \x80";
  std::vector<std::string> inputs = {"", std::string(kMaxAliasLength, 'a'),
                                     std::string(kMaxAliasLength + 1, 'a')};
  for (char a : pieces) {
    inputs.emplace_back(1, a);
    for (char b : pieces) inputs.push_back(std::string{a, b});
  }
  for (const std::string& s : inputs) {
    INFO(s);
    const absl::Status status = ValidateAlias(s, codec);
    if (status.ok()) CHECK(HasAliasSyntax(s));
    if (!HasAliasSyntax(s)) CHECK_FALSE(status.ok());
  }
}

}  // namespace
}  // namespace shortener::codec
