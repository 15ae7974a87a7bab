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
// Thread-safe; `done` runs on a gRPC thread, the expiry thread, or the
// calling thread (refusals, shutdown).
#ifndef SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_
#define SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "edge/upstream/link_resolver.h"

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

  // Sends `batch` (non-empty), then keeps sending what queued meanwhile.
  void Send(std::vector<Pending> batch);
  // Ends one call: takes the next batch if any (else frees the slot).
  std::vector<Pending> NextBatch();
  // Answers queued codes at their deadlines until Drain.
  void ExpireLoop();
  // Moves the queued codes whose deadline is at or before `now` into
  // `expired`; returns the earliest deadline left (max() if none). With mu_
  // held.
  Clock::time_point TakeExpired(Clock::time_point now, std::vector<Pending>& expired);

  LinkResolver* upstream_;
  const ResolveBatcherOptions options_;

  mutable std::mutex mu_;
  std::condition_variable idle_;    // in_flight_ reached 0
  std::condition_variable expiry_;  // an earlier deadline queued, or draining_
  // Guarded by mu_:
  std::deque<Pending> queue_;  // oldest first
  int in_flight_ = 0;
  bool draining_ = false;
  // When the expiry thread wakes next (max(): only when notified).
  Clock::time_point expiry_at_ = Clock::time_point::max();
  Stats stats_;
  std::thread expirer_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_
