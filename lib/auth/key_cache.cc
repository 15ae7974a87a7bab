#include "lib/auth/key_cache.h"

#include <utility>

namespace shortener::auth {

KeyCache::KeyCache(Lookup lookup, KeyCacheOptions options, std::function<absl::Time()> now)
    : lookup_(std::move(lookup)), options_(options), now_(std::move(now)) {}

std::optional<KeyCache::Result> KeyCache::Find(const std::string& key_hash) {
  const absl::Time now = now_();
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
  absl::StatusOr<Principal> found = lookup_(key_hash);
  Result result = found.ok() ? Result(std::make_shared<const Principal>(*std::move(found)))
                             : Result(found.status());
  absl::Duration ttl;
  if (result.ok()) {
    ttl = options_.ttl;
  } else if (absl::IsUnauthenticated(result.status())) {
    ttl = options_.negative_ttl;
  } else {
    return result;  // the database's trouble, not the key's: ask again next time
  }
  const absl::Time now = now_();
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
