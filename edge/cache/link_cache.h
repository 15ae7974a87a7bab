// The redirect edge's link cache: what the shorten-service last said about a
// code or alias (a ResolveResult), kept for a bounded time in bounded memory,
// plus the coalescing of concurrent misses for one key into one fetch.
//
// Request flow (request_target.h, step 3):
//   1. Lookup(code): kFresh: answer from the visited result. kStale (past
//      its TTL, within stale_grace) or kMiss: go to 2. A kStale lookup also
//      visits the old result; the edge does not answer from it (it is past
//      its TTL) unless the service turns out to be unreachable (step 3).
//   2. JoinFetch(code, waiter): the first caller gets a ticket and starts the
//      one Resolve RPC; later callers are queued behind it.
//   3. CompleteFetch(ticket, result): stores the result and calls every
//      waiter. If there was no answer (kUnavailable, kTimedOut, kOverloaded:
//      IsNoAnswer) and an entry within its grace exists, waiters get that
//      entry instead: stale beats a 503.
//
// Decisions (also for docs/edge.md):
// - TTLs: positive_ttl for kActive, kRevoked and kExpired (revocation is
//   pushed through Invalidate, so a long TTL does not delay it); the short
//   negative_ttl for kNotFound and kInvalid, because a code that does not
//   exist yet may be created a moment later. No-answer outcomes (kUnavailable,
//   kTimedOut, kOverloaded) are never stored.
// - A link's expiry caps its entry: after link_expire_at_ns the entry is a
//   miss, with no stale period, so an expired link is never redirected.
// - A fetch that was in flight when its key was invalidated, or when the
//   cache was cleared, may carry an answer from before the revocation: its
//   waiters get that answer (they asked before the revocation arrived) but it
//   is not stored, and it stops gathering waiters: the next JoinFetch for the
//   key starts a fresh fetch even while the old one is still in flight.
// - 502-worthy results (kActive with an unsafe Location or a redirect status
//   outside 301/302/307/308, see http_status.h) are the caller's business:
//   it must not pass them. As a safety net they are delivered but not stored
//   (counted in `discarded`), so one bad upstream answer is not replayed.
// - Bounds: the cache is split into shards by a hash of the key; each shard
//   gets an equal share of max_entries and max_bytes (the shares sum to the
//   bounds exactly), so eviction may start slightly before the whole cache
//   is full. A shard over either bound evicts with CLOCK (second chance): a
//   hit sets the entry's reference bit; the hand clears set bits and evicts
//   the first entry without one, or any entry already past TTL + grace.
//   O(1) amortised per store; a hit does not allocate.
// - Bytes are estimated per entry as key + location + kEntryOverheadBytes
//   (the slot, the index, the allocator's header and rounding, averaged over
//   container growth; measured in tests/edge/cache/link_cache_memory_test.cc).
// - Negative entries (kNotFound, kInvalid) have a budget of their own:
//   negative_share of max_entries and of max_bytes, carved out of both (so
//   the two budgets sum to the bounds); positive entries (kActive, kRevoked,
//   kExpired) get the rest. Each kind evicts only its own kind, so a flood of
//   made-up codes or aliases (anyone can send those) pushes out other
//   negative entries and never a link. Each shard keeps the two kinds in two
//   tables with their own CLOCK hands; a key is in at most one of them. A
//   positive hit probes one table, as before; a negative hit or a miss two.
//
// Thread safety: every method is thread-safe. Each shard has its own mutex;
// Lookup's visit runs under it (keep it short, do not call into the cache);
// waiters run on the thread that calls CompleteFetch, with no lock held (they
// may call into the cache).
#ifndef SHORTENER_EDGE_CACHE_LINK_CACHE_H_
#define SHORTENER_EDGE_CACHE_LINK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/http_status.h"

