// HMAC-SHA256 with the keyed inner and outer SHA-256 states computed once, so
// that each MAC costs two compression-function calls, allocates nothing and
// creates no OpenSSL context. Internal to lib/codec (the keyed permutation,
// the check character and the fingerprint all use it).
//
// Thread safety: immutable after construction; Mac() is const and safe to call
// from any number of threads at once. Copies share the precomputed state.
#ifndef SHORTENER_LIB_CODEC_HMAC_SHA256_H_
#define SHORTENER_LIB_CODEC_HMAC_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/strings/string_view.h"

namespace shortener::codec::internal {

using Sha256Digest = std::array<uint8_t, 32>;

class HmacSha256 {
 public:
  // Any key length is accepted (keys longer than 64 bytes are hashed first,
  // as RFC 2104 requires).
  explicit HmacSha256(absl::string_view key);

  // HMAC-SHA256(key, message).
  Sha256Digest Mac(const uint8_t* message, size_t length) const;
  Sha256Digest Mac(absl::string_view message) const {
    return Mac(reinterpret_cast<const uint8_t*>(message.data()), message.size());
  }

  // DigestPrefix64(Mac(message, length)) for messages of at most
  // kMaxShortMessage bytes, computed as exactly two block transforms with no
  // buffering or finalisation: the keyed permutation calls it 8-10 times per
  // code (~15 % of a BatchShorten's service CPU through Mac).
  static constexpr size_t kMaxShortMessage = 55;  // + 0x80 + 8-byte length = 1 block
  uint64_t ShortMac64(const uint8_t* message, size_t length) const;

 private:
  struct KeyedStates;  // SHA256_CTX after key^ipad and after key^opad.
  std::shared_ptr<const KeyedStates> states_;
};

// First 8 bytes of a digest as a big-endian integer.
uint64_t DigestPrefix64(const Sha256Digest& digest);

}  // namespace shortener::codec::internal

#endif  // SHORTENER_LIB_CODEC_HMAC_SHA256_H_
