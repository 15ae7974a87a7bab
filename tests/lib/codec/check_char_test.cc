// The check character: how often made-up and mistyped codes get through.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>

#include "lib/codec/short_codec.h"
#include "tests/lib/codec/codec_test_util.h"

namespace shortener::codec {
namespace {

using ::shortener::codec::testing::kAlphabet;
using ::shortener::codec::testing::MakeCodec;

// `hits` out of `trials` is within six standard deviations of p (a false
// failure has probability ~2e-9; the seeds are fixed anyway).
void CheckRate(int hits, int trials, double p, const char* what) {
  const double mean = trials * p;
  const double sd = std::sqrt(trials * p * (1 - p));
  std::cout << what << ": " << hits << "/" << trials << " = " << static_cast<double>(hits) / trials
            << " (1/62 = " << 1.0 / 62 << ")\n";
  INFO(what << ": " << hits << " of " << trials << ", expected " << mean << " +- " << sd);
  CHECK(std::abs(hits - mean) < 6 * sd);
  // The looser bound of the spec, for the record.
  CHECK(hits > 0.8 * trials / 62);
  CHECK(hits < 1.2 * trials / 62);
}

TEST_CASE("about 1 in 62 random strings of the generated shape pass", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  std::mt19937_64 rng(62);
  std::uniform_int_distribution<int> digit(0, 61);
  std::uniform_int_distribution<int> lead(0, 60);  // not the reserved 'z'
  std::uniform_int_distribution<int> length(6, 10);
  constexpr int kTrials = 200000;
  int accepted = 0;
  std::string code;
  for (int i = 0; i < kTrials; ++i) {
    code.assign(length(rng) + 1, '0');
    code[0] = kAlphabet[lead(rng)];
    for (size_t j = 1; j < code.size(); ++j) code[j] = kAlphabet[digit(rng)];
    accepted += codec.PassesPrefilter(code);
  }
  CheckRate(accepted, kTrials, 1.0 / 62, "random shaped strings accepted");
}

TEST_CASE("a single changed character is caught about 61 times in 62", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  std::mt19937_64 rng(61);
  std::uniform_int_distribution<uint64_t> id(0, codec.MaxId());
  std::uniform_int_distribution<int> other(1, 61);
  int body_trials = 0;
  int body_accepted = 0;
  int check_accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::string code = *codec.Encode(id(rng));
    for (size_t pos = 0; pos < code.size(); ++pos) {
      std::string changed = code;
      // A different character: shift the digit by 1..61 modulo 62.
      const char* at = std::char_traits<char>::find(kAlphabet, 62, code[pos]);
      changed[pos] = kAlphabet[(at - kAlphabet + other(rng)) % 62];
      const bool passes = codec.PassesPrefilter(changed);
      if (pos + 1 == code.size()) {
        check_accepted += passes;  // the body's one check char is fixed
      } else if (pos == 0 && changed[0] == 'z') {
        CHECK_FALSE(passes);  // reserved marker, never version 1
      } else {
        ++body_trials;
        body_accepted += passes;
      }
    }
  }
  CHECK(check_accepted == 0);
  CheckRate(body_accepted, body_trials, 1.0 / 62, "codes with one body character changed accepted");
}

}  // namespace
}  // namespace shortener::codec
