// The redirect edge's request handler: classification, cache, Resolve on a
// miss, the response. Also the sink of the invalidation stream.
//
// Hit path (a cached code): ClassifyRequest (no allocation, two SHA-256
// compressions for the prefilter), one cache look-up under its shard's
// mutex whose visitor writes the response straight into the connection's
// output buffer, one per-loop counter. No allocation. The shard lock is the
// one shared write: uncontended it costs ~20 ns of a ~4 µs request (see
// docs/edge.md), and with 64 shards two loops rarely meet on one.
// Clicks: a redirect answered to a request that CountsAsClick (not HEAD,
// not a prefetch) pushes one ClickEvent into the ClickQueue: the header
// values are copied (a few small allocations) and the push takes the
// queue's lock for a move; when the queue is full the event is dropped and
// counted, so no redirect ever waits for analytics. On a miss the event is
// prepared with the request (its views die) and pushed with the answer.
// Miss path: the request is deferred; the cache coalesces concurrent misses
// for one code into one fetch, the ResolveBatcher groups fetches of
// different codes into few RPCs; the reply is stored (unless an
// invalidation overtook it) and completes every waiting request from the
// gRPC thread. Bounds on the miss path:
//  - miss_deadline: a request is answered within miss_deadline of its
//    arrival (Exchange::arrival_ns: its first byte read, so time spent
//    behind earlier requests on its connection counts), queueing in the
//    batcher included. The fetch a request starts carries its deadline;
//    later requests join it unless it would end more than the cache's
//    fetch_deadline_slack after their own deadline (then they start a new
//    fetch, LinkCache::JoinFetch). Past the deadline: 503 with Retry-After
//    (kTimedOut), or a stale entry within its grace; a request whose
//    deadline passed while it waited is answered so at once.
//  - The batcher's queue bound (ResolveBatcherOptions::max_queued): a fetch
//    that would exceed it is answered at once (kOverloaded: 503 or stale).
//  - max_alias_misses: alias fetches in flight at once at most (codes of the
//    custom-alias shape, which any made-up path has: the prefilter cannot
//    reject them); one more is answered at once (kOverloaded) instead of
//    adding work at the service. Generated-shape codes that pass the check
//    character are not limited by it (1 in 62 made-up ones gets that far).
// Every refusal is counted (edge_miss_refusals_total{reason}).
//
// Dependencies: the upstream is a LinkResolver (ServiceClient in
// production, InMemoryLinkResolver in tests), asked for readiness directly
// and for codes through the ResolveBatcher built on it; wall-clock time
// (link expiry, click times, the Date of a deferred response) comes from
// options.clock.
//
// Thread safety: Handle runs on event-loop threads, the InvalidationSink
// methods on gRPC threads; everything shared is the cache, the metrics, the
// upstream and the batcher, all thread-safe.
#ifndef SHORTENER_EDGE_APP_REDIRECT_HANDLER_H_
#define SHORTENER_EDGE_APP_REDIRECT_HANDLER_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "edge/app/edge_metrics.h"
#include "edge/cache/link_cache.h"
#include "edge/clicks/click_queue.h"
#include "edge/clicks/click_sender.h"
#include "edge/clicks/click_spool.h"
#include "edge/client_ip.h"
#include "edge/http/http_server.h"
#include "edge/request_target.h"
#include "edge/upstream/invalidation_sink.h"
#include "edge/upstream/link_resolver.h"
#include "edge/upstream/resolve_batcher.h"
#include "lib/codec/short_codec.h"
#include "lib/common/clock.h"

namespace shortener::edge {

struct RedirectHandlerOptions {
  RequestTargetOptions target;
  TrustedProxies trusted_proxies;
  // How long a request may wait for a cache miss, from its arrival. Default
  // 2.5 s (the edge's default --resolve_timeout plus 0.5 s of queueing).
  absl::Duration miss_deadline = absl::Milliseconds(2500);
  // Alias fetches in flight at most (see above). Default 128.
  int max_alias_misses = 128;
  // One line per request on stderr: client IP, method, status, code.
  bool access_log = false;
  // Which Location values are sent (--allowed_schemes); a link the service
  // answers with another is never cached and answered as an outage (a stale
  // entry or 503). Default http, https.
  LocationPolicy locations;
  // The wall clock (must outlive the handler). Default SystemClock().
  const shortener::Clock* clock = &SystemClock();
};

// Monotonic nanoseconds, the clock of LinkCache times (the same clock as
// http::Exchange::now_ns()).
int64_t MonotonicNowNs();

// Where clicks go, and the parts /metrics reports on. All null: clicks are
// not recorded.
struct ClickRecording {
  ClickQueue* queue = nullptr;
  const ClickSender* sender = nullptr;
  const ClickSpool* spool = nullptr;
};

class RedirectHandler : public http::Handler, public InvalidationSink {
 public:
  // Every pointer must outlive the handler; `batcher` resolves through
  // `upstream`.
  RedirectHandler(const codec::ShortCodec* codec, LinkCache* cache, LinkResolver* upstream,
                  ResolveBatcher* batcher, EdgeMetrics* metrics, ClickRecording clicks,
                  RedirectHandlerOptions options);

  // Set once the server runs, for /metrics (its connection figures).
  void set_server(const http::HttpServer* server) { server_.store(server); }
  // From now on /readyz answers 503 whatever the upstream says: the process
  // is about to drain (--shutdown_delay). Redirects are served as before.
  void StopBeingReady() { stopping_.store(true, std::memory_order_relaxed); }
  // Ready to serve misses: the upstream is, and StopBeingReady was not called.
  bool Ready() const { return !stopping_.load(std::memory_order_relaxed) && upstream_->Ready(); }

  void Handle(http::Exchange& exchange) override;

  // The /metrics text (served on the admin listener, admin_handler.h; the
  // public port answers /metrics 404). Thread-safe.
  std::string MetricsText() const;

  // InvalidationSink.
  void DropAll() override;
  void Invalidate(absl::string_view code) override;
  void StreamState(bool subscribed) override;
  void StreamStarting() override;
  void MessageReceived(size_t codes, bool drop_all) override;

 private:
  void Lookup(http::Exchange& exchange, absl::string_view code, bool alias, bool head,
              bool keep_alive);
  // Asks the batcher for `ticket`'s code (or refuses, see the bounds above)
  // and completes the fetch with the answer.
  void StartFetch(FetchTicket ticket, bool alias, int64_t deadline_ns);
  // The click event of a request whose redirect would be a click (status
  // unset); nullopt if it would not be one or clicks are not recorded.
  std::optional<ClickEvent> PrepareClick(const http::Request& request, absl::string_view code,
                                         bool head) const;
  // Queues `click` if `status` is a redirect.
  void RecordClick(std::optional<ClickEvent>& click, int status) const;
  // "client=IP method=M" (client IP per the trusted-proxy rule).
  std::string AccessPrefix(const http::Request& request) const;
  void LogAccess(absl::string_view prefix, int status, absl::string_view code) const;

  const codec::ShortCodec* codec_;
  LinkCache* cache_;
  LinkResolver* upstream_;
  ResolveBatcher* batcher_;
  EdgeMetrics* metrics_;
  ClickRecording clicks_;
  RedirectHandlerOptions options_;
  std::atomic<const http::HttpServer*> server_{nullptr};
  std::atomic<bool> stopping_{false};
  std::atomic<int> alias_misses_{0};  // alias fetches in flight
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_APP_REDIRECT_HANDLER_H_
