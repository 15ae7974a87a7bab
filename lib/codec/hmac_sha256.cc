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

// The last block of a SHA-256 message: `bytes` followed by 0x80, zeros and
// the whole message's length in bits (64 bytes of key block + `bytes`),
// big-endian, as FIPS 180-4 section 5.1.1 pads.
void PadFinalBlock(const uint8_t* bytes, size_t length, uint8_t block[64]) {
  std::memset(block, 0, 64);
  if (length > 0) std::memcpy(block, bytes, length);  // an empty message may be null
  block[length] = 0x80;
  const uint64_t bits = (64 + length) * 8;
  for (int i = 0; i < 8; ++i) block[63 - i] = static_cast<uint8_t>(bits >> (8 * i));
}

}  // namespace

uint64_t HmacSha256::ShortMac64(const uint8_t* message, size_t length) const {
  assert(length <= kMaxShortMessage);
  uint8_t block[64];
  PadFinalBlock(message, length, block);
  // SHA256_Transform reads and updates only the chaining value h, in place:
  // copying just h (not the whole 112-byte context) is enough, and once the
  // transform has run no copy of the keyed state is left on the stack.
  SHA256_CTX ctx;
  std::memcpy(ctx.h, states_->inner.h, sizeof(ctx.h));
  SHA256_Transform(&ctx, block);
  uint8_t inner_digest[32];
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 4; ++j) {
      inner_digest[4 * i + j] = static_cast<uint8_t>(ctx.h[i] >> (24 - 8 * j));
    }
  }
  PadFinalBlock(inner_digest, sizeof(inner_digest), block);
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
