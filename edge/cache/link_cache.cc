#include "edge/cache/link_cache.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "edge/cache/entry_table.h"

namespace shortener::edge {
namespace {

using internal::Entry;
using internal::HashedKey;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxShards = 4096;
constexpr size_t kMinShardBytes = 4096;
// Slot numbers are uint32_t.
constexpr size_t kMaxShardEntries = std::numeric_limits<uint32_t>::max() - 1;

int64_t ToNanos(absl::Duration d) {
  // Saturates for InfiniteDuration; a negative duration means "not at all".
  return d <= absl::ZeroDuration() ? 0 : absl::ToInt64Nanoseconds(d);
}

int64_t SaturatingAdd(int64_t a, int64_t non_negative) {
  return a > kNever - non_negative ? kNever : a + non_negative;
}

bool IsPositive(ResolveOutcome outcome) {
  return outcome == ResolveOutcome::kActive || outcome == ResolveOutcome::kRevoked ||
         outcome == ResolveOutcome::kExpired;
}

// What PlanForOutcome would turn into a 502; never stored.
bool IsBadGateway(const ResolveResult& result, const LocationPolicy& locations) {
  if (result.outcome != ResolveOutcome::kActive) return false;
  return PlanForOutcome(result, locations).status == 502;
}

struct Fetch {
  bool storable = true;  // false once invalidated, cleared or detached
  std::vector<LinkCache::Waiter> waiters;
};
struct JoinableFetch {
  uint64_t token;
  int64_t started_ns;
  int64_t deadline_ns;
};

}  // namespace

// The entries of one kind (positive or negative) in a shard, and their
// bounds.
struct LinkCache::Pool {
  internal::EntryTable table;
  size_t max_entries = 0;
  size_t max_bytes = 0;
};

// A shard: its entries, its fetches in flight, its counters, one lock.
// Aligned so that two shards never share a cache line.
struct alignas(64) LinkCache::Shard {
  mutable std::mutex mu;
  Pool positive;  // kActive, kRevoked, kExpired: probed first
  Pool negative;  // kNotFound, kInvalid
  uint64_t next_token = 0;
  absl::flat_hash_map<uint64_t, Fetch> fetches;  // in flight, by token
  // The fetch new waiters for a key join; a subset of `fetches`.
  absl::flat_hash_map<std::string, JoinableFetch> joinable;
  LinkCacheStats counters;  // entries and bytes unused here

