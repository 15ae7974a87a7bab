// ValidateAlias: the custom alias rules.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "lib/codec/short_codec.h"
#include "tests/codec/codec_test_util.h"
#include "tests/support/status_matchers.h"

namespace shortener::codec {
namespace {

using ::shortener::codec::testing::MakeCodec;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

TEST_CASE("good aliases are accepted", "[codec]") {
  const ShortCodec codec = MakeCodec(6);
  for (const std::string& alias :
       std::vector<std::string>{"spring-sale", "a", "x_1", "Z", "-", "abc123", "abcdefghijkl",
                                "Spring_Sale_2024", std::string(64, 'a'), std::string(7, '-')}) {
    INFO(alias);
    CHECK_THAT(ValidateAlias(alias, codec), IsOk());
  }
}

TEST_CASE("bad aliases are refused with the rule they break", "[codec]") {
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

}  // namespace
}  // namespace shortener::codec
