// KeyAdmin: API-key management for the admin RPCs, the bootstrap admin key,
// and the look-up the service's KeyCache runs on a miss. Over PgApiKeyStore;
// every call blocks on the database (run it off reactor threads).
//
// Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_KEY_ADMIN_H_
#define SHORTENER_SERVICES_SHORTEN_KEY_ADMIN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/auth/pg/pg_api_key_store.h"
#include "lib/auth/principal.h"

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
  // `store` outlives the KeyAdmin.
  explicit KeyAdmin(auth::PgApiKeyStore* store, std::function<absl::Time()> now = absl::Now);

  // Generates a key and stores its hash. INVALID_ARGUMENT naming the field
  // (name empty or over 200 bytes, tenant over 200 bytes or set on an
  // infrastructure key, no scopes, an unknown scope, a scope the kind of
  // key may not hold (auth::ValidateKeyScopes says why), a malformed
  // domain, rate/burst negative or not finite); UNAVAILABLE.
  absl::StatusOr<CreatedApiKey> Create(const ApiKeySpec& spec);
  absl::StatusOr<std::vector<auth::ApiKeyRecord>> List();
  // NOT_FOUND for an unknown id. Every replica's KeyCache drops the key
  // when the revocation's NOTIFY arrives.
  absl::StatusOr<auth::ApiKeyRecord> Revoke(int64_t id);

  // For KeyCache: the principal of an active key; UNAUTHENTICATED
  // "api key unknown" / "api key revoked"; UNAVAILABLE passed through.
  absl::StatusOr<auth::Principal> LookupPrincipal(const std::string& key_hash);

  // --bootstrap_admin_key_file: if `path` exists, the key in it (32 or more
  // printable characters; surrounding whitespace ignored) is made an admin
  // key (tenant "admin") unless it is one already; if not, a new key is
  // generated and written there, mode 0600. Fails (the service does not
  // start) when the file is unreadable or its key is malformed, is stored
  // without the admin scope, or was revoked (then: remove the file to get a
  // new one). Safe when several replicas start at once with one file.
  absl::Status EnsureBootstrapAdminKey(const std::string& path);

 private:
  auth::PgApiKeyStore* const store_;
  const std::function<absl::Time()> now_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_KEY_ADMIN_H_