namespace shortener::edge {

struct LinkCacheOptions {
  // Bound on the number of entries. 0 disables storing (coalescing still
  // works). Default 1'000'000.
  size_t max_entries = 1'000'000;
  // Bound on the estimated bytes of all entries (see EstimatedEntryBytes).
  // Default 256 MiB.
  size_t max_bytes = 256 << 20;
  // Share of max_entries and of max_bytes reserved for negative entries
  // (kNotFound, kInvalid), which may use nothing else; positive entries get
  // the rest and may use nothing else either. Per shard, the negative share
  // is rounded down (a tiny cache may keep no negative entries at all).
  // 0..1; values outside are clamped. Default 0.125.
  double negative_share = 0.125;
  // How long kActive, kRevoked and kExpired answers are fresh. Default 60 s.
  absl::Duration positive_ttl = absl::Seconds(60);
  // How long kNotFound and kInvalid answers are fresh. Default 2 s.
  absl::Duration negative_ttl = absl::Seconds(2);
  // How long past its TTL an entry may still be served when the service is
  // unreachable (never past its link's expiry). Default 10 min.
  absl::Duration stale_grace = absl::Minutes(10);
  // A fetch in flight for longer than this stops gathering waiters and will
  // not be stored: the next JoinFetch for its key starts a new one. Guards
  // against a lost CompleteFetch leaving a code hanging forever; keep it
  // above the resolver's RPC deadline. Default 10 s.
  absl::Duration fetch_join_window = absl::Seconds(10);
  // A waiter joins a fetch in flight only if the fetch's deadline is at most
  // this much later than its own (see JoinFetch): the tolerance that keeps
  // a burst for one code, whose arrival times differ by a clock tick or a
  // loop's batch, in one fetch. Default 20 ms.
  absl::Duration fetch_deadline_slack = absl::Milliseconds(20);
  // Number of shards; rounded up to a power of two, and reduced for tiny
  // bounds so that every shard holds at least one entry and 4 KiB.
  // Default 64.
  int shards = 64;
  // Locations the edge sends (--allowed_schemes): a result PlanForOutcome
  // would answer 502 under this policy is never stored. Default http, https.
  LocationPolicy locations;
};

// What Lookup found.
enum class CacheLookup {
  kMiss,   // no entry, or one past TTL + grace (now removed)
  kFresh,  // within its TTL
  kStale,  // past its TTL, within stale_grace
};

// The right and duty to run the one fetch for a key, returned by JoinFetch
// and given back to CompleteFetch. Copyable; opaque apart from key().
class FetchTicket {
 public:
  absl::string_view key() const { return key_; }

 private:
  friend class LinkCache;
  FetchTicket(absl::string_view key, uint32_t shard, uint64_t token)
      : key_(key), shard_(shard), token_(token) {}

  std::string key_;
  uint32_t shard_ = 0;
  uint64_t token_ = 0;  // unique per shard: which fetch this is
};

// Counters since construction (summed over shards) and current sizes.
struct LinkCacheStats {
  uint64_t hits = 0;        // Lookup returned kFresh
  uint64_t stale_hits = 0;  // Lookup returned kStale, plus stale_fallbacks
  uint64_t misses = 0;      // Lookup returned kMiss
  uint64_t coalesced = 0;   // JoinFetch joined a fetch in flight (nullopt)
  uint64_t fetches = 0;     // JoinFetch returned a ticket
  // CompleteFetch with a no-answer outcome answered from a cached entry.
  uint64_t stale_fallbacks = 0;
  uint64_t stores = 0;  // results stored (new entries and replacements)
  // Results not stored: invalidated or cleared during the fetch, link
  // already expired, 502-worthy, or larger than a shard's byte bound. (Any
  // of these but the first still erases the key's older entry.)
  uint64_t discarded = 0;
  uint64_t evictions = 0;  // live entries removed to stay within bounds
  // Of which negative entries evicted to make room for other negative ones.
  uint64_t negative_evictions = 0;
  uint64_t expirations = 0;    // entries removed past TTL + grace
  uint64_t invalidations = 0;  // entries erased by Invalidate
  size_t entries = 0;
  size_t bytes = 0;             // estimated, see EstimatedEntryBytes
  size_t negative_entries = 0;  // of `entries`: kNotFound and kInvalid
  size_t negative_bytes = 0;    // of `bytes`
};

class LinkCache {
 public:
  using Waiter = absl::AnyInvocable<void(const ResolveResult&)>;

  // Fixed per-entry cost added to key and location sizes in the byte
  // estimate: the slot (40 bytes, times the slot vector's growth slack of
  // 1-2x), the index (4-byte buckets at 44-88% load, plus control bytes),
  // the allocator's header and rounding of the key+location block (8-23).
  // Measured with 8-byte keys and 60-byte URLs, 64 shards: ~65 at 1 M
  // entries (133 bytes/entry in all), ~73 at 200 k.
  static constexpr size_t kEntryOverheadBytes = 80;

  // The estimated bytes of one entry, as counted against max_bytes. The
  // location counts only for kActive (other outcomes store none).
  static size_t EstimatedEntryBytes(absl::string_view key, absl::string_view location);

  explicit LinkCache(LinkCacheOptions options);
  ~LinkCache();
  LinkCache(const LinkCache&) = delete;
  LinkCache& operator=(const LinkCache&) = delete;

