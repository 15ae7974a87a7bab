// ApiKeyStore: where API keys are kept, by the hash of the key
// (auth::HashApiKey); the key itself is never passed in, stored or
// returned. The service's KeyAdmin creates, lists and revokes keys through
// it, and its KeyCache finds them by hash on a miss.
//
// Two implementations pass one contract suite
// (tests/lib/auth/api_key_store_contract.*):
//  - PgApiKeyStore (lib/auth/pg): the table api_keys; a revocation is
//    announced to every replica (NOTIFY).
//  - InMemoryApiKeyStore: unit tests and local runs without a database.
//
// A revoked key is data, not an error: it is still found and listed, with
// its revoke_time; what it means is the caller's decision.
//
// Thread safety: implementations are thread-safe; every method may block
// (on the database), so call them off reactor threads.
#ifndef SHORTENER_LIB_AUTH_API_KEY_STORE_H_
#define SHORTENER_LIB_AUTH_API_KEY_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/auth/domain_allowlist.h"
#include "lib/auth/scopes.h"

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
  absl::Time create_time;                 // microsecond precision
  std::optional<absl::Time> revoke_time;  // set: the key no longer works
};

class ApiKeyStore {
 public:
  virtual ~ApiKeyStore() = default;

  // Stores a new key and returns it as stored: a new id (greater than every
  // id before it) and create_time (the store's clock, microseconds)
  // assigned. INVALID_ARGUMENT as ValidateNewApiKey says (checked before
  // anything is stored); ALREADY_EXISTS "create api key: a key with this
  // hash exists already" when a key with this hash exists (revoked or not);
  // UNAVAILABLE when the store cannot be reached; INTERNAL otherwise.
  virtual absl::StatusOr<ApiKeyRecord> Create(const NewApiKey& key) = 0;

  // The key with this hash, revoked or not. NOT_FOUND "no api key with this
  // hash" when there is none (also for a malformed hash); UNAVAILABLE;
  // INTERNAL when a stored key does not parse.
  virtual absl::StatusOr<ApiKeyRecord> FindByHash(const std::string& key_hash) = 0;

  // Every key, revoked ones included, in increasing id order. UNAVAILABLE;
  // INTERNAL.
  virtual absl::StatusOr<std::vector<ApiKeyRecord>> List() = 0;

  // Revokes key `id` at `when` (kept to the microsecond) and returns it.
  // Idempotent: a key revoked already keeps its first revoke_time (and the
  // call still succeeds). NOT_FOUND "no api key with id <id>" for an unknown
  // id; UNAVAILABLE; INTERNAL.
  virtual absl::StatusOr<ApiKeyRecord> Revoke(int64_t id, absl::Time when) = 0;
};

// True iff `key_hash` has the form of HashApiKey's output: 64 lowercase hex
// characters.
bool IsApiKeyHash(absl::string_view key_hash);

// The rule Create enforces, for every implementation: OK, or
// INVALID_ARGUMENT naming the field when key_hash is not IsApiKeyHash (the
// hash is never echoed: it is as good as the key for a look-up), name is
// empty, tenant is empty for a tenant key or set for an infrastructure key,
// the scopes do not fit the kind of key (ValidateKeyScopes), or
// rate_per_second / burst is set and not positive.
absl::Status ValidateNewApiKey(const NewApiKey& key);

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_API_KEY_STORE_H_
