// Link cache, one thread: lifetimes, bounds and eviction, byte accounting,
// coalescing, stale fallback, invalidation, the allocation-free hit path.
#include "edge/cache/link_cache.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/edge/alloc_counter.h"
#include "tests/edge/cache/link_cache_test_util.h"

namespace shortener::edge {
namespace {

using testing::Active;
using testing::Delivery;
using testing::Fill;
using testing::kSecondNs;
using testing::Look;
using testing::Record;
using testing::Seen;
using testing::WithOutcome;

constexpr absl::string_view kUrl = "https://example.com/landing?campaign=spring";

// One shard, so the bounds are exact; the default TTLs (60 s, 2 s, 10 min).
LinkCacheOptions OneShard() {
  LinkCacheOptions o;
  o.shards = 1;
  return o;
}

// One shard whose whole bounds are for links (no negative entries kept).
LinkCacheOptions OneShardLinksOnly() {
  LinkCacheOptions o = OneShard();
  o.negative_share = 0;
  return o;
}

TEST_CASE("cache: a Location outside the edge's --allowed_schemes is never stored",
          "[edge/cache]") {
  LinkCache cache(OneShard());  // default policy: http, https
  REQUIRE(Fill(cache, "ftp", Active("ftp://files.example/a.iso"), 0));
  REQUIRE(Fill(cache, "rel", Active("//evil.example/"), 0));
  CHECK(Look(cache, "ftp", 0).lookup == CacheLookup::kMiss);
  CHECK(Look(cache, "rel", 0).lookup == CacheLookup::kMiss);
  CHECK(cache.Stats().discarded == 2);
  LinkCacheOptions ftp_too = OneShard();
  ftp_too.locations = LocationPolicy({"http", "https", "ftp"});
  LinkCache allowing(ftp_too);
  REQUIRE(Fill(allowing, "ftp", Active("ftp://files.example/a.iso"), 0));
  CHECK(Look(allowing, "ftp", 0).location == "ftp://files.example/a.iso");
  REQUIRE(Fill(allowing, "rel", Active("//evil.example/"), 0));
  CHECK(Look(allowing, "rel", 0).lookup == CacheLookup::kMiss);
}

TEST_CASE("cache: an entry is fresh within its TTL then stale within grace then a miss",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  REQUIRE(Fill(cache, "Ab3", Active(kUrl, 301), 0));
  const int64_t ttl = 60 * kSecondNs;
  const int64_t grace = 600 * kSecondNs;

  Seen fresh = Look(cache, "Ab3", ttl - 1);
  CHECK(fresh.lookup == CacheLookup::kFresh);
  CHECK(fresh.outcome == ResolveOutcome::kActive);
  CHECK(fresh.redirect_status == 301);
  CHECK(fresh.location == kUrl);

  Seen stale = Look(cache, "Ab3", ttl);
  CHECK(stale.lookup == CacheLookup::kStale);
  CHECK(stale.location == kUrl);
  CHECK(Look(cache, "Ab3", ttl + grace - 1).lookup == CacheLookup::kStale);

  Seen gone = Look(cache, "Ab3", ttl + grace);
  CHECK(gone.lookup == CacheLookup::kMiss);
  CHECK_FALSE(gone.visited);
  CHECK(Look(cache, "nothing", 0).lookup == CacheLookup::kMiss);

  const LinkCacheStats stats = cache.Stats();
  CHECK(stats.hits == 1);
  CHECK(stats.stale_hits == 2);
  CHECK(stats.misses == 2);
  CHECK(stats.expirations == 1);
  CHECK(stats.entries == 0);
  CHECK(stats.bytes == 0);
}

TEST_CASE("cache: negative answers get the short TTL and revoked or expired the long one",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  REQUIRE(Fill(cache, "nf", WithOutcome(ResolveOutcome::kNotFound), 0));
  REQUIRE(Fill(cache, "inv", WithOutcome(ResolveOutcome::kInvalid), 0));
  REQUIRE(Fill(cache, "rev", WithOutcome(ResolveOutcome::kRevoked), 0));
  REQUIRE(Fill(cache, "exp", WithOutcome(ResolveOutcome::kExpired), 0));
  REQUIRE(Fill(cache, "act", Active(kUrl), 0));

  for (const char* key : {"nf", "inv", "rev", "exp", "act"}) {
    CHECK(Look(cache, key, 2 * kSecondNs - 1).lookup == CacheLookup::kFresh);
  }
  CHECK(Look(cache, "nf", 2 * kSecondNs).lookup == CacheLookup::kStale);
  CHECK(Look(cache, "inv", 2 * kSecondNs).lookup == CacheLookup::kStale);
  for (const char* key : {"rev", "exp", "act"}) {
    CHECK(Look(cache, key, 60 * kSecondNs - 1).lookup == CacheLookup::kFresh);
    CHECK(Look(cache, key, 60 * kSecondNs).lookup == CacheLookup::kStale);
  }
  Seen revoked = Look(cache, "rev", 0);
  CHECK(revoked.outcome == ResolveOutcome::kRevoked);
  CHECK(revoked.location.empty());
}

TEST_CASE("cache: a link's expiry caps its entry and leaves no stale period", "[edge/cache]") {
  LinkCache cache(OneShard());
  SECTION("expiry before the TTL ends it fresh to miss") {
    REQUIRE(Fill(cache, "soon", Active(kUrl), 0, 5 * kSecondNs));
    CHECK(Look(cache, "soon", 5 * kSecondNs - 1).lookup == CacheLookup::kFresh);
    CHECK(Look(cache, "soon", 5 * kSecondNs).lookup == CacheLookup::kMiss);
  }
  SECTION("expiry within the grace cuts the stale period short") {
    REQUIRE(Fill(cache, "later", Active(kUrl), 0, 65 * kSecondNs));
    CHECK(Look(cache, "later", 60 * kSecondNs).lookup == CacheLookup::kStale);
    CHECK(Look(cache, "later", 65 * kSecondNs).lookup == CacheLookup::kMiss);
  }
  SECTION("a link already expired is delivered but not stored") {
    Delivery d;
    std::optional<FetchTicket> ticket = cache.JoinFetch("past", 10 * kSecondNs, Record(d));
    REQUIRE(ticket);
    cache.CompleteFetch(*ticket, Active(kUrl), 10 * kSecondNs, 10 * kSecondNs);
    CHECK(d.calls == 1);
    CHECK(d.outcome == ResolveOutcome::kActive);
    CHECK(Look(cache, "past", 10 * kSecondNs).lookup == CacheLookup::kMiss);
    CHECK(cache.Stats().discarded == 1);
  }
  SECTION("the expiry applies only to active links") {
    REQUIRE(Fill(cache, "rev", WithOutcome(ResolveOutcome::kRevoked), 0, 5 * kSecondNs));
    CHECK(Look(cache, "rev", 30 * kSecondNs).lookup == CacheLookup::kFresh);
  }
}

TEST_CASE("cache: the entry bound is enforced by evicting and evictions are counted",
          "[edge/cache]") {
  LinkCacheOptions o = OneShardLinksOnly();
  o.max_entries = 10;
  LinkCache cache(o);
  for (int i = 0; i < 25; ++i) REQUIRE(Fill(cache, absl::StrCat("k", i), Active(kUrl), 0));
  const LinkCacheStats stats = cache.Stats();
  CHECK(stats.entries == 10);
  CHECK(stats.stores == 25);
  CHECK(stats.evictions == 15);
  CHECK(stats.bytes == 10 * LinkCache::EstimatedEntryBytes("k10", kUrl));
  CHECK(cache.CheckInvariantsForTesting().ok());
  // Nothing was hit, so the oldest went first.
  CHECK(Look(cache, "k0", 0).lookup == CacheLookup::kMiss);
  CHECK(Look(cache, "k24", 0).lookup == CacheLookup::kFresh);
}

TEST_CASE("cache: the byte bound is enforced and bytes return to zero after Clear",
          "[edge/cache]") {
  const std::string url = "https://example.com/" + std::string(200, 'x');
  const size_t per_entry = LinkCache::EstimatedEntryBytes("k00", url);
  LinkCacheOptions o = OneShardLinksOnly();
  o.max_bytes = 10 * per_entry + per_entry / 2;
  LinkCache cache(o);
  for (int i = 10; i < 40; ++i) REQUIRE(Fill(cache, absl::StrCat("k", i), Active(url), 0));
  LinkCacheStats stats = cache.Stats();
  CHECK(stats.entries == 10);
  CHECK(stats.bytes == 10 * per_entry);
  CHECK(stats.evictions == 20);
  CHECK(cache.CheckInvariantsForTesting().ok());

  // Without a negative share, negative answers are delivered but not kept,
  // and take nothing from the links.
  REQUIRE(Fill(cache, "n0", WithOutcome(ResolveOutcome::kNotFound), 0));
  stats = cache.Stats();
  CHECK(stats.entries == 10);
  CHECK(stats.discarded == 1);
  CHECK(Look(cache, "n0", 0).lookup == CacheLookup::kMiss);

  cache.Clear();
  stats = cache.Stats();
  CHECK(stats.entries == 0);
  CHECK(stats.bytes == 0);
  CHECK(Look(cache, "k39", 0).lookup == CacheLookup::kMiss);
  REQUIRE(Fill(cache, "k39", Active(url), 0));
  CHECK(cache.Stats().bytes == per_entry);
}

TEST_CASE("cache: bytes follow store replace invalidate and expiry exactly", "[edge/cache]") {
  LinkCache cache(OneShard());
  const std::string short_url = "https://a.example/";
  const std::string long_url = "https://a.example/a/much/longer/path";
  REQUIRE(Fill(cache, "a", Active(short_url), 0));
  CHECK(cache.Stats().bytes == LinkCache::EstimatedEntryBytes("a", short_url));

  REQUIRE(Fill(cache, "a", Active(long_url), 0));
  CHECK(cache.Stats().bytes == LinkCache::EstimatedEntryBytes("a", long_url));
  CHECK(cache.Stats().entries == 1);
  CHECK(Look(cache, "a", 0).location == long_url);

  REQUIRE(Fill(cache, "a", WithOutcome(ResolveOutcome::kRevoked), 0));
  CHECK(cache.Stats().bytes == LinkCache::EstimatedEntryBytes("a", ""));

  REQUIRE(Fill(cache, "b", WithOutcome(ResolveOutcome::kNotFound), 0));
  cache.Invalidate("a");
  CHECK(cache.Stats().bytes == LinkCache::EstimatedEntryBytes("b", ""));
  CHECK(cache.Stats().invalidations == 1);
  CHECK(Look(cache, "a", 0).lookup == CacheLookup::kMiss);

  CHECK(Look(cache, "b", 3600 * kSecondNs).lookup == CacheLookup::kMiss);
  CHECK(cache.Stats().bytes == 0);
  CHECK(cache.Stats().entries == 0);
  CHECK(cache.CheckInvariantsForTesting().ok());
}

TEST_CASE("cache: a recently hit key survives eviction pressure that evicts cold keys",
          "[edge/cache]") {
  LinkCacheOptions o = OneShardLinksOnly();
  o.max_entries = 4;
  LinkCache cache(o);
  for (const char* key : {"hot", "cold1", "cold2", "cold3"}) {
    REQUIRE(Fill(cache, key, Active(kUrl), 0));
  }
  // "hot" was stored first: FIFO would evict it first.
  for (int i = 0; i < 20; ++i) {
    CHECK(Look(cache, "hot", 0).lookup == CacheLookup::kFresh);
    REQUIRE(Fill(cache, absl::StrCat("new", i), Active(kUrl), 0));
  }
  CHECK(Look(cache, "hot", 0).lookup == CacheLookup::kFresh);
  for (const char* key : {"cold1", "cold2", "cold3"}) {
    CHECK(Look(cache, key, 0).lookup == CacheLookup::kMiss);
  }
  CHECK(Look(cache, "new19", 0).lookup == CacheLookup::kFresh);
  CHECK(cache.Stats().evictions == 20);
}

TEST_CASE("cache: eviction takes an entry past its grace even if it was hit", "[edge/cache]") {
  LinkCacheOptions o = OneShardLinksOnly();
  o.max_entries = 3;
  LinkCache cache(o);
  REQUIRE(Fill(cache, "live1", Active(kUrl), 0));
  // Expires after 5 s, within the others' 60 s + 10 min.
  REQUIRE(Fill(cache, "dead", Active(kUrl), 0, 5 * kSecondNs));
  REQUIRE(Fill(cache, "live2", Active(kUrl), 0));
  REQUIRE(Look(cache, "dead", 1).lookup == CacheLookup::kFresh);  // reference bit set
  const int64_t later = 602 * kSecondNs;
  REQUIRE(Look(cache, "live1", later).lookup == CacheLookup::kStale);
  REQUIRE(Look(cache, "live2", later).lookup == CacheLookup::kStale);
  REQUIRE(Fill(cache, "new", Active(kUrl), later));
  const LinkCacheStats stats = cache.Stats();
  CHECK(stats.expirations == 1);
  CHECK(stats.evictions == 0);
  CHECK(Look(cache, "live1", later).lookup == CacheLookup::kStale);
  CHECK(Look(cache, "live2", later).lookup == CacheLookup::kStale);
}

TEST_CASE("cache: concurrent misses for one key share one fetch and every waiter gets it once",
          "[edge/cache]") {
  LinkCache cache({});
  constexpr int kWaiters = 8;
  std::vector<Delivery> deliveries(kWaiters);
  std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", 0, Record(deliveries[0]));
  REQUIRE(ticket);
  CHECK(ticket->key() == "Ab3");
  for (int i = 1; i < kWaiters; ++i) {
    CHECK_FALSE(cache.JoinFetch("Ab3", i, Record(deliveries[i])));
  }
  // Another key is not coalesced with it.
  Delivery other;
  std::optional<FetchTicket> other_ticket = cache.JoinFetch("Xy9", 0, Record(other));
  REQUIRE(other_ticket);
  for (const Delivery& d : deliveries) CHECK(d.calls == 0);

  {
    // The location only has to live for the call.
    std::string location(kUrl);
    cache.CompleteFetch(*ticket, Active(location), 10);
  }
  for (const Delivery& d : deliveries) {
    CHECK(d.calls == 1);
    CHECK(d.outcome == ResolveOutcome::kActive);
    CHECK(d.location == kUrl);
  }
  CHECK(other.calls == 0);
  CHECK(Look(cache, "Ab3", 10).location == kUrl);

  // Completing again is ignored; the next miss starts a new fetch.
  cache.CompleteFetch(*ticket, WithOutcome(ResolveOutcome::kNotFound), 10);
  for (const Delivery& d : deliveries) CHECK(d.calls == 1);
  CHECK(Look(cache, "Ab3", 10).outcome == ResolveOutcome::kActive);
  CHECK(cache.JoinFetch("Ab3", 10, [](const ResolveResult&) {}));

  const LinkCacheStats stats = cache.Stats();
  CHECK(stats.fetches == 3);
  CHECK(stats.coalesced == kWaiters - 1);
  CHECK(stats.stores == 1);
}

TEST_CASE("cache: an unavailable service is answered from a stale entry within grace",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  REQUIRE(Fill(cache, "Ab3", Active(kUrl, 307), 0));
  const int64_t now = 300 * kSecondNs;  // past the TTL, within grace
  REQUIRE(Look(cache, "Ab3", now).lookup == CacheLookup::kStale);

  Delivery first, second;
  std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", now, Record(first));
  REQUIRE(ticket);
  REQUIRE_FALSE(cache.JoinFetch("Ab3", now, Record(second)));
  cache.CompleteFetch(*ticket, WithOutcome(ResolveOutcome::kUnavailable), now);
  for (const Delivery* d : {&first, &second}) {
    CHECK(d->calls == 1);
    CHECK(d->outcome == ResolveOutcome::kActive);
    CHECK(d->location == kUrl);
  }
  // Nothing stored: still the old, stale entry.
  CHECK(Look(cache, "Ab3", now).lookup == CacheLookup::kStale);
  const LinkCacheStats stats = cache.Stats();
  CHECK(stats.stale_fallbacks == 1);
  CHECK(stats.stale_hits == 3);  // two lookups and the fallback
  CHECK(stats.stores == 1);
}

TEST_CASE("cache: a stale fallback's location stays valid while a waiter changes the cache",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  const std::string old_url = "https://old.example/path";
  const std::string new_url = "https://new.example/path";
  REQUIRE(Fill(cache, "Ab3", Active(old_url), 0));
  const int64_t now = 300 * kSecondNs;
  std::string seen;
  std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", now, [&](const ResolveResult& r) {
    // Frees the entry the fallback came from, and reuses its memory.
    cache.Invalidate("Ab3");
    Fill(cache, "Ab3", Active(new_url), now);
    seen = std::string(r.location);
  });
  REQUIRE(ticket);
  cache.CompleteFetch(*ticket, WithOutcome(ResolveOutcome::kUnavailable), now);
  CHECK(seen == old_url);
}

