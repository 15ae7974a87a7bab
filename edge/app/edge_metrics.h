// The redirect edge's counters and their Prometheus text rendering
// (/metrics, text exposition format 0.0.4).
//
// Hot-path counters (responses by status, prefilter rejections) live in one
// cache-line-aligned block per event loop, written by that loop's thread
// (and, for deferred responses, the gRPC thread completing them) with
// relaxed atomics: no cache line bounces between loops, no lock is taken. Upstream figures (Resolve
// latency and outcomes, invalidation stream events) are recorded from gRPC threads on misses only,
// into shared relaxed atomics. Render() sums everything; a scrape sees each counter at some recent
// value (not one global snapshot), as usual for Prometheus.
#ifndef SHORTENER_EDGE_APP_EDGE_METRICS_H_
#define SHORTENER_EDGE_APP_EDGE_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "edge/cache/link_cache.h"
#include "edge/clicks/click_queue.h"
#include "edge/clicks/click_sender.h"
#include "edge/clicks/click_spool.h"
#include "edge/http/http_server.h"
#include "edge/http_status.h"
#include "edge/request_target.h"

namespace shortener::edge {

// Why a cache miss was answered without the service's answer (a stale entry
// or 503): the miss-path bounds of redirect_handler.h.
enum class MissRefusal {
  kDeadline,          // the request's miss deadline passed (kTimedOut)
  kResolveQueueFull,  // the resolve batcher's queue was full (kOverloaded)
  kAliasMisses,       // --max_alias_misses alias fetches were in flight
};

class EdgeMetrics {
 public:
  // The statuses the edge sends, in the order they are rendered; anything
  // else is counted as "other".
  static constexpr std::array<int, 17> kStatuses = {200, 204, 301, 302, 307, 308, 400, 404, 405,
                                                    410, 413, 414, 431, 500, 502, 503, 505};
  // Upper bounds of the Resolve latency histogram, in seconds.
  static constexpr std::array<double, 14> kLatencyBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};

  explicit EdgeMetrics(int loops);

  // On behalf of event loop `loop` (any thread).
  void CountResponse(int loop, int status) {
    Loop& l = loops_[loop];
    Bump(l.responses[StatusSlot(status)]);
  }
  void CountPrefiltered(int loop) { Bump(loops_[loop].prefiltered); }
  void CountBadRequest(int loop, BadTargetReason reason) {
    Bump(loops_[loop].bad_requests[static_cast<int>(reason)]);
  }

  // Any thread (gRPC callbacks).
  void ObserveResolve(absl::Duration latency, ResolveOutcome outcome);
  void CountInvalidation(size_t codes, bool drop_all);
  void CountStreamStart() { stream_starts_.fetch_add(1, std::memory_order_relaxed); }
  void SetStreamSubscribed(bool up) { stream_up_.store(up, std::memory_order_relaxed); }
  void CountUnsafeLocation() { unsafe_locations_.fetch_add(1, std::memory_order_relaxed); }
  void CountMissRefusal(MissRefusal reason) {
    miss_refusals_[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  }

  // Live figures owned by other parts, passed in at render time.
  struct Gauges {
    LinkCacheStats cache;
    http::HttpServerStats server;
    uint64_t resolve_rpcs = 0;   // Resolve + BatchResolve calls sent
    uint64_t resolve_codes = 0;  // codes they carried
    size_t resolve_queued = 0;   // codes waiting in the resolve batcher
    int alias_misses = 0;        // alias fetches in flight
    bool service_ready = false;
    ClickQueueStats click_queue;
    ClickSenderStats click_sender;
    ClickSpoolStats click_spool;
  };
  std::string Render(const Gauges& gauges) const;

 private:
  static constexpr int kBadReasons = 8;

  struct alignas(64) Loop {
    std::array<std::atomic<uint64_t>, kStatuses.size() + 1> responses{};
    std::atomic<uint64_t> prefiltered{0};
    std::array<std::atomic<uint64_t>, kBadReasons> bad_requests{};
  };

  // Mostly one writer per Loop (deferred responses are counted from gRPC
  // threads), so the line rarely moves and the add is uncontended.
  static void Bump(std::atomic<uint64_t>& counter) {
    counter.fetch_add(1, std::memory_order_relaxed);
  }
  static int StatusSlot(int status);
  // Sections of Render, in the order they appear.
  void RenderRequests(const Gauges& gauges, std::string& out) const;
  static void RenderCache(const LinkCacheStats& c, std::string& out);
  void RenderResolves(const Gauges& gauges, std::string& out) const;
  void RenderInvalidations(const Gauges& gauges, std::string& out) const;
  static void RenderClicks(const Gauges& gauges, std::string& out);

  int loop_count_;
  std::unique_ptr<Loop[]> loops_;

  std::array<std::atomic<uint64_t>, kLatencyBuckets.size() + 1> latency_buckets_{};
  std::atomic<uint64_t> latency_count_{0};
  std::atomic<uint64_t> latency_sum_ns_{0};
  std::array<std::atomic<uint64_t>, 6> resolve_outcomes_{};  // by ResolveOutcome
  std::atomic<uint64_t> invalidation_messages_{0};
  std::atomic<uint64_t> invalidated_codes_{0};
  std::atomic<uint64_t> drop_alls_{0};
  std::atomic<uint64_t> stream_starts_{0};
  std::atomic<bool> stream_up_{false};
  std::atomic<uint64_t> unsafe_locations_{0};
  std::array<std::atomic<uint64_t>, 3> miss_refusals_{};  // by MissRefusal
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_APP_EDGE_METRICS_H_
