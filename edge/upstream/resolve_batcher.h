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
// Thread-safe; `done` runs on a gRPC thread.
#ifndef SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_
#define SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "edge/upstream/service_client.h"

namespace shortener::edge {

struct ResolveBatcherOptions {
  // Codes per BatchResolve at most (the service accepts up to 1000).
  int max_batch = 256;
  // Resolve/BatchResolve calls out at once at most.
  int max_in_flight = 4;
};

class ResolveBatcher {
 public:
  using Done = absl::AnyInvocable<void(ResolveReply)>;

  // `client` must outlive the batcher. Options below 1 count as 1.
  ResolveBatcher(ServiceClient* client, ResolveBatcherOptions options);

  // Resolves `code`; `done` runs exactly once (kUnavailable "shutting
  // down" after Drain).
  void Resolve(absl::string_view code, Done done);

  // For shutdown: answers what is queued with kUnavailable, refuses new
  // codes, and waits until every call out has returned and its callbacks
  // have run (bounded by the client's resolve_timeout). After it returns no
  // callback touches the batcher, its client or anything a `done` uses.
  void Drain();

  struct Stats {
    uint64_t calls = 0;  // RPCs sent (Resolve + BatchResolve)
    uint64_t codes = 0;  // codes resolved through them
  };
  Stats GetStats() const;

 private:
  struct Pending {
    std::string code;
    Done done;
  };

  // Sends `batch` (non-empty), then keeps sending what queued meanwhile.
  void Send(std::vector<Pending> batch);
  // Ends one call: takes the next batch if any (else frees the slot).
  std::vector<Pending> NextBatch();

  ServiceClient* client_;
  const ResolveBatcherOptions options_;

  mutable std::mutex mu_;
  std::condition_variable idle_;  // in_flight_ reached 0
  std::vector<Pending> queue_;    // guarded by mu_
  int in_flight_ = 0;             // guarded by mu_
  bool draining_ = false;         // guarded by mu_
  Stats stats_;                   // guarded by mu_
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_RESOLVE_BATCHER_H_
