#include "lib/auth/key_cache.h"

#include <utility>

#include "lib/auth/api_key.h"

namespace shortener::auth {
namespace {

// The principal of the active key with this hash, or UNAUTHENTICATED; other
// errors of the store passed through.
absl::StatusOr<Principal> LookupPrincipal(ApiKeyStore& store, const std::string& key_hash) {
  absl::StatusOr<ApiKeyRecord> record = store.FindByHash(key_hash);
  if (absl::IsNotFound(record.status())) return absl::UnauthenticatedError("api key unknown");
  if (!record.ok()) return record.status();
  // The store matched by equality on the hash already; comparing again in
  // constant time costs nothing and does not depend on how an index or a
  // collation compares text.
  if (!ConstantTimeEquals(record->key_hash, key_hash)) {
    return absl::UnauthenticatedError("api key unknown");
  }
  if (record->revoke_time.has_value()) return absl::UnauthenticatedError("api key revoked");
  Principal p;
  p.key_id = record->id;
  p.key_name = record->name;
  p.key_hash = record->key_hash;
  p.tenant = record->tenant;
  p.infrastructure = record->infrastructure;
  p.scopes = record->scopes;
  p.allowed_domains = record->allowed_domains;
  p.rate_per_second = record->rate_per_second;
  p.burst = record->burst;
  return p;
}

}  // namespace

KeyCache::KeyCache(ApiKeyStore* store, const Clock& clock, KeyCacheOptions options)
    : store_(store), clock_(clock), options_(options) {}

std::optional<KeyCache::Result> KeyCache::Find(const std::string& key_hash) {
  const absl::Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key_hash);
  if (it == entries_.end() || it->second.expires <= now) return std::nullopt;
  stats_.hits += 1;
  return it->second.result;
}

KeyCache::Result KeyCache::Load(const std::string& key_hash) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation = generation_;
    stats_.loads += 1;
  }
  absl::StatusOr<Principal> found = LookupPrincipal(*store_, key_hash);
  Result result = found.ok() ? Result(std::make_shared<const Principal>(*std::move(found)))
                             : Result(found.status());
  absl::Duration ttl;
  if (result.ok()) {
    ttl = options_.ttl;
  } else if (absl::IsUnauthenticated(result.status())) {
    ttl = options_.negative_ttl;
  } else {
    return result;  // the store's trouble, not the key's: ask again next time
  }
  const absl::Time now = clock_.Now();
  std::lock_guard<std::mutex> lock(mu_);
  if (generation != generation_ || ttl <= absl::ZeroDuration()) return result;
  if (entries_.size() >= options_.max_entries) MakeRoomLocked(now);
  entries_[key_hash] = Entry{result, now + ttl};
  return result;
}

void KeyCache::Invalidate(absl::string_view key_hash) {
  std::lock_guard<std::mutex> lock(mu_);
  generation_ += 1;
  stats_.invalidations += 1;
  entries_.erase(key_hash);
}

void KeyCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  generation_ += 1;
  stats_.invalidations += 1;
  entries_.clear();
}

KeyCache::Stats KeyCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats stats = stats_;
  stats.size = entries_.size();
  return stats;
}

void KeyCache::MakeRoomLocked(absl::Time now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.expires <= now) {
      entries_.erase(it++);
    } else {
      ++it;
    }
  }
  if (entries_.size() >= options_.max_entries) entries_.clear();
}

}  // namespace shortener::auth