TEST_CASE("cache: an unavailable service without an entry within grace gives kUnavailable",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  Delivery d;
  SECTION("no entry") {
    std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", 0, Record(d));
    REQUIRE(ticket);
    cache.CompleteFetch(*ticket, WithOutcome(ResolveOutcome::kUnavailable), 0);
  }
  SECTION("entry past its grace") {
    REQUIRE(Fill(cache, "Ab3", Active(kUrl), 0));
    const int64_t past = 660 * kSecondNs;
    std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", past, Record(d));
    REQUIRE(ticket);
    cache.CompleteFetch(*ticket, WithOutcome(ResolveOutcome::kUnavailable), past);
    CHECK(cache.Stats().entries == 0);
  }
  CHECK(d.calls == 1);
  CHECK(d.outcome == ResolveOutcome::kUnavailable);
  CHECK(cache.Stats().stale_fallbacks == 0);
}

TEST_CASE("cache: a result fetched across an Invalidate is delivered but not stored",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  REQUIRE(Fill(cache, "Ab3", Active(kUrl), 0));
  Delivery d;
  std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", 0, Record(d));
  REQUIRE(ticket);
  cache.Invalidate("Ab3");
  CHECK(Look(cache, "Ab3", 0).lookup == CacheLookup::kMiss);  // erased at once
  cache.CompleteFetch(*ticket, Active(kUrl), 0);
  CHECK(d.calls == 1);
  CHECK(d.outcome == ResolveOutcome::kActive);
  CHECK(Look(cache, "Ab3", 0).lookup == CacheLookup::kMiss);
  CHECK(cache.Stats().discarded == 1);
}

