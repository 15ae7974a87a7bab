#include "edge/http/client_connection_counts.h"

#include "absl/hash/hash.h"

namespace shortener::edge::http::internal {

ClientConnectionCounts::Key ClientConnectionCounts::KeyOf(const PeerAddress& peer) {
  uint64_t first = 0;
  for (int i = 0; i < 8; ++i) first = first << 8 | peer.bytes[i];
  if (peer.is_v6) return {first, 0};
  return {0, uint64_t{1} << 32 | first >> 32};
}

ClientConnectionCounts::Shard& ClientConnectionCounts::ShardFor(const Key& key) const {
  return shards_[absl::Hash<Key>()(key) % kShards];
}

bool ClientConnectionCounts::TryAdd(const PeerAddress& peer) {
  const Key key = KeyOf(peer);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  uint32_t& count = shard.counts[key];
  if (count >= limit_) return false;  // the entry exists: a connection holds it
  ++count;
  return true;
}

void ClientConnectionCounts::Remove(const PeerAddress& peer) {
  const Key key = KeyOf(peer);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.counts.find(key);
  if (it == shard.counts.end()) return;
  if (--it->second == 0) shard.counts.erase(it);
}

size_t ClientConnectionCounts::CountFor(const PeerAddress& peer) const {
  const Key key = KeyOf(peer);
  const Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.counts.find(key);
  return it == shard.counts.end() ? 0 : it->second;
}

}  // namespace shortener::edge::http::internal
