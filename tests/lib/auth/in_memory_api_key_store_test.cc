// InMemoryApiKeyStore: the contract suite, plus what only it has (its
// injected clock, ids from 1).
#include "lib/auth/in_memory_api_key_store.h"

#include <catch2/catch.hpp>
#include <memory>

#include "lib/common/store_time.h"
#include "tests/lib/auth/api_key_store_contract.h"
#include "tests/support/status_matchers.h"

namespace shortener::auth::testing {

std::unique_ptr<ApiKeyStore> NewContractStore() {
  return std::make_unique<InMemoryApiKeyStore>(SystemClock());
}

namespace {

using ::shortener::testing::IsOk;

TEST_CASE("the in-memory store stamps create_time from its clock, to the microsecond",
          "[lib/auth]") {
  ManualClock clock(kT1);
  InMemoryApiKeyStore store(clock);
  auto first = store.Create(MakeKey("first"));
  REQUIRE_THAT(first, IsOk());
  CHECK(first->id == 1);
  CHECK(first->create_time == StoreTime(kT1));
  clock.Advance(absl::Minutes(3));
  auto second = store.Create(MakeKey("second"));
  REQUIRE_THAT(second, IsOk());
  CHECK(second->id == 2);
  CHECK(second->create_time == StoreTime(kT1 + absl::Minutes(3)));
  // Revoke takes the time it is given, not the clock's.
  auto revoked = store.Revoke(first->id, kT2);
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->revoke_time == StoreTime(kT2));
}

}  // namespace
}  // namespace shortener::auth::testing