TEST_CASE("cache: a JoinFetch after an Invalidate starts a new fetch whose result is stored",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  Delivery before, after;
  std::optional<FetchTicket> old_ticket = cache.JoinFetch("Ab3", 0, Record(before));
  REQUIRE(old_ticket);
  cache.Invalidate("Ab3");
  // The old fetch may carry a pre-revocation answer: no joining it.
  std::optional<FetchTicket> new_ticket = cache.JoinFetch("Ab3", 0, Record(after));
  REQUIRE(new_ticket);

  cache.CompleteFetch(*new_ticket, WithOutcome(ResolveOutcome::kRevoked), 0);
  CHECK(after.calls == 1);
  CHECK(after.outcome == ResolveOutcome::kRevoked);
  CHECK(before.calls == 0);
  // The old fetch ends later with its stale answer: delivered, not stored.
  cache.CompleteFetch(*old_ticket, Active(kUrl), 0);
  CHECK(before.calls == 1);
  CHECK(before.outcome == ResolveOutcome::kActive);
  CHECK(Look(cache, "Ab3", 0).outcome == ResolveOutcome::kRevoked);
  CHECK(cache.CheckInvariantsForTesting().ok());
}

TEST_CASE("cache: a result fetched across a Clear is delivered but not stored", "[edge/cache]") {
  LinkCacheOptions o;
  o.shards = 8;
  LinkCache cache(o);
  Delivery a, b;
  std::optional<FetchTicket> ta = cache.JoinFetch("Ab3", 0, Record(a));
  std::optional<FetchTicket> tb = cache.JoinFetch("Xy9", 0, Record(b));
  REQUIRE(ta);
  REQUIRE(tb);
  cache.Clear();
  cache.CompleteFetch(*ta, Active(kUrl), 0);
  cache.CompleteFetch(*tb, WithOutcome(ResolveOutcome::kNotFound), 0);
  CHECK(a.calls == 1);
  CHECK(b.calls == 1);
  CHECK(b.outcome == ResolveOutcome::kNotFound);
  CHECK(cache.Stats().entries == 0);
  CHECK(cache.Stats().discarded == 2);
  // Fetches started after the Clear are stored.
  REQUIRE(Fill(cache, "Ab3", Active(kUrl), 0));
  CHECK(Look(cache, "Ab3", 0).lookup == CacheLookup::kFresh);
}

