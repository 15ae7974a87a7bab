// KeyCache over an InMemoryApiKeyStore (wrapped in a FaultyApiKeyStore to
// count, fail and hold look-ups) and a ManualClock: the principal built
// from a stored key, TTLs, negative caching of unknown and revoked keys,
// store errors never cached, invalidation (also of a look-up in flight),
// the size bound, and concurrent use.
#include "lib/auth/key_cache.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/auth/api_key.h"
#include "lib/auth/in_memory_api_key_store.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_api_key_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::auth {
namespace {

using ::shortener::testing::FaultPlan;
using ::shortener::testing::FaultyApiKeyStore;
using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

// Keys in an in-memory store, seen through a FaultPlan.
struct Keys {
  ManualClock clock;
  InMemoryApiKeyStore memory{clock};
  FaultPlan plan;
  FaultyApiKeyStore store{&memory, &plan};

  // Stores a tenant key "<name>" of tenant "tenant-<name>" and returns its
  // hash.
  std::string Add(const std::string& name) {
    NewApiKey key;
    key.key_hash = HashApiKey(GenerateApiKey());
    key.name = name;
    key.tenant = "tenant-" + name;
    key.scopes = ScopeSet{Scope::kShorten};
    REQUIRE_THAT(memory.Create(key), IsOk());
    return key.key_hash;
  }
  int64_t lookups() const { return plan.calls("FindByHash"); }
};

TEST_CASE("a loaded principal carries every field of the stored key", "[lib/auth][keycache]") {
  Keys keys;
  NewApiKey key;
  key.key_hash = HashApiKey(GenerateApiKey());
  key.name = "campaigns";
  key.tenant = "acme";
  key.scopes = ScopeSet{Scope::kShorten, Scope::kStats};
  auto domains = DomainAllowlist::Parse("example.com");
  REQUIRE_THAT(domains, IsOk());
  key.allowed_domains = *domains;
  key.rate_per_second = 2.5;
  key.burst = 7;
  auto stored = keys.memory.Create(key);
  REQUIRE_THAT(stored, IsOk());
  KeyCache cache(&keys.store, keys.clock);

  KeyCache::Result loaded = cache.Load(key.key_hash);
  REQUIRE_THAT(loaded, IsOk());
  const Principal& p = **loaded;
  CHECK(p.key_id == stored->id);
  CHECK(p.key_name == "campaigns");
  CHECK(p.key_hash == key.key_hash);
  CHECK(p.tenant == "acme");
  CHECK_FALSE(p.infrastructure);
  CHECK(p.scopes == key.scopes);
  CHECK(p.allowed_domains.ToString() == "example.com");
  CHECK(p.rate_per_second == 2.5);
  CHECK(p.burst == 7);
  CHECK_FALSE(p.admin());
}

TEST_CASE("a loaded key is served from the cache until its ttl passes", "[lib/auth][keycache]") {
  Keys keys;
  const std::string a = keys.Add("a");
  KeyCache cache(&keys.store, keys.clock);
  CHECK_FALSE(cache.Find(a).has_value());
  KeyCache::Result loaded = cache.Load(a);
  REQUIRE_THAT(loaded, IsOk());
  CHECK((*loaded)->tenant == "tenant-a");
  keys.clock.Advance(absl::Seconds(9));
  auto found = cache.Find(a);
  REQUIRE(found.has_value());
  REQUIRE_THAT(*found, IsOk());
  CHECK((**found)->tenant == "tenant-a");
  keys.clock.Advance(absl::Seconds(1));  // 10 s: the default ttl
  CHECK_FALSE(cache.Find(a).has_value());
  CHECK(keys.lookups() == 1);
  CHECK(cache.GetStats().hits == 1);
  CHECK(cache.GetStats().loads == 1);
}

TEST_CASE("unknown keys are cached for the short negative ttl only", "[lib/auth][keycache]") {
  Keys keys;
  KeyCache cache(&keys.store, keys.clock);
  const std::string unknown = HashApiKey(GenerateApiKey());
  CHECK_THAT(cache.Load(unknown),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key unknown"));
  auto found = cache.Find(unknown);
  REQUIRE(found.has_value());
  CHECK_THAT(*found, HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key unknown"));
  keys.clock.Advance(absl::Milliseconds(999));
  CHECK(cache.Find(unknown).has_value());
  keys.clock.Advance(absl::Milliseconds(1));  // 1 s: the default negative ttl
  CHECK_FALSE(cache.Find(unknown).has_value());
  CHECK(keys.lookups() == 1);
  // A malformed hash is unknown too.
  CHECK_THAT(cache.Load("not a hash"), HasCode(absl::StatusCode::kUnauthenticated));
}

TEST_CASE("a revoked key is refused and cached negatively", "[lib/auth][keycache]") {
  Keys keys;
  const std::string a = keys.Add("a");
  auto record = keys.memory.FindByHash(a);
  REQUIRE_THAT(record, IsOk());
  REQUIRE_THAT(keys.memory.Revoke(record->id, keys.clock.Now()), IsOk());
  KeyCacheOptions options;
  options.negative_ttl = absl::Seconds(3);
  KeyCache cache(&keys.store, keys.clock, options);
  CHECK_THAT(cache.Load(a),
             HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key revoked"));
  keys.clock.Advance(absl::Seconds(2));
  auto found = cache.Find(a);
  REQUIRE(found.has_value());
  CHECK_THAT(*found, HasCodeAndMessage(absl::StatusCode::kUnauthenticated, "api key revoked"));
  keys.clock.Advance(absl::Seconds(1));
  CHECK_FALSE(cache.Find(a).has_value());
}

TEST_CASE("store errors are passed through and never cached", "[lib/auth][keycache]") {
  Keys keys;
  const std::string a = keys.Add("a");
  KeyCache cache(&keys.store, keys.clock);
  keys.plan.FailNext(1, absl::UnavailableError("database down"), "FindByHash");
  CHECK_THAT(cache.Load(a), HasCodeAndMessage(absl::StatusCode::kUnavailable, "database down"));
  CHECK_FALSE(cache.Find(a).has_value());
  CHECK_THAT(cache.Load(a), IsOk());
  CHECK(cache.Find(a).has_value());
  CHECK(keys.lookups() == 2);
}

TEST_CASE("a ttl of zero caches nothing", "[lib/auth][keycache]") {
  Keys keys;
  const std::string a = keys.Add("a");
  KeyCacheOptions options;
  options.ttl = absl::ZeroDuration();
  options.negative_ttl = absl::ZeroDuration();
  KeyCache cache(&keys.store, keys.clock, options);
  REQUIRE_THAT(cache.Load(a), IsOk());
  CHECK_FALSE(cache.Find(a).has_value());
  CHECK_THAT(cache.Load(HashApiKey(GenerateApiKey())), HasCode(absl::StatusCode::kUnauthenticated));
  CHECK(cache.GetStats().size == 0);
}

TEST_CASE("Invalidate and Clear forget keys at once", "[lib/auth][keycache]") {
  Keys keys;
  const std::string a = keys.Add("a");
  const std::string b = keys.Add("b");
  KeyCache cache(&keys.store, keys.clock);
  REQUIRE_THAT(cache.Load(a), IsOk());
  REQUIRE_THAT(cache.Load(b), IsOk());
  cache.Invalidate(a);
  CHECK_FALSE(cache.Find(a).has_value());
  CHECK(cache.Find(b).has_value());
  cache.Clear();
  CHECK_FALSE(cache.Find(b).has_value());
  CHECK(cache.GetStats().size == 0);
  CHECK(cache.GetStats().invalidations == 2);
}

// Runs cache.Load(hash) on another thread while the store holds it at the
// gate, runs `during` then, and returns the load's result.
KeyCache::Result LoadAcross(Keys& keys, KeyCache& cache, const std::string& hash,
                            const std::function<void()>& during) {
  const int64_t before = keys.lookups();
  keys.plan.CloseGate();
  KeyCache::Result result = absl::UnknownError("not run");
  std::thread loader([&] { result = cache.Load(hash); });
  const bool held = keys.plan.WaitForCalls(before + 1, "FindByHash");
  if (held) during();
  keys.plan.OpenGate();
  loader.join();
  REQUIRE(held);
  return result;
}

TEST_CASE("a look-up in flight during an invalidation does not store its answer",
          "[lib/auth][keycache]") {
  Keys keys;
  const std::string a = keys.Add("a");
  const std::string b = keys.Add("b");
  KeyCache cache(&keys.store, keys.clock);
  // The revocation lands while the (now stale) row is on its way back.
  CHECK_THAT(LoadAcross(keys, cache, a, [&] { cache.Invalidate(a); }),
             IsOk());  // this call used what it read
  CHECK_FALSE(cache.Find(a).has_value());
  CHECK_THAT(LoadAcross(keys, cache, b, [&] { cache.Clear(); }), IsOk());
  CHECK_FALSE(cache.Find(b).has_value());
  // Without an invalidation in between, the answer is stored.
  CHECK_THAT(LoadAcross(keys, cache, a, [] {}), IsOk());
  CHECK(cache.Find(a).has_value());
}

TEST_CASE("the cache stays within max_entries", "[lib/auth][keycache]") {
  Keys keys;
  KeyCacheOptions options;
  options.max_entries = 10;
  KeyCache cache(&keys.store, keys.clock, options);
  std::string last;
  for (int i = 0; i < 100; ++i) {
    last = keys.Add(absl::StrCat("k", i));
    REQUIRE_THAT(cache.Load(last), IsOk());
    CHECK(cache.GetStats().size <= 10);
  }
  // The newest is always kept.
  CHECK(cache.Find(last).has_value());
}

TEST_CASE("concurrent finds loads and invalidations are safe", "[lib/auth][keycache][concurrent]") {
  Keys keys;
  std::vector<std::string> hashes;
  for (int i = 0; i < 17; ++i) hashes.push_back(keys.Add(absl::StrCat("h", i)));
  KeyCache cache(&keys.store, keys.clock);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const size_t n = static_cast<size_t>(i + t) % hashes.size();
        std::optional<KeyCache::Result> r = cache.Find(hashes[n]);
        if (!r.has_value()) r = cache.Load(hashes[n]);
        if (!r->ok() || (**r)->tenant != absl::StrCat("tenant-h", n)) wrong.fetch_add(1);
        if (i % 97 == 0) cache.Invalidate(hashes[n]);
        if (i % 503 == 0) cache.Clear();
        if (i % 211 == 0) keys.clock.Advance(absl::Seconds(3));  // entries expire too
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

}  // namespace
}  // namespace shortener::auth
