// InvalidationHub: fans invalidated codes out to the WatchInvalidations
// subscribers (redirect edges) of one service replica. Free of gRPC types:
// the stream adapter (invalidation_stream.h) pulls messages from its
// Subscription and writes them one at a time.
//
// What a subscriber sees, in order:
//  1. drop_all, as soon as it is subscribed (nothing it cached before is
//     trusted: it may have missed invalidations while not subscribed);
//  2. codes, in messages of 1..max_codes_per_message codes: every code
//     Publish()ed after the subscription, at most flush_interval after
//     Publish (codes published close together share a message);
//  3. drop_all again whenever DropAll() is called (the database listener
//     reconnected: notifications may have been missed) or when the
//     subscriber fell behind: more than max_pending_codes codes waiting for
//     it (a slow or stuck reader) are replaced by one drop_all, so the hub
//     never holds an unbounded backlog and never blocks a publisher.
// A pending drop_all absorbs the codes pending with it (dropping everything
// covers them). Codes are not deduplicated across messages; a code may come
// again (harmless: invalidation is idempotent).
//
// Threads: Publish, DropAll, Close, Subscribe and Unsubscribe may be called
// from any thread. Batches are delivered by the hub's flusher thread;
// `wake` callbacks run on the flusher thread, or on the thread calling
// DropAll / Close, never under a hub lock: they must not block (the stream
// adapter starts a gRPC write, which does not). std::mutex, which
// ThreadSanitizer sees.
#ifndef SHORTENER_SERVICES_SHORTEN_INVALIDATION_HUB_H_
#define SHORTENER_SERVICES_SHORTEN_INVALIDATION_HUB_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::service {

struct InvalidationHubOptions {
  // Codes published within this window of the first pending one go out in
  // one message. Default 10 ms.
  absl::Duration flush_interval = absl::Milliseconds(10);
  // Codes per message at most; a full batch is flushed at once, without
  // waiting for flush_interval. Default 500.
  size_t max_codes_per_message = 500;
  // Codes waiting for one subscriber at most; beyond, they are replaced by
  // drop_all. Default 10000.
  size_t max_pending_codes = 10000;
  // Subscriptions at once at most (each holds a stream, a queue of up to
  // max_pending_codes codes, and a share of every flush); Subscribe refuses
  // more. Default 1024.
  size_t max_subscribers = 1024;
};

// One message for a subscriber: either drop_all (codes empty) or 1..max
// codes.
struct InvalidationBatch {
  bool drop_all = false;
  std::vector<std::string> codes;
};

class InvalidationHub {
 public:
  // One subscriber's queue. Shared between the hub and the subscriber's
  // stream; thread-safe.
  class Subscription {
   public:
    // The next message to send, or nullopt when nothing is pending (the hub
    // calls `wake` when something arrives). Never blocks.
    std::optional<InvalidationBatch> Take();
    // True once the hub was closed or this subscription removed: the stream
    // should end.
    bool closed() const;

   private:
    friend class InvalidationHub;
    Subscription(size_t max_codes_per_message, size_t max_pending_codes,
                 std::function<void()> wake);
    // Adds codes (or replaces the backlog with drop_all); false when closed.
    bool Deliver(const std::vector<std::string>& codes, bool* overflowed);
    bool MarkDropAll();
    void Close();
    size_t backlog() const;  // codes not yet taken

    const size_t max_codes_per_message_;
    const size_t max_pending_codes_;
    const std::function<void()> wake_;
    mutable std::mutex mu_;
    // Guarded by mu_:
    bool drop_all_ = true;           // the first message of every subscription
    std::deque<std::string> codes_;  // not yet taken, in publish order
    bool closed_ = false;
  };

  explicit InvalidationHub(InvalidationHubOptions options = {});
  // Closes every subscription and joins the flusher. Subscriptions may
  // outlive the hub (they hold no pointer to it); Unsubscribe must not be
  // called after destruction.
  ~InvalidationHub();
  InvalidationHub(const InvalidationHub&) = delete;
  InvalidationHub& operator=(const InvalidationHub&) = delete;

  // A new subscription whose first message is drop_all. `wake` is called
  // (see the file comment for where) whenever the subscription may have
  // something to Take or has been closed. After Close(), the subscription is
  // closed at once. RESOURCE_EXHAUSTED "invalidation subscribers: N are
  // subscribed, the limit ..." when max_subscribers are subscribed already.
  absl::StatusOr<std::shared_ptr<Subscription>> Subscribe(std::function<void()> wake);
  // Removes and closes it; `wake` is not called for it afterwards, except by
  // a call already running.
  void Unsubscribe(const std::shared_ptr<Subscription>& subscription);

  // Queues `code` for every current subscriber (flushed by the flusher
  // thread). Never blocks on subscribers. Ignored after Close().
  void Publish(const std::string& code);
  // Every current subscriber's next message is drop_all (codes pending for
  // it are dropped with it). Immediate, not batched.
  void DropAll();
  // Closes every subscription (the streams end) and refuses new ones.
  void Close();

  size_t subscriber_count() const;

  struct Stats {
    int64_t codes = 0;        // codes published (after de-duplication in a batch)
    int64_t batches = 0;      // batches flushed to subscribers
    int64_t overflows = 0;    // drop_alls sent instead of a subscriber's backlog
    int64_t drop_alls = 0;    // DropAll() calls
    int64_t subscribers = 0;  // subscribed now
    int64_t pending = 0;      // codes waiting for the next flush now
    // Codes flushed to subscribers but not yet taken by their streams, now:
    // the sum over subscribers, and the largest one's.
    int64_t backlog = 0;
    int64_t max_backlog = 0;
  };
  Stats GetStats() const;

 private:
  void FlushLoop();
  std::vector<std::shared_ptr<Subscription>> Snapshot() const;  // without mu_

  const InvalidationHubOptions options_;

  mutable std::mutex mu_;
  std::condition_variable work_;  // codes pending, or stopping_
  // Guarded by mu_:
  std::vector<std::shared_ptr<Subscription>> subscribers_;
  std::vector<std::string> pending_;              // in publish order
  absl::flat_hash_set<std::string> pending_set_;  // de-duplicates pending_
  absl::Time first_pending_ = absl::InfiniteFuture();
  bool closed_ = false;
  bool stopping_ = false;
  Stats stats_;
  std::thread flusher_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_INVALIDATION_HUB_H_
