// ServiceMetrics: shorten-service's /metrics (Prometheus text exposition
// format 0.0.4, rendered by prometheus-cpp's TextSerializer). Two kinds of
// figures, every name documented in docs/operations.md, "Metrics":
//  - live ones in a prometheus::Registry: the calls by method and code and
//    their latency (rpc_metrics.h), the only figures kept on the call path;
//  - everything the parts count already in their Stats structs (group
//    committer, read batcher, id allocator, invalidation hub, click
//    recorder, key cache, connection pools, bounded queues), read once per
//    scrape through a ServiceStats snapshot and turned into families by
//    ServiceStatsFamilies: nothing added to their hot paths.
// A scrape sees each figure at some recent value, not one global snapshot.
//
// Thread-safe: Render may run concurrently with calls being counted.
#ifndef SHORTENER_SERVICES_SHORTEN_SERVICE_METRICS_H_
#define SHORTENER_SERVICES_SHORTEN_SERVICE_METRICS_H_

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edge/http/http_server.h"
#include "lib/auth/key_cache.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "lib/pg/connection_pool.h"
#include "lib/store/group_committer.h"
#include "lib/store/read_batcher.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/invalidation_hub.h"
#include "services/shorten/rpc_counters.h"
#include "services/shorten/rpc_metrics.h"

namespace shortener::service {

// One bounded queue in front of a pool of threads or a batcher.
struct QueueStats {
  std::string name;  // the `queue` label: "blocking", "key_lookup", ...
  uint64_t items = 0;
  uint64_t max_items = 0;
  uint64_t refused = 0;  // items refused because it was full, since start
};

// One database connection pool.
struct PoolStats {
  std::string name;  // the `pool` label: "links", "clicks", "api_keys"
  pg::ConnectionPool::Stats stats;
};

// What one scrape reads from the parts.
struct ServiceStats {
  std::array<int64_t, kRpcCount> received{};  // RpcCounters, by Rpc
  store::GroupCommitter::Stats commits;
  store::ReadBatcher::Stats reads;
  idalloc::SegmentIdAllocator::Stats ids;
  InvalidationHub::Stats invalidations;
  ClickRecorder::Stats clicks;
  auth::KeyCache::Stats keys;
  std::vector<PoolStats> pools;
  std::vector<QueueStats> queues;
  bool ready = false;  // what /readyz answers
  // The HTTP/JSON API's server (--http_listen); none when it is off.
  std::optional<edge::http::HttpServerStats> http_api;
};

// The families of `stats`, in the order docs/operations.md lists them.
std::vector<prometheus::MetricFamily> ServiceStatsFamilies(const ServiceStats& stats);

class ServiceMetrics {
 public:
  // `gather` runs once per Render, on the caller's thread; it must be
  // thread-safe and must not block for long (it reads the Stats structs).
  explicit ServiceMetrics(std::function<ServiceStats()> gather);

  // For the interceptor (rpc_metrics.h).
  RpcMetrics& rpcs() { return rpcs_; }

  // The whole /metrics body.
  std::string Render() const;

 private:
  const std::function<ServiceStats()> gather_;
  prometheus::Registry registry_;
  RpcMetrics rpcs_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SERVICE_METRICS_H_
