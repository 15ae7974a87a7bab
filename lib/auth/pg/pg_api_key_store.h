// PgApiKeyStore: API keys in PostgreSQL (table api_keys, schema in
// deploy/postgres/migrations/0002_api_keys.sql, 0003_api_key_tenants.sql and
// 0008_infrastructure_keys.sql: an infrastructure key's tenant is NULL).
//
// The store only ever sees a key's hash (auth::HashApiKey); the key itself
// is never passed in, stored or returned. Every call is one autocommitted
// prepared statement on a pooled connection. Connections come from a lazy
// pool: Create does not connect, a database outage gives UNAVAILABLE, and
// the same store works again once the database is back.
//
// Thread-safe.
#ifndef SHORTENER_LIB_AUTH_PG_PG_API_KEY_STORE_H_
#define SHORTENER_LIB_AUTH_PG_PG_API_KEY_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/auth/domain_allowlist.h"
#include "lib/auth/scopes.h"
#include "lib/pg/connection_pool.h"

namespace shortener::auth {

// What Create needs to store a key.
struct NewApiKey {
  std::string key_hash;  // HashApiKey(key): 64 lowercase hex
  std::string name;      // non-empty, for people
  // Owner of the key's links: non-empty for a tenant key, empty for an
  // infrastructure key (stored as NULL).
  std::string tenant;
  bool infrastructure = false;            // see lib/auth/scopes.h
  ScopeSet scopes;                        // stored canonically (ToString)
  DomainAllowlist allowed_domains;        // empty: every domain
  std::optional<double> rate_per_second;  // token refill rate; > 0 when set
  std::optional<int> burst;               // bucket size; > 0 when set
};

// One stored key.
struct ApiKeyRecord {
  int64_t id = 0;
  std::string name;
  std::string tenant;           // empty for an infrastructure key
  bool infrastructure = false;  // no tenant: an edge's key
  std::string key_hash;
  ScopeSet scopes;
  DomainAllowlist allowed_domains;
  std::optional<double> rate_per_second;
  std::optional<int> burst;
  absl::Time create_time;
  std::optional<absl::Time> revoke_time;  // set: the key no longer works
};

struct PgApiKeyStoreOptions {
  // libpq connection string; may hold a password (never in a message).
  std::string conninfo;
  // Database connections at most. Default 2 (key lookups are rare: the
  // service caches them).
  int pool_size = 2;
  // How long a call waits for a free connection before UNAVAILABLE.
  // Default 5 s.
  absl::Duration acquire_timeout = absl::Seconds(5);
  // Revoke NOTIFYs "key:<key_hash>" here (the links' invalidation channel:
  // one listener per replica serves both). Non-empty.
  std::string invalidation_channel = "shortener_invalidations";
};

// Prefix of a key revocation's NOTIFY payload; no link code contains ':'.
inline constexpr absl::string_view kKeyInvalidationPrefix = "key:";

class PgApiKeyStore {
 public:
  // Validates the options (INVALID_ARGUMENT: pool_size < 1,
  // acquire_timeout <= 0, empty invalidation_channel, malformed
  // conninfo); does not connect.
  static absl::StatusOr<std::unique_ptr<PgApiKeyStore>> Create(PgApiKeyStoreOptions options);

  // Stores a new key and returns it as stored (id and create_time assigned).
  // INVALID_ARGUMENT when key_hash is not 64 lowercase hex, name is empty,
  // tenant is empty for a tenant key or set for an infrastructure key, the
  // scopes do not fit the kind of key (auth::ValidateKeyScopes), or
  // rate_per_second / burst is set and not positive (checked before the
  // database, which checks the same); ALREADY_EXISTS when a key with this
  // hash exists (revoked or not); UNAVAILABLE when the database is
  // unreachable; INTERNAL otherwise.
  absl::StatusOr<ApiKeyRecord> Create(const NewApiKey& key);

  // The key with this hash, revoked or not (the caller decides what a
  // revoked key means). NOT_FOUND when there is none; UNAVAILABLE;
  // INTERNAL when a stored row does not parse (scopes or domains).
  absl::StatusOr<ApiKeyRecord> FindByHash(const std::string& key_hash);

  // Every key, revoked ones included, by id. UNAVAILABLE; INTERNAL.
  absl::StatusOr<std::vector<ApiKeyRecord>> List();

  // Revokes key `id` at `when` and returns it. Idempotent: a key revoked
  // already keeps its first revoke_time. Publishes kKeyInvalidationPrefix +
  // key_hash on options.invalidation_channel in the same statement (on
  // commit only; again on repeats). NOT_FOUND for an unknown id;
  // UNAVAILABLE; INTERNAL.
  absl::StatusOr<ApiKeyRecord> Revoke(int64_t id, absl::Time when);

 private:
  explicit PgApiKeyStore(PgApiKeyStoreOptions options);

  absl::Time Deadline() const { return absl::Now() + options_.acquire_timeout; }
  // Runs prepared statement `query` with `args` outside a transaction and
  // parses every row returned.
  template <typename... Args>
  absl::StatusOr<std::vector<ApiKeyRecord>> Query(const char* what, const char* query,
                                                  Args&&... args);

  const PgApiKeyStoreOptions options_;
  pg::ConnectionPool pool_;
};

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_PG_PG_API_KEY_STORE_H_
