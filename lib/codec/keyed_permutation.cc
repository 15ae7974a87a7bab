#include "lib/codec/keyed_permutation.h"

#include <cassert>
#include <utility>

namespace shortener::codec::internal {

KeyedPermutation::KeyedPermutation(HmacSha256 round_key, uint8_t tweak, uint64_t domain_size)
    : round_key_(std::move(round_key)), tweak_(tweak), domain_size_(domain_size) {
  assert(domain_size >= 1 && domain_size <= kMaxDomainSize);
  // Smallest even width 2h with 2^(2h) >= domain_size, and h >= 2 so that
  // even the tiniest domain gets a non-trivial round function.
  int half = 2;
  while ((uint64_t{1} << (2 * half)) < domain_size_) ++half;
  half_bits_ = half;
  half_mask_ = (uint64_t{1} << half) - 1;
}

// F(round, half) = HMAC(round key, tweak || round || half as 8 bytes BE),
// truncated to the half width.
uint64_t KeyedPermutation::Round(int round, uint64_t half) const {
  uint8_t message[10];
  message[0] = tweak_;
  message[1] = static_cast<uint8_t>(round);
  for (int i = 0; i < 8; ++i) {
    message[2 + i] = static_cast<uint8_t>(half >> (56 - 8 * i));
  }
  return round_key_.ShortMac64(message, sizeof(message)) & half_mask_;
}

uint64_t KeyedPermutation::FeistelForward(uint64_t x) const {
  uint64_t left = x >> half_bits_;
  uint64_t right = x & half_mask_;
  for (int r = 0; r < kRounds; ++r) {
    uint64_t next_right = left ^ Round(r, right);
    left = right;
    right = next_right;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::FeistelInverse(uint64_t y) const {
  uint64_t left = y >> half_bits_;
  uint64_t right = y & half_mask_;
  for (int r = kRounds - 1; r >= 0; --r) {
    uint64_t prev_left = right ^ Round(r, left);
    right = left;
    left = prev_left;
  }
  return (left << half_bits_) | right;
}

// Cycle walking: the Feistel network permutes [0, 2^(2h)); applying it until
// the value lands back inside the domain restricts it to a permutation of the
// domain. The walk terminates because x's cycle returns to x itself; since
// 2^(2h) < 4 * domain_size the expected number of steps is below 4.
uint64_t KeyedPermutation::Forward(uint64_t x) const {
  assert(x < domain_size_);
  uint64_t y = FeistelForward(x);
  while (y >= domain_size_) y = FeistelForward(y);
  return y;
}

uint64_t KeyedPermutation::Inverse(uint64_t y) const {
  assert(y < domain_size_);
  uint64_t x = FeistelInverse(y);
  while (x >= domain_size_) x = FeistelInverse(x);
  return x;
}

}  // namespace shortener::codec::internal
