// Keeps one WatchInvalidations stream open to the shorten-service and
// applies what it says to an InvalidationSink (the edge's cache).
//
// The service starts every stream with Invalidation{drop_all: true}: that is
// both the "subscribed" acknowledgement and the rule that nothing cached
// before a (re)subscription is trusted, since revocations made while the
// stream was down were not seen. After that, codes arrive as links change.
// When the stream ends (service stopped, network, keepalive timeout), the
// watcher reports the stream down and resubscribes with exponential backoff
// (with jitter), reset once a stream has been acknowledged.
//
// Thread safety: Start/Stop from one owner thread; the sink is called from
// gRPC threads, one message at a time.
#ifndef SHORTENER_EDGE_UPSTREAM_INVALIDATION_WATCHER_H_
#define SHORTENER_EDGE_UPSTREAM_INVALIDATION_WATCHER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::edge {

class InvalidationSink {
 public:
  virtual ~InvalidationSink() = default;
  virtual void DropAll() = 0;
  virtual void Invalidate(absl::string_view code) = 0;
  // Stream acknowledged (true) or ended (false).
  virtual void StreamState(bool subscribed) = 0;
  // For metrics: a subscription is being attempted; a message arrived
  // (called before its DropAll/Invalidate calls).
  virtual void StreamStarting() {}
  virtual void MessageReceived(size_t codes, bool drop_all) {
    (void)codes;
    (void)drop_all;
  }
};

struct InvalidationWatcherOptions {
  std::string subscriber = "redirect-edge";
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
};

class InvalidationWatcher {
 public:
  InvalidationWatcher(shortener::v1::ShortenService::Stub* stub, InvalidationSink* sink,
                      InvalidationWatcherOptions options);
  ~InvalidationWatcher();  // Stop()

  void Start();
  // Cancels the stream and joins; idempotent.
  void Stop();

  bool subscribed() const { return subscribed_.load(std::memory_order_acquire); }

 private:
  class Reader;
  void Run();

  shortener::v1::ShortenService::Stub* stub_;
  InvalidationSink* sink_;
  InvalidationWatcherOptions options_;

  std::atomic<bool> subscribed_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;      // guarded by mu_
  Reader* current_ = nullptr;  // guarded by mu_
  std::thread thread_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_INVALIDATION_WATCHER_H_
