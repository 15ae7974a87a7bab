// KeyCache: the service's cache of API key look-ups, by key hash, over an
// ApiKeyStore.
//
// Authenticating every call against the database would put a query in front
// of every RPC; keys change rarely, so answers are kept for a short TTL.
// Revocation must still take effect within a second, which the TTL alone
// cannot give: the owner of the cache calls Invalidate(hash) when the
// database announces a revoked key (NOTIFY, the same path as revoked links)
// and Clear() when it may have missed announcements (listener reconnected).
//
// Answers cached: a usable key (ttl) and "no such key" / "key revoked"
// (negative_ttl, short, so a key created on another replica works soon and
// a flood of one wrong key costs one query per negative_ttl). Store errors
// are never cached. Expiry is measured on the Clock given.
//
// A look-up that started before an Invalidate or Clear never stores its
// (possibly stale) answer: one generation counter, bumped by both. (An
// Invalidate of another key then also keeps an answer out of the cache; that
// costs one more look-up, and revocations are rare.)
//
// Thread safety: thread-safe; one std::mutex around a hash map. The store
// is called outside the lock, on the caller's thread.
#ifndef SHORTENER_LIB_AUTH_KEY_CACHE_H_
#define SHORTENER_LIB_AUTH_KEY_CACHE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/auth/api_key_store.h"
#include "lib/auth/principal.h"
#include "lib/common/clock.h"

namespace shortener::auth {

struct KeyCacheOptions {
  // How long a usable key is served from the cache. Default 10 s.
  absl::Duration ttl = absl::Seconds(10);
  // How long "unknown" / "revoked" is. Default 1 s.
  absl::Duration negative_ttl = absl::Seconds(1);
  // Entries at most (default 100000); past it, expired entries are swept and, if that is not
  // enough, everything is dropped (look-ups refill what is in use).
  size_t max_entries = 100000;
};

class KeyCache {
 public:
  // The principal of an active key; UNAUTHENTICATED "api key unknown" or
  // "api key revoked" (cached negatively); any other error of the store
  // (UNAVAILABLE) passed through uncached.
  using Result = absl::StatusOr<std::shared_ptr<const Principal>>;

  // `store` and `clock` outlive the cache.
  KeyCache(ApiKeyStore* store, const Clock& clock, KeyCacheOptions options = {});
  KeyCache(const KeyCache&) = delete;
  KeyCache& operator=(const KeyCache&) = delete;

  // The cached answer for `key_hash`, or nullopt when there is none (or it
  // expired): then call Load, off any thread that must not block.
  std::optional<Result> Find(const std::string& key_hash);

  // Looks the key up (blocking: asks the store), caches the answer as
  // described above and returns it.
  Result Load(const std::string& key_hash);

  // Forgets `key_hash`; a Load in flight for it will not store its answer.
  void Invalidate(absl::string_view key_hash);
  // Forgets everything; no Load in flight will store its answer.
  void Clear();

  struct Stats {
    int64_t hits = 0;
    int64_t loads = 0;
    int64_t invalidations = 0;
    size_t size = 0;
  };
  Stats GetStats() const;

 private:
  struct Entry {
    Result result;
    absl::Time expires;
  };
  void MakeRoomLocked(absl::Time now);  // requires mu_

  ApiKeyStore* const store_;
  const Clock& clock_;
  const KeyCacheOptions options_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_;  // guarded by mu_
  uint64_t generation_ = 0;  // guarded by mu_; bumped by Invalidate and Clear
  Stats stats_;              // guarded by mu_ (size computed on read)
};

}  // namespace shortener::auth

#endif  // SHORTENER_LIB_AUTH_KEY_CACHE_H_