TEST_CASE("cache: a fetch in flight longer than the join window takes no more waiters",
          "[edge/cache]") {
  LinkCacheOptions o = OneShard();
  o.fetch_join_window = absl::Seconds(10);
  LinkCache cache(o);
  Delivery lost, later;
  std::optional<FetchTicket> stuck = cache.JoinFetch("Ab3", 0, Record(lost));
  REQUIRE(stuck);
  CHECK_FALSE(cache.JoinFetch("Ab3", 10 * kSecondNs - 1, [](const ResolveResult&) {}));
  std::optional<FetchTicket> fresh = cache.JoinFetch("Ab3", 10 * kSecondNs, Record(later));
  REQUIRE(fresh);
  cache.CompleteFetch(*fresh, Active(kUrl), 10 * kSecondNs);
  CHECK(later.calls == 1);
  CHECK(lost.calls == 0);
  // The old one still calls its own waiters, but its answer is not stored.
  cache.CompleteFetch(*stuck, WithOutcome(ResolveOutcome::kNotFound), 11 * kSecondNs);
  CHECK(lost.calls == 1);
  CHECK(Look(cache, "Ab3", 11 * kSecondNs).outcome == ResolveOutcome::kActive);
}

TEST_CASE("cache: a waiter joins a fetch only if it ends by the waiter's own deadline",
          "[edge/cache]") {
  LinkCacheOptions o = OneShard();
  o.fetch_deadline_slack = absl::Milliseconds(20);
  LinkCache cache(o);
  constexpr int64_t kMs = 1'000'000;
  Delivery first, close_enough, later, earlier, after_earlier;
  // A fetch that must end by 2.5 s.
  std::optional<FetchTicket> started = cache.JoinFetch("Ab3", 0, Record(first), 2500 * kMs);
  REQUIRE(started);
  // Waiters due later, or earlier by no more than the slack, join it.
  CHECK_FALSE(cache.JoinFetch("Ab3", 1 * kMs, Record(later), 2600 * kMs));
  CHECK_FALSE(cache.JoinFetch("Ab3", 1 * kMs, Record(close_enough), 2480 * kMs));
  // One due well before it (it waited behind other requests on its
  // connection) gets a fetch of its own, which the next waiters join.
  std::optional<FetchTicket> sooner = cache.JoinFetch("Ab3", 2 * kMs, Record(earlier), 900 * kMs);
  REQUIRE(sooner);
  CHECK_FALSE(cache.JoinFetch("Ab3", 3 * kMs, Record(after_earlier), 3000 * kMs));
  CHECK(cache.Stats().fetches == 2);
  CHECK(cache.Stats().coalesced == 3);

  cache.CompleteFetch(*sooner, Active(kUrl), 900 * kMs);
  CHECK(earlier.calls == 1);
  CHECK(after_earlier.calls == 1);
  CHECK(first.calls + later.calls + close_enough.calls == 0);
  // The first fetch still answers its own waiters; the answer it carries is
  // not stored (it stopped being joinable, so an Invalidate would miss it).
  cache.CompleteFetch(*started, WithOutcome(ResolveOutcome::kRevoked), 1000 * kMs);
  CHECK(first.calls == 1);
  CHECK(later.calls == 1);
  CHECK(close_enough.calls == 1);
  CHECK(first.outcome == ResolveOutcome::kRevoked);
  CHECK(Look(cache, "Ab3", 1000 * kMs).outcome == ResolveOutcome::kActive);
}

