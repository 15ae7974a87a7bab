#include "lib/auth/api_key_store.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace shortener::auth {

bool IsApiKeyHash(absl::string_view key_hash) {
  if (key_hash.size() != 64) return false;
  for (char c : key_hash) {
    if (!absl::ascii_isdigit(c) && !(c >= 'a' && c <= 'f')) return false;
  }
  return true;
}

absl::Status ValidateNewApiKey(const NewApiKey& key) {
  if (!IsApiKeyHash(key.key_hash)) {
    return absl::InvalidArgumentError("key_hash: must be 64 lowercase hex characters");
  }
  if (key.name.empty()) return absl::InvalidArgumentError("name: must not be empty");
  if (key.infrastructure && !key.tenant.empty()) {
    return absl::InvalidArgumentError("tenant: an infrastructure key has none");
  }
  if (!key.infrastructure && key.tenant.empty()) {
    return absl::InvalidArgumentError("tenant: must not be empty");
  }
  absl::Status scopes = ValidateKeyScopes(key.scopes, key.infrastructure);
  if (!scopes.ok()) return scopes;
  if (key.rate_per_second.has_value() && !(*key.rate_per_second > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("rate_per_second: must be positive, got ", *key.rate_per_second));
  }
  if (key.burst.has_value() && *key.burst <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("burst: must be positive, got ", *key.burst));
  }
  return absl::OkStatus();
}

}  // namespace shortener::auth
