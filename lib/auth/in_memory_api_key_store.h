// InMemoryApiKeyStore: the ApiKeyStore (lib/auth/api_key_store.h) of unit
// tests and of local runs without a database. Same semantics, codes and
// messages as PgApiKeyStore (both pass the contract suite in tests/lib/auth),
// nothing durable. create_time is `clock`'s time; ids count up from 1. It
// announces revocations to nobody (PgApiKeyStore's NOTIFY has no stand-in:
// tests invalidate a KeyCache themselves). To make calls fail or wait, wrap
// it in tests/support/faulty_api_key_store.h.
//
// Thread-safe: one std::mutex (seen by ThreadSanitizer) around two maps.
#ifndef SHORTENER_LIB_AUTH_IN_MEMORY_API_KEY_STORE_H_
#define SHORTENER_LIB_AUTH_IN_MEMORY_API_KEY_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "lib/auth/api_key_store.h"
#include "lib/common/clock.h"

namespace shortener::auth {

class InMemoryApiKeyStore final : public ApiKeyStore {
 public:
  // `clock` outlives the store.
  explicit InMemoryApiKeyStore(const Clock& clock);
  InMemoryApiKeyStore(const InMemoryApiKeyStore&) = delete;
  InMemoryApiKeyStore& operator=(const InMemoryApiKeyStore&) = delete;

  // See ApiKeyStore; never UNAVAILABLE or INTERNAL.
  absl::StatusOr<ApiKeyRecord> Create(const NewApiKey& key) override;
  absl::StatusOr<ApiKeyRecord> FindByHash(const std::string& key_hash) override;
  absl::StatusOr<std::vector<ApiKeyRecord>> List() override;
  absl::StatusOr<ApiKeyRecord> Revoke(int64_t id, absl::Time when) override;

 private:
  const Clock& clock_;
  mutable std::mutex mu_;
  // Guarded by mu_:
  int64_t last_id_ = 0;
  std::map<int64_t, ApiKeyRecord> keys_;               // by id, so List is in id order
  absl::flat_hash_map<std::string, int64_t> by_hash_;  // key_hash -> id
};

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_IN_MEMORY_API_KEY_STORE_H_
