// Link cache under several threads: coalescing across threads, and a bounded
// random mix of every operation on overlapping keys followed by invariant
// checks. Assertions run on the main thread only (Catch2 v2 is not
// thread-safe): threads collect counts, the test checks them after join.
// Run under TSan by the `concurrent` label.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "edge/cache/link_cache.h"
#include "tests/edge/cache/link_cache_test_util.h"

namespace shortener::edge {
namespace {

using testing::Active;
using testing::WithOutcome;

constexpr int kThreads = 4;

std::string UrlFor(absl::string_view key) { return absl::StrCat("https://example.com/", key); }

// Spins until every thread has arrived, so the threads really overlap.
class StartLine {
 public:
  void ArriveAndWait() {
    arrived_.fetch_add(1);
    while (arrived_.load() < kThreads) std::this_thread::yield();
  }

 private:
  std::atomic<int> arrived_{0};
};

TEST_CASE("cache: misses for one key from several threads share one ticket",
          "[edge/cache][concurrent]") {
  LinkCache cache({});
  constexpr int kJoinsPerThread = 500;
  std::atomic<int> calls{0};
  std::atomic<int> wrong{0};
  std::vector<std::optional<FetchTicket>> tickets(kThreads);
  std::vector<int> ticket_count(kThreads, 0);
  StartLine start;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.ArriveAndWait();
      for (int i = 0; i < kJoinsPerThread; ++i) {
        std::optional<FetchTicket> ticket =
            cache.JoinFetch("hot", 0, [&calls, &wrong](const ResolveResult& r) {
              calls.fetch_add(1);
              if (r.outcome != ResolveOutcome::kActive || r.location != "https://x.example/") {
                wrong.fetch_add(1);
              }
            });
        if (ticket) {
          ++ticket_count[t];
          tickets[t] = std::move(ticket);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  int total_tickets = 0;
  for (int n : ticket_count) total_tickets += n;
  REQUIRE(total_tickets == 1);
  CHECK(calls.load() == 0);
  for (const std::optional<FetchTicket>& ticket : tickets) {
    if (ticket) cache.CompleteFetch(*ticket, Active("https://x.example/"), 0);
  }
  CHECK(calls.load() == kThreads * kJoinsPerThread);
  CHECK(wrong.load() == 0);
  CHECK(cache.Stats().coalesced == kThreads * kJoinsPerThread - 1);
}

// What one thread did and saw; read by the main thread after join.
struct ThreadLog {
  uint64_t lookups = 0;
  uint64_t joins = 0;
  uint64_t tickets = 0;
  uint64_t completions = 0;
  uint64_t unavailable_completions = 0;
  uint64_t bad_visits = 0;
  std::vector<int> waiter_ids;
};

TEST_CASE("cache: four threads mixing every operation on overlapping keys keep the invariants",
          "[edge/cache][concurrent]") {
  LinkCacheOptions o;
  o.shards = 4;
  o.max_entries = 24;
  o.max_bytes = 24 * LinkCache::EstimatedEntryBytes("k00", UrlFor("k00"));
  o.negative_share = 0.25;  // 1 negative and 5 positive entries per shard
  // Fake time advances ~200 ns per operation per thread: entries go stale
  // and die within a few hundred operations.
  o.positive_ttl = absl::Microseconds(200);
  o.negative_ttl = absl::Microseconds(20);
  o.stale_grace = absl::Microseconds(100);
  LinkCache cache(o);

  constexpr int kOps = 20'000;
  constexpr int kKeys = 40;
  std::vector<std::string> keys;
  std::vector<std::string> urls;
  for (int k = 0; k < kKeys; ++k) {
    keys.push_back(absl::StrCat("k", k < 10 ? "0" : "", k));
    urls.push_back(UrlFor(keys.back()));
  }
  // One slot per possible waiter: (thread, op).
  auto calls = std::make_unique<std::atomic<int>[]>(kThreads * kOps);
  std::atomic<int> bad_deliveries{0};
  std::atomic<int64_t> clock{0};
  std::vector<ThreadLog> logs(kThreads);
  StartLine start;

  auto run = [&](int t) {
    ThreadLog& log = logs[t];
    std::mt19937 rng(1234 + t);
    std::vector<FetchTicket> pending;
    auto complete_one = [&](size_t i, int64_t now) {
      FetchTicket ticket = std::move(pending[i]);
      pending[i] = std::move(pending.back());
      pending.pop_back();
      const std::string url = UrlFor(ticket.key());
      ResolveResult result;
      switch (rng() % 4) {
        case 0:
          result = WithOutcome(ResolveOutcome::kNotFound);
          break;
        case 1:
          result = WithOutcome(ResolveOutcome::kRevoked);
          break;
        case 2:
          result = WithOutcome(ResolveOutcome::kUnavailable);
          break;
        default:
          result = Active(url);
          break;
      }
      if (result.outcome == ResolveOutcome::kUnavailable) ++log.unavailable_completions;
      const int64_t expire = rng() % 3 == 0 ? now + 300'000 : 0;
      cache.CompleteFetch(ticket, result, now, expire);
      ++log.completions;
    };
    start.ArriveAndWait();
    for (int op = 0; op < kOps; ++op) {
      const int64_t now = clock.fetch_add(rng() % 400);
      const int k = static_cast<int>(rng() % kKeys);
      const std::string& key = keys[k];
      const unsigned action = rng() % 100;
      if (action < 45) {
        ++log.lookups;
        cache.Lookup(key, now, [&](const ResolveResult& r) {
          const bool ok = r.outcome == ResolveOutcome::kActive
                              ? r.location == urls[k] && r.redirect_status == 302
                              : r.location.empty();
          if (!ok) ++log.bad_visits;
        });
      } else if (action < 70) {
        const int id = t * kOps + op;
        log.waiter_ids.push_back(id);
        ++log.joins;
        std::optional<FetchTicket> ticket = cache.JoinFetch(
            key, now, [&calls, &bad_deliveries, id, url = urls[k]](const ResolveResult& r) {
              calls[id].fetch_add(1);
              if (r.outcome == ResolveOutcome::kActive && r.location != url) {
                bad_deliveries.fetch_add(1);
              }
            });
        if (ticket) {
          ++log.tickets;
          pending.push_back(std::move(*ticket));
        }
      } else if (action < 92) {
        if (!pending.empty()) complete_one(rng() % pending.size(), now);
      } else if (action < 99) {
        cache.Invalidate(key);
      } else if (rng() % 4 == 0) {
        cache.Clear();
      }
    }
    while (!pending.empty()) complete_one(pending.size() - 1, clock.load());
  };

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(run, t);
  for (std::thread& thread : threads) thread.join();

  ThreadLog total;
  std::vector<bool> registered(kThreads * kOps, false);
  for (const ThreadLog& log : logs) {
    total.lookups += log.lookups;
    total.joins += log.joins;
    total.tickets += log.tickets;
    total.completions += log.completions;
    total.unavailable_completions += log.unavailable_completions;
    total.bad_visits += log.bad_visits;
    for (int id : log.waiter_ids) registered[id] = true;
  }
  int not_once = 0;
  for (int id = 0; id < kThreads * kOps; ++id) {
    if (calls[id].load() != (registered[id] ? 1 : 0)) ++not_once;
  }
  CHECK(not_once == 0);
  CHECK(bad_deliveries.load() == 0);
  CHECK(total.bad_visits == 0);
  CHECK(total.tickets == total.completions);

  const LinkCacheStats stats = cache.Stats();
  INFO("hits " << stats.hits << " stale " << stats.stale_hits << " misses " << stats.misses
               << " stores " << stats.stores << " evictions " << stats.evictions << " expirations "
               << stats.expirations << " invalidations " << stats.invalidations << " discarded "
               << stats.discarded);
  CHECK(stats.fetches == total.tickets);
  CHECK(stats.coalesced == total.joins - total.tickets);
  CHECK(stats.hits + stats.stale_hits - stats.stale_fallbacks + stats.misses == total.lookups);
  CHECK(stats.stores + stats.discarded + total.unavailable_completions == total.completions);
  CHECK(stats.entries <= o.max_entries);
  CHECK(stats.bytes <= o.max_bytes);
  const absl::Status invariants = cache.CheckInvariantsForTesting();
  INFO(invariants.ToString());
  CHECK(invariants.ok());
  // The mix exercised what it is meant to.
  CHECK(stats.hits > 0);
  CHECK(stats.stale_hits > 0);
  CHECK(stats.evictions > 0);
  CHECK(stats.expirations > 0);
  CHECK(stats.invalidations > 0);
  CHECK(stats.coalesced > 0);
  CHECK(stats.stale_fallbacks > 0);

  // Nothing is left in flight: every key gets a fresh ticket.
  for (const std::string& key : keys) {
    std::optional<FetchTicket> ticket =
        cache.JoinFetch(key, clock.load(), [](const ResolveResult&) {});
    CHECK(ticket.has_value());
    if (ticket) cache.CompleteFetch(*ticket, WithOutcome(ResolveOutcome::kNotFound), 0);
  }
}

}  // namespace
}  // namespace shortener::edge
