#include "lib/auth/api_key.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "lib/common/sha256.h"

namespace shortener::auth {
namespace {

constexpr char kBase62Alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr size_t kMinBootstrapKeyLength = 32;

[[noreturn]] void DieNoRandomness() {
  // No usable CSPRNG: a predictable key would be worse than stopping.
  std::fputs("auth: RAND_bytes failed; cannot generate an api key\n", stderr);
  std::abort();
}

// Printable ASCII other than space: what a key or token may contain.
bool IsKeyChar(char c) { return c > 0x20 && c < 0x7f; }

}  // namespace

std::string GenerateApiKey() {
  std::string key(kApiKeyPrefix);
  key.reserve(kApiKeyLength);
  unsigned char bytes[64];
  while (key.size() < kApiKeyLength) {
    if (RAND_bytes(bytes, sizeof(bytes)) != 1) DieNoRandomness();
    for (unsigned char b : bytes) {
      // 248 = 4 * 62: bytes below it map uniformly onto the alphabet; the
      // rest are dropped so no character is more likely than another.
      if (b >= 248) continue;
      key.push_back(kBase62Alphabet[b % 62]);
      if (key.size() == kApiKeyLength) break;
    }
  }
  OPENSSL_cleanse(bytes, sizeof(bytes));
  return key;
}

std::string HashApiKey(absl::string_view key) {
  // Once per authenticated call: Sha256 skips OpenSSL 3's provider look-up.
  const Sha256Bytes digest = Sha256(key);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) {
    // Same work as a full comparison, so the content does not show in time.
    volatile int sink = CRYPTO_memcmp(a.data(), a.data(), a.size());
    (void)sink;
    return false;
  }
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::Status ValidateBootstrapKey(absl::string_view key) {
  if (key.size() < kMinBootstrapKeyLength) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bootstrap key: must be at least %d characters, got %d",
                        kMinBootstrapKeyLength, key.size()));
  }
  for (size_t i = 0; i < key.size(); ++i) {
    if (!IsKeyChar(key[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "bootstrap key: must be printable ASCII without whitespace; character %d is 0x%02x",
          i + 1, static_cast<unsigned char>(key[i])));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ParseBearer(absl::string_view authorization_header) {
  if (authorization_header.size() > kMaxAuthorizationLength) {
    return absl::UnauthenticatedError(
        absl::StrFormat("authorization: value longer than %d characters", kMaxAuthorizationLength));
  }
  absl::string_view value = authorization_header;
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  if (value.empty()) {
    return absl::UnauthenticatedError(
        "authorization: missing; send \"authorization: Bearer <api key>\"");
  }
  constexpr absl::string_view kScheme = "bearer";
  const size_t scheme_end = value.find(' ');
  const absl::string_view scheme = value.substr(0, scheme_end);
  if (!absl::EqualsIgnoreCase(scheme, kScheme)) {
    return absl::UnauthenticatedError("authorization: scheme must be Bearer");
  }
  absl::string_view key =
      scheme_end == absl::string_view::npos ? absl::string_view() : value.substr(scheme_end);
  while (!key.empty() && key.front() == ' ') key.remove_prefix(1);
  if (key.empty()) return absl::UnauthenticatedError("authorization: empty bearer key");
  for (char c : key) {
    if (!IsKeyChar(c)) {
      return absl::UnauthenticatedError(
          "authorization: bearer key must be printable ASCII without whitespace");
    }
  }
  return std::string(key);
}

}  // namespace shortener::auth