TEST_CASE("cache: a waiter may call back into the cache", "[edge/cache]") {
  LinkCache cache(OneShard());
  CacheLookup seen_by_waiter = CacheLookup::kMiss;
  std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", 0, [&](const ResolveResult&) {
    seen_by_waiter = cache.Lookup("Ab3", 0, [](const ResolveResult&) {});
  });
  REQUIRE(ticket);
  cache.CompleteFetch(*ticket, Active(kUrl), 0);  // would deadlock under the lock
  CHECK(seen_by_waiter == CacheLookup::kFresh);
}

TEST_CASE("cache: a 502-worthy answer is delivered but not stored and drops the old entry",
          "[edge/cache]") {
  LinkCache cache(OneShard());
  for (const ResolveResult& bad :
       {Active("https://a.example/\r\nSet-Cookie: x"), Active(""), Active(kUrl, 303)}) {
    REQUIRE(Fill(cache, "Ab3", Active(kUrl), 0));
    Delivery d;
    std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", 0, Record(d));
    REQUIRE(ticket);
    cache.CompleteFetch(*ticket, bad, 0);
    CHECK(d.calls == 1);
    CHECK(d.location == std::string(bad.location));
    CHECK(Look(cache, "Ab3", 0).lookup == CacheLookup::kMiss);
  }
  CHECK(cache.Stats().discarded == 3);
  CHECK(cache.Stats().stores == 3);
}

