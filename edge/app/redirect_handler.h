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
// gRPC thread.
//
// Thread safety: Handle runs on event-loop threads, the InvalidationSink
// methods on gRPC threads; everything shared is the cache, the metrics and
// the client, all thread-safe.
#ifndef SHORTENER_EDGE_APP_REDIRECT_HANDLER_H_
#define SHORTENER_EDGE_APP_REDIRECT_HANDLER_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "edge/app/edge_metrics.h"
#include "edge/cache/link_cache.h"
#include "edge/clicks/click_queue.h"
#include "edge/clicks/click_sender.h"
#include "edge/clicks/click_spool.h"
#include "edge/client_ip.h"
#include "edge/http/http_server.h"
#include "edge/request_target.h"
#include "edge/upstream/invalidation_watcher.h"
#include "edge/upstream/resolve_batcher.h"
#include "edge/upstream/service_client.h"
#include "lib/codec/short_codec.h"

namespace shortener::edge {

struct RedirectHandlerOptions {
  RequestTargetOptions target;
  TrustedProxies trusted_proxies;
  // One line per request on stderr: client IP, method, status, code.
  bool access_log = false;
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
  // Every pointer must outlive the handler.
  RedirectHandler(const codec::ShortCodec* codec, LinkCache* cache, ServiceClient* client,
                  ResolveBatcher* resolver, EdgeMetrics* metrics, ClickRecording clicks,
                  RedirectHandlerOptions options);

  // Set once the server runs, for /metrics (its connection figures).
  void set_server(const http::HttpServer* server) { server_.store(server); }

  void Handle(http::Exchange& exchange) override;

  // InvalidationSink.
  void DropAll() override;
  void Invalidate(absl::string_view code) override;
  void StreamState(bool subscribed) override;
  void StreamStarting() override;
  void MessageReceived(size_t codes, bool drop_all) override;

 private:
  void Lookup(http::Exchange& exchange, absl::string_view code, bool head, bool keep_alive);
  std::string MetricsText() const;
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
  ServiceClient* client_;
  ResolveBatcher* resolver_;
  EdgeMetrics* metrics_;
  ClickRecording clicks_;
  RedirectHandlerOptions options_;
  std::atomic<const http::HttpServer*> server_{nullptr};
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_APP_REDIRECT_HANDLER_H_
