// SHA-256 of a byte string, for the hashes taken on every request (URL
// hashes, API key hashes, visitor ids).
#ifndef SHORTENER_LIB_COMMON_SHA256_H_
#define SHORTENER_LIB_COMMON_SHA256_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace shortener {

using Sha256Bytes = std::array<uint8_t, 32>;

// OpenSSL 3.0's one-shot SHA256() and EVP_Digest(EVP_sha256()) look the
// algorithm up in the provider registry, under a read lock, and allocate a
// context on every call: more than the hash of a 100-byte URL itself (~5 %
// of the service's BatchShorten CPU, docs/benchmarks.md). This computes it
// directly, with no lock and no allocation.
Sha256Bytes Sha256(absl::string_view data);

// The digest as a 32-byte std::string (the form the link store keeps).
std::string Sha256String(absl::string_view data);

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_SHA256_H_
