// The ApiKeyStore contract: round trips of every field, infrastructure keys,
// validation, NOT_FOUND and ALREADY_EXISTS with their messages, idempotent
// revocation, List's order, and racing creates of one hash. Every
// implementation passes these cases.
#include "tests/lib/auth/api_key_store_contract.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/auth/api_key.h"
#include "lib/common/store_time.h"
#include "tests/support/status_matchers.h"

namespace shortener::auth::testing {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

NewApiKey MakeKey(const std::string& name) {
  NewApiKey key;
  key.key_hash = HashApiKey(GenerateApiKey());
  key.name = name;
  key.tenant = "tenant of " + name;
  key.scopes = ScopeSet{Scope::kShorten, Scope::kStats};
  return key;
}

namespace {

TEST_CASE("a created key is found by its hash, listed, and revoked", "[lib/auth][contract]") {
  auto store = NewContractStore();
  NewApiKey key = MakeKey("round trip");
  key.scopes = ScopeSet{Scope::kShorten, Scope::kRevoke};
  auto domains = DomainAllowlist::Parse("example.com,*.Example.ORG");
  REQUIRE_THAT(domains, IsOk());
  key.allowed_domains = *domains;
  key.rate_per_second = 12.625;
  key.burst = 40;
  const absl::Time before = absl::Now() - absl::Seconds(5);

  auto created = store->Create(key);
  REQUIRE_THAT(created, IsOk());
  CHECK(created->id > 0);
  CHECK(created->key_hash == key.key_hash);
  CHECK(created->name == "round trip");
  CHECK(created->tenant == "tenant of round trip");
  CHECK_FALSE(created->infrastructure);
  CHECK(created->scopes == key.scopes);
  CHECK(created->allowed_domains.ToString() == "*.example.org,example.com");
  CHECK(created->allowed_domains.Allows("a.example.org"));
  CHECK_FALSE(created->allowed_domains.Allows("example.org"));
  CHECK(created->rate_per_second == 12.625);
  CHECK(created->burst == 40);
  CHECK(created->create_time > before);
  CHECK(created->create_time < absl::Now() + absl::Seconds(5));
  CHECK(created->create_time == StoreTime(created->create_time));
  CHECK_FALSE(created->revoke_time.has_value());

  auto found = store->FindByHash(key.key_hash);
  REQUIRE_THAT(found, IsOk());
  CHECK(found->id == created->id);
  CHECK(found->name == "round trip");
  CHECK(found->tenant == "tenant of round trip");
  CHECK(found->scopes == key.scopes);
  CHECK(found->allowed_domains.ToString() == created->allowed_domains.ToString());
  CHECK(found->rate_per_second == 12.625);
  CHECK(found->burst == 40);
  CHECK(found->create_time == created->create_time);
  CHECK_FALSE(found->revoke_time.has_value());

  auto listed = store->List();
  REQUIRE_THAT(listed, IsOk());
  int matches = 0;
  for (const ApiKeyRecord& r : *listed) {
    if (r.id == created->id) {
      ++matches;
      CHECK(r.key_hash == key.key_hash);
      CHECK(r.name == "round trip");
    }
  }
  CHECK(matches == 1);

  auto revoked = store->Revoke(created->id, kT1);
  REQUIRE_THAT(revoked, IsOk());
  CHECK(revoked->id == created->id);
  REQUIRE(revoked->revoke_time.has_value());
  CHECK(*revoked->revoke_time == StoreTime(kT1));
  // A revoked key is data: still found, with its revoke time.
  found = store->FindByHash(key.key_hash);
  REQUIRE_THAT(found, IsOk());
  REQUIRE(found->revoke_time.has_value());
  CHECK(*found->revoke_time == StoreTime(kT1));
}

TEST_CASE("a key without domains or rate limit round-trips as empty and unset",
          "[lib/auth][contract]") {
  auto store = NewContractStore();
  NewApiKey key = MakeKey("plain");
  key.scopes = ScopeSet{};
  auto created = store->Create(key);
  REQUIRE_THAT(created, IsOk());
  auto found = store->FindByHash(key.key_hash);
  REQUIRE_THAT(found, IsOk());
  CHECK(found->scopes.empty());
  CHECK(found->allowed_domains.empty());
  CHECK_FALSE(found->rate_per_second.has_value());
  CHECK_FALSE(found->burst.has_value());
}

TEST_CASE("an infrastructure key is stored without a tenant and found as one",
          "[lib/auth][contract]") {
  auto store = NewContractStore();
  NewApiKey key = MakeKey("edge-eu-1");
  key.tenant.clear();
  key.infrastructure = true;
  key.scopes = ScopeSet{Scope::kResolve, Scope::kRecordClicks, Scope::kWatchInvalidations};
  auto created = store->Create(key);
  REQUIRE_THAT(created, IsOk());
  CHECK(created->infrastructure);
  CHECK(created->tenant.empty());
  auto found = store->FindByHash(key.key_hash);
  REQUIRE_THAT(found, IsOk());
  CHECK(found->infrastructure);
  CHECK(found->tenant.empty());
  CHECK(found->scopes == key.scopes);
  // A tenant key is not one.
  auto tenant_key = store->Create(MakeKey("tenant key"));
  REQUIRE_THAT(tenant_key, IsOk());
  CHECK_FALSE(tenant_key->infrastructure);
  CHECK(tenant_key->tenant == "tenant of tenant key");
}

TEST_CASE("the store refuses scopes that do not fit the kind of key", "[lib/auth][contract]") {
  auto store = NewContractStore();
  NewApiKey key = MakeKey("tenant with record_clicks");
  key.scopes = ScopeSet{Scope::kResolve, Scope::kRecordClicks};
  CHECK_THAT(store->Create(key), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                   "record_clicks is for infrastructure keys"));
  key.scopes = ScopeSet{Scope::kWatchInvalidations};
  CHECK_THAT(store->Create(key), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                   "watch_invalidations is for infrastructure"));
  key = MakeKey("infrastructure with a tenant");
  key.infrastructure = true;
  key.scopes = ScopeSet{Scope::kRecordClicks};
  CHECK_THAT(store->Create(key), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                   "tenant: an infrastructure key has none"));
  key.tenant.clear();
  key.scopes = ScopeSet{Scope::kResolve, Scope::kShorten};
  CHECK_THAT(store->Create(key),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "not \"shorten\""));
  // Nothing refused was stored.
  CHECK_THAT(store->FindByHash(key.key_hash), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("the store refuses malformed keys and names the field", "[lib/auth][contract]") {
  auto store = NewContractStore();
  NewApiKey key = MakeKey("bad");
  for (std::string hash : {std::string("abc"), std::string(64, 'A'), std::string(64, 'g'),
                           std::string(63, 'a'), std::string(65, 'a')}) {
    key.key_hash = hash;
    CHECK_THAT(store->Create(key),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "key_hash: must be 64 lowercase hex characters"));
  }
  key = MakeKey("");
  CHECK_THAT(store->Create(key),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "name: must not be empty"));
  key = MakeKey("no tenant");
  key.tenant = "";
  CHECK_THAT(store->Create(key),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "tenant: must not be empty"));
  key = MakeKey("rate");
  key.rate_per_second = 0;
  CHECK_THAT(store->Create(key), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                   "rate_per_second: must be positive, got 0"));
  key.rate_per_second = 1;
  key.burst = 0;
  CHECK_THAT(store->Create(key), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                   "burst: must be positive, got 0"));
  key.burst = 1;
  CHECK_THAT(store->Create(key), IsOk());
}