  Pool& PoolFor(ResolveOutcome outcome) { return IsPositive(outcome) ? positive : negative; }
  // The key's entry in either pool, or nullptr; `pool` says which.
  Entry* Find(const HashedKey& k, Pool** pool) {
    *pool = &positive;
    if (Entry* e = positive.table.Find(k)) return e;
    *pool = &negative;
    return negative.table.Find(k);
  }
  bool Erase(const HashedKey& k) { return positive.table.Erase(k) || negative.table.Erase(k); }
};

size_t LinkCache::EstimatedEntryBytes(absl::string_view key, absl::string_view location) {
  return key.size() + location.size() + kEntryOverheadBytes;
}

LinkCache::LinkCache(LinkCacheOptions options)
    : positive_ttl_ns_(ToNanos(options.positive_ttl)),
      negative_ttl_ns_(ToNanos(options.negative_ttl)),
      stale_grace_ns_(ToNanos(options.stale_grace)),
      join_window_ns_(ToNanos(options.fetch_join_window)),
      deadline_slack_ns_(ToNanos(options.fetch_deadline_slack)),
      locations_(options.locations) {
  size_t n = 1;
  int bits = 0;
  while (n < static_cast<size_t>(std::max(options.shards, 1)) && n < kMaxShards) {
    n <<= 1;
    ++bits;
  }
  while (n > 1 && (n > options.max_entries || options.max_bytes / n < kMinShardBytes)) {
    n >>= 1;
    --bits;
  }
  shard_mask_ = n - 1;
  shard_shift_ = 64 - bits;
  shards_ = std::make_unique<Shard[]>(n);
  // Equal shares whose sum is exactly the configured bound, each split
  // between the kinds.
  const double share = std::clamp(options.negative_share, 0.0, 1.0);
  const auto negative_part = [share](size_t bound) {
    return std::min(bound, static_cast<size_t>(static_cast<double>(bound) * share));
  };
  for (size_t i = 0; i < n; ++i) {
    Shard& s = shards_[i];
    size_t entries = options.max_entries / n + (i < options.max_entries % n ? 1 : 0);
    entries = std::min(entries, kMaxShardEntries);
    const size_t bytes = options.max_bytes / n + (i < options.max_bytes % n ? 1 : 0);
    s.negative.max_entries = negative_part(entries);
    s.negative.max_bytes = negative_part(bytes);
    s.positive.max_entries = entries - s.negative.max_entries;
    s.positive.max_bytes = bytes - s.negative.max_bytes;
  }
}

LinkCache::~LinkCache() = default;

uint32_t LinkCache::ShardIndex(uint64_t hash) const {
  // The top bits: the index's buckets use the low ones.
  return shard_mask_ == 0 ? 0 : static_cast<uint32_t>(hash >> shard_shift_);
}

LinkCache::Shard& LinkCache::ShardFor(uint64_t hash) const { return shards_[ShardIndex(hash)]; }

CacheLookup LinkCache::Lookup(absl::string_view key, int64_t now_ns,
                              absl::FunctionRef<void(const ResolveResult&)> visit) {
  const HashedKey k = HashedKey::Of(key);
  Shard& s = ShardFor(k.hash);
  std::lock_guard<std::mutex> lock(s.mu);
  Pool* pool;
  Entry* e = s.Find(k, &pool);
  if (e != nullptr && now_ns >= e->dead_at_ns) {
    pool->table.Erase(k);
    ++s.counters.expirations;
    e = nullptr;
  }
  if (e == nullptr) {
    ++s.counters.misses;
    return CacheLookup::kMiss;
  }
  e->referenced = true;
  visit(e->result());
  if (now_ns < e->fresh_until_ns) {
    ++s.counters.hits;
    return CacheLookup::kFresh;
  }
  ++s.counters.stale_hits;
  return CacheLookup::kStale;
}

std::optional<FetchTicket> LinkCache::JoinFetch(absl::string_view key, int64_t now_ns,
                                                Waiter waiter, int64_t deadline_ns) {
  const HashedKey k = HashedKey::Of(key);
  Shard& s = ShardFor(k.hash);
  std::lock_guard<std::mutex> lock(s.mu);
  auto j = s.joinable.find(key);
  if (j != s.joinable.end()) {
    auto f = s.fetches.find(j->second.token);
    if (f != s.fetches.end() && now_ns < SaturatingAdd(j->second.started_ns, join_window_ns_) &&
        j->second.deadline_ns <= SaturatingAdd(deadline_ns, deadline_slack_ns_)) {
      f->second.waiters.push_back(std::move(waiter));
      ++s.counters.coalesced;
      return std::nullopt;
    }
    // Older than the join window (its CompleteFetch may never come), or
    // ending too late for this waiter. Leave its waiters to it, but neither
    // join nor store it: once it stops being joinable, Invalidate cannot
    // reach it.
    if (f != s.fetches.end()) f->second.storable = false;
    s.joinable.erase(j);
  }
  const uint64_t token = ++s.next_token;
  s.joinable.emplace(std::string(key), JoinableFetch{token, now_ns, deadline_ns});
  s.fetches[token].waiters.push_back(std::move(waiter));
  ++s.counters.fetches;
  return FetchTicket(key, ShardIndex(k.hash), token);
}

bool LinkCache::StoreLocked(Shard& s, uint64_t hash, absl::string_view key,
                            const ResolveResult& result, int64_t now_ns,
                            int64_t link_expire_at_ns) {
  const absl::string_view location =
      result.outcome == ResolveOutcome::kActive ? result.location : absl::string_view();
  int64_t fresh_until =
      SaturatingAdd(now_ns, IsPositive(result.outcome) ? positive_ttl_ns_ : negative_ttl_ns_);
  int64_t dead_at = SaturatingAdd(fresh_until, stale_grace_ns_);
  if (result.outcome == ResolveOutcome::kActive && link_expire_at_ns != 0) {
    fresh_until = std::min(fresh_until, link_expire_at_ns);
    dead_at = std::min(dead_at, link_expire_at_ns);
  }
  // The new answer supersedes the old one even if it is not kept itself.
  const HashedKey k{key, hash};
  s.Erase(k);
  // Only entries of the same kind make room: negative answers (anyone can
  // make up codes) never push out a link.
  Pool& pool = s.PoolFor(result.outcome);
  const size_t need = EstimatedEntryBytes(key, location);
  if (IsBadGateway(result, locations_) || now_ns >= dead_at || pool.max_entries == 0 ||
      need > pool.max_bytes || key.size() > kMaxShardEntries ||
      location.size() > kMaxShardEntries) {
    return false;
  }
  while (pool.table.size() >= pool.max_entries || pool.table.bytes() + need > pool.max_bytes) {
    if (pool.table.EvictOne(now_ns)) {
      ++s.counters.expirations;
    } else {
      ++s.counters.evictions;
      if (&pool == &s.negative) ++s.counters.negative_evictions;
    }
  }
  pool.table.Insert(k, result, location, fresh_until, dead_at);
  return true;
}

void LinkCache::CompleteFetch(const FetchTicket& ticket, const ResolveResult& result,
                              int64_t now_ns, int64_t link_expire_at_ns) {
  if (ticket.shard_ > shard_mask_) return;  // not from this cache
  Shard& s = shards_[ticket.shard_];
  std::vector<Waiter> waiters;
  ResolveResult delivered = result;
  std::string fallback_location;  // what `delivered` views after a fallback
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto f = s.fetches.find(ticket.token_);
    if (f == s.fetches.end()) return;  // completed before
    waiters = std::move(f->second.waiters);
    const bool storable = f->second.storable;
    s.fetches.erase(f);
    auto j = s.joinable.find(ticket.key_);
    if (j != s.joinable.end() && j->second.token == ticket.token_) s.joinable.erase(j);

    const HashedKey k = HashedKey::Of(ticket.key_);
    if (IsNoAnswer(result.outcome)) {
      Pool* pool;
      Entry* e = s.Find(k, &pool);
      if (e != nullptr && now_ns >= e->dead_at_ns) {
        pool->table.Erase(k);
        ++s.counters.expirations;
      } else if (e != nullptr) {
        // A copy: the entry may be gone before the waiters run.
        e->referenced = true;
        delivered = e->result();
        fallback_location.assign(delivered.location.data(), delivered.location.size());
        delivered.location = fallback_location;
        ++s.counters.stale_hits;
        ++s.counters.stale_fallbacks;
      }
    } else if (storable && StoreLocked(s, k.hash, k.key, result, now_ns, link_expire_at_ns)) {
      ++s.counters.stores;
    } else {
      ++s.counters.discarded;
    }
  }
  for (Waiter& waiter : waiters) {
    if (waiter) waiter(delivered);
  }
}

