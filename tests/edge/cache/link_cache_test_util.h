// Small helpers shared by the link cache tests: results, fake times, filling
// an entry through the fetch path, and a lookup that copies what it saw.
#ifndef SHORTENER_TESTS_EDGE_CACHE_LINK_CACHE_TEST_UTIL_H_
#define SHORTENER_TESTS_EDGE_CACHE_LINK_CACHE_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "edge/cache/link_cache.h"

namespace shortener::edge::testing {

inline constexpr int64_t kSecondNs = 1'000'000'000;

inline ResolveResult Active(absl::string_view location, int redirect_status = 302) {
  ResolveResult r;
  r.outcome = ResolveOutcome::kActive;
  r.redirect_status = redirect_status;
  r.location = location;
  return r;
}

inline ResolveResult WithOutcome(ResolveOutcome outcome) {
  ResolveResult r;
  r.outcome = outcome;
  return r;
}

// What one Lookup returned and what its visit saw (copied).
struct Seen {
  CacheLookup lookup = CacheLookup::kMiss;
  bool visited = false;
  ResolveOutcome outcome = ResolveOutcome::kUnavailable;
  int redirect_status = 0;
  std::string location;
};

inline Seen Look(LinkCache& cache, absl::string_view key, int64_t now_ns) {
  Seen seen;
  seen.lookup = cache.Lookup(key, now_ns, [&seen](const ResolveResult& r) {
    seen.visited = true;
    seen.outcome = r.outcome;
    seen.redirect_status = r.redirect_status;
    seen.location = std::string(r.location);
  });
  return seen;
}

// A waiter's copy of the result it was called with, and how often.
struct Delivery {
  int calls = 0;
  ResolveOutcome outcome = ResolveOutcome::kInvalid;
  std::string location;
};

inline LinkCache::Waiter Record(Delivery& d) {
  return [&d](const ResolveResult& r) {
    ++d.calls;
    d.outcome = r.outcome;
    d.location = std::string(r.location);
  };
}

// Runs a whole fetch for `key` that returns `result`. Returns false if a
// fetch was already in flight (no ticket).
inline bool Fill(LinkCache& cache, absl::string_view key, const ResolveResult& result,
                 int64_t now_ns, int64_t link_expire_at_ns = 0) {
  std::optional<FetchTicket> ticket = cache.JoinFetch(key, now_ns, [](const ResolveResult&) {});
  if (!ticket) return false;
  cache.CompleteFetch(*ticket, result, now_ns, link_expire_at_ns);
  return true;
}

}  // namespace shortener::edge::testing

#endif  // SHORTENER_TESTS_EDGE_CACHE_LINK_CACHE_TEST_UTIL_H_
