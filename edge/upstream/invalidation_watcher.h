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
// The watcher shares the edge's channel (and so its connection and API
// key) with the ServiceClient and the click transport, and makes its own
// stub on it.
//
// Thread safety: Start/Stop from one owner thread; the sink is called from
// gRPC threads, one message at a time.
#ifndef SHORTENER_EDGE_UPSTREAM_INVALIDATION_WATCHER_H_
#define SHORTENER_EDGE_UPSTREAM_INVALIDATION_WATCHER_H_

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/time/time.h"
#include "edge/upstream/invalidation_sink.h"
#include "grpcpp/channel.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::edge {

struct InvalidationWatcherOptions {
  // Who subscribes (WatchInvalidationsRequest.subscriber, for the service's
  // logs). Default "redirect-edge".
  std::string subscriber = "redirect-edge";
  // Wait before the first resubscription; doubles per failed attempt up to
  // max_backoff, back to this once a stream was acknowledged. Each wait is
  // jittered to 0.5..1.5 times. Defaults 100 ms and 5 s.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
};

class InvalidationWatcher {
 public:
  // `sink` must outlive the watcher.
  InvalidationWatcher(std::shared_ptr<grpc::Channel> channel, InvalidationSink* sink,
                      InvalidationWatcherOptions options);
  ~InvalidationWatcher();  // Stop()

  void Start();
  // Cancels the stream and joins; idempotent.
  void Stop();

  bool subscribed() const { return subscribed_.load(std::memory_order_acquire); }

 private:
  class Reader;
  void Run();

  std::unique_ptr<shortener::v1::ShortenService::Stub> stub_;
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