void LinkCache::Invalidate(absl::string_view key) {
  const HashedKey k = HashedKey::Of(key);
  Shard& s = ShardFor(k.hash);
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.Erase(k)) ++s.counters.invalidations;
  auto j = s.joinable.find(key);
  if (j != s.joinable.end()) {
    auto f = s.fetches.find(j->second.token);
    if (f != s.fetches.end()) f->second.storable = false;
    s.joinable.erase(j);
  }
}

void LinkCache::Clear() {
  for (uint64_t i = 0; i <= shard_mask_; ++i) {
    Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    s.positive.table.Clear();
    s.negative.table.Clear();
    for (auto& [token, fetch] : s.fetches) fetch.storable = false;
    s.joinable.clear();
  }
}

LinkCacheStats LinkCache::Stats() const {
  LinkCacheStats sum;
  for (uint64_t i = 0; i <= shard_mask_; ++i) {
    const Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    const LinkCacheStats& c = s.counters;
    sum.hits += c.hits;
    sum.stale_hits += c.stale_hits;
    sum.misses += c.misses;
    sum.coalesced += c.coalesced;
    sum.fetches += c.fetches;
    sum.stale_fallbacks += c.stale_fallbacks;
    sum.stores += c.stores;
    sum.discarded += c.discarded;
    sum.evictions += c.evictions;
    sum.negative_evictions += c.negative_evictions;
    sum.expirations += c.expirations;
    sum.invalidations += c.invalidations;
    sum.entries += s.positive.table.size() + s.negative.table.size();
    sum.bytes += s.positive.table.bytes() + s.negative.table.bytes();
    sum.negative_entries += s.negative.table.size();
    sum.negative_bytes += s.negative.table.bytes();
  }
  return sum;
}

absl::Status LinkCache::CheckInvariantsForTesting() const {
  for (uint64_t i = 0; i <= shard_mask_; ++i) {
    const Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    for (const Pool* pool : {&s.positive, &s.negative}) {
      const bool positive = pool == &s.positive;
      const std::string where =
          absl::StrCat("shard ", i, positive ? " positive" : " negative", ": ");
      if (absl::Status table = pool->table.CheckConsistency(); !table.ok()) {
        return absl::InternalError(absl::StrCat(where, table.message()));
      }
      size_t misplaced = 0;
      size_t wrong_kind = 0;
      size_t in_both = 0;
      const Pool& other = positive ? s.negative : s.positive;
      pool->table.ForEach([&](const Entry& e) {
        const HashedKey k = HashedKey::Of(e.key());
        if (ShardIndex(k.hash) != i) ++misplaced;
        if (IsPositive(static_cast<ResolveOutcome>(e.outcome)) != positive) ++wrong_kind;
        if (other.table.Find(k) != nullptr) ++in_both;
      });
      if (misplaced + wrong_kind + in_both != 0) {
        return absl::InternalError(absl::StrCat(where, misplaced, " keys misplaced, ", wrong_kind,
                                                " of the wrong kind, ", in_both,
                                                " in both tables"));
      }
      if (pool->table.size() > pool->max_entries || pool->table.bytes() > pool->max_bytes) {
        return absl::InternalError(absl::StrCat(where, pool->table.size(), " entries and ",
                                                pool->table.bytes(), " bytes exceed the bounds ",
                                                pool->max_entries, " and ", pool->max_bytes));
      }
    }
    const std::string where = absl::StrCat("shard ", i, ": ");
    for (const auto& [key, joinable] : s.joinable) {
      auto f = s.fetches.find(joinable.token);
      if (f == s.fetches.end() || !f->second.storable) {
        return absl::InternalError(
            absl::StrCat(where, "joinable fetch for \"", key, "\" missing or not storable"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace shortener::edge