TEST_CASE("cache: a hit does not allocate", "[edge/cache]") {
  LinkCache cache({});
  REQUIRE(Fill(cache, "Ab3", Active(kUrl), 0));
  REQUIRE(Fill(cache, "neg", WithOutcome(ResolveOutcome::kNotFound), 0));
  size_t length = 0;
  auto visit = [&length](const ResolveResult& r) { length += r.location.size(); };
  const size_t before = testing::ThreadAllocations();
  const CacheLookup fresh = cache.Lookup("Ab3", 1, visit);
  const CacheLookup stale = cache.Lookup("Ab3", 61 * kSecondNs, visit);
  const CacheLookup negative = cache.Lookup("neg", 1, visit);
  const CacheLookup miss = cache.Lookup("none", 1, visit);
  const CacheLookup expired = cache.Lookup("neg", 3600 * kSecondNs, visit);
  const size_t allocations = testing::ThreadAllocations() - before;
  CHECK(allocations == 0);
  CHECK(fresh == CacheLookup::kFresh);
  CHECK(stale == CacheLookup::kStale);
  CHECK(negative == CacheLookup::kFresh);
  CHECK(miss == CacheLookup::kMiss);
  CHECK(expired == CacheLookup::kMiss);
  CHECK(length == 2 * kUrl.size());
}

