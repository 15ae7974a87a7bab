// Shared helpers for the codec tests: fixed test secrets and a codec factory.
#ifndef SHORTENER_TESTS_LIB_CODEC_CODEC_TEST_UTIL_H_
#define SHORTENER_TESTS_LIB_CODEC_CODEC_TEST_UTIL_H_

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "lib/codec/short_codec.h"

namespace shortener::codec::testing {

// 32 deterministic bytes that differ per `seed`.
inline std::string TestSecret(char seed = 'k') {
  std::string secret(32, '\0');
  for (size_t i = 0; i < secret.size(); ++i) {
    secret[i] = static_cast<char>(seed * 31 + i * 7);
  }
  return secret;
}

inline ShortCodec MakeCodec(int min_body_length = 6, char seed = 'k') {
  absl::StatusOr<ShortCodec> codec = ShortCodec::Create({TestSecret(seed), min_body_length});
  REQUIRE(codec.ok());
  return *std::move(codec);
}

// 61 * 62^(L-1), computed independently of the library.
inline uint64_t Capacity(int length) {
  uint64_t c = 61;
  for (int i = 1; i < length; ++i) c *= 62;
  return c;
}

inline constexpr char kAlphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

}  // namespace shortener::codec::testing

#endif  // SHORTENER_TESTS_LIB_CODEC_CODEC_TEST_UTIL_H_
