// ShortCodec: bijectivity, round trips over every tier, errors, unguessability.
#include "lib/codec/short_codec.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "tests/lib/codec/codec_test_util.h"
#include "tests/support/status_matchers.h"

namespace shortener::codec {
namespace {

using ::shortener::codec::testing::Capacity;
using ::shortener::codec::testing::kAlphabet;
using ::shortener::codec::testing::MakeCodec;
using ::shortener::codec::testing::TestSecret;
using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

// Every id of the shortest tier, and every possible string of that code
// length: exactly the encoded codes pass the prefilter and decode back.
void CheckWholeTier(int length) {
  const ShortCodec codec = MakeCodec(length);
  const uint64_t count = Capacity(length);
  std::unordered_set<std::string> codes;
  codes.reserve(count);
  for (uint64_t id = 0; id < count; ++id) {
    absl::StatusOr<std::string> code = codec.Encode(id);
    REQUIRE(code.ok());
    REQUIRE(code->size() == static_cast<size_t>(length + 1));
    REQUIRE(code->front() != 'z');
    absl::StatusOr<uint64_t> decoded = codec.Decode(*code);
    REQUIRE(decoded.ok());
    REQUIRE(*decoded == id);
    codes.insert(*std::move(code));
  }
  CHECK(codes.size() == count);
  if (length > 2) return;  // 62^4 strings would be slow in Debug
  uint64_t passing = 0;
  std::string candidate(length + 1, '0');
  const uint64_t all = static_cast<uint64_t>(std::pow(62, length + 1));
  for (uint64_t v = 0; v < all; ++v) {
    uint64_t rest = v;
    for (int i = length; i >= 0; --i, rest /= 62) candidate[i] = kAlphabet[rest % 62];
    if (codec.PassesPrefilter(candidate)) {
      ++passing;
      REQUIRE(codes.count(candidate) == 1);
    }
  }
  CHECK(passing == count);
}

TEST_CASE("every id of a 1-character tier maps to a distinct code and back", "[lib/codec]") {
  CheckWholeTier(1);
}

TEST_CASE("every id of a 2-character tier maps to a distinct code and back", "[lib/codec]") {
  CheckWholeTier(2);
}

TEST_CASE("every id of a 3-character tier maps to a distinct code and back", "[lib/codec]") {
  CheckWholeTier(3);
}

TEST_CASE("MaxId is the sum of the tier capacities minus one", "[lib/codec]") {
  // sum_{L=m..10} 61 * 62^(L-1) = 62^10 - 62^(m-1).
  uint64_t pow62_10 = 1;
  for (int i = 0; i < 10; ++i) pow62_10 *= 62;
  for (int min = 1; min <= ShortCodec::kMaxBodyLength; ++min) {
    uint64_t pow62_m1 = 1;
    for (int i = 1; i < min; ++i) pow62_m1 *= 62;
    CHECK(MakeCodec(min).MaxId() == pow62_10 - pow62_m1 - 1);
  }
  CHECK(MakeCodec(1).MaxId() < (uint64_t{1} << 63));  // fits a bigint
}

// Random ids and both ends of every tier round-trip with the tier's length.
void CheckRoundTrips(int min_length, uint64_t seed) {
  const ShortCodec codec = MakeCodec(min_length);
  std::mt19937_64 rng(seed);
  uint64_t offset = 0;
  for (int length = min_length; length <= ShortCodec::kMaxBodyLength; ++length) {
    const uint64_t capacity = Capacity(length);
    std::vector<uint64_t> ids = {offset, offset + 1, offset + capacity - 2, offset + capacity - 1};
    std::uniform_int_distribution<uint64_t> in_tier(offset, offset + capacity - 1);
    for (int i = 0; i < 1000; ++i) ids.push_back(in_tier(rng));
    for (uint64_t id : ids) {
      absl::StatusOr<std::string> code = codec.Encode(id);
      REQUIRE(code.ok());
      INFO("id " << id << " code " << *code);
      REQUIRE(code->size() == static_cast<size_t>(length + 1));
      REQUIRE(code->front() != 'z');
      REQUIRE(codec.PassesPrefilter(*code));
      absl::StatusOr<uint64_t> decoded = codec.Decode(*code);
      REQUIRE(decoded.ok());
      REQUIRE(*decoded == id);
    }
    offset += capacity;
  }
  REQUIRE(offset - 1 == codec.MaxId());
  CHECK_THAT(codec.Encode(codec.MaxId()), IsOk());
  CHECK_THAT(codec.Encode(codec.MaxId() + 1), HasCode(absl::StatusCode::kOutOfRange));
  CHECK_THAT(codec.Encode(UINT64_MAX), HasCode(absl::StatusCode::kOutOfRange));
}

TEST_CASE("random ids of every tier round-trip from min length 1", "[lib/codec]") {
  CheckRoundTrips(1, 1);
}

TEST_CASE("random ids of every tier round-trip from min length 6", "[lib/codec]") {
  CheckRoundTrips(6, 6);
  const ShortCodec codec = MakeCodec(6);
  CHECK(codec.Encode(0)->size() == 7);
  CHECK(codec.Encode(Capacity(6) - 1)->size() == 7);
  CHECK(codec.Encode(Capacity(6))->size() == 8);
}

TEST_CASE("Create rejects a short secret and a bad length", "[lib/codec]") {
  CHECK_THAT(ShortCodec::Create({std::string(31, 'a'), 6}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "secret"));
  CHECK_THAT(ShortCodec::Create({TestSecret(), 0}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "min_body_length"));
  CHECK_THAT(ShortCodec::Create({TestSecret(), 11}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "min_body_length"));
  CHECK_THAT(ShortCodec::Create({std::string(32, 'a'), 10}), IsOk());
  CHECK(MakeCodec(4).min_body_length() == 4);
}

TEST_CASE("Decode names the problem with a malformed or forged code", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  using absl::StatusCode;
  CHECK_THAT(codec.Decode("abc"), HasCodeAndMessage(StatusCode::kInvalidArgument, "length"));
  CHECK_THAT(codec.Decode(""), HasCodeAndMessage(StatusCode::kInvalidArgument, "length"));
  CHECK_THAT(codec.Decode("abcdefghijkl"),
             HasCodeAndMessage(StatusCode::kInvalidArgument, "length"));
  CHECK_THAT(codec.Decode("abc!def"),
             HasCodeAndMessage(StatusCode::kInvalidArgument, "[0-9A-Za-z]"));
  CHECK_THAT(codec.Decode("abc-def"),
             HasCodeAndMessage(StatusCode::kInvalidArgument, "[0-9A-Za-z]"));
  CHECK_THAT(codec.Decode("zAAAAA0"), HasCodeAndMessage(StatusCode::kNotFound, "format version"));
  std::string code = *codec.Encode(12345);
  code.back() = code.back() == 'A' ? 'B' : 'A';
  CHECK_THAT(codec.Decode(code), HasCodeAndMessage(StatusCode::kNotFound, "check character"));
  CHECK_THAT(codec.Decode(code), HasCodeAndMessage(StatusCode::kNotFound, "does not exist"));
}

TEST_CASE("no 'z'-led code passes the prefilter whatever its check", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  for (const char* c = kAlphabet; *c != '\0'; ++c) {
    CHECK_FALSE(codec.PassesPrefilter(std::string("zAb3x9") + *c));
    CHECK_FALSE(codec.PassesPrefilter(std::string("z0000000") + *c));
  }
  CHECK(codec.IsGeneratedShape("zAb3x90"));
  CHECK_FALSE(codec.IsGeneratedShape("Ab3x90"));  // too short for min 6
  CHECK_FALSE(codec.IsGeneratedShape("Ab3x9_0"));
  CHECK_FALSE(codec.IsGeneratedShape("Ab3x90abcdef"));  // 12 characters
  CHECK(codec.IsGeneratedShape("Ab3x90abcde"));         // 11 characters
}

TEST_CASE("consecutive ids give unrelated codes", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  constexpr int kPairs = 100000;
  int same_first = 0;
  int same_last_body = 0;
  std::string previous = *codec.Encode(0);
  for (uint64_t id = 1; id <= kPairs; ++id) {
    std::string code = *codec.Encode(id);
    same_first += code[0] == previous[0];
    same_last_body += code[5] == previous[5];
    previous = std::move(code);
  }
  // First body digit is uniform over 61 values, the others over 62. Allow
  // six standard deviations around chance.
  auto within_chance = [](int hits, double p) {
    const double mean = kPairs * p;
    const double sd = std::sqrt(kPairs * p * (1 - p));
    INFO("hits " << hits << ", expected " << mean << " +- " << sd);
    CHECK(std::abs(hits - mean) < 6 * sd);
  };
  within_chance(same_first, 1.0 / 61);
  within_chance(same_last_body, 1.0 / 62);
}

TEST_CASE("codes depend on the secret", "[lib/codec]") {
  const ShortCodec a = MakeCodec(6, 'a');
  const ShortCodec b = MakeCodec(6, 'b');
  int accepted_by_other = 0;
  for (uint64_t id = 0; id < 2000; ++id) {
    const std::string code_a = *a.Encode(id);
    CHECK(code_a != *b.Encode(id));
    accepted_by_other += b.PassesPrefilter(code_a);
  }
  CHECK(accepted_by_other < 2000 / 62 * 3);
}

TEST_CASE("Fingerprint identifies the secret without revealing it", "[lib/codec]") {
  const std::string fp = MakeCodec(6, 'a').Fingerprint();
  CHECK(fp.size() == 64);
  CHECK(fp.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(fp == MakeCodec(6, 'a').Fingerprint());
  CHECK(fp != MakeCodec(6, 'b').Fingerprint());
  CHECK(fp != MakeCodec(7, 'a').Fingerprint());  // min length is pinned too
  const std::string secret = TestSecret('a');
  std::string secret_hex;
  for (unsigned char c : secret) {
    secret_hex += "0123456789abcdef"[c >> 4];
    secret_hex += "0123456789abcdef"[c & 15];
  }
  CHECK(fp.find(secret_hex.substr(0, 16)) == std::string::npos);
  CHECK(fp.find(secret) == std::string::npos);
}

// Codes are stored nowhere: a link's code is recomputed from its id on every
// answer. Any change to the permutation, the check character or the tiers
// would silently give every existing link a new code, so the exact codes of
// a fixed secret are pinned here (computed by the first implementation).
TEST_CASE("codes of a fixed secret never change", "[lib/codec]") {
  const ShortCodec codec = MakeCodec(6);
  const std::vector<std::pair<uint64_t, std::string>> known = {
      {0, "pYY45xs"},
      {1, "Att3Vwq"},
      {2, "XsLZG7r"},
      {61, "n4ATHYp"},
      {12345, "2rFpvn6"},
      {999999999, "Y84ziX0"},
      {Capacity(6) - 1, "Mj2wkSE"},  // the last 6-character body
      {Capacity(6), "kplIrbNQ"},     // the first 7-character one
      {uint64_t{1} << 40, "iM9heZM6"},
      {codec.MaxId(), "j2YWwFchylp"},
  };
  for (const auto& [id, code] : known) {
    INFO("id " << id);
    CHECK(codec.Encode(id).value_or("") == code);
    CHECK(codec.Decode(code).value_or(~uint64_t{0}) == id);
  }
  const ShortCodec short_codec = MakeCodec(1, 'q');
  CHECK(short_codec.Encode(0).value_or("") == "UF");
  CHECK(short_codec.Encode(60).value_or("") == "81");
  CHECK(short_codec.Encode(61).value_or("") == "1Ag");
}

TEST_CASE("copies and concurrent callers see the same codec", "[lib/codec]") {
  const ShortCodec original = MakeCodec(6);
  ShortCodec copy = original;
  ShortCodec moved = std::move(copy);
  CHECK(*moved.Encode(42) == *original.Encode(42));
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&original, &failures, t] {
      for (uint64_t id = t; id < 4000; id += 4) {
        absl::StatusOr<std::string> code = original.Encode(id);
        if (!code.ok() || !original.PassesPrefilter(*code) ||
            original.Decode(*code).value_or(~uint64_t{0}) != id) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures == std::vector<int>(4, 0));
}

}  // namespace
}  // namespace shortener::codec