  // The hit path. `now_ns` is monotonic nanoseconds supplied by the caller
  // (the edge's per-loop coarse clock; fake times in tests), the same clock
  // for every call. On kFresh or kStale calls visit(result) under the shard
  // lock; result.location views the cached string and is valid only during
  // the call. An entry past TTL + grace is removed and reported as kMiss.
  // Does not allocate.
  CacheLookup Lookup(absl::string_view key, int64_t now_ns,
                     absl::FunctionRef<void(const ResolveResult&)> visit);

  // Registers `waiter` (non-empty) for `key`. If no joinable fetch for the
  // key is in flight, returns a ticket: the caller must start exactly one
  // fetch and end it with CompleteFetch(ticket, ...), whatever happens.
  // Otherwise returns nullopt (counted in `coalesced`); the waiter is called
  // by the in-flight fetch's CompleteFetch. Allocates (misses only).
  // `deadline_ns` (same clock; none by default) is when the waiter must have
  // its answer, and the fetch a ticket starts must end by it. A waiter does
  // not join a fetch whose deadline is more than fetch_deadline_slack after
  // its own (a request that waited behind others on its connection, joining
  // a fetch started by one that arrived later): it gets a ticket for a new
  // fetch instead, which takes over gathering waiters; the old one still
  // answers its own waiters but is not stored (it could not be invalidated
  // any more).
  std::optional<FetchTicket> JoinFetch(absl::string_view key, int64_t now_ns, Waiter waiter,
                                       int64_t deadline_ns = kNoDeadline);
  static constexpr int64_t kNoDeadline = std::numeric_limits<int64_t>::max();

  // Ends the ticket's fetch and calls each of its waiters exactly once, on
  // this thread, outside the lock, with a result whose location is valid
  // during the call:
  //  - kActive/kRevoked/kExpired/kNotFound/kInvalid: stored with its TTL
  //    (replacing any entry) unless the key was invalidated or the cache
  //    cleared since the ticket was issued; waiters get `result`. For
  //    kActive, link_expire_at_ns (0 = never) caps the entry's lifetime;
  //    a link already expired at now_ns is delivered but not stored.
  //  - kUnavailable, kTimedOut, kOverloaded (IsNoAnswer): nothing stored;
  //    if the key has an entry within TTL + grace, waiters get its value (a
  //    stale fallback), else `result`.
  // The caller must not pass 502-worthy results (see the decisions above).
  // A ticket completed a second time is ignored.
  void CompleteFetch(const FetchTicket& ticket, const ResolveResult& result, int64_t now_ns,
                     int64_t link_expire_at_ns = 0);

  // The revocation path (invalidation stream): erases the key's entry, and a
  // fetch in flight for the key will not be stored and takes no more
  // waiters.
  void Invalidate(absl::string_view key);

  // Drops every entry, and no fetch now in flight will be stored or take
  // more waiters: used when the invalidation stream reconnects after an
  // outage, since entries from before it cannot be trusted. Frees memory.
  void Clear();

  // Sums the shards' counters, one shard lock at a time (a consistent
  // snapshot per shard, not across shards). Cheap enough for /metrics.
  LinkCacheStats Stats() const;

  // Checks the internal structure shard by shard: index and entries agree,
  // bytes equal the sum of the live entries' estimates, each kind holds only
  // its own outcomes within its own bounds, no key is in both.
  // Returns OK or kInternal naming the first broken invariant. For tests;
  // O(entries).
  absl::Status CheckInvariantsForTesting() const;

  // Shards in use after normalisation (see LinkCacheOptions::shards).
  int shard_count() const { return static_cast<int>(shard_mask_ + 1); }

 private:
  struct Shard;  // link_cache.cc
  struct Pool;   // link_cache.cc

  Shard& ShardFor(uint64_t hash) const;
  uint32_t ShardIndex(uint64_t hash) const;
  // Stores a CompleteFetch result in `shard` (locked). Returns false if it
  // was not stored (see LinkCacheStats::discarded).
  bool StoreLocked(Shard& shard, uint64_t hash, absl::string_view key, const ResolveResult& result,
                   int64_t now_ns, int64_t link_expire_at_ns);

  int64_t positive_ttl_ns_ = 0;
  int64_t negative_ttl_ns_ = 0;
  int64_t stale_grace_ns_ = 0;
  int64_t join_window_ns_ = 0;
  int64_t deadline_slack_ns_ = 0;
  const LocationPolicy locations_;
  int shard_shift_ = 0;      // shard = hash >> shard_shift_ (unused with one shard)
  uint64_t shard_mask_ = 0;  // shard count - 1
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_CACHE_LINK_CACHE_H_
