// lib/codec internals: HMAC-SHA256 against RFC 4231, the keyed permutation on
// small domains, base62.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "lib/codec/base62.h"
#include "lib/codec/hmac_sha256.h"
#include "lib/codec/keyed_permutation.h"

namespace shortener::codec::internal {
namespace {

std::string Hex(const Sha256Digest& d) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

TEST_CASE("HmacSha256 matches the RFC 4231 test vectors", "[lib/codec]") {
  CHECK(Hex(HmacSha256(std::string(20, '\x0b')).Mac("Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(Hex(HmacSha256("Jefe").Mac("what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Case 6: a key longer than the block size is hashed first.
  CHECK(Hex(HmacSha256(std::string(131, '\xaa'))
                .Mac("Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // The same object gives the same answer every time (states are copied).
  const HmacSha256 jefe("Jefe");
  CHECK(Hex(jefe.Mac("x")) == Hex(jefe.Mac("x")));
}

TEST_CASE("ShortMac64 is the first 8 bytes of Mac for every short length", "[lib/codec]") {
  // RFC 4231 case 2, whose 28-byte message is short.
  const HmacSha256 jefe("Jefe");
  const std::string what = "what do ya want for nothing?";
  CHECK(jefe.ShortMac64(reinterpret_cast<const uint8_t*>(what.data()), what.size()) ==
        0x5bdcc146bf60754eULL);
  // Every length the short form accepts (0 and 55, the edges of one padded
  // block, included), with keys shorter than, equal to and longer than a block.
  for (const std::string& key : {std::string("k"), std::string(64, 'b'), std::string(100, 'c')}) {
    const HmacSha256 mac(key);
    for (size_t length = 0; length <= HmacSha256::kMaxShortMessage; ++length) {
      std::vector<uint8_t> message(length);
      for (size_t i = 0; i < length; ++i) message[i] = static_cast<uint8_t>(i * 37 + length);
      INFO("key of " << key.size() << " bytes, message of " << length);
      CHECK(mac.ShortMac64(message.data(), length) ==
            DigestPrefix64(mac.Mac(message.data(), length)));
    }
  }
}

TEST_CASE("KeyedPermutation permutes small domains exactly", "[lib/codec]") {
  const HmacSha256 key("permutation test key");
  for (uint64_t size : {1, 2, 3, 15, 16, 17, 61, 100, 1000, 4097}) {
    INFO("domain " << size);
    const KeyedPermutation perm(key, 7, size);
    CHECK(perm.half_bits() >= 2);
    CHECK((uint64_t{1} << (2 * perm.half_bits())) >= size);
    std::vector<bool> seen(size, false);
    for (uint64_t x = 0; x < size; ++x) {
      const uint64_t y = perm.Forward(x);
      REQUIRE(y < size);
      REQUIRE_FALSE(seen[y]);
      seen[y] = true;
      REQUIRE(perm.Inverse(y) == x);
    }
  }
}

TEST_CASE("KeyedPermutation depends on the tweak and the key", "[lib/codec]") {
  const KeyedPermutation a(HmacSha256("key one"), 6, 1000000);
  const KeyedPermutation b(HmacSha256("key one"), 7, 1000000);
  const KeyedPermutation c(HmacSha256("key two"), 6, 1000000);
  int same_ab = 0;
  int same_ac = 0;
  for (uint64_t x = 0; x < 1000; ++x) {
    same_ab += a.Forward(x) == b.Forward(x);
    same_ac += a.Forward(x) == c.Forward(x);
  }
  CHECK(same_ab < 3);
  CHECK(same_ac < 3);
}

TEST_CASE("base62 uses the whole alphabet in order", "[lib/codec]") {
  CHECK(ToBase62(0, 3) == "000");
  CHECK(ToBase62(61, 2) == "0z");
  CHECK(ToBase62(62, 2) == "10");
  CHECK(ToBase62(TierCapacity(4) - 1, 4) == "yzzz");
  CHECK(FromBase62("yzzz") == TierCapacity(4) - 1);
  CHECK(FromBase62("zzzzzzzzzz") == 839299365868340223ULL);  // 62^10 - 1
  for (int i = 0; i < 62; ++i) {
    CHECK(Base62DigitValue(kBase62Alphabet[i]) == i);
  }
  CHECK(Base62DigitValue('-') == -1);
  CHECK(Base62DigitValue('\xc3') == -1);
  CHECK(TierCapacity(1) == 61);
  CHECK(TierCapacity(10) == 61ULL * 13537086546263552ULL);  // 61 * 62^9
}

}  // namespace
}  // namespace shortener::codec::internal
