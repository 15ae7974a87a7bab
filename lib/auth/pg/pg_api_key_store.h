// PgApiKeyStore: the ApiKeyStore (lib/auth/api_key_store.h) in PostgreSQL
// (table api_keys, schema in deploy/postgres/migrations/0002_api_keys.sql,
// 0003_api_key_tenants.sql and 0008_infrastructure_keys.sql: an
// infrastructure key's tenant is NULL).
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
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/auth/api_key_store.h"
#include "lib/pg/connection_pool.h"

namespace shortener::auth {

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

class PgApiKeyStore final : public ApiKeyStore {
 public:
  // Validates the options (INVALID_ARGUMENT: pool_size < 1,
  // acquire_timeout <= 0, empty invalidation_channel, malformed
  // conninfo); does not connect.
  static absl::StatusOr<std::unique_ptr<PgApiKeyStore>> Create(PgApiKeyStoreOptions options);

  // See ApiKeyStore. create_time is the database's clock. UNAVAILABLE when
  // the database is unreachable or no connection frees up within
  // acquire_timeout. The database's CHECK constraints hold the same rule as
  // ValidateNewApiKey, which runs first.
  absl::StatusOr<ApiKeyRecord> Create(const NewApiKey& key) override;
  // See ApiKeyStore; a malformed hash is NOT_FOUND without a round trip.
  absl::StatusOr<ApiKeyRecord> FindByHash(const std::string& key_hash) override;
  absl::StatusOr<std::vector<ApiKeyRecord>> List() override;
  // See ApiKeyStore. Publishes kKeyInvalidationPrefix + key_hash on
  // options.invalidation_channel in the same statement (on commit only;
  // again on repeats, so a replica that missed the first one catches up).
  absl::StatusOr<ApiKeyRecord> Revoke(int64_t id, absl::Time when) override;

  // Its connection pool's use (metrics).
  pg::ConnectionPool::Stats pool_stats() const { return pool_.GetStats(); }

 private:
  explicit PgApiKeyStore(PgApiKeyStoreOptions options);

  // How long a call may wait for a connection (a wait's deadline, not a
  // time the store records: the Clock seam does not apply).
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