TEST_CASE("unknown hashes and ids are NOT_FOUND", "[lib/auth][contract]") {
  auto store = NewContractStore();
  CHECK_THAT(store->FindByHash(HashApiKey(GenerateApiKey())),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "no api key with this hash"));
  CHECK_THAT(store->FindByHash("not a hash"),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "no api key with this hash"));
  CHECK_THAT(store->FindByHash(""), HasCode(absl::StatusCode::kNotFound));
  CHECK_THAT(store->Revoke(int64_t{1} << 60, kT1),
             HasCodeAndMessage(absl::StatusCode::kNotFound,
                               absl::StrCat("no api key with id ", int64_t{1} << 60)));
}

TEST_CASE("a second key with the same hash is ALREADY_EXISTS, revoked or not",
          "[lib/auth][contract]") {
  auto store = NewContractStore();
  NewApiKey key = MakeKey("first");
  auto first = store->Create(key);
  REQUIRE_THAT(first, IsOk());
  key.name = "second";
  CHECK_THAT(store->Create(key),
             HasCodeAndMessage(absl::StatusCode::kAlreadyExists,
                               "create api key: a key with this hash exists already"));
  REQUIRE_THAT(store->Revoke(first->id, kT1), IsOk());
  CHECK_THAT(store->Create(key), HasCode(absl::StatusCode::kAlreadyExists));
  auto found = store->FindByHash(key.key_hash);
  REQUIRE_THAT(found, IsOk());
  CHECK(found->name == "first");
  CHECK(found->id == first->id);
}

