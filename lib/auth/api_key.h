// API keys: generation from OpenSSL's CSPRNG, the hash we store instead of
// the key, a timing-safe comparison, the bootstrap admin key rule and the
// parsing of an `authorization: Bearer <key>` value.
//
// Thread safety: stateless functions, safe from any thread.
#ifndef SHORTENER_LIB_AUTH_API_KEY_H_
#define SHORTENER_LIB_AUTH_API_KEY_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::auth {

// Every generated key starts with this, so a leaked key is recognisable
// (secret scanners, logs) and cannot be mistaken for another secret.
inline constexpr absl::string_view kApiKeyPrefix = "shk_";
// Base62 characters after the prefix: 43 * log2(62) = 256.03 bits.
inline constexpr size_t kApiKeyRandomChars = 43;
inline constexpr size_t kApiKeyLength = 4 + kApiKeyRandomChars;  // 47

// "shk_" + 43 characters of [0-9A-Za-z], each drawn uniformly (rejection
// sampling of RAND_bytes output, no modulo bias). Aborts the process if the
// CSPRNG fails rather than return a guessable key.
std::string GenerateApiKey();

// 64 lowercase hex characters: SHA-256 of the whole key (prefix included).
// This is what the api_keys table stores and what lookups use; the key
// itself is never stored.
std::string HashApiKey(absl::string_view key);

// True iff `a` and `b` are equal. The time taken does not depend on where
// they differ (CRYPTO_memcmp); a length mismatch returns false after the same
// amount of work as comparing `a` with itself, so only the length can leak
// (compare fixed-length hashes and nothing leaks).
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

// The bootstrap admin key rule: at least 32 characters, each printable ASCII
// other than space ('!'..'~'). The caller strips the file's trailing newline.
// Returns OK or INVALID_ARGUMENT naming the rule broken (never echoing the
// key).
absl::Status ValidateBootstrapKey(absl::string_view key);

// Longest `authorization` value ParseBearer accepts.
inline constexpr size_t kMaxAuthorizationLength = 1024;

// The key from an `authorization` value "Bearer <key>": the scheme is
// case-insensitive, one or more spaces separate it from the key, surrounding
// spaces and tabs are ignored; the key is non-empty printable ASCII without
// whitespace. Fails with UNAUTHENTICATED and a message starting
// "authorization: " naming the problem (missing, too long, not the Bearer
// scheme, empty key, bad characters); the key is never echoed.
absl::StatusOr<std::string> ParseBearer(absl::string_view authorization_header);

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_API_KEY_H_
