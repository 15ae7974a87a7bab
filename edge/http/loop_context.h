// What the connections of one event loop share (internal to edge_http): the
// handler, the limits, the clock and Date string, the counters, and the way
// deferred responses come back to the loop. An EventLoop owns one; tests and
// the fuzz target build their own to run a ConnectionProtocol without a
// socket or an io_context.
//
// Thread safety: loop thread only, except the counters (read by Stats()
// from any thread) and the gate (used by DeferredResponse from any thread).
#ifndef SHORTENER_EDGE_HTTP_LOOP_CONTEXT_H_
#define SHORTENER_EDGE_HTTP_LOOP_CONTEXT_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "edge/http/http_server.h"
#include "edge/http/request_parser.h"
#include "edge/response_builder.h"

namespace shortener::edge::http::internal {

// Where a resolved DeferredResponse is delivered, on its loop thread.
class DeferredTarget {
 public:
  // `completed` false: the response was dropped (answer 500).
  virtual void OnDeferredDone(std::string bytes, bool completed) = 0;

 protected:
  ~DeferredTarget() = default;
};

// How a resolved DeferredResponse gets from any thread to its loop thread.
class DeferredSink {
 public:
  // Called under the gate's mutex, from any thread: arranges for
  // target->OnDeferredDone(bytes, completed) to run on the loop thread
  // later (never inline: the caller may be inside Handle).
  virtual void Post(DeferredTarget* target, std::string bytes, bool completed) = 0;

 protected:
  ~DeferredSink() = default;
};

// What a DeferredResponse posts through: the loop's sink while it may still
// deliver, null once the loop is torn down. Shared, so that a
// DeferredResponse outliving the server finds it closed. (std::mutex, not
// absl::Mutex: TSan sees through it; this build's abseil is not
// instrumented.)
struct LoopGate {
  std::mutex mu;
  DeferredSink* sink = nullptr;  // guarded by mu
};

// Written by the loop thread only (relaxed load + store, no locked
// instruction), read by Stats() from any thread. On its own cache lines.
struct alignas(64) LoopCounters {
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> refused{0};
  std::atomic<uint64_t> refused_per_client{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> deferred{0};
  std::atomic<uint64_t> protocol_errors{0};
  std::atomic<uint64_t> handler_errors{0};
  std::atomic<uint64_t> idle_timeouts{0};
  std::atomic<uint64_t> request_timeouts{0};
  std::atomic<uint64_t> write_timeouts{0};
  std::atomic<uint64_t> open{0};
  std::atomic<uint64_t> output_pauses{0};
  std::atomic<uint64_t> peak_output{0};   // a maximum, not a sum
  std::atomic<uint64_t> buffer_bytes{0};  // a gauge
  std::array<std::atomic<uint64_t>, kRequestRefusalCount> refused_requests{};
  // Responses the server wrote itself, by kServerResponseStatuses slot.
  std::array<std::atomic<uint64_t>, kServerResponseStatuses.size()> server_responses{};
};

inline void Bump(std::atomic<uint64_t>& counter, int64_t by = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + static_cast<uint64_t>(by),
                std::memory_order_relaxed);
}

inline void RaiseTo(std::atomic<uint64_t>& maximum, uint64_t value) {
  if (value > maximum.load(std::memory_order_relaxed)) {
    maximum.store(value, std::memory_order_relaxed);
  }
}

struct LoopContext {
  LoopContext(int index, const HttpServerOptions& options, Handler* handler,
              std::shared_ptr<LoopGate> gate);

  // Refreshes now_ns (CLOCK_MONOTONIC_COARSE) and, when the second
  // changed, the Date string.
  void UpdateClock();
  // Sets both directly (tests, fuzzing: no clock read).
  void SetClock(int64_t monotonic_ns, std::time_t unix_second);
  absl::string_view http_date() const { return absl::string_view(date, kHttpDateLength); }

  const int index;
  Handler* const handler;
  const ParserLimits limits;
  // HttpServerOptions::error_writer (may be empty).
  const std::function<void(int, absl::string_view, std::string&)> error_writer;
  const int64_t idle_timeout_ns;
  const int64_t header_timeout_ns;
  const size_t max_output_bytes;
  const std::shared_ptr<LoopGate> gate;

  LoopCounters counters;
  // Set when the server starts shutting down: requests handled from then on
  // get keep_alive false, and no new request is started.
  bool draining = false;
  int64_t now_ns = 0;
  std::time_t date_second = 0;
  char date[kHttpDateLength] = {};
};

}  // namespace shortener::edge::http::internal

#endif  // SHORTENER_EDGE_HTTP_LOOP_CONTEXT_H_
