// The low-level SHA256_* functions are deprecated in OpenSSL 3.0 but are the
// only OpenSSL API whose state can be copied without a heap allocation, which
// the per-request prefilter needs. This must precede every OpenSSL include.
#define OPENSSL_SUPPRESS_DEPRECATED

#include "lib/codec/hmac_sha256.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cassert>
#include <cstring>
#include <utility>

namespace shortener::codec::internal {

struct HmacSha256::KeyedStates {
  SHA256_CTX inner;
  SHA256_CTX outer;
};

HmacSha256::HmacSha256(absl::string_view key) {
  constexpr size_t kBlockSize = 64;
  uint8_t block[kBlockSize] = {};
  if (key.size() > kBlockSize) {
    SHA256(reinterpret_cast<const uint8_t*>(key.data()), key.size(), block);
  } else {
    for (size_t i = 0; i < key.size(); ++i) block[i] = key[i];
  }
  // The states are as sensitive as the key: wipe them when the last copy goes.
  std::shared_ptr<KeyedStates> states(new KeyedStates(), [](KeyedStates* p) {
    OPENSSL_cleanse(p, sizeof(*p));
    delete p;
  });
  uint8_t pad[kBlockSize];
  for (size_t i = 0; i < kBlockSize; ++i) pad[i] = block[i] ^ 0x36;
  SHA256_Init(&states->inner);
  SHA256_Update(&states->inner, pad, kBlockSize);
  for (size_t i = 0; i < kBlockSize; ++i) pad[i] = block[i] ^ 0x5c;
  SHA256_Init(&states->outer);
  SHA256_Update(&states->outer, pad, kBlockSize);
  OPENSSL_cleanse(block, sizeof(block));
  OPENSSL_cleanse(pad, sizeof(pad));
  states_ = std::move(states);
}

Sha256Digest HmacSha256::Mac(const uint8_t* message, size_t length) const {
  // Struct copies of the precomputed states: no shared mutable state.
  SHA256_CTX ctx = states_->inner;
  Sha256Digest inner_digest;
  SHA256_Update(&ctx, message, length);
  SHA256_Final(inner_digest.data(), &ctx);
  ctx = states_->outer;
  Sha256Digest digest;
  SHA256_Update(&ctx, inner_digest.data(), inner_digest.size());
  SHA256_Final(digest.data(), &ctx);
  return digest;
}

namespace {

// Big-endian stores, as SHA-256 lays out words (one bswap and one store each;
// byte-by-byte shifts compiled to dozens of single-byte stores per call).
void StoreBigEndian32(uint8_t* out, uint32_t value) {
  value = __builtin_bswap32(value);
  std::memcpy(out, &value, sizeof(value));
}
void StoreBigEndian64(uint8_t* out, uint64_t value) {
  value = __builtin_bswap64(value);
  std::memcpy(out, &value, sizeof(value));
}

// The outer hash's last block after its 32-byte message (the inner digest):
// 0x80, zeros and the message length, 64 + 32 bytes = 768 bits, as FIPS 180-4
// section 5.1.1 pads. The same for every MAC.
constexpr uint8_t kOuterPadding[32] = {0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,    0,
                                       0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x00};

}  // namespace

uint64_t HmacSha256::ShortMac64(const uint8_t* message, size_t length) const {
  assert(length <= kMaxShortMessage);
  // The inner hash's last block: the message, 0x80, zeros and the length of
  // the key block plus the message in bits.
  uint8_t block[64] = {};
  if (length > 0) std::memcpy(block, message, length);  // an empty message may be null
  block[length] = 0x80;
  StoreBigEndian64(block + 56, (64 + length) * 8);
  // SHA256_Transform reads and updates only the chaining value h, in place:
  // copying just h (not the whole 112-byte context) is enough, and once the
  // transform has run no copy of the keyed state is left on the stack.
  SHA256_CTX ctx;
  std::memcpy(ctx.h, states_->inner.h, sizeof(ctx.h));
  SHA256_Transform(&ctx, block);
  for (int i = 0; i < 8; ++i) StoreBigEndian32(block + 4 * i, ctx.h[i]);
  std::memcpy(block + 32, kOuterPadding, sizeof(kOuterPadding));
  std::memcpy(ctx.h, states_->outer.h, sizeof(ctx.h));
  SHA256_Transform(&ctx, block);
  return (uint64_t{ctx.h[0]} << 32) | ctx.h[1];
}

uint64_t DigestPrefix64(const Sha256Digest& digest) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | digest[i];
  return value;
}

}  // namespace shortener::codec::internal
