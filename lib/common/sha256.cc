// The low-level SHA256_* functions are deprecated in OpenSSL 3.0, and they
// are the ones that skip the provider look-up (see the header).
#define OPENSSL_SUPPRESS_DEPRECATED

#include "lib/common/sha256.h"

#include <openssl/sha.h>

namespace shortener {

Sha256Bytes Sha256(absl::string_view data) {
  Sha256Bytes digest;
  SHA256_CTX ctx;
  SHA256_Init(&ctx);
  SHA256_Update(&ctx, data.data(), data.size());
  SHA256_Final(digest.data(), &ctx);
  return digest;
}

std::string Sha256String(absl::string_view data) {
  const Sha256Bytes digest = Sha256(data);
  return std::string(reinterpret_cast<const char*>(digest.data()), digest.size());
}

}  // namespace shortener
