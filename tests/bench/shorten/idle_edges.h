// What idle edges cost the service in memory: `edges` separate gRPC
// connections to it, each holding a WatchInvalidations stream open as every
// redirect-edge does (and nothing else), then the service's VmRSS compared
// with before. This is the service's memory for N connected edges that send
// no traffic; the connections and streams are closed before it returns.
// The service keeps much of that memory afterwards (allocator caches), so a
// load measured on the same process next starts from it.
//
// Thread-safety: blocks the calling thread; one call at a time.
#ifndef SHORTENER_TESTS_BENCH_SHORTEN_IDLE_EDGES_H_
#define SHORTENER_TESTS_BENCH_SHORTEN_IDLE_EDGES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace shortener::bench {

struct IdleEdgesResult {
  int edges = 0;                  // streams open (each on its own connection)
  uint64_t rss_before_bytes = 0;  // service VmRSS with none open
  uint64_t rss_open_bytes = 0;    // service VmRSS with all of them open
  // (rss_open - rss_before) / edges; 0 if RSS did not grow.
  double bytes_per_edge() const;
};

// `api_key` needs the watch_invalidations scope. `edges` must not exceed the
// service's --max_invalidation_subscribers (1024 by default). UNAVAILABLE
// if a connection or stream cannot be opened within 10 s.
absl::StatusOr<IdleEdgesResult> MeasureIdleEdges(const std::string& target,
                                                 const std::string& api_key, pid_t service_pid,
                                                 int edges);

}  // namespace shortener::bench

#endif  // SHORTENER_TESTS_BENCH_SHORTEN_IDLE_EDGES_H_
