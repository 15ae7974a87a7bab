// Open connections per client, for HttpServerOptions::max_connections_per_client
// (internal to edge_http). A client is a TCP peer address; an IPv6 peer is
// counted by its /64, since a host may use any address of its /64 (privacy
// addresses) and so could otherwise open as many connections as it likes.
//
// Shared by all event loops and touched only when a connection is accepted
// and when it is destroyed, never per request. Sharded by address, a mutex
// per shard; an entry exists only while its client has a connection open,
// so the table holds at most max_connections entries.
//
// Thread safety: all methods from any thread.
#ifndef SHORTENER_EDGE_HTTP_CLIENT_CONNECTION_COUNTS_H_
#define SHORTENER_EDGE_HTTP_CLIENT_CONNECTION_COUNTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "edge/http/http_server.h"

namespace shortener::edge::http::internal {

class ClientConnectionCounts {
 public:
  // `limit` >= 1: connections one client may hold open.
  explicit ClientConnectionCounts(size_t limit) : limit_(limit) {}

  // Counts a new connection of `peer`'s client; false (and nothing
  // counted) if it already holds `limit` of them.
  bool TryAdd(const PeerAddress& peer);
  // Uncounts a connection that TryAdd counted.
  void Remove(const PeerAddress& peer);
  // Open connections counted for `peer`'s client.
  size_t CountFor(const PeerAddress& peer) const;

 private:
  // IPv4: {0, 1 << 32 | address}; IPv6: {first 8 bytes, 0} (its /64).
  using Key = std::pair<uint64_t, uint64_t>;
  static Key KeyOf(const PeerAddress& peer);

  static constexpr size_t kShards = 16;
  struct alignas(64) Shard {
    mutable std::mutex mu;                      // std::mutex: visible to TSan
    absl::flat_hash_map<Key, uint32_t> counts;  // guarded by mu
  };
  Shard& ShardFor(const Key& key) const;

  const size_t limit_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_CLIENT_CONNECTION_COUNTS_H_
