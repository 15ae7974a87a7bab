// Groups the edge's concurrent cache misses into few RPCs: one code goes out
// as a plain Resolve, several as one BatchResolve (which the service answers
// with one database query per batch).
//
// Adaptive, no timer: while fewer than max_in_flight calls are out, a miss
// is sent at once (no added latency on a quiet edge); when all are out,
// misses queue and the next call to return sends everything queued (up to
// max_batch codes) in one BatchResolve. The busier the edge, the bigger the
// batches: per miss the gRPC cost on both sides (framing, thread hops,
// HTTP/2 bookkeeping, about 30 µs of CPU here) is paid once per batch.
//
// Bounds:
// - At most max_queued codes wait for a call; a Resolve beyond that is
//   answered kOverloaded at once (never queued), so a flood of misses costs
//   bounded memory and the service a bounded backlog.
// - Every code carries a deadline (the request's miss deadline, set by the
//   caller from when the request arrived). A code still queued at its
//   deadline is answered kTimedOut then, by the batcher's expiry thread; a
//   call gets the earliest deadline of its codes (capped by the client's
//   resolve_timeout), and a code whose call ended without an answer at or
//   past its deadline is answered kTimedOut. So `done` runs by the deadline
//   (plus scheduling delay), whatever the service does.
//
// Built on batching::AdaptiveBatcher (lib/batching/adaptive_batcher.h):
// the queue, its bound, the slots and the deadlines are its; what a batch
// is sent as, and the replies, are here.
//
// Thread-safe; `done` runs on a gRPC thread, the expiry thread, or the
// calling thread (refusals, shutdown).
#ifndef SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_
#define SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "edge/upstream/link_resolver.h"
#include "lib/batching/adaptive_batcher.h"

namespace shortener::edge {

struct ResolveBatcherOptions {
  // Codes per BatchResolve at most (the service accepts up to 1000).
  // Default 256.
  int max_batch = 256;
  // Resolve/BatchResolve calls out at once at most. Default 4.
  int max_in_flight = 4;
  // Codes waiting for a call at most; beyond, Resolve answers kOverloaded
  // at once. Default 1024 (four full batches).
  int max_queued = 1024;
};

class ResolveBatcher {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = absl::AnyInvocable<void(ResolveReply)>;

  // `upstream` (ServiceClient in production) must outlive the batcher.
  // Options below 1 count as 1. Starts the expiry thread.
  ResolveBatcher(LinkResolver* upstream, ResolveBatcherOptions options);
  // Drains (see Drain) if that was not done.
  ~ResolveBatcher();
  ResolveBatcher(const ResolveBatcher&) = delete;
  ResolveBatcher& operator=(const ResolveBatcher&) = delete;

  // Resolves `code`; `done` runs exactly once, with the service's answer,
  // or without asking: kOverloaded "resolve queue full" when max_queued
  // codes wait already, kTimedOut when `deadline` passed (before the code
  // was sent, or with its call), kUnavailable "shutting down" after Drain.
  void Resolve(absl::string_view code, Clock::time_point deadline, Done done);
  // Without a deadline of its own (the client's resolve_timeout still
  // bounds each call).
  void Resolve(absl::string_view code, Done done) {
    Resolve(code, Clock::time_point::max(), std::move(done));
  }

  // For shutdown: answers what is queued with kUnavailable, refuses new
  // codes, stops the expiry thread and waits until every call out has
  // returned and its callbacks have run (bounded by the client's
  // resolve_timeout). After it returns no callback touches the batcher, its
  // upstream or anything a `done` uses. Idempotent.
  void Drain();

  struct Stats {
    uint64_t calls = 0;  // RPCs sent (Resolve + BatchResolve)
    uint64_t codes = 0;  // codes resolved through them
    // Answered kOverloaded: the queue held max_queued codes.
    uint64_t refused_queue_full = 0;
    // Answered kTimedOut: still queued at their deadline ...
    uint64_t expired_queued = 0;
    // ... or their call ended without an answer at or past it.
    uint64_t expired_in_call = 0;
    size_t queued = 0;  // codes waiting for a call now
  };
  Stats GetStats() const;

 private:
  struct Pending {
    std::string code;
    Clock::time_point deadline;
    Done done;
  };

  // Sends a batch as one Resolve (one code) or BatchResolve, and answers
  // each code from the reply; refusals become the replies above.
  class Sender final : public batching::AsyncBatchExecutor<Pending> {
   public:
    explicit Sender(LinkResolver* upstream) : upstream_(upstream) {}
    void Start(std::vector<Pending> batch, batching::BatchFinished finished) override;
    void Refuse(absl::Span<Pending> codes, const batching::Refusal& why) override;

    std::atomic<uint64_t> expired_in_call{0};

   private:
    LinkResolver* const upstream_;
  };

  Sender sender_;
  batching::AdaptiveBatcher<Pending> batcher_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_