TEST_CASE("revoking twice keeps the first revoke time", "[lib/auth][contract]") {
  auto store = NewContractStore();
  auto created = store->Create(MakeKey("twice"));
  REQUIRE_THAT(created, IsOk());
  auto first = store->Revoke(created->id, kT1);
  REQUIRE_THAT(first, IsOk());
  auto second = store->Revoke(created->id, kT2);
  REQUIRE_THAT(second, IsOk());
  REQUIRE(second->revoke_time.has_value());
  CHECK(*second->revoke_time == StoreTime(kT1));
  CHECK(second->id == created->id);
  CHECK(second->name == "twice");
}

TEST_CASE("List gives every key by increasing id, revoked ones included", "[lib/auth][contract]") {
  auto store = NewContractStore();
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto created = store->Create(MakeKey(absl::StrCat("listed ", i)));
    REQUIRE_THAT(created, IsOk());
    if (!ids.empty()) CHECK(created->id > ids.back());
    ids.push_back(created->id);
  }
  REQUIRE_THAT(store->Revoke(ids[1], kT1), IsOk());
  auto listed = store->List();
  REQUIRE_THAT(listed, IsOk());
  std::vector<int64_t> all;
  std::vector<int64_t> ours;
  for (const ApiKeyRecord& r : *listed) {
    all.push_back(r.id);
    if (std::find(ids.begin(), ids.end(), r.id) == ids.end()) continue;
    ours.push_back(r.id);
    CHECK(r.revoke_time.has_value() == (r.id == ids[1]));
  }
  CHECK(std::is_sorted(all.begin(), all.end()));
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  CHECK(ours == ids);
}

TEST_CASE("of creates racing with one hash exactly one succeeds",
          "[lib/auth][contract][concurrent]") {
  auto store = NewContractStore();
  const NewApiKey key = MakeKey("raced");
  std::atomic<int> created{0};
  std::atomic<int> exists{0};
  std::atomic<int> other{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      absl::StatusOr<ApiKeyRecord> r = store->Create(key);
      if (r.ok()) {
        created.fetch_add(1);
      } else if (absl::IsAlreadyExists(r.status())) {
        exists.fetch_add(1);
      } else {
        other.fetch_add(1);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(created.load() == 1);
  CHECK(exists.load() == 3);
  CHECK(other.load() == 0);
  CHECK_THAT(store->FindByHash(key.key_hash), IsOk());
}

}  // namespace
}  // namespace shortener::auth::testing
