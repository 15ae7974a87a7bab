// KeyAdmin: API-key management for the admin RPCs (create, list, revoke)
// and the bootstrap admin key. Over an ApiKeyStore (lib/auth/api_key_store.h);
// every call blocks on the store (run it off reactor threads). Revocation
// times are read from the Clock given.
//
// Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_KEY_ADMIN_H_
#define SHORTENER_SERVICES_SHORTEN_KEY_ADMIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/auth/api_key_store.h"
#include "lib/common/clock.h"

namespace shortener::service {

// What CreateApiKey asks for, as the client sent it (validated by Create).
struct ApiKeySpec {
  std::string name;
  std::string tenant;  // empty: the name (none if infrastructure)
  // No tenant: an edge's key, the only kind that may hold record_clicks and
  // watch_invalidations (lib/auth/scopes.h).
  bool infrastructure = false;
  std::vector<std::string> scopes;  // at least one
  std::vector<std::string> allowed_domains;
  double rate_per_second = 0;  // 0: no limit
  int burst = 0;               // 0 with a rate: ceil(rate), at least 1
};

struct CreatedApiKey {
  std::string key;  // shown once, never stored
  auth::ApiKeyRecord record;
};

class KeyAdmin {
 public:
  // `store` and `clock` outlive the KeyAdmin.
  KeyAdmin(auth::ApiKeyStore* store, const Clock& clock);

  // Generates a key and stores its hash. INVALID_ARGUMENT naming the field
  // (name empty or over 200 bytes, tenant over 200 bytes or set on an
  // infrastructure key, no scopes, an unknown scope, a scope the kind of
  // key may not hold (auth::ValidateKeyScopes says why), a malformed
  // domain, rate/burst negative or not finite, a burst without a rate);
  // the store's errors (UNAVAILABLE) passed through.
  absl::StatusOr<CreatedApiKey> Create(const ApiKeySpec& spec);
  // Every key, revoked ones included, by id; the store's errors.
  absl::StatusOr<std::vector<auth::ApiKeyRecord>> List();
  // Revokes key `id` now (the clock's time; a key revoked already keeps its
  // first time) and returns it. NOT_FOUND for an unknown id. Every
  // replica's KeyCache drops the key when the revocation's NOTIFY arrives.
  absl::StatusOr<auth::ApiKeyRecord> Revoke(int64_t id);

  // --bootstrap_admin_key_file: if `path` exists, the key in it (32 or more
  // printable characters; surrounding whitespace ignored) is made an admin
  // key (tenant "admin") unless it is one already; if not, a new key is
  // generated and written there, mode 0600. Fails (the service does not
  // start) when the file is unreadable or its key is malformed, is stored
  // without the admin scope, or was revoked (then: remove the file to get a
  // new one). Safe when several replicas start at once with one file.
  absl::Status EnsureBootstrapAdminKey(const std::string& path);

 private:
  auth::ApiKeyStore* const store_;
  const Clock& clock_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_KEY_ADMIN_H_
