// KeyCache with a fake look-up and clock: TTLs, negative caching, errors
// never cached, invalidation (also of a look-up in flight), and concurrent
// use.
#include "lib/auth/key_cache.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace shortener::auth {
namespace {

struct FakeKeys {
  std::mutex mu;
  int lookups = 0;
  absl::Status error;  // returned instead when set
  std::function<void()> during_lookup;

  absl::StatusOr<Principal> Lookup(const std::string& hash) {
    std::function<void()> hook;
    {
      std::lock_guard<std::mutex> lock(mu);
      ++lookups;
      hook = during_lookup;
      if (!error.ok()) return error;
    }
    if (hook) hook();
    if (hash.rfind("unknown", 0) == 0) return absl::UnauthenticatedError("unknown api key");
    Principal p;
    p.key_hash = hash;
    p.tenant = "tenant-" + hash;
    return p;
  }
};

struct Clock {
  absl::Time now = absl::FromUnixSeconds(1700000000);
};

KeyCache MakeCache(FakeKeys& keys, Clock& clock, KeyCacheOptions options = {}) {
  return KeyCache([&keys](const std::string& h) { return keys.Lookup(h); }, options,
                  [&clock] { return clock.now; });
}

TEST_CASE("a loaded key is served from the cache until its ttl passes", "[auth][keycache]") {
  FakeKeys keys;
  Clock clock;
  KeyCache cache = MakeCache(keys, clock);
  CHECK_FALSE(cache.Find("a").has_value());
  KeyCache::Result loaded = cache.Load("a");
  REQUIRE(loaded.ok());
  CHECK((*loaded)->tenant == "tenant-a");
  clock.now += absl::Seconds(9);
  auto found = cache.Find("a");
  REQUIRE(found.has_value());
  REQUIRE(found->ok());
  CHECK((**found)->tenant == "tenant-a");
  clock.now += absl::Seconds(1);  // 10 s: the default ttl
  CHECK_FALSE(cache.Find("a").has_value());
  CHECK(keys.lookups == 1);
  CHECK(cache.GetStats().hits == 1);
}

TEST_CASE("unknown keys are cached for the short negative ttl only", "[auth][keycache]") {
  FakeKeys keys;
  Clock clock;
  KeyCache cache = MakeCache(keys, clock);
  KeyCache::Result r = cache.Load("unknown-1");
  CHECK(absl::IsUnauthenticated(r.status()));
  auto found = cache.Find("unknown-1");
  REQUIRE(found.has_value());
  CHECK(absl::IsUnauthenticated(found->status()));
  clock.now += absl::Seconds(1);
  CHECK_FALSE(cache.Find("unknown-1").has_value());
}

TEST_CASE("database errors are never cached", "[auth][keycache]") {
  FakeKeys keys;
  Clock clock;
  KeyCache cache = MakeCache(keys, clock);
  keys.error = absl::UnavailableError("database down");
  CHECK(absl::IsUnavailable(cache.Load("a").status()));
  CHECK_FALSE(cache.Find("a").has_value());
  keys.error = absl::OkStatus();
  CHECK(cache.Load("a").ok());
  CHECK(cache.Find("a").has_value());
}

TEST_CASE("Invalidate and Clear forget keys at once", "[auth][keycache]") {
  FakeKeys keys;
  Clock clock;
  KeyCache cache = MakeCache(keys, clock);
  REQUIRE(cache.Load("a").ok());
  REQUIRE(cache.Load("b").ok());
  cache.Invalidate("a");
  CHECK_FALSE(cache.Find("a").has_value());
  CHECK(cache.Find("b").has_value());
  cache.Clear();
  CHECK_FALSE(cache.Find("b").has_value());
  CHECK(cache.GetStats().size == 0);
}

TEST_CASE("a look-up in flight during an invalidation does not store its answer",
          "[auth][keycache]") {
  FakeKeys keys;
  Clock clock;
  KeyCache cache = MakeCache(keys, clock);
  // The revocation lands while the (now stale) row is on its way back.
  keys.during_lookup = [&cache] { cache.Invalidate("a"); };
  KeyCache::Result r = cache.Load("a");
  CHECK(r.ok());  // this call used what it read
  CHECK_FALSE(cache.Find("a").has_value());
  keys.during_lookup = [&cache] { cache.Clear(); };
  CHECK(cache.Load("b").ok());
  CHECK_FALSE(cache.Find("b").has_value());
}

TEST_CASE("the cache stays within max_entries", "[auth][keycache]") {
  FakeKeys keys;
  Clock clock;
  KeyCacheOptions options;
  options.max_entries = 10;
  KeyCache cache = MakeCache(keys, clock, options);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(cache.Load("k" + std::to_string(i)).ok());
    CHECK(cache.GetStats().size <= 10);
  }
  // The newest is always kept.
  CHECK(cache.Find("k99").has_value());
}

TEST_CASE("concurrent finds loads and invalidations are safe", "[auth][keycache][concurrent]") {
  FakeKeys keys;
  std::atomic<int64_t> ticks{0};
  KeyCache cache(
      [&keys](const std::string& h) { return keys.Lookup(h); }, KeyCacheOptions{},
      [&ticks] { return absl::FromUnixSeconds(1700000000) + absl::Milliseconds(ticks++ % 5000); });
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string hash = "h" + std::to_string((i + t) % 17);
        std::optional<KeyCache::Result> r = cache.Find(hash);
        if (!r.has_value()) r = cache.Load(hash);
        if (!r->ok() || (**r)->tenant != "tenant-" + hash) wrong.fetch_add(1);
        if (i % 97 == 0) cache.Invalidate(hash);
        if (i % 503 == 0) cache.Clear();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

}  // namespace
}  // namespace shortener::auth