TEST_CASE("cache: a flood of negative answers evicts only negative entries, never a link",
          "[edge/cache]") {
  // 64 shards as in production: every positive shard filled to its share.
  LinkCacheOptions o;
  o.max_entries = 4096;
  o.max_bytes = 4096 * LinkCache::EstimatedEntryBytes("link-0000", kUrl);
  o.negative_share = 0.125;
  LinkCache cache(o);
  // Twice what the links' budget holds: every shard's share is full.
  std::vector<std::string> links;
  for (int i = 0; i < 2 * 4096; ++i) {
    links.push_back(absl::StrCat("link-", i));
    REQUIRE(Fill(cache, links.back(), Active(kUrl), 0));
  }
  // The links still cached are the ones that must survive.
  std::vector<std::string> cached;
  for (const std::string& key : links) {
    if (Look(cache, key, 0).lookup == CacheLookup::kFresh) cached.push_back(key);
  }
  const LinkCacheStats filled = cache.Stats();
  REQUIRE(cached.size() == filled.entries);
  CHECK(filled.entries == 4096 - 4096 / 8);  // 7/8 of the bound is the links'
  CHECK(filled.negative_entries == 0);

  // 100 000 made-up aliases and codes, each answered "not found" or "invalid".
  for (int i = 0; i < 100'000; ++i) {
    const ResolveOutcome outcome =
        i % 7 == 0 ? ResolveOutcome::kInvalid : ResolveOutcome::kNotFound;
    REQUIRE(Fill(cache, absl::StrCat("random-alias-", i), WithOutcome(outcome), 1));
  }
  for (const std::string& key : cached) {
    INFO(key);
    REQUIRE(Look(cache, key, 2).lookup == CacheLookup::kFresh);
  }
  const LinkCacheStats stats = cache.Stats();
  CHECK(stats.entries - stats.negative_entries == cached.size());
  CHECK(stats.negative_entries > 0);
  CHECK(stats.negative_entries <= 4096 / 8);
  CHECK(stats.negative_bytes <= o.max_bytes / 8);
  CHECK(stats.bytes <= o.max_bytes);
  CHECK(stats.evictions - filled.evictions == stats.negative_evictions);
  CHECK(stats.negative_evictions >= 100'000 - 4096 / 8);
  CHECK(cache.CheckInvariantsForTesting().ok());
  // And the newest negative answers are cached: a repeated unknown code is
  // answered without the service.
  CHECK(Look(cache, "random-alias-99999", 3).outcome == ResolveOutcome::kNotFound);
}

TEST_CASE("cache: links never take the negative budget and an answer moves between kinds",
          "[edge/cache]") {
  LinkCacheOptions o = OneShard();
  o.max_entries = 8;
  o.negative_share = 0.25;  // 2 negative, 6 positive
  LinkCache cache(o);
  for (int i = 0; i < 20; ++i) REQUIRE(Fill(cache, absl::StrCat("k", i), Active(kUrl), 0));
  LinkCacheStats stats = cache.Stats();
  CHECK(stats.entries == 6);
  CHECK(stats.negative_entries == 0);
  REQUIRE(Fill(cache, "n1", WithOutcome(ResolveOutcome::kNotFound), 0));
  REQUIRE(Fill(cache, "n2", WithOutcome(ResolveOutcome::kInvalid), 0));
  CHECK(cache.Stats().entries == 8);
  CHECK(cache.Stats().negative_entries == 2);

  // A code that was unknown becomes a link (created a moment later): the
  // link replaces the negative entry, in the links' budget.
  REQUIRE(Fill(cache, "n1", Active(kUrl), 1));
  stats = cache.Stats();
  CHECK(stats.negative_entries == 1);
  CHECK(stats.entries == 7);
  CHECK(Look(cache, "n1", 1).outcome == ResolveOutcome::kActive);
  // And back: the link's entry goes, a negative one takes its place.
  REQUIRE(Fill(cache, "k19", WithOutcome(ResolveOutcome::kNotFound), 2));
  CHECK(Look(cache, "k19", 2).outcome == ResolveOutcome::kNotFound);
  CHECK(cache.Stats().negative_entries == 2);
  CHECK(cache.CheckInvariantsForTesting().ok());

  // Invalidate and Clear reach both kinds.
  cache.Invalidate("n2");
  CHECK(Look(cache, "n2", 2).lookup == CacheLookup::kMiss);
  cache.Clear();
  stats = cache.Stats();
  CHECK(stats.entries == 0);
  CHECK(stats.negative_entries == 0);
  CHECK(stats.negative_bytes == 0);
}

TEST_CASE("cache: shards share the bounds exactly", "[edge/cache]") {
  SECTION("more shards than entries") {
    LinkCacheOptions o;
    o.negative_share = 0;
    o.max_entries = 5;
    o.shards = 64;
    LinkCache cache(o);
    CHECK(cache.shard_count() == 4);
    for (int i = 0; i < 200; ++i) REQUIRE(Fill(cache, absl::StrCat("k", i), Active(kUrl), 0));
    CHECK(cache.Stats().entries == 5);
    CHECK(cache.CheckInvariantsForTesting().ok());
  }
  SECTION("many shards") {
    LinkCacheOptions o;
    o.negative_share = 0;
    o.max_entries = 1000;
    o.shards = 48;  // rounded up to 64
    LinkCache cache(o);
    CHECK(cache.shard_count() == 64);
    for (int i = 0; i < 5000; ++i) REQUIRE(Fill(cache, absl::StrCat("k", i), Active(kUrl), 0));
    const LinkCacheStats stats = cache.Stats();
    CHECK(stats.entries <= 1000);
    CHECK(stats.entries >= 900);  // each shard full to its share, give or take
    CHECK(stats.evictions == 5000 - stats.entries);
    CHECK(cache.CheckInvariantsForTesting().ok());
  }
  SECTION("no entries: nothing is stored, coalescing still works") {
    LinkCacheOptions o;
    o.max_entries = 0;
    LinkCache cache(o);
    Delivery d;
    std::optional<FetchTicket> ticket = cache.JoinFetch("Ab3", 0, Record(d));
    REQUIRE(ticket);
    CHECK_FALSE(cache.JoinFetch("Ab3", 0, Record(d)));
    cache.CompleteFetch(*ticket, Active(kUrl), 0);
    CHECK(d.calls == 2);
    CHECK(cache.Stats().entries == 0);
  }
}

}  // namespace
}  // namespace shortener::edge
