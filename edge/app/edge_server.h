// Wiring of redirect-edge: codec (from the shared secret file), cache,
// service client, invalidation watcher, click queue + spool + sender, HTTP
// server; runs until SIGTERM or SIGINT, then drains: stop accepting, finish
// in-flight requests (misses included), close connections, flush the
// clicks (send for up to --click_flush_timeout, spool the rest), stop the
// stream, exit.
#ifndef SHORTENER_EDGE_APP_EDGE_SERVER_H_
#define SHORTENER_EDGE_APP_EDGE_SERVER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "edge/cache/link_cache.h"
#include "edge/clicks/click_queue.h"
#include "edge/clicks/click_sender.h"
#include "edge/http/host_port.h"  // SplitHostPort, for the flags
#include "lib/grpcutil/tls.h"

namespace shortener::edge {

struct EdgeClickConfig {
  ClickQueueOptions queue;    // --click_queue_events, --click_queue_bytes
  ClickSenderOptions sender;  // --click_batch, --click_flush_interval, --click_rpc_timeout
  std::string spool_dir;      // --click_spool_dir; empty: in memory (lost on restart)
  uint64_t spool_max_bytes = uint64_t{1} << 30;     // --click_spool_max_bytes
  absl::Duration flush_timeout = absl::Seconds(5);  // --click_flush_timeout
};

struct EdgeConfig {
  std::string listen = "127.0.0.1:8080";  // HOST:PORT, [V6]:PORT; port 0: any
  // /metrics, /healthz, /readyz (admin_handler.h): an address of its own,
  // loopback by default (a pod binds its own IP); never the --listen port;
  // empty: no admin listener.
  std::string admin_listen = "127.0.0.1:9090";
  std::string service = "127.0.0.1:50051";  // the shorten-service, gRPC target
  grpcutil::ClientTlsOptions service_tls;   // --service_tls_*; none set: plaintext
  int threads = 0;                          // event loops; 0: one per core
  std::string codec_secret_file;            // the service's secret (required)
  std::string api_key_file;                 // the edge's infrastructure key (required)
  int min_code_length = 6;                  // must equal the service's
  LinkCacheOptions cache;
  std::vector<std::string> trusted_proxies;  // CIDRs whose X-Forwarded-For is believed
  // Location schemes sent (the service's --allowed_schemes, same meaning).
  std::vector<std::string> allowed_schemes = {"http", "https"};
  absl::Duration resolve_timeout = absl::Seconds(2);
  int resolve_batch = 256;    // codes per BatchResolve at most
  int resolve_in_flight = 4;  // Resolve/BatchResolve calls out at once
  int resolve_queue = 1024;   // codes waiting for a call at most; more: 503
  // How long a request waits for a miss, from its arrival; zero: derived,
  // MissDeadline(config).
  absl::Duration miss_deadline = absl::ZeroDuration();
  int max_alias_misses = 128;  // alias look-ups waiting for the service at most
  // After SIGTERM: serving on, /readyz 503, before the drain starts.
  absl::Duration shutdown_delay = absl::ZeroDuration();
  absl::Duration shutdown_grace = absl::Seconds(10);
  size_t max_request_line = 8 * 1024;
  // Client connections over all loops; 0: what the open-file limit leaves
  // after the edge's own descriptors (edge/descriptor_budget.h).
  size_t max_connections = 0;
  // Connections one client (TCP peer; IPv6 by /64) may hold; 0: no limit.
  // Peers in trusted_proxies are exempt. As HttpServerOptions.
  size_t max_connections_per_client = 4096;
  absl::Duration idle_timeout = absl::Seconds(60);
  bool access_log = false;
  bool record_clicks = true;  // false: no click events, no sender, no spool
  EdgeClickConfig clicks;
};

// Checks values that need no I/O. INVALID_ARGUMENT naming the flag.
absl::Status ValidateEdgeConfig(const EdgeConfig& config);

// --miss_deadline, or when it is zero --resolve_timeout + 500 ms: a miss
// that queues behind calls in flight still gets its own call's worth of
// time.
absl::Duration MissDeadline(const EdgeConfig& config);

// Runs the edge until SIGTERM/SIGINT (blocked beforehand in every thread:
// BlockTerminationSignals). OK after a clean drain, or why it could not start.
absl::Status RunEdge(const EdgeConfig& config);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_APP_EDGE_SERVER_H_
