// The ApiKeyStore contract suite (api_key_store_contract.cc) is written once
// and compiled into one test binary per implementation: auth_test
// (InMemoryApiKeyStore) and auth_pg_test (PgApiKeyStore on a private
// PostgreSQL). Each such binary defines NewContractStore(); this header also
// holds the test-data helpers the key store tests share.
//
// Every key gets a fresh random hash, so tests may share one database.
#ifndef SHORTENER_TESTS_LIB_AUTH_API_KEY_STORE_CONTRACT_H_
#define SHORTENER_TESTS_LIB_AUTH_API_KEY_STORE_CONTRACT_H_

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "lib/auth/api_key_store.h"

namespace shortener::auth::testing {

// Defined by each binary that links api_key_store_contract.cc. The store's
// clock (for create_time) must be the real one.
std::unique_ptr<ApiKeyStore> NewContractStore();

// A tenant key ("tenant of <name>", scopes shorten and stats) with the hash
// of a freshly generated API key.
NewApiKey MakeKey(const std::string& name);

// Fixed times with sub-microsecond digits, an hour apart.
inline const absl::Time kT1 = absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(123456789);
inline const absl::Time kT2 = kT1 + absl::Hours(1);

}  // namespace shortener::auth::testing

#endif  // SHORTENER_TESTS_LIB_AUTH_API_KEY_STORE_CONTRACT_H_
