// The low-level SHA256_* functions are deprecated in OpenSSL 3.0 but are the
// only OpenSSL API whose state can be copied without a heap allocation, which
// the per-request prefilter needs. This must precede every OpenSSL include.
#define OPENSSL_SUPPRESS_DEPRECATED

#include "lib/codec/hmac_sha256.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

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

uint64_t DigestPrefix64(const Sha256Digest& digest) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | digest[i];
  return value;
}

}  // namespace shortener::codec::internal
