// A keyed pseudo-random permutation of [0, domain_size): a balanced Feistel
// network over the smallest even bit width that covers the domain, with
// HMAC-SHA256 round functions, made exact on the domain by cycle walking.
// Internal to lib/codec; see docs/codes.md for the construction.
//
// Thread safety: immutable after construction; all methods are const and safe
// to call concurrently. Cheap to copy (the key state is shared).
#ifndef SHORTENER_LIB_CODEC_KEYED_PERMUTATION_H_
#define SHORTENER_LIB_CODEC_KEYED_PERMUTATION_H_

#include <cstdint>

#include "lib/codec/hmac_sha256.h"

namespace shortener::codec::internal {

class KeyedPermutation {
 public:
  // FF3-1 also uses 8 rounds; 4 would already be a PRP asymptotically, the
  // extra rounds cover the small half widths of the short tiers.
  static constexpr int kRounds = 8;
  // Largest supported domain (so the Feistel width stays <= 62 bits).
  static constexpr uint64_t kMaxDomainSize = uint64_t{1} << 62;

  // `tweak` separates permutations that share `round_key` (the codec passes
  // the tier's body length). Requires 1 <= domain_size <= kMaxDomainSize.
  KeyedPermutation(HmacSha256 round_key, uint8_t tweak, uint64_t domain_size);

  // Requires x < domain_size(). Forward and Inverse are mutual inverses.
  uint64_t Forward(uint64_t x) const;
  uint64_t Inverse(uint64_t y) const;

  uint64_t domain_size() const { return domain_size_; }
  int half_bits() const { return half_bits_; }

 private:
  uint64_t Round(int round, uint64_t half) const;
  uint64_t FeistelForward(uint64_t x) const;
  uint64_t FeistelInverse(uint64_t y) const;

  HmacSha256 round_key_;
  uint8_t tweak_;
  uint64_t domain_size_;
  int half_bits_;
  uint64_t half_mask_;
};

}  // namespace shortener::codec::internal

#endif  // SHORTENER_LIB_CODEC_KEYED_PERMUTATION_H_
