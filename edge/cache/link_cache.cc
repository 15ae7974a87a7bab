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
bool IsBadGateway(const ResolveResult& result) {
  if (result.outcome != ResolveOutcome::kActive) return false;
  const int s = result.redirect_status;
  return !(s == 301 || s == 302 || s == 307 || s == 308) || !IsSafeLocation(result.location);
}

struct Fetch {
  bool storable = true;  // false once invalidated, cleared or detached
  std::vector<LinkCache::Waiter> waiters;
};
struct JoinableFetch {
  uint64_t token;
  int64_t started_ns;
};

}  // namespace

// A shard: its entries, its fetches in flight, its counters, one lock.
// Aligned so that two shards never share a cache line.
struct alignas(64) LinkCache::Shard {
  mutable std::mutex mu;
  internal::EntryTable table;
  size_t max_entries = 0;
  size_t max_bytes = 0;
  uint64_t next_token = 0;
  absl::flat_hash_map<uint64_t, Fetch> fetches;  // in flight, by token
  // The fetch new waiters for a key join; a subset of `fetches`.
  absl::flat_hash_map<std::string, JoinableFetch> joinable;
  LinkCacheStats counters;  // entries and bytes unused here
};

size_t LinkCache::EstimatedEntryBytes(absl::string_view key, absl::string_view location) {
  return key.size() + location.size() + kEntryOverheadBytes;
}

LinkCache::LinkCache(LinkCacheOptions options)
    : positive_ttl_ns_(ToNanos(options.positive_ttl)),
      negative_ttl_ns_(ToNanos(options.negative_ttl)),
      stale_grace_ns_(ToNanos(options.stale_grace)),
      join_window_ns_(ToNanos(options.fetch_join_window)) {
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
  // Equal shares whose sum is exactly the configured bound.
  for (size_t i = 0; i < n; ++i) {
    Shard& s = shards_[i];
    s.max_entries = options.max_entries / n + (i < options.max_entries % n ? 1 : 0);
    s.max_entries = std::min(s.max_entries, kMaxShardEntries);
    s.max_bytes = options.max_bytes / n + (i < options.max_bytes % n ? 1 : 0);
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
  Entry* e = s.table.Find(k);
  if (e != nullptr && now_ns >= e->dead_at_ns) {
    s.table.Erase(k);
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
                                                Waiter waiter) {
  const HashedKey k = HashedKey::Of(key);
  Shard& s = ShardFor(k.hash);
  std::lock_guard<std::mutex> lock(s.mu);
  auto j = s.joinable.find(key);
  if (j != s.joinable.end()) {
    auto f = s.fetches.find(j->second.token);
    if (f != s.fetches.end() && now_ns < SaturatingAdd(j->second.started_ns, join_window_ns_)) {
      f->second.waiters.push_back(std::move(waiter));
      ++s.counters.coalesced;
      return std::nullopt;
    }
    // Older than the join window: its CompleteFetch may never come. Leave
    // its waiters to it, but neither join nor store it.
    if (f != s.fetches.end()) f->second.storable = false;
    s.joinable.erase(j);
  }
  const uint64_t token = ++s.next_token;
  s.joinable.emplace(std::string(key), JoinableFetch{token, now_ns});
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
  s.table.Erase(k);
  const size_t need = EstimatedEntryBytes(key, location);
  if (IsBadGateway(result) || now_ns >= dead_at || s.max_entries == 0 || need > s.max_bytes ||
      key.size() > kMaxShardEntries || location.size() > kMaxShardEntries) {
    return false;
  }
  while (s.table.size() >= s.max_entries || s.table.bytes() + need > s.max_bytes) {
    ++(s.table.EvictOne(now_ns) ? s.counters.expirations : s.counters.evictions);
  }
  s.table.Insert(k, result, location, fresh_until, dead_at);
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
    if (result.outcome == ResolveOutcome::kUnavailable) {
      Entry* e = s.table.Find(k);
      if (e != nullptr && now_ns >= e->dead_at_ns) {
        s.table.Erase(k);
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
  if (s.table.Erase(k)) ++s.counters.invalidations;
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
    s.table.Clear();
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
    sum.expirations += c.expirations;
    sum.invalidations += c.invalidations;
    sum.entries += s.table.size();
    sum.bytes += s.table.bytes();
  }
  return sum;
}

absl::Status LinkCache::CheckInvariantsForTesting() const {
  for (uint64_t i = 0; i <= shard_mask_; ++i) {
    const Shard& s = shards_[i];
    std::lock_guard<std::mutex> lock(s.mu);
    const std::string where = absl::StrCat("shard ", i, ": ");
    if (absl::Status table = s.table.CheckConsistency(); !table.ok()) {
      return absl::InternalError(absl::StrCat(where, table.message()));
    }
    size_t misplaced = 0;
    s.table.ForEach([&](const Entry& e) {
      if (ShardIndex(HashedKey::Of(e.key()).hash) != i) ++misplaced;
    });
    if (misplaced != 0)
      return absl::InternalError(absl::StrCat(where, misplaced, " keys misplaced"));
    if (s.table.size() > s.max_entries || s.table.bytes() > s.max_bytes) {
      return absl::InternalError(absl::StrCat(where, s.table.size(), " entries and ",
                                              s.table.bytes(), " bytes exceed the bounds ",
                                              s.max_entries, " and ", s.max_bytes));
    }
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
